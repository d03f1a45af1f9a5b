// Package cuzk is the Go API of libcuzk: Groth16 proofs over BLS12-381,
// byte-compatible with bellperson, from a Pre-Compiled Constraint Evaluator.
//
// Load a circuit's PCE once (LoadPCE) and its parameters once (LoadParams or
// GenerateParams), then call Prove from as many goroutines as you like. Every
// function is safe for concurrent use. Handles have Close; a finalizer frees a
// forgotten handle, but close them explicitly: the memory behind them is large.
//
// Lock order: a call holds each handle it uses open (a read lock that Close
// waits for). Calls that use several handles take them in one order — PCE,
// then Params, then Engine — so that calls in flight and Close waiting on
// different handles can never deadlock one another.
//
// Link: install the static library first (scripts/install.sh at the
// repository root) and build with PKG_CONFIG_PATH naming its lib/pkgconfig;
// see the README's "Install and link".
package cuzk

import (
	"context"
	"runtime"
	"sync"

	"github.com/cuzk/cuzk/go-bindings/internal/ccuzk"
)

// ProofBytes is the size of one Groth16 proof.
const ProofBytes = ccuzk.ProofBytes

// HeaderVersion is the CUZK_VERSION of the header these bindings were built with.
const HeaderVersion = ccuzk.Version

// Version is the linked library's version (equal to HeaderVersion).
func Version() string { return ccuzk.LibVersion() }

// Circuit names a built-in circuit.
type Circuit struct {
	kind uint32
	name string
	size uint64
}

// Synthetic names a synthetic benchmark circuit: "sha256-chain" or
// "mimc-chain", with a target number of constraints.
func Synthetic(name string, constraints uint64) Circuit {
	return Circuit{kind: ccuzk.CircuitSynthetic, name: name, size: constraints}
}

// Porep names a Filecoin PoRep C2 circuit by sector size ("2KiB", "8MiB",
// "512MiB", "32GiB", "64GiB"). Its PCE is one partition circuit's, shared by
// the size's seal proofs (V1_1, SyntheticPoRep, NonInteractivePoRep); a
// request's Input is the C1 output JSON, which names its seal proof, and its
// proof is every partition's, concatenated (RequestProofLen: a
// NonInteractivePoRep C1 has 13 or 126 partitions).
func Porep(sectorSize string) Circuit {
	return Circuit{kind: ccuzk.CircuitPorep, name: sectorSize}
}

// WinningPost names a Filecoin WinningPoSt circuit by sector size. A
// request's Input is a WinningPoStRequest's; its proof is 192 bytes, and it
// is always in the latency class.
func WinningPost(sectorSize string) Circuit {
	return Circuit{kind: ccuzk.CircuitWinningPost, name: sectorSize}
}

// WindowPost names a Filecoin WindowPoSt circuit by sector size. A request's
// Input is a WindowPoStRequest's; its proof is 192 bytes per partition, and
// it goes ahead of every PoRep and synthetic request wherever requests wait.
func WindowPost(sectorSize string) Circuit {
	return Circuit{kind: ccuzk.CircuitWindowPost, name: sectorSize}
}

// SnapDeals names a Filecoin SnapDeals (empty-sector update) circuit by
// sector size. A request's Input is a SnapDealsRequest's; its proof is 192
// bytes per partition (ProofLen).
func SnapDeals(sectorSize string) Circuit {
	return Circuit{kind: ccuzk.CircuitSnapDeals, name: sectorSize}
}

func (c Circuit) c() ccuzk.Circuit { return ccuzk.Circuit{Kind: c.kind, Name: c.name, Size: c.size} }

// ProofLen is the length of a proof of c: ProofBytes per partition (for
// PoRep, of an interactive or synthetic seal; for WindowPoSt, of one
// partition). RequestProofLen gives a request's.
func ProofLen(c Circuit) (int, error) {
	n, s, msg := ccuzk.ProofLen(c.c())
	return n, check("cuzk_proof_len", s, msg)
}

// RequestProofLen is the length of the proof Prove returns for a request for
// c with input: ProofLen(c), or more for a NonInteractivePoRep C1 (13 or 126
// partitions) and a WindowPoSt request for every partition. The input is read
// only as far as that needs.
func RequestProofLen(c Circuit, input []byte) (int, error) {
	n, s, msg := ccuzk.RequestProofLen(c.c(), input)
	return n, check("cuzk_request_proof_len", s, msg)
}

// Backend says where a proof runs.
type Backend struct{ kind, device uint32 }

var (
	// Auto uses CUDA device 0 when present, else the CPU (the default).
	Auto = Backend{kind: ccuzk.BackendAuto}
	// CPU proves on the CPU.
	CPU = Backend{kind: ccuzk.BackendCPU}
)

// CUDA proves on the CUDA device with this id.
func CUDA(device uint32) Backend { return Backend{kind: ccuzk.BackendCUDA, device: device} }

// handle guards a C handle: calls hold the read lock, Close the write lock,
// so Close waits for calls in flight and later calls get ErrClosed. A call
// that holds several handles acquires them in the package's lock order: PCE,
// Params, Engine. Calls still waiting for a place among MaxCallsInC hold no
// lock: they return ErrClosed as soon as Close begins (closing).
type handle struct {
	mu     sync.RWMutex
	closed bool

	closingOnce, beginOnce sync.Once
	closing                chan struct{}
}

// closingSignal is closed when Close begins.
func (h *handle) closingSignal() <-chan struct{} {
	h.closingOnce.Do(func() { h.closing = make(chan struct{}) })
	return h.closing
}

func (h *handle) acquire() error {
	h.mu.RLock()
	if h.closed {
		h.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

func (h *handle) release() { h.mu.RUnlock() }

// close runs free once, after the calls in flight; later calls, and those
// still waiting for a place among MaxCallsInC, get ErrClosed.
func (h *handle) close(free func()) error {
	h.closingSignal()
	h.beginOnce.Do(func() { close(h.closing) })
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		free()
	}
	return nil
}

// PCE is a handle to the process-wide PCE of one circuit.
type PCE struct {
	handle
	h       ccuzk.Pce
	circuit Circuit
}

// PCEInfo describes a loaded PCE.
type PCEInfo = ccuzk.PceInfo

// LoadOption changes how LoadPCE loads.
type LoadOption func(*uint32)

// SkipChecksums loads an existing PCE file without verifying its section
// checksums (structure and bounds are still checked).
func SkipChecksums() LoadOption { return func(f *uint32) { *f |= ccuzk.PceLoadSkipChecksums } }

// Mapped maps the PCE file and uses it in place instead of reading it into
// memory (CUZK_PCE_LOAD_MAP): its pages are shared with the page cache and
// reclaimable. The hazard: while the PCE is loaded the file must not change
// (replace it only by renaming a new file over it). Truncating it, or an I/O
// error when a reclaimed page is read again, raises SIGBUS inside Prove,
// which kills the process; rewriting it in place changes the matrices under
// the prover.
func Mapped() LoadOption { return func(f *uint32) { *f |= ccuzk.PceLoadMap } }

// LoadPCE loads the PCE of circuit from path, or extracts and saves it there
// when the file does not exist. The file is read into memory (unless Mapped):
// once loaded, the PCE no longer depends on it. Loading a loaded circuit
// returns a new handle to the same instance (path and options then change
// nothing).
func LoadPCE(circuit Circuit, path string, opts ...LoadOption) (*PCE, error) {
	var flags uint32
	for _, o := range opts {
		o(&flags)
	}
	h, s, msg := ccuzk.PceLoad(circuit.c(), path, flags)
	if err := check("cuzk_pce_load", s, msg); err != nil {
		return nil, err
	}
	p := &PCE{h: h, circuit: circuit}
	runtime.SetFinalizer(p, (*PCE).Close)
	return p, nil
}

// Circuit is the circuit this PCE was loaded for.
func (p *PCE) Circuit() Circuit { return p.circuit }

// Info returns the PCE's sizes and instance id.
func (p *PCE) Info() (PCEInfo, error) {
	if err := p.acquire(); err != nil {
		return PCEInfo{}, err
	}
	defer p.release()
	info, s, msg := ccuzk.PceInfoOf(p.h)
	runtime.KeepAlive(p)
	return info, check("cuzk_pce_info", s, msg)
}

// Unload drops the process-wide registry's reference to this circuit; the
// memory goes when every handle is closed too.
func (p *PCE) Unload() error {
	if err := p.acquire(); err != nil {
		return err
	}
	defer p.release()
	s, msg := ccuzk.PceUnload(p.h)
	runtime.KeepAlive(p)
	return check("cuzk_pce_unload", s, msg)
}

// Close frees the handle (waiting for calls in flight). Idempotent.
func (p *PCE) Close() error {
	return p.close(func() {
		ccuzk.PceFree(p.h)
		p.h = ccuzk.Pce{}
		runtime.SetFinalizer(p, nil)
	})
}

// Params is a handle to resident Groth16 parameters.
type Params struct {
	handle
	h ccuzk.Params
}

func newParams(h ccuzk.Params) *Params {
	p := &Params{h: h}
	runtime.SetFinalizer(p, (*Params).Close)
	return p
}

// LoadParams loads a bellperson/Filecoin .params file (once per process per
// file), decoded on every core; the decoded form is kept beside the file
// (<file>.cuzk-srs, written by a library thread after LoadParams returns) so
// that the next start reads it back at disk speed. checked also checks every
// point's subgroup.
func LoadParams(path string, checked bool) (*Params, error) {
	return loadParams(path, checked, 0)
}

// LoadParamsUncached is LoadParams without the decoded cache: the file is
// decoded every time and nothing is written beside it.
func LoadParamsUncached(path string, checked bool) (*Params, error) {
	return loadParams(path, checked, ccuzk.ParamsLoadNoCache)
}

// LoadParamsInBackground is LoadParams returning once the file's layout and
// verifying key are checked (milliseconds): its points are decoded (or read
// from the cache) by a library thread while the first proof computes its
// witness, and a proof waits for them only when it needs them. A bad point is
// reported by the first Prove (StatusBadParamsFile) or by Wait.
func LoadParamsInBackground(path string, checked bool) (*Params, error) {
	return loadParams(path, checked, ccuzk.ParamsLoadBackground)
}

func loadParams(path string, checked bool, flags uint32) (*Params, error) {
	if checked {
		flags |= ccuzk.ParamsLoadChecked
	}
	h, s, msg := ccuzk.ParamsLoad(path, flags)
	if err := check("cuzk_params_load", s, msg); err != nil {
		return nil, err
	}
	return newParams(h), nil
}

// GenerateParams generates demo/test parameters for circuit from its PCE (what
// bellperson's generator makes with this seed), writes them to path and loads
// them. Never for production: the
// trapdoor comes from a 64-bit seed (0 picks a random one).
func GenerateParams(circuit Circuit, path string, seed uint64) (*Params, error) {
	h, s, msg := ccuzk.ParamsGenerate(circuit.c(), path, seed)
	if err := check("cuzk_params_generate", s, msg); err != nil {
		return nil, err
	}
	return newParams(h), nil
}

// Wait waits until the parameters' points are decoded (at once unless they
// were loaded by LoadParamsInBackground) and returns the error the decoding
// ended with, if any.
func (p *Params) Wait() error {
	if err := p.acquire(); err != nil {
		return err
	}
	defer p.release()
	s, msg := ccuzk.ParamsWait(p.h)
	runtime.KeepAlive(p)
	return check("cuzk_params_wait", s, msg)
}

// Unload drops the process-wide cache's reference to these parameters.
func (p *Params) Unload() error {
	if err := p.acquire(); err != nil {
		return err
	}
	defer p.release()
	s, msg := ccuzk.ParamsUnload(p.h)
	runtime.KeepAlive(p)
	return check("cuzk_params_unload", s, msg)
}

// Close frees the handle (waiting for calls in flight). Idempotent.
func (p *Params) Close() error {
	return p.close(func() {
		ccuzk.ParamsFree(p.h)
		p.h = ccuzk.Params{}
		runtime.SetFinalizer(p, nil)
	})
}

// EngineConfig says how an Engine proves. The zero value is the default:
// a witness and an SpMV thread per core (at nice +10), every CUDA device (the
// CPU when there is none), one backend worker per device, a budget of the
// available memory (MemAvailable, or the room under a memory cgroup's limit
// where that is less) minus 4 GiB.
type EngineConfig struct {
	// SynthesisThreads for witness generation, and as many again for SpMV
	// (two pools, so that no SpMV waits behind a witness; 0: one per core
	// each; more than 4 per core is ErrInvalidArgument).
	SynthesisThreads uint32
	// WorkersPerDevice: proofs in the backend stage on one device at once
	// (0: 1; more than 4 per core is ErrInvalidArgument).
	WorkersPerDevice uint32
	// Devices are the CUDA device ids to use (nil: all of them).
	Devices []uint32
	// CPUOnly proves on the CPU even where GPUs are present.
	CPUOnly bool
	// SynthesisFullPriority leaves the synthesis threads at the priority of
	// the thread that creates the engine, instead of nice +10 (set it where
	// other processes at the default priority would starve them).
	SynthesisFullPriority bool
	// BudgetBytes is the host memory the proofs in flight may hold together
	// (0: the available memory at creation minus BudgetMargin).
	BudgetBytes uint64
	// BudgetMargin is left free when BudgetBytes is 0 (0: 4 GiB).
	BudgetMargin uint64
	// CriticalReserveBytes of the budget only critical requests may take, so
	// that one never waits for memory throughput work holds: at least one
	// critical proof's footprint (Engine.Footprint). 0: 1 GiB, at most an
	// eighth of the budget.
	CriticalReserveBytes uint64
	// NoCriticalReserve keeps none (CriticalReserveBytes must then be 0).
	NoCriticalReserve bool
	// KeepMalloc leaves the process's malloc as it is. Without it, making
	// the engine fixes glibc's mmap threshold at 128 KiB for the whole process
	// (CUZK_ENGINE_KEEP_MALLOC says more), so that freed proof buffers go
	// back to the kernel; with it, the budget cannot count on freed memory
	// being returned, and RSS may exceed PredictedPeak.
	KeepMalloc bool
}

// Engine runs many proofs at once inside a memory budget: synthesis on a CPU
// pool, the backend stage on per-device workers. Safe for concurrent use.
type Engine struct {
	handle
	h ccuzk.Engine
}

// EngineStats are an engine's budget figures (bytes).
type EngineStats = ccuzk.EngineStats

// DeviceStats is what one device of an engine has done.
type DeviceStats = ccuzk.DeviceStats

// NewEngine makes an engine.
func NewEngine(cfg EngineConfig) (*Engine, error) {
	c := ccuzk.EngineConfig{
		SynthesisThreads: cfg.SynthesisThreads, WorkersPerDevice: cfg.WorkersPerDevice,
		Devices: cfg.Devices, BudgetBytes: cfg.BudgetBytes, BudgetMargin: cfg.BudgetMargin,
		CriticalReserveBytes: cfg.CriticalReserveBytes,
	}
	if cfg.NoCriticalReserve {
		c.Flags |= ccuzk.EngineNoCriticalReserve
	}
	if cfg.CPUOnly {
		c.Flags |= ccuzk.EngineCPUOnly
	}
	if cfg.SynthesisFullPriority {
		c.Flags |= ccuzk.EngineSynthesisFullPriority
	}
	if cfg.KeepMalloc {
		c.Flags |= ccuzk.EngineKeepMalloc
	}
	h, s, msg := ccuzk.EngineNew(c)
	if err := check("cuzk_engine_new", s, msg); err != nil {
		return nil, err
	}
	e := &Engine{h: h}
	runtime.SetFinalizer(e, (*Engine).Close)
	return e, nil
}

// Stats returns the engine's budget figures now.
func (e *Engine) Stats() (EngineStats, error) {
	if err := e.acquire(); err != nil {
		return EngineStats{}, err
	}
	defer e.release()
	st, s, msg := ccuzk.EngineStatsOf(e.h)
	runtime.KeepAlive(e)
	return st, check("cuzk_engine_stats", s, msg)
}

// Devices returns what each of the engine's devices has done so far.
func (e *Engine) Devices() ([]DeviceStats, error) {
	if err := e.acquire(); err != nil {
		return nil, err
	}
	defer e.release()
	d, s, msg := ccuzk.EngineDevices(e.h)
	runtime.KeepAlive(e)
	return d, check("cuzk_engine_devices", s, msg)
}

// withPCE runs f with pce and the engine held open (in the lock order).
func (e *Engine) withPCE(pce *PCE, f func()) error {
	if err := pce.acquire(); err != nil {
		return err
	}
	defer pce.release()
	if err := e.acquire(); err != nil {
		return err
	}
	defer e.release()
	f()
	runtime.KeepAlive(e)
	runtime.KeepAlive(pce)
	return nil
}

// Footprint is the host memory one proof (one PoRep partition) of pce's
// circuit reserves from the budget.
func (e *Engine) Footprint(pce *PCE) (uint64, error) {
	var n uint64
	var s ccuzk.Status
	var msg string
	if err := e.withPCE(pce, func() { n, s, msg = ccuzk.EngineFootprint(e.h, pce.h) }); err != nil {
		return 0, err
	}
	return n, check("cuzk_engine_footprint", s, msg)
}

// Prepare makes the engine's devices ready to prove pce's circuit with params
// (on every GPU now: the parameters and the PCE's matrices uploaded, the
// memory pool grown by one proof's working set), so that the first proof is
// as fast as the next ones. Nothing to do on the CPU.
func (e *Engine) Prepare(pce *PCE, params *Params) error {
	// The lock order: PCE, Params, Engine.
	if err := pce.acquire(); err != nil {
		return err
	}
	defer pce.release()
	if err := params.acquire(); err != nil {
		return err
	}
	defer params.release()
	if err := e.acquire(); err != nil {
		return err
	}
	defer e.release()
	s, msg := ccuzk.EnginePrepare(e.h, pce.h, params.h)
	runtime.KeepAlive(e)
	runtime.KeepAlive(pce)
	runtime.KeepAlive(params)
	return check("cuzk_engine_prepare", s, msg)
}

// PredictedPeak is the peak RSS the engine predicts with inFlight proofs of
// pce's circuit: RSS now (call it warm) plus inFlight footprints.
func (e *Engine) PredictedPeak(pce *PCE, inFlight uint32) (uint64, error) {
	var n uint64
	var s ccuzk.Status
	var msg string
	if err := e.withPCE(pce, func() { n, s, msg = ccuzk.EnginePredictedPeak(e.h, pce.h, inFlight) }); err != nil {
		return 0, err
	}
	return n, check("cuzk_engine_predicted_peak", s, msg)
}

// Close frees the engine (waiting for calls in flight). Idempotent.
func (e *Engine) Close() error {
	return e.close(func() {
		ccuzk.EngineFree(e.h)
		e.h = ccuzk.Engine{}
		runtime.SetFinalizer(e, nil)
	})
}

// Request is one proof to make.
type Request struct {
	PCE    *PCE
	Params *Params
	// Engine to prove on; nil: the process-wide default engine.
	Engine *Engine
	// Circuit defaults to the PCE's circuit.
	Circuit *Circuit
	// Seed of a synthetic circuit's witness (0 for PoRep).
	Seed uint64
	// Input bytes: PoRep's C1 output JSON, or a PoSt request's Input();
	// copied for the call.
	Input []byte
	// Backend defaults to Auto.
	Backend Backend
	// SkipVerify turns off the verification every proof gets by default.
	SkipVerify bool
	// Priority orders requests of a class: one waiting for memory budget or
	// a device is overtaken by later ones of higher priority. The proof type
	// sets the class: WinningPoSt critical, WindowPoSt ahead of every PoRep
	// and synthetic request.
	Priority uint8
	// Critical puts the request in the latency class (a WinningPoSt): it
	// overtakes every throughput request whatever its Priority and never
	// waits for throughput work (the engine's critical reserve of the budget,
	// its express CPU threads, an express worker on each device).
	Critical bool
}

func (r *Request) circuit() Circuit {
	if r.Circuit != nil {
		return *r.Circuit
	}
	return r.PCE.circuit
}

func (r *Request) c() ccuzk.Request {
	priority := uint32(r.Priority)
	if r.Critical {
		priority = ccuzk.PriorityCritical
	}
	return ccuzk.Request{
		Circuit: r.circuit().c(), Seed: r.Seed, Input: r.Input,
		Backend: r.Backend.kind, Device: r.Backend.device, SkipVerify: r.SkipVerify,
		Priority: priority,
	}
}

// Proof is a Groth16 proof in bellperson's 192-byte encoding (for PoRep,
// one per partition, concatenated).
type Proof []byte

// Timings are seconds per stage of one proof (summed over PoRep partitions).
type Timings = ccuzk.Timings

// MaxCallsInC bounds the throughput Prove (and Aggregate) calls in the library at once, in
// this process: a call holds an OS thread while it waits in C for memory
// budget or a device, and a Go program dies at 10,000 threads
// (runtime/debug.SetMaxThreads). Calls beyond it wait in Go, as parked
// goroutines, in arrival order (the library orders those inside it by
// priority). Critical requests are not counted and never wait here.
const MaxCallsInC = 1000

var callsInC = make(chan struct{}, MaxCallsInC)

// enterC waits for a place among MaxCallsInC for a call on handles (one to
// three; nil for none): nil once it has one (the caller gives it back with
// leaveC), ctx.Err() if ctx ends first, ErrClosed if Close begins on one of
// the handles first.
func enterC(ctx context.Context, handles ...*handle) error {
	var closing [3]<-chan struct{}
	for i, h := range handles {
		if h != nil {
			closing[i] = h.closingSignal()
		}
	}
	select {
	case callsInC <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-closing[0]:
		return ErrClosed
	case <-closing[1]:
		return ErrClosed
	case <-closing[2]:
		return ErrClosed
	}
	// A place and a Close that came together: the Close wins.
	for _, c := range closing {
		select {
		case <-c:
			leaveC()
			return ErrClosed
		default:
		}
	}
	return nil
}

// leaveC gives back a place taken by enterC.
func leaveC() { <-callsInC }

// Prove makes one proof; call it from as many goroutines as you like. If ctx
// ends while the request waits (for a place among MaxCallsInC, memory
// budget, a device, or between stages), the request is cancelled, holds no
// memory, and Prove returns ctx.Err(). Waiting for a place among
// MaxCallsInC, it returns ErrClosed once one of its handles begins to close.
func Prove(ctx context.Context, req Request) (Proof, Timings, error) {
	if err := ctx.Err(); err != nil {
		return nil, Timings{}, err
	}
	if req.PCE == nil || req.Params == nil {
		return nil, Timings{}, &Error{Status: StatusNullArgument, Op: "cuzk_prove", Message: "Request.PCE and Request.Params are required"}
	}
	if !req.Critical {
		var engine *handle
		if req.Engine != nil {
			engine = &req.Engine.handle
		}
		if err := enterC(ctx, &req.PCE.handle, &req.Params.handle, engine); err != nil {
			return nil, Timings{}, err
		}
		defer leaveC()
	}
	n, err := RequestProofLen(req.circuit(), req.Input)
	if err != nil {
		return nil, Timings{}, err
	}
	// The lock order: PCE, Params, Engine.
	for _, h := range []*handle{&req.PCE.handle, &req.Params.handle} {
		if err := h.acquire(); err != nil {
			return nil, Timings{}, err
		}
		defer h.release()
	}
	var engine ccuzk.Engine
	if req.Engine != nil {
		if err := req.Engine.acquire(); err != nil {
			return nil, Timings{}, err
		}
		defer req.Engine.release()
		engine = req.Engine.h
	}
	cancel, s, msg := ccuzk.CancelNew()
	if err := check("cuzk_cancel_new", s, msg); err != nil {
		return nil, Timings{}, err
	}
	defer ccuzk.CancelFree(cancel)
	done := make(chan struct{})
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		select {
		case <-ctx.Done():
			ccuzk.CancelTrigger(cancel)
		case <-done:
		}
	}()
	out := make([]byte, n)
	n, t, s, msg := ccuzk.Prove(engine, req.PCE.h, req.Params.h, req.c(), cancel, out)
	close(done)
	<-watching // the token is freed only once nobody can trigger it
	runtime.KeepAlive(req.PCE)
	runtime.KeepAlive(req.Params)
	runtime.KeepAlive(req.Engine)
	if s == ccuzk.Status(StatusCancelled) && ctx.Err() != nil {
		return nil, Timings{}, ctx.Err()
	}
	if err := check("cuzk_prove", s, msg); err != nil {
		return nil, Timings{}, err
	}
	return Proof(out[:n]), t, nil
}

// Verify checks proof against req's circuit instance with req.Params.
func Verify(req Request, proof Proof) error {
	if req.PCE == nil && req.Circuit == nil || req.Params == nil {
		return &Error{Status: StatusNullArgument, Op: "cuzk_verify", Message: "Request.Params and a circuit (PCE or Circuit) are required"}
	}
	if req.PCE == nil {
		req.PCE = &PCE{circuit: *req.Circuit}
	}
	if err := req.Params.acquire(); err != nil {
		return err
	}
	defer req.Params.release()
	s, msg := ccuzk.Verify(req.Params.h, req.c(), proof)
	runtime.KeepAlive(req.Params)
	return check("cuzk_verify", s, msg)
}

// MemoryStats are the process's memory figures (bytes): cuzk_mem_stats.
type MemoryStats = ccuzk.MemStats

// MemStats returns current memory figures.
func MemStats() (MemoryStats, error) {
	m, s, msg := ccuzk.MemStatsNow()
	return m, check("cuzk_mem_stats", s, msg)
}

// ResetPeak resets the peak RSS to the current RSS (ErrUnsupported where the
// system refuses).
func ResetPeak() error {
	s, msg := ccuzk.MemResetPeak()
	return check("cuzk_mem_reset_peak", s, msg)
}

// Trim frees the buffers engines keep from finished proofs for the next ones,
// then returns freed heap memory to the kernel.
func Trim() { ccuzk.MemTrim() }

// CUDADevices is the number of CUDA devices this build can use.
func CUDADevices() (int, error) {
	n, s, msg := ccuzk.CudaDeviceCount()
	return int(n), check("cuzk_cuda_device_count", s, msg)
}

func debugPanic() error {
	s, msg := ccuzk.DebugPanic()
	return check("cuzk_debug_panic", s, msg)
}
