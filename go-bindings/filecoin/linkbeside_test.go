//go:build linkbeside

package filecoin_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cuzk/cuzk/go-bindings/cuzk"
	"github.com/cuzk/cuzk/go-bindings/internal/otherlib"
)

// With the tag linkbeside (scripts/test.sh) this package's test binary links
// libcuzk.a beside a second Rust staticlib with its own runtime and blst
// 0.3.14, as a node links filecoin-ffi: every proving and verifying test of
// the package runs in that binary. This test checks that the other library
// works beside cuzk's calls and that the library's warnings reach log/slog.
func TestBesideAnotherRustLibrary(t *testing.T) {
	h := &warnings{}
	old := slog.Default()
	slog.SetDefault(slog.New(h))
	defer slog.SetDefault(old)

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = otherlib.Check()
		}()
	}
	// A PCE whose folder is missing: extracted, not saved, a warning.
	path := filepath.Join(t.TempDir(), "missing", "m.pce")
	pce, err := cuzk.LoadPCE(cuzk.Synthetic("mimc-chain", 902), path)
	if err == nil {
		err = pce.Close()
	}
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if !h.saw(path) {
		t.Fatalf("no warning naming %s reached slog", path)
	}
}

// warnings is a slog.Handler that keeps the messages of warnings.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) Enabled(context.Context, slog.Level) bool { return true }
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w *warnings) WithGroup(string) slog.Handler            { return w }

func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn {
		w.mu.Lock()
		w.msgs = append(w.msgs, r.Message)
		w.mu.Unlock()
	}
	return nil
}

// saw says whether a warning's message contains s.
func (w *warnings) saw(s string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.msgs {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}
