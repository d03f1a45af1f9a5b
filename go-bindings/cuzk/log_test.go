package cuzk

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// capture is a slog.Handler that keeps every record, from any goroutine.
type capture struct {
	mu      sync.Mutex
	records []captured
}

type captured struct {
	level           slog.Level
	message, target string
}

func (c *capture) Enabled(context.Context, slog.Level) bool { return true }
func (c *capture) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *capture) WithGroup(string) slog.Handler            { return c }

func (c *capture) Handle(_ context.Context, r slog.Record) error {
	rec := captured{level: r.Level, message: r.Message}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "target" {
			rec.target = a.Value.String()
		}
		return true
	})
	c.mu.Lock()
	c.records = append(c.records, rec)
	c.mu.Unlock()
	return nil
}

// about returns the records whose message contains s.
func (c *capture) about(s string) []captured {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []captured
	for _, r := range c.records {
		if strings.Contains(r.message, s) {
			out = append(out, r)
		}
	}
	return out
}

// unsavedPCE loads the PCE of a synthetic circuit into a folder that does not
// exist (under dir), and unloads it: the library extracts it, cannot save it,
// warns (naming the path it returns), and keeps it in memory until unloaded.
func unsavedPCE(dir string, size uint64) (string, error) {
	path := filepath.Join(dir, "missing", fmt.Sprintf("c%d.pce", size))
	pce, err := LoadPCE(Synthetic(family, size), path)
	if err != nil {
		return "", err
	}
	defer pce.Close()
	return path, pce.Unload()
}

// mustUnsavedPCE is unsavedPCE in the test's goroutine.
func mustUnsavedPCE(t *testing.T, size uint64) string {
	t.Helper()
	path, err := unsavedPCE(t.TempDir(), size)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// restoreLogging puts the package's defaults back after a test.
func restoreLogging(t *testing.T) {
	t.Cleanup(func() {
		SetLogger(nil)
		if err := SetLogLevel(slog.LevelInfo); err != nil {
			t.Error(err)
		}
	})
}

// By default the library's records go to slog.Default(), as it is when they
// arrive: a warning with its level and target, and the progress of the
// extraction at info.
func TestLibraryWarningsReachSlogDefault(t *testing.T) {
	restoreLogging(t)
	h := &capture{}
	old := slog.Default()
	slog.SetDefault(slog.New(h))
	defer slog.SetDefault(old)

	path := mustUnsavedPCE(t, 901)
	warn := h.about(path)
	if len(warn) != 1 || warn[0].level != slog.LevelWarn || warn[0].target != "cuzk::pce::registry" ||
		!strings.Contains(warn[0].message, "keeping it in memory") {
		t.Fatalf("the warning: %+v", warn)
	}
	progress := h.about("extracting the PCE of mimc-chain-901: ")
	if len(progress) < 2 || !strings.HasSuffix(progress[0].message, ": started") ||
		!strings.Contains(progress[len(progress)-1].message, ": done, ") {
		t.Fatalf("the progress lines: %+v", progress)
	}
	for _, p := range progress {
		if p.level != slog.LevelInfo || p.target != "cuzk::progress" {
			t.Fatalf("a progress line: %+v", p)
		}
	}
}

func TestLogLevelAndLoggerChoice(t *testing.T) {
	restoreLogging(t)
	h := &capture{}
	SetLogger(slog.New(h))
	if err := SetLogLevel(slog.LevelWarn); err != nil {
		t.Fatal(err)
	}
	path := mustUnsavedPCE(t, 902)
	if len(h.about(path)) != 1 || len(h.about("mimc-chain-902")) != 0 {
		t.Fatalf("at warn, the warning alone: %+v", h.about(""))
	}
	if err := SetLogLevel(LogOff); err != nil {
		t.Fatal(err)
	}
	path = mustUnsavedPCE(t, 903)
	if got := h.about(path); len(got) != 0 {
		t.Fatalf("off, yet: %+v", got)
	}
	if err := SetLogLevel(slog.LevelDebug - 4); err != nil {
		t.Fatal(err)
	}
	path = mustUnsavedPCE(t, 904)
	if len(h.about(path)) != 1 || len(h.about("extracting the PCE of mimc-chain-904")) < 2 {
		t.Fatalf("at trace: %+v", h.about("mimc-chain-904"))
	}
}

// Loggers and levels change while library threads log: no race, no record
// lost to a deadlock, and the handler of each moment gets the records.
func TestLoggingWhileSettingsChange(t *testing.T) {
	restoreLogging(t)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		levels := []slog.Level{slog.LevelInfo, slog.LevelWarn, LogOff, slog.LevelDebug}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			SetLogger(slog.New(&capture{}))
			if err := SetLogLevel(levels[i%len(levels)]); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var loads sync.WaitGroup
	dir := t.TempDir()
	for g := 0; g < 4; g++ {
		loads.Add(1)
		go func(g int) {
			defer loads.Done()
			for i := 0; i < 3; i++ {
				if _, err := unsavedPCE(dir, uint64(910+10*g+i)); err != nil {
					t.Error(err)
				}
			}
		}(g)
	}
	loads.Wait()
	close(stop)
	wg.Wait()
	h := &capture{}
	SetLogger(slog.New(h))
	if err := SetLogLevel(slog.LevelWarn); err != nil {
		t.Fatal(err)
	}
	path := mustUnsavedPCE(t, 905)
	if got := h.about(path); len(got) != 1 {
		t.Fatalf("after the changes: %+v", got)
	}
}
