// Package cuzk is the Go API of libcuzk: Groth16 proofs over BLS12-381,
// byte-compatible with bellperson, from a Pre-Compiled Constraint Evaluator.
//
// Load a circuit's PCE once (LoadPCE) and its parameters once (LoadParams or
// GenerateParams), then call Prove from as many goroutines as you like. Every
// function is safe for concurrent use. Handles have Close; a finalizer frees a
// forgotten handle, but close them explicitly: the memory behind them is large.
//
// Link: build the static library first (scripts/build-lib.sh at the
// repository root); see the README's "Linking from Go".
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

// Porep names a Filecoin PoRep C2 circuit by sector size ("2KiB", "32GiB").
// Not yet wired through the library: loading it gives ErrUnsupported.
func Porep(sectorSize string) Circuit {
	return Circuit{kind: ccuzk.CircuitPorep, name: sectorSize}
}

func (c Circuit) c() ccuzk.Circuit { return ccuzk.Circuit{Kind: c.kind, Name: c.name, Size: c.size} }

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
// so Close waits for calls in flight and later calls get ErrClosed.
type handle struct {
	mu     sync.RWMutex
	closed bool
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

// SkipChecksums maps an existing PCE file without verifying its section
// checksums (structure and bounds are still checked).
func SkipChecksums() LoadOption { return func(f *uint32) { *f |= ccuzk.PceLoadSkipChecksums } }

// LoadPCE loads the PCE of circuit from path, or extracts and saves it there
// when the file does not exist. Loading a loaded circuit returns a new handle
// to the same instance.
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
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		ccuzk.PceFree(p.h)
		p.h = ccuzk.Pce{}
		runtime.SetFinalizer(p, nil)
	}
	return nil
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
// file). checked validates every point (slow).
func LoadParams(path string, checked bool) (*Params, error) {
	var flags uint32
	if checked {
		flags = ccuzk.ParamsLoadChecked
	}
	h, s, msg := ccuzk.ParamsLoad(path, flags)
	if err := check("cuzk_params_load", s, msg); err != nil {
		return nil, err
	}
	return newParams(h), nil
}

// GenerateParams generates demo/test parameters for circuit with bellperson's
// generator, writes them to path and loads them. Never for production: the
// trapdoor comes from a 64-bit seed (0 picks a random one).
func GenerateParams(circuit Circuit, path string, seed uint64) (*Params, error) {
	h, s, msg := ccuzk.ParamsGenerate(circuit.c(), path, seed)
	if err := check("cuzk_params_generate", s, msg); err != nil {
		return nil, err
	}
	return newParams(h), nil
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
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		ccuzk.ParamsFree(p.h)
		p.h = ccuzk.Params{}
		runtime.SetFinalizer(p, nil)
	}
	return nil
}

// Request is one proof to make.
type Request struct {
	PCE    *PCE
	Params *Params
	// Circuit defaults to the PCE's circuit.
	Circuit *Circuit
	// Seed of a synthetic circuit's witness.
	Seed uint64
	// Input bytes (PoRep C1 JSON, later); copied for the call.
	Input []byte
	// Backend defaults to Auto.
	Backend Backend
	// SkipVerify turns off the verification every proof gets by default.
	SkipVerify bool
}

func (r *Request) c() ccuzk.Request {
	c := r.PCE.circuit
	if r.Circuit != nil {
		c = *r.Circuit
	}
	return ccuzk.Request{
		Circuit: c.c(), Seed: r.Seed, Input: r.Input,
		Backend: r.Backend.kind, Device: r.Backend.device, SkipVerify: r.SkipVerify,
	}
}

// Proof is a Groth16 proof in bellperson's 192-byte encoding.
type Proof []byte

// Timings are seconds per stage of one proof.
type Timings = ccuzk.Timings

// Prove makes one proof. ctx is checked before and after the call: a
// cancelled context returns ctx.Err() and no proof. (The call itself is not
// interrupted yet; once the engine queues requests, cancellation of a
// queued request will go through here — see the hook in cuzk_prove.)
func Prove(ctx context.Context, req Request) (Proof, Timings, error) {
	if err := ctx.Err(); err != nil {
		return nil, Timings{}, err
	}
	if req.PCE == nil || req.Params == nil {
		return nil, Timings{}, &Error{Status: StatusNullArgument, Op: "cuzk_prove", Message: "Request.PCE and Request.Params are required"}
	}
	if err := req.PCE.acquire(); err != nil {
		return nil, Timings{}, err
	}
	defer req.PCE.release()
	if err := req.Params.acquire(); err != nil {
		return nil, Timings{}, err
	}
	defer req.Params.release()
	out := make([]byte, ProofBytes)
	n, t, s, msg := ccuzk.Prove(req.PCE.h, req.Params.h, req.c(), out)
	runtime.KeepAlive(req.PCE)
	runtime.KeepAlive(req.Params)
	if err := check("cuzk_prove", s, msg); err != nil {
		return nil, Timings{}, err
	}
	if err := ctx.Err(); err != nil {
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

// Trim returns freed heap memory to the kernel.
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
