package cuzk

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuzk/cuzk/go-bindings/internal/ccuzk"
)

const family = "mimc-chain"

// setup loads a small circuit's PCE and generates its parameters in a
// temporary directory.
func setup(t *testing.T, size uint64) (*PCE, *Params, Circuit) {
	t.Helper()
	pce, params, c := load(t, size)
	t.Cleanup(func() { pce.Close(); params.Close() })
	return pce, params, c
}

// load is setup without the cleanup: the caller closes the handles.
func load(t *testing.T, size uint64) (*PCE, *Params, Circuit) {
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
		StatusInvalidHandle: "CUZK_INVALID_HANDLE", StatusIO: "CUZK_IO", StatusFileNotFound: "CUZK_FILE_NOT_FOUND", StatusBadPCEFile: "CUZK_BAD_PCE_FILE",
		StatusBadParamsFile: "CUZK_BAD_PARAMS_FILE", StatusParamsMismatch: "CUZK_PARAMS_MISMATCH",
		StatusParamsIdentityDelta: "CUZK_PARAMS_IDENTITY_DELTA", StatusSynthesisFailed: "CUZK_SYNTHESIS_FAILED",
		StatusUnsatisfied: "CUZK_UNSATISFIED", StatusVerificationFailed: "CUZK_VERIFICATION_FAILED",
		StatusMalformedProof: "CUZK_MALFORMED_PROOF", StatusOverBudget: "CUZK_OVER_BUDGET", StatusCancelled: "CUZK_CANCELLED",
		StatusGPU: "CUZK_GPU", StatusNoSuchDevice: "CUZK_NO_SUCH_DEVICE", StatusLoggerInUse: "CUZK_LOGGER_IN_USE", StatusPanic: "CUZK_PANIC", StatusInternal: "CUZK_INTERNAL",
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
	if _, err := LoadPCE(Porep("3KiB"), filepath.Join(dir, "x.pce")); !errors.Is(err, ErrUnknownCircuit) && !errors.Is(err, ErrUnsupported) {
		t.Fatalf("porep of no such size: %v", err)
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
	if _, err := LoadParamsUncached(filepath.Join(dir, "bad.params"), false); !errors.Is(err, ErrBadParamsFile) {
		t.Fatalf("bad params, uncached: %v", err)
	}
	if _, err := LoadParams(dir, false); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a directory as params: %v", err)
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

func TestEngineBudgetAndContextCancel(t *testing.T) {
	pce, params, c := setup(t, 6000)
	probe, err := NewEngine(EngineConfig{CPUOnly: true, BudgetBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	fp, err := probe.Footprint(pce)
	if err != nil || fp == 0 {
		t.Fatalf("footprint %d: %v", fp, err)
	}
	if peak, err := probe.PredictedPeak(pce, 4); err != nil || peak < 4*fp {
		t.Fatalf("predicted peak %d for 4 × %d: %v", peak, fp, err)
	}
	if err := probe.Prepare(pce, params); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	probe.Close()
	if err := probe.Prepare(pce, params); !errors.Is(err, ErrClosed) {
		t.Fatalf("prepare on a closed engine: %v", err)
	}
	if _, err := NewEngine(EngineConfig{Devices: []uint32{9}}); !errors.Is(err, ErrNoSuchDevice) {
		t.Fatalf("device 9: %v", err)
	}

	// Budget for two throughput proofs and a critical one; eight goroutines; one
	// critical request among them; one request cancelled by its context.
	if _, err := NewEngine(EngineConfig{CPUOnly: true, BudgetBytes: 3 * fp, CriticalReserveBytes: fp, NoCriticalReserve: true}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a reserve and none: %v", err)
	}
	e, err := NewEngine(EngineConfig{CPUOnly: true, SynthesisThreads: 2, SynthesisFullPriority: true, BudgetBytes: 3 * fp, CriticalReserveBytes: fp})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, _, err := Prove(context.Background(), Request{PCE: pce, Params: params, Engine: e, Seed: uint64(40 + i), Priority: uint8(i % 2), Critical: i == 7})
			errs <- err
		}(i)
	}
	for {
		st, err := e.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if st.Waiting > 0 {
			break
		}
		runtime.Gosched()
	}
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() {
		_, _, err := Prove(ctx, Request{PCE: pce, Params: params, Engine: e, Seed: 99})
		res <- err
	}()
	cancel()
	if err := <-res; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: %v", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	st, err := e.Stats()
	if err != nil || st.BudgetPeak > 3*fp || st.BudgetUsed != 0 || st.Waiting != 0 {
		t.Fatalf("stats %+v (budget 3 × %d): %v", st, fp, err)
	}
	devs, err := e.Devices()
	if err != nil || len(devs) != 1 || devs[0].Backend != ccuzk.BackendCPU || devs[0].Proofs != 8 || devs[0].BusySeconds <= 0 {
		t.Fatalf("devices %+v: %v", devs, err)
	}
	if _, _, err := Prove(context.Background(), Request{PCE: pce, Params: params, Engine: e, Backend: CUDA(0)}); !errors.Is(err, ErrNoSuchDevice) && !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("CUDA request on a CPU engine: %v", err)
	}
	e.Close()
	if _, _, err := Prove(context.Background(), Request{PCE: pce, Params: params, Engine: e}); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed engine: %v", err)
	}
	_ = c
}

// waitFor polls cond until it holds (failing the test after 10 s).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		runtime.Gosched()
	}
}

// collect waits for n results, failing the test (rather than hanging) when
// they do not all come within the timeout; each result must be nil or
// ErrClosed.
func collect(t *testing.T, what string, results <-chan error, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for i := 0; i < n; i++ {
		select {
		case err := <-results:
			if err != nil && !errors.Is(err, ErrClosed) {
				t.Errorf("%s: %v", what, err)
			}
		case <-deadline:
			t.Fatalf("%s: deadlock: %d of %d calls returned within %v", what, i, n, timeout)
		}
	}
}

// TestLockOrderWithClose: calls holding a PCE and an Engine, with Close
// waiting on both, never deadlock. A real Prove is paused after it took its
// PCE and before its Engine (the test holds the Params' write lock as a
// gate) while Close is pending on the PCE; then Footprint runs and Close is
// called on the Engine. Were Footprint to take the Engine before the PCE,
// Prove, Footprint and the two Closes would wait on one another for ever.
// Then Prove, Footprint and PredictedPeak run against Closes at random
// moments.
//
// The handles are closed by the test itself, not by cleanups: after a
// deadlock a cleanup's Close would hang instead of letting the test fail.
func TestLockOrderWithClose(t *testing.T) {
	pce, params, c := load(t, 1000)
	e, err := NewEngine(EngineConfig{CPUOnly: true, BudgetBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan error, 4)
	params.mu.Lock() // the gate
	go func() {
		_, _, err := Prove(context.Background(), Request{PCE: pce, Params: params, Engine: e, Backend: CPU})
		results <- err
	}()
	waitFor(t, "Prove holds the PCE", func() bool {
		if pce.mu.TryLock() {
			pce.mu.Unlock()
			return false
		}
		return true
	})
	go func() { results <- pce.Close() }()
	waitFor(t, "PCE.Close is waiting", func() bool {
		if pce.mu.TryRLock() {
			pce.mu.RUnlock()
			return false
		}
		return true
	})
	go func() {
		_, err := e.Footprint(pce)
		results <- err
	}()
	time.Sleep(100 * time.Millisecond) // Footprint takes what it can
	go func() { results <- e.Close() }()
	time.Sleep(100 * time.Millisecond) // Engine.Close waits for what it must
	params.mu.Unlock()
	collect(t, "paused Prove, Footprint, two Closes", results, 4, 20*time.Second)

	for round := 0; round < 8; round++ {
		p, err := LoadPCE(c, "/not-consulted.pce")
		if err != nil {
			t.Fatal(err)
		}
		e, err := NewEngine(EngineConfig{CPUOnly: true, BudgetBytes: 1 << 30, KeepMalloc: round%2 == 1})
		if err != nil {
			t.Fatal(err)
		}
		const calls = 6
		results := make(chan error, calls+2)
		for i := 0; i < calls; i++ {
			go func(i int) {
				switch i % 3 {
				case 0:
					_, _, err := Prove(context.Background(), Request{PCE: p, Params: params, Engine: e, Backend: CPU, Seed: uint64(i)})
					results <- err
				case 1:
					_, err := e.Footprint(p)
					results <- err
				default:
					_, err := e.PredictedPeak(p, 2)
					results <- err
				}
			}(i)
		}
		delay := time.Duration(round) * 5 * time.Millisecond
		go func() { time.Sleep(delay); results <- e.Close() }()
		go func() { time.Sleep(delay); results <- p.Close() }()
		collect(t, fmt.Sprintf("round %d", round), results, calls+2, 60*time.Second)
	}
	params.Close()
}

// TestLoadOptions: a PCE read into memory (the default) holds all its bytes
// on the heap; a mapped one (Mapped) only its dictionary.
func TestLoadOptions(t *testing.T) {
	dir := t.TempDir()
	c := Synthetic(family, 1100)
	path := filepath.Join(dir, "c.pce")
	for _, mapped := range []bool{true, false} {
		var opts []LoadOption
		if mapped {
			opts = append(opts, Mapped(), SkipChecksums())
		}
		p, err := LoadPCE(c, path, opts...)
		if err != nil {
			t.Fatal(err)
		}
		info, err := p.Info()
		if err != nil {
			t.Fatal(err)
		}
		if mapped != (info.HeapBytes < info.Bytes) || info.HeapBytes > info.Bytes {
			t.Errorf("mapped %v: %d of %d bytes on the heap", mapped, info.HeapBytes, info.Bytes)
		}
		if err := p.Unload(); err != nil {
			t.Fatal(err)
		}
		p.Close()
	}
}

// TestParamsInBackground loads parameters in the background and proves at
// once (the proof waits for the points after its witness); a file with a point
// off its curve loads, and then Wait and Prove report it; a file whose layout
// is wrong is refused by the load itself.
func TestParamsInBackground(t *testing.T) {
	dir := t.TempDir()
	c := Synthetic(family, 1300)
	pce, err := LoadPCE(c, filepath.Join(dir, "c.pce"))
	if err != nil {
		t.Fatal(err)
	}
	defer pce.Close()
	path := filepath.Join(dir, "c.params")
	gen, err := GenerateParams(c, path, 9)
	if err != nil {
		t.Fatal(err)
	}
	gen.Unload()
	gen.Close()
	params, err := LoadParamsInBackground(path, false)
	if err != nil {
		t.Fatal(err)
	}
	req := Request{PCE: pce, Params: params, Seed: 2}
	if _, _, err := Prove(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if err := params.Wait(); err != nil {
		t.Fatal(err)
	}
	params.Unload()
	params.Close()

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 1 // the last point's y: off its curve
	bad := filepath.Join(dir, "bad.params")
	os.WriteFile(bad, b, 0o644)
	p, err := LoadParamsInBackground(bad, false)
	if err != nil {
		t.Fatalf("the layout is good, the load returns: %v", err)
	}
	defer p.Close()
	if err := p.Wait(); !errors.Is(err, ErrBadParamsFile) {
		t.Fatalf("Wait: %v", err)
	}
	if _, _, err := Prove(context.Background(), Request{PCE: pce, Params: p, Seed: 2}); !errors.Is(err, ErrBadParamsFile) {
		t.Fatalf("Prove: %v", err)
	}
	os.WriteFile(bad, b[:len(b)-1], 0o644)
	if _, err := LoadParamsInBackground(bad, false); !errors.Is(err, ErrBadParamsFile) {
		t.Fatalf("truncated: %v", err)
	}
}

// TestPorep2KiB proves a real 2 KiB C1 output through the library. The
// fixtures come from scripts/test.sh (cuzk-bench c1 and cuzk-bench params):
// CUZK_TEST_POREP_C1 (the C1 JSON), CUZK_TEST_POREP_PARAMS (parameters for
// the 2 KiB partition circuit) and CUZK_TEST_POREP_REAL=1 when they are real
// parameters (proofs must verify) rather than dummy ones (they must not).
func TestPorep2KiB(t *testing.T) {
	c1Path, paramsPath := os.Getenv("CUZK_TEST_POREP_C1"), os.Getenv("CUZK_TEST_POREP_PARAMS")
	if c1Path == "" || paramsPath == "" {
		t.Skip("CUZK_TEST_POREP_C1 / CUZK_TEST_POREP_PARAMS not set (scripts/test.sh sets them)")
	}
	c1, err := os.ReadFile(c1Path)
	if err != nil {
		t.Fatal(err)
	}
	circuit := Porep("2KiB")
	if n, err := ProofLen(circuit); err != nil || n != ProofBytes { // one partition at 2 KiB
		t.Fatalf("proof length %d: %v", n, err)
	}
	pce, err := LoadPCE(circuit, filepath.Join(t.TempDir(), "porep-2k.pce"))
	if err != nil {
		t.Fatal(err)
	}
	defer pce.Close()
	params, err := LoadParams(paramsPath, false)
	if err != nil {
		t.Fatal(err)
	}
	defer params.Close()
	real := os.Getenv("CUZK_TEST_POREP_REAL") == "1"
	req := Request{PCE: pce, Params: params, Input: c1, Backend: CPU, SkipVerify: !real}
	proof, tm, err := Prove(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(proof) != ProofBytes || tm.Witness <= 0 || tm.MsmA <= 0 {
		t.Fatalf("proof of %d bytes, timings %+v", len(proof), tm)
	}
	err = Verify(req, proof)
	if real && err != nil || !real && !errors.Is(err, ErrVerificationFailed) {
		t.Fatalf("verify (real parameters: %v): %v", real, err)
	}
	t.Logf("2 KiB PoRep: %d bytes, witness %.2f s, total %.2f s, verified with real parameters: %v", len(proof), tm.Witness, tm.Total, real)

	// The other seal proofs of the size, beside CUZK_TEST_POREP_C1 when scripts/test.sh made
	// them: the same PCE and parameters; RequestProofLen reads their partitions off their C1s.
	// Package filecoin's tests prove them through this package (SealCommitPhase2CircuitProofs,
	// SealCommitPhase2) and have filecoin-proofs verify them.
	for seal, partitions := range map[string]int{"synthetic": 1, "non-interactive": 13} {
		other, err := os.ReadFile(filepath.Join(filepath.Dir(c1Path), "porep-2k-"+seal+"-c1.json"))
		if os.IsNotExist(err) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if n, err := RequestProofLen(circuit, other); err != nil || n != partitions*ProofBytes {
			t.Fatalf("%s: RequestProofLen %d (%v), want %d partitions'", seal, n, err, partitions)
		}
	}

	// Bad inputs: clear errors, nothing written.
	for name, bad := range map[string][]byte{"truncated": c1[:len(c1)/2], "not JSON": []byte("{]"), "empty object": []byte("{}")} {
		r := req
		r.Input = bad
		if _, _, err := Prove(context.Background(), r); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s C1: %v", name, err)
		}
	}
	r := req
	r.Input = nil
	if _, _, err := Prove(context.Background(), r); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("no C1: %v", err)
	}
	other := Porep("8MiB")
	r = req
	r.Circuit = &other
	if _, _, err := Prove(context.Background(), r); !errors.Is(err, ErrCircuitMismatch) {
		t.Errorf("request for 8MiB on the 2KiB PCE: %v", err)
	}
}

// TestManyCallersStayUnderTheThreadLimit: more callers than threads the
// runtime allows, on an engine that proves one at a time. A caller waiting
// in C holds an OS thread; those beyond MaxCallsInC wait in Go instead, so
// the program stays alive; then every one is cancelled.
func TestManyCallersStayUnderTheThreadLimit(t *testing.T) {
	pce, params, _ := setup(t, 1000)
	probe, err := NewEngine(EngineConfig{CPUOnly: true, BudgetBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	fp, err := probe.Footprint(pce)
	probe.Close()
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(EngineConfig{CPUOnly: true, SynthesisThreads: 1, BudgetBytes: fp, NoCriticalReserve: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	defer debug.SetMaxThreads(debug.SetMaxThreads(MaxCallsInC + 300))
	callers := MaxCallsInC + 500
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, callers)
	for i := 0; i < callers; i++ {
		go func(i int) {
			_, _, err := Prove(ctx, Request{PCE: pce, Params: params, Engine: e, Seed: uint64(i)})
			errs <- err
		}(i)
	}
	for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st, err := e.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if st.Waiting >= MaxCallsInC-10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d callers waiting in the library", st.Waiting)
		}
	}
	// Time for the other callers to reach the library, were they let in.
	time.Sleep(time.Second)
	if st, err := e.Stats(); err != nil || st.Waiting >= MaxCallsInC {
		t.Fatalf("%d callers waiting in the library (each on a thread): %v", st.Waiting, err)
	}
	cancel()
	for i := 0; i < callers; i++ {
		if err := <-errs; err != nil && !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	}
}

// TestQueuedCallsEndWithTheirContextOrAClose: with every place among
// MaxCallsInC taken (here, by the test), queued calls return at once when
// their context ends (Aggregate: ctx.Err()) or when Close begins on a handle
// they use (Aggregate, Prove: ErrClosed), every place still taken; Close
// waits only for a call that holds the handle, as one in C does.
func TestQueuedCallsEndWithTheirContextOrAClose(t *testing.T) {
	pce, params, _ := load(t, 1000)
	srs, err := GenerateAggregationSRS(filepath.Join(t.TempDir(), "agg.srs"), 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < MaxCallsInC; i++ {
		callsInC <- struct{}{}
	}
	defer func() {
		for i := 0; i < MaxCallsInC; i++ {
			<-callsInC
		}
	}()
	const rp = "StackedDrg2KiBV1_1"
	seals := make([]SealProof, 3) // never read: no call reaches the library
	expect := func(what string, results <-chan error, want error) {
		t.Helper()
		select {
		case err := <-results:
			if !errors.Is(err, want) {
				t.Fatalf("%s: %v, want %v", what, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still waiting for a place", what)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	aggregated := make(chan error, 1)
	go func() {
		_, err := srs.Aggregate(ctx, rp, seals, SnarkPackV2)
		aggregated <- err
	}()
	time.Sleep(50 * time.Millisecond) // queued
	cancel()
	expect("Aggregate after its context ended", aggregated, context.Canceled)

	proved := make(chan error, 1)
	go func() {
		_, err := srs.Aggregate(context.Background(), rp, seals, SnarkPackV2)
		aggregated <- err
	}()
	go func() {
		_, _, err := Prove(context.Background(), Request{PCE: pce, Params: params})
		proved <- err
	}()
	time.Sleep(50 * time.Millisecond) // queued
	// A call in C, holding the SRS.
	if err := srs.acquire(); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- srs.Close() }()
	expect("Aggregate queued when Close began", aggregated, ErrClosed)
	select {
	case <-closed:
		t.Fatal("Close returned while a call held the handle")
	case <-time.After(100 * time.Millisecond):
	}
	srs.release()
	expect("Close once the call in C returned", closed, nil)
	if err := pce.Close(); err != nil {
		t.Fatal(err)
	}
	expect("Prove queued when its PCE's Close began", proved, ErrClosed)
	params.Close()
}

// decodePoSt splits a PoSt input (docs/proofs.md, "PoSt and SnapDeals") into its fields: the test's
// check that the typed requests encode exactly what the library reads.
func decodePoSt(t *testing.T, b []byte) (proofType string, randomness, proverID [32]byte, partition *uint64, vanilla [][]byte) {
	t.Helper()
	le := binary.LittleEndian
	if string(b[:8]) != "CUZKPOST" || le.Uint32(b[8:]) != 1 {
		t.Fatalf("not a version 1 PoSt input")
	}
	n := int(le.Uint32(b[12:]))
	proofType, b = string(b[16:16+n]), b[16+n:]
	copy(randomness[:], b)
	copy(proverID[:], b[32:])
	if k := le.Uint64(b[64:]); k != math.MaxUint64 {
		partition = &k
	}
	count, b := le.Uint64(b[72:]), b[80:]
	for i := uint64(0); i < count; i++ {
		l := le.Uint64(b)
		vanilla, b = append(vanilla, b[8:8+l]), b[8+l:]
	}
	return
}

// TestPoSt2KiB proves a WinningPoSt and a WindowPoSt of a 2 KiB sector from
// typed requests, with real parameters: the fixtures come from
// scripts/test.sh (cuzk-bench fixture and cuzk-bench params) in
// CUZK_TEST_FIXTURES: {winning,window}-post-2k.input and .params.
func TestPoSt2KiB(t *testing.T) {
	dir := os.Getenv("CUZK_TEST_FIXTURES")
	if dir == "" {
		t.Skip("CUZK_TEST_FIXTURES not set (scripts/test.sh sets it)")
	}
	for _, kind := range []string{"winning", "window"} {
		t.Run(kind, func(t *testing.T) {
			fixture, err := os.ReadFile(filepath.Join(dir, kind+"-post-2k.input"))
			if err != nil {
				t.Fatal(err)
			}
			proofType, randomness, proverID, partition, vanilla := decodePoSt(t, fixture)
			var input []byte
			circuit := WindowPost("2KiB")
			if kind == "winning" {
				circuit = WinningPost("2KiB")
				input = WinningPoStRequest{ProofType: proofType, Randomness: randomness, ProverID: proverID, VanillaProof: vanilla[0]}.Input()
			} else {
				input = WindowPoStRequest{ProofType: proofType, Randomness: randomness, ProverID: proverID, VanillaProofs: vanilla, Partition: partition}.Input()
			}
			if !bytes.Equal(input, fixture) {
				t.Fatalf("the typed request encodes %d bytes, not the fixture's %d", len(input), len(fixture))
			}
			pce, err := LoadPCE(circuit, filepath.Join(t.TempDir(), kind+".pce"))
			if err != nil {
				t.Fatal(err)
			}
			defer pce.Close()
			params, err := LoadParams(filepath.Join(dir, kind+"-post-2k.params"), false)
			if err != nil {
				t.Fatal(err)
			}
			defer params.Close()
			req := Request{PCE: pce, Params: params, Input: input, Backend: CPU}
			proof, tm, err := Prove(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if len(proof) != ProofBytes || tm.Total <= 0 {
				t.Fatalf("proof of %d bytes, timings %+v", len(proof), tm)
			}
			if err := Verify(req, proof); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s PoSt 2 KiB: witness %.3f s, total %.3f s", kind, tm.Witness, tm.Total)
			for name, bad := range map[string][]byte{"truncated": input[:len(input)-1], "empty": nil, "C1": []byte("{}")} {
				r := req
				r.Input = bad
				if _, _, err := Prove(context.Background(), r); !errors.Is(err, ErrInvalidArgument) {
					t.Errorf("%s input: %v", name, err)
				}
			}
		})
	}
}

// TestSnapDeals2KiB builds a 2 KiB SnapDeals request with SnapDealsRequest:
// its encoding equals the fixture's (scripts/test.sh: snap-2k.input and
// snap-2k.params in CUZK_TEST_FIXTURES), and one cut short is refused.
// Package filecoin's TestUpdateProof proves the fixture through this package
// and has filecoin-proofs verify it.
func TestSnapDeals2KiB(t *testing.T) {
	dir := os.Getenv("CUZK_TEST_FIXTURES")
	if dir == "" {
		t.Skip("CUZK_TEST_FIXTURES not set (scripts/test.sh sets it)")
	}
	fixture, err := os.ReadFile(filepath.Join(dir, "snap-2k.input"))
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	n := int(le.Uint32(fixture[12:]))
	req := SnapDealsRequest{ProofType: string(fixture[16 : 16+n])}
	rest := fixture[16+n:]
	copy(req.CommROld[:], rest)
	copy(req.CommRNew[:], rest[32:])
	copy(req.CommDNew[:], rest[64:])
	count, rest := le.Uint64(rest[96:]), rest[104:]
	for i := uint64(0); i < count; i++ {
		l := le.Uint64(rest)
		req.PartitionProofs, rest = append(req.PartitionProofs, rest[8:8+l]), rest[8+l:]
	}
	input := req.Input()
	if !bytes.Equal(input, fixture) {
		t.Fatalf("the typed request encodes %d bytes, not the fixture's %d", len(input), len(fixture))
	}
	pce, err := LoadPCE(SnapDeals("2KiB"), filepath.Join(t.TempDir(), "snap.pce"))
	if err != nil {
		t.Fatal(err)
	}
	defer pce.Close()
	params, err := LoadParams(filepath.Join(dir, "snap-2k.params"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer params.Close()
	r := Request{PCE: pce, Params: params, Input: input[:len(input)-1], Backend: CPU}
	if _, _, err := Prove(context.Background(), r); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("truncated: %v", err)
	}
}
