package cuzk

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuzk/cuzk/go-bindings/internal/ccuzk"
)

// The library's log records (device retries, caches not written, fallbacks
// taken, and the progress of long jobs: PCE extraction, parameter decoding
// and generation, witness-program recording) go to log/slog: from package
// init, to slog.Default() as it is when each record arrives, at
// slog.LevelInfo and above. SetLogger and SetLogLevel change that. Each
// record carries the attribute "target": the Rust module that logged it
// (e.g. "cuzk::params::cache").
//
// Records arrive from library threads, several at once: the handler must be
// safe for concurrent use and must not call this package (a record the
// library makes while the handler runs on that thread is dropped).

// LogOff, as SetLogLevel's level, forwards no record.
const LogOff = slog.Level(math.MaxInt32)

// levelTrace is the slog level of the library's trace records.
const levelTrace = slog.LevelDebug - 4

// The library's levels, most verbose first, and their slog levels.
var logLevels = []struct {
	lib  uint32
	slog slog.Level
}{
	{ccuzk.LogTrace, levelTrace},
	{ccuzk.LogDebug, slog.LevelDebug},
	{ccuzk.LogInfo, slog.LevelInfo},
	{ccuzk.LogWarn, slog.LevelWarn},
	{ccuzk.LogError, slog.LevelError},
}

// The forwarder's settings. forward reads them without a lock: a setter
// waits in C for the records under way, which may be waiting in forward.
var logState struct {
	setting sync.Mutex                  // one setter at a time
	logger  atomic.Pointer[slog.Logger] // nil: slog.Default() at each record
	level   atomic.Int64                // a slog.Level
}

func init() {
	// Nothing to report to yet if the library refuses: it only does where
	// other Rust code of the process owns its logger.
	_ = SetLogLevel(slog.LevelInfo)
}

// SetLogger sends the library's records to l from now on; nil sends them to
// slog.Default() as it is when each record arrives (the default).
func SetLogger(l *slog.Logger) { logState.logger.Store(l) }

// SetLogLevel forwards the library's records at level or above from now on
// (the library formats no others); LogOff forwards none. The default is
// slog.LevelInfo. Once it returns, no record is on its way under the
// previous setting.
func SetLogLevel(level slog.Level) error {
	logState.setting.Lock()
	defer logState.setting.Unlock()
	logState.level.Store(int64(level))
	for _, l := range logLevels {
		if l.slog >= level {
			s, msg := ccuzk.SetLogCallback(l.lib, forward)
			return check("cuzk_set_log_callback", s, msg)
		}
	}
	s, msg := ccuzk.SetLogCallback(ccuzk.LogError, nil)
	return check("cuzk_set_log_callback", s, msg)
}

// forward hands one library record to the logger.
func forward(level uint32, target, message string) {
	lvl := slog.LevelError
	for _, l := range logLevels {
		if l.lib == level {
			lvl = l.slog
		}
	}
	if int64(lvl) < logState.level.Load() {
		return
	}
	logger := logState.logger.Load()
	if logger == nil {
		logger = slog.Default()
	}
	ctx := context.Background()
	h := logger.Handler()
	if !h.Enabled(ctx, lvl) {
		return
	}
	r := slog.NewRecord(time.Now(), lvl, message, 0)
	r.AddAttrs(slog.String("target", target))
	_ = h.Handle(ctx, r)
}
