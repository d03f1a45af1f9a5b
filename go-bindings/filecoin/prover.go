package filecoin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cuzk/cuzk/go-bindings/cuzk"
)

// DefaultParamsDir is filecoin-ffi's parameter cache when
// FIL_PROOFS_PARAMETER_CACHE is not set.
const DefaultParamsDir = "/var/tmp/filecoin-proof-parameters"

// AggregationSRSFileName is the aggregation SRS's file in the parameter
// cache, as filecoin-proofs names it.
const AggregationSRSFileName = "v28-fil-inner-product-v1.srs"

// Config says how a Prover proves. The zero value is the default.
type Config struct {
	// Backend: cuzk.Auto (the zero value: CUDA device 0 where there is one,
	// else the CPU), cuzk.CPU or cuzk.CUDA(device).
	Backend cuzk.Backend
	// Engine sizes the engine every proof runs on: its memory budget, threads
	// and devices (the zero value: cuzk's defaults).
	Engine cuzk.EngineConfig
	// ParamsDir holds the parameters under their production names
	// (cuzk.ParamsFileName) and the aggregation SRS (AggregationSRSFileName),
	// as filecoin-ffi finds them: "" is FIL_PROOFS_PARAMETER_CACHE, else
	// DefaultParamsDir. The files must be regular files (a symlink is refused).
	ParamsDir string
	// PCEDir holds each circuit's PCE, extracted there on the circuit's first
	// proof when absent (minutes and about 5 GiB of disk for PoRep at 32 GiB)
	// and read back by later processes: "" is ParamsDir's cuzk-pce
	// subdirectory, made when needed.
	PCEDir string
}

// resolved fills in the defaults.
func (c Config) resolved() Config {
	if c.ParamsDir == "" {
		c.ParamsDir = os.Getenv("FIL_PROOFS_PARAMETER_CACHE")
	}
	if c.ParamsDir == "" {
		c.ParamsDir = DefaultParamsDir
	}
	if c.PCEDir == "" {
		c.PCEDir = filepath.Join(c.ParamsDir, "cuzk-pce")
	}
	return c
}

// ErrClosed is returned by a Prover's calls after Close.
var ErrClosed = errors.New("filecoin: prover closed")

// Prover proves Filecoin's proofs on one cuzk engine, with each circuit's PCE
// and parameters loaded on its first use and kept until Close. Its methods
// are filecoin-ffi's calls; safe for concurrent use.
type Prover struct {
	cfg Config

	mu       sync.Mutex
	closed   bool
	engine   *cuzk.Engine
	circuits map[cuzk.Circuit]*resident
	srs      map[int]*aggregationSRS
}

// resident is one circuit's PCE and parameters, loaded once.
type resident struct {
	mu     sync.Mutex
	pce    *cuzk.PCE
	params *cuzk.Params
}

// aggregationSRS is the SRS for aggregates of up to a number of proofs.
type aggregationSRS struct {
	mu  sync.Mutex
	srs *cuzk.AggregationSRS
}

// NewProver makes a prover with cfg's settings. Nothing is loaded until a
// call needs it (or Prepare).
func NewProver(cfg Config) *Prover {
	return &Prover{cfg: cfg.resolved(), circuits: map[cuzk.Circuit]*resident{}, srs: map[int]*aggregationSRS{}}
}

// Config is the prover's settings, defaults filled in.
func (p *Prover) Config() Config { return p.cfg }

// Prepare loads c's parameters and PCE now (extracting the PCE when its file
// is absent) and readies the engine's devices for it, so that its first proof
// takes no longer than the next: for a node, before its first WinningPoSt.
func (p *Prover) Prepare(c cuzk.Circuit) error {
	pce, params, err := p.resident(c)
	if err != nil {
		return err
	}
	engine, err := p.engineOf()
	if err != nil {
		return err
	}
	return engine.Prepare(pce, params)
}

// Close frees the engine and everything loaded. Calls in flight finish
// first; later calls get ErrClosed. Idempotent.
func (p *Prover) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	var errs []error
	for _, r := range p.circuits {
		r.mu.Lock()
		if r.pce != nil {
			errs = append(errs, r.pce.Close(), r.params.Close())
		}
		r.mu.Unlock()
	}
	for _, s := range p.srs {
		s.mu.Lock()
		if s.srs != nil {
			errs = append(errs, s.srs.Close())
		}
		s.mu.Unlock()
	}
	if p.engine != nil {
		errs = append(errs, p.engine.Close())
	}
	return errors.Join(errs...)
}

func (p *Prover) engineOf() (*cuzk.Engine, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	if p.engine == nil {
		e, err := cuzk.NewEngine(p.cfg.Engine)
		if err != nil {
			return nil, err
		}
		p.engine = e
	}
	return p.engine, nil
}

// resident is c's PCE and parameters, loaded on first use: the parameters
// first (a missing file fails before minutes of PCE extraction).
func (p *Prover) resident(c cuzk.Circuit) (*cuzk.PCE, *cuzk.Params, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, nil, ErrClosed
	}
	r := p.circuits[c]
	if r == nil {
		r = &resident{}
		p.circuits[c] = r
	}
	p.mu.Unlock()

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pce != nil {
		return r.pce, r.params, nil
	}
	name, err := cuzk.ParamsFileName(c)
	if err != nil {
		return nil, nil, err
	}
	params, err := cuzk.LoadParams(filepath.Join(p.cfg.ParamsDir, name), false)
	if err != nil {
		return nil, nil, fmt.Errorf("filecoin: loading the parameters (from FIL_PROOFS_PARAMETER_CACHE or Config.ParamsDir): %w", err)
	}
	if err := os.MkdirAll(p.cfg.PCEDir, 0o755); err != nil {
		params.Close()
		return nil, nil, fmt.Errorf("filecoin: the PCE directory: %w", err)
	}
	// Named after the parameters: one PCE per parameter set.
	pce, err := cuzk.LoadPCE(c, filepath.Join(p.cfg.PCEDir, strings.TrimSuffix(name, ".params")+".pce"))
	if err != nil {
		params.Close()
		return nil, nil, err
	}
	r.pce, r.params = pce, params
	return pce, params, nil
}

// prove proves input with c's circuit; critical for a WinningPoSt (it then
// never waits behind throughput work).
func (p *Prover) prove(c cuzk.Circuit, input []byte, critical bool) ([]byte, error) {
	pce, params, err := p.resident(c)
	if err != nil {
		return nil, err
	}
	engine, err := p.engineOf()
	if err != nil {
		return nil, err
	}
	proof, _, err := cuzk.Prove(context.Background(), cuzk.Request{
		PCE: pce, Params: params, Engine: engine, Input: input, Backend: p.cfg.Backend, Critical: critical,
	})
	return proof, err
}

// aggregationSRS is the SRS loaded for aggregates of up to proofs Groth16
// proofs (a power of two), once per size.
func (p *Prover) aggregationSRS(proofs int) (*cuzk.AggregationSRS, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	s := p.srs[proofs]
	if s == nil {
		s = &aggregationSRS{}
		p.srs[proofs] = s
	}
	p.mu.Unlock()

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srs == nil {
		srs, err := cuzk.LoadAggregationSRS(filepath.Join(p.cfg.ParamsDir, AggregationSRSFileName), uint32(proofs))
		if err != nil {
			return nil, fmt.Errorf("filecoin: loading the aggregation SRS: %w", err)
		}
		s.srs = srs
	}
	return s.srs, nil
}

var (
	defaultMu     sync.Mutex
	defaultConfig Config
	defaultProver *Prover
)

// Configure sets the settings of the process-wide prover behind the
// package-level calls. Call it before the first of them: once that prover is
// made, Configure returns an error and changes nothing.
func Configure(cfg Config) error {
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if defaultProver != nil {
		return errors.New("filecoin: Configure after the default prover was made (call it before the first proof)")
	}
	defaultConfig = cfg
	return nil
}

// Default is the process-wide prover behind the package-level calls, made on
// first use with Configure's settings (the defaults without it).
func Default() *Prover {
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if defaultProver == nil {
		defaultProver = NewProver(defaultConfig)
	}
	return defaultProver
}
