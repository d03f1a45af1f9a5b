package cuzk

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/cuzk/cuzk/go-bindings/internal/ccuzk"
)

const family = "mimc-chain"

// setup loads a small circuit's PCE and generates its parameters in a
// temporary directory.
func setup(t *testing.T, size uint64) (*PCE, *Params, Circuit) {
	t.Helper()
	dir := t.TempDir()
	c := Synthetic(family, size)
	pce, err := LoadPCE(c, filepath.Join(dir, "c.pce"))
	if err != nil {
		t.Fatal(err)
	}
	params, err := GenerateParams(c, filepath.Join(dir, "c.params"), 5)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pce.Close(); params.Close() })
	return pce, params, c
}

func TestVersion(t *testing.T) {
	if Version() != HeaderVersion {
		t.Fatalf("library %s, header %s", Version(), HeaderVersion)
	}
}

func TestStatusesMatchHeader(t *testing.T) {
	want := map[Status]string{
		StatusOK: "CUZK_OK", StatusNullArgument: "CUZK_NULL_ARGUMENT", StatusInvalidArgument: "CUZK_INVALID_ARGUMENT",
		StatusUnknownCircuit: "CUZK_UNKNOWN_CIRCUIT", StatusBufferTooSmall: "CUZK_BUFFER_TOO_SMALL",
		StatusCircuitMismatch: "CUZK_CIRCUIT_MISMATCH", StatusUnsupported: "CUZK_UNSUPPORTED", StatusTooLarge: "CUZK_TOO_LARGE",
		StatusIO: "CUZK_IO", StatusFileNotFound: "CUZK_FILE_NOT_FOUND", StatusBadPCEFile: "CUZK_BAD_PCE_FILE",
		StatusBadParamsFile: "CUZK_BAD_PARAMS_FILE", StatusParamsMismatch: "CUZK_PARAMS_MISMATCH",
		StatusParamsIdentityDelta: "CUZK_PARAMS_IDENTITY_DELTA", StatusSynthesisFailed: "CUZK_SYNTHESIS_FAILED",
		StatusUnsatisfied: "CUZK_UNSATISFIED", StatusVerificationFailed: "CUZK_VERIFICATION_FAILED",
		StatusMalformedProof: "CUZK_MALFORMED_PROOF", StatusOverBudget: "CUZK_OVER_BUDGET", StatusCancelled: "CUZK_CANCELLED",
		StatusGPU: "CUZK_GPU", StatusNoSuchDevice: "CUZK_NO_SUCH_DEVICE", StatusPanic: "CUZK_PANIC", StatusInternal: "CUZK_INTERNAL",
	}
	for s, name := range want {
		if !strings.HasPrefix(s.String(), name+":") {
			t.Errorf("status %d: library says %q, Go says %s", uint32(s), s.String(), name)
		}
	}
	// Every status the header declares has a Go constant.
	header, err := os.ReadFile("../../include/cuzk.h")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	inStatus := false
	for _, line := range strings.Split(string(header), "\n") {
		switch {
		case strings.HasPrefix(line, "enum cuzk_status"):
			inStatus = true
		case inStatus && strings.HasPrefix(line, "};"):
			inStatus = false
		case inStatus && strings.HasPrefix(strings.TrimSpace(line), "CUZK_"):
			n++
		}
	}
	if n != len(want) {
		t.Errorf("header has %d statuses, Go %d", n, len(want))
	}
}

func TestHappyPath(t *testing.T) {
	pce, params, c := setup(t, 1500)
	info, err := pce.Info()
	if err != nil || info.NumConstraints == 0 || !strings.HasPrefix(info.CircuitID, family) {
		t.Fatalf("info %+v, %v", info, err)
	}
	req := Request{PCE: pce, Params: params, Seed: 3}
	proof, tm, err := Prove(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(proof) != ProofBytes || tm.Total <= 0 || tm.Verify <= 0 || tm.Backend != ccuzk.BackendCPU {
		t.Fatalf("proof %d bytes, timings %+v", len(proof), tm)
	}
	if err := Verify(req, proof); err != nil {
		t.Fatal(err)
	}
	// Verify needs no PCE: the circuit alone names the instance.
	if err := Verify(Request{Params: params, Circuit: &c, Seed: 3}, proof); err != nil {
		t.Fatal(err)
	}
	other := req
	other.Seed = 4
	if err := Verify(other, proof); !errors.Is(err, ErrVerificationFailed) {
		t.Fatalf("want ErrVerificationFailed, got %v", err)
	}
	m, err := MemStats()
	if err != nil || m.RssBytes == 0 || m.SrsBytes == 0 || m.PeakRssBytes < m.RssBytes {
		t.Fatalf("mem %+v, %v", m, err)
	}
	if err := ResetPeak(); err != nil && !errors.Is(err, ErrUnsupported) {
		t.Fatal(err)
	}
	Trim()
	if n, err := CUDADevices(); err != nil || n < 0 {
		t.Fatal(n, err)
	}
	// A second load of the same circuit shares the instance.
	again, err := LoadPCE(c, "/nonexistent-path-not-consulted.pce")
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	i2, _ := again.Info()
	if i2.Instance != info.Instance {
		t.Fatal("second load made a second instance")
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadPCE(Synthetic("no-such-circuit", 100), filepath.Join(dir, "x.pce"))
	var e *Error
	if !errors.Is(err, ErrUnknownCircuit) || !errors.As(err, &e) || e.Op != "cuzk_pce_load" || e.Message == "" {
		t.Fatalf("unknown circuit: %v", err)
	}
	if _, err := LoadPCE(Synthetic(family, 0), filepath.Join(dir, "x.pce")); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("size 0: %v", err)
	}
	if _, err := LoadPCE(Porep("2KiB"), filepath.Join(dir, "x.pce")); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("porep: %v", err)
	}
	if _, err := LoadPCE(Synthetic(family, 100), "bad\x00path"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("NUL in path: %v", err)
	}
	garbage := filepath.Join(dir, "garbage.pce")
	os.WriteFile(garbage, []byte("garbage"), 0o644)
	if _, err := LoadPCE(Synthetic(family, 1234), garbage); !errors.Is(err, ErrBadPCEFile) {
		t.Fatalf("garbage PCE: %v", err)
	}
	if _, err := LoadParams(filepath.Join(dir, "missing.params"), false); !errors.Is(err, ErrFileNotFound) {
		t.Fatalf("missing params: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "bad.params"), []byte("garbage"), 0o644)
	if _, err := LoadParams(filepath.Join(dir, "bad.params"), false); !errors.Is(err, ErrBadParamsFile) {
		t.Fatalf("bad params: %v", err)
	}

	pce, params, _ := setup(t, 1600)
	small := Synthetic(family, 300)
	if _, _, err := Prove(context.Background(), Request{PCE: pce, Params: params, Circuit: &small}); !errors.Is(err, ErrCircuitMismatch) {
		t.Fatalf("mismatch: %v", err)
	}
	if _, _, err := Prove(context.Background(), Request{PCE: pce, Params: params, Backend: CUDA(63)}); !errors.Is(err, ErrNoSuchDevice) {
		t.Fatalf("cuda 63: %v", err)
	}
	wrong, err := GenerateParams(small, filepath.Join(dir, "small.params"), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.Close()
	if _, _, err := Prove(context.Background(), Request{PCE: pce, Params: wrong}); !errors.Is(err, ErrParamsMismatch) {
		t.Fatalf("wrong params: %v", err)
	}
	if err := Verify(Request{PCE: pce, Params: params}, make([]byte, 191)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("short proof: %v", err)
	}
	if _, _, err := Prove(context.Background(), Request{PCE: pce}); !errors.Is(err, ErrNullArgument) {
		t.Fatalf("no params: %v", err)
	}

	// Context: a cancelled context gives no proof.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Prove(ctx, Request{PCE: pce, Params: params}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}

	// Closed handles refuse, and Close is idempotent.
	p2, err := LoadPCE(pce.Circuit(), "/not-consulted.pce")
	if err != nil {
		t.Fatal(err)
	}
	p2.Close()
	p2.Close()
	if _, err := p2.Info(); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed: %v", err)
	}
	if _, _, err := Prove(context.Background(), Request{PCE: p2, Params: params}); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed prove: %v", err)
	}
}

func TestPanicComesBackAsError(t *testing.T) {
	err := debugPanic()
	if !errors.Is(err, ErrPanic) || !strings.Contains(err.Error(), "deliberate test panic") {
		t.Fatalf("got %v", err)
	}
	if _, err := MemStats(); err != nil {
		t.Fatal("library unusable after a caught panic:", err)
	}
}

func TestConcurrentProofs(t *testing.T) {
	pce, params, _ := setup(t, 1000)
	const goroutines = 16
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for i := 0; i < goroutines; i++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			req := Request{PCE: pce, Params: params, Seed: seed, Backend: CPU}
			proof, _, err := Prove(context.Background(), req)
			if err == nil {
				err = Verify(req, proof)
			}
			if err == nil {
				_, err = MemStats()
			}
			errs <- err
		}(uint64(i))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestFinalizerFreesForgottenHandles(t *testing.T) {
	_, params, c := setup(t, 800)
	for i := 0; i < 4; i++ {
		p, err := LoadPCE(c, "/not-consulted.pce")
		if err != nil {
			t.Fatal(err)
		}
		_ = p // dropped without Close
	}
	runtime.GC()
	runtime.GC()
	if err := params.Unload(); err != nil {
		t.Fatal(err)
	}
}
