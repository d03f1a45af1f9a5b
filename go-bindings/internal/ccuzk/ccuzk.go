// Package ccuzk mirrors the C ABI of libcuzk (include/cuzk.h) one function to
// one function, converting C types to Go types and nothing more. The
// idiomatic API is package cuzk.
//
// Memory rules (cgo): strings and input bytes are copied into C memory for
// the call and freed after it; Go buffers (proof output, result structs) are
// passed only for the duration of a call, and the library keeps no pointer
// after it returns. Handles are pointers to Rust-owned memory.
//
// Linking: through pkg-config's cuzk.pc, which scripts/install.sh writes
// with the header and libcuzk.a into a prefix (its Libs line is the exact
// static link line of that build, CPU or CUDA). Build with
// PKG_CONFIG_PATH=PREFIX/lib/pkgconfig.
package ccuzk

/*
#cgo pkg-config: cuzk
#include <stdlib.h>
#include "cuzk.h"
*/
import "C"

import (
	"strings"
	"unsafe"
)

// StatusInvalidArgument is returned without calling C when a Go string holds
// a NUL byte (C would silently truncate it).
const StatusInvalidArgument = Status(C.CUZK_INVALID_ARGUMENT)

func nulIn(strs ...string) (Status, string, bool) {
	for _, s := range strs {
		if strings.IndexByte(s, 0) >= 0 {
			return StatusInvalidArgument, "a string argument contains a NUL byte", true
		}
	}
	return 0, "", false
}

// Status is a cuzk_status value.
type Status uint32

// Pce is a cuzk_pce handle (Rust-owned memory).
type Pce struct{ p *C.struct_cuzk_pce }

// Params is a cuzk_params handle (Rust-owned memory).
type Params struct{ p *C.struct_cuzk_params }

// Engine is a cuzk_engine handle (Rust-owned memory).
type Engine struct{ p *C.struct_cuzk_engine }

// Cancel is a cuzk_cancel handle (Rust-owned memory).
type Cancel struct{ p *C.struct_cuzk_cancel }

// AggSrs is a cuzk_agg_srs handle (Rust-owned memory).
type AggSrs struct{ p *C.struct_cuzk_agg_srs }

// IsNil reports whether the handle is empty.
func (h Pce) IsNil() bool { return h.p == nil }

// IsNil reports whether the handle is empty.
func (h Params) IsNil() bool { return h.p == nil }

// Circuit mirrors struct cuzk_circuit.
type Circuit struct {
	Kind uint32
	Name string
	Size uint64
}

// Request mirrors struct cuzk_prove_request.
type Request struct {
	Circuit    Circuit
	Seed       uint64
	Input      []byte
	Backend    uint32
	Device     uint32
	SkipVerify bool
	Priority   uint32
}

// EngineConfig mirrors struct cuzk_engine_config.
type EngineConfig struct {
	SynthesisThreads, WorkersPerDevice uint32
	Devices                            []uint32
	BudgetBytes, BudgetMargin          uint64
	Flags                              uint32
	CriticalReserveBytes               uint64
}

// EngineStats mirrors struct cuzk_engine_stats.
type EngineStats struct {
	BudgetBytes, BudgetUsed, BudgetPeak, Waiting uint64
	NumDevices, WorkersPerDevice                 uint32
}

// DeviceStats mirrors struct cuzk_device_stats.
type DeviceStats struct {
	Backend, Device, InUse uint32
	Healthy                bool
	Proofs, Failures       uint64
	BusySeconds            float64
	VramFree, VramTotal    uint64
}

// Timings mirrors struct cuzk_timings.
type Timings struct {
	Queued, Witness, Spmv, H, MsmH, MsmL, MsmA, MsmBG1, MsmBG2, Assembly, Verify, Total float64
	Backend, Device                                                                     uint32
}

// MemStats mirrors struct cuzk_mem_stats.
type MemStats struct {
	RssBytes, PeakRssBytes, RssAnonBytes, RssFileBytes                   uint64
	PceBytes, PceMappedBytes, SrsBytes, WitnessBytes, AbcBytes, GpuBytes uint64
	PeakResetSupported                                                   bool
}

// PceInfo mirrors struct cuzk_pce_info.
type PceInfo struct {
	NumConstraints, NumInputs, NumAux, Nnz, Bytes, HeapBytes, Instance uint64
	CircuitID                                                          string
}

// Constants of the header.
const (
	StatusOK                    = Status(C.CUZK_OK)
	ProofBytes                  = int(C.CUZK_PROOF_BYTES)
	CircuitSynthetic            = uint32(C.CUZK_CIRCUIT_SYNTHETIC)
	CircuitPorep                = uint32(C.CUZK_CIRCUIT_POREP)
	CircuitWinningPost          = uint32(C.CUZK_CIRCUIT_WINNING_POST)
	CircuitWindowPost           = uint32(C.CUZK_CIRCUIT_WINDOW_POST)
	CircuitSnapDeals            = uint32(C.CUZK_CIRCUIT_SNAP_DEALS)
	BackendAuto                 = uint32(C.CUZK_BACKEND_AUTO)
	BackendCPU                  = uint32(C.CUZK_BACKEND_CPU)
	BackendCUDA                 = uint32(C.CUZK_BACKEND_CUDA)
	PceLoadSkipChecksums        = uint32(C.CUZK_PCE_LOAD_SKIP_CHECKSUMS)
	PceLoadMap                  = uint32(C.CUZK_PCE_LOAD_MAP)
	EngineCPUOnly               = uint32(C.CUZK_ENGINE_CPU_ONLY)
	EngineSynthesisFullPriority = uint32(C.CUZK_ENGINE_SYNTHESIS_FULL_PRIORITY)
	EngineNoCriticalReserve     = uint32(C.CUZK_ENGINE_NO_CRITICAL_RESERVE)
	PriorityCritical            = uint32(C.CUZK_PRIORITY_CRITICAL)
	EngineKeepMalloc            = uint32(C.CUZK_ENGINE_KEEP_MALLOC)
	ParamsLoadChecked           = uint32(C.CUZK_PARAMS_LOAD_CHECKED)
	ParamsLoadNoCache           = uint32(C.CUZK_PARAMS_LOAD_NO_CACHE)
	ParamsLoadBackground        = uint32(C.CUZK_PARAMS_LOAD_BACKGROUND)
	SnarkPackV1                 = uint32(C.CUZK_SNARKPACK_V1)
	SnarkPackV2                 = uint32(C.CUZK_SNARKPACK_V2)
	Version                     = C.CUZK_VERSION
)

func detail(e *C.struct_cuzk_error) string { return C.GoString(&e.message[0]) }

// cCircuit copies c into C memory; call the returned func to free it.
func cCircuit(c Circuit) (C.struct_cuzk_circuit, func()) {
	name := C.CString(c.Name)
	return C.struct_cuzk_circuit{kind: C.uint32_t(c.Kind), name: name, size: C.uint64_t(c.Size)},
		func() { C.free(unsafe.Pointer(name)) }
}

func cRequest(r Request) (C.struct_cuzk_prove_request, func()) {
	circuit, freeCircuit := cCircuit(r.Circuit)
	var req C.struct_cuzk_prove_request
	req.circuit = circuit
	req.seed = C.uint64_t(r.Seed)
	var input unsafe.Pointer
	if len(r.Input) > 0 {
		input = C.CBytes(r.Input)
		req.input = (*C.uint8_t)(input)
		req.input_len = C.size_t(len(r.Input))
	}
	req.backend = C.uint32_t(r.Backend)
	req.device = C.uint32_t(r.Device)
	if r.SkipVerify {
		req.skip_verify = 1
	}
	req.priority = C.uint32_t(r.Priority)
	return req, func() {
		freeCircuit()
		if input != nil {
			C.free(input)
		}
	}
}

// LibVersion is cuzk_version.
func LibVersion() string { return C.GoString(C.cuzk_version()) }

// StatusStr is cuzk_status_str.
func StatusStr(s uint32) string { return C.GoString(C.cuzk_status_str(C.uint32_t(s))) }

// DebugPanic is cuzk_debug_panic (test-only).
func DebugPanic() (Status, string) {
	var e C.struct_cuzk_error
	s := C.cuzk_debug_panic(&e)
	return Status(s), detail(&e)
}

// PceLoad is cuzk_pce_load.
func PceLoad(c Circuit, path string, flags uint32) (Pce, Status, string) {
	if s, m, bad := nulIn(c.Name, path); bad {
		return Pce{}, s, m
	}
	circuit, free := cCircuit(c)
	defer free()
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var out *C.struct_cuzk_pce
	var e C.struct_cuzk_error
	s := C.cuzk_pce_load(&circuit, cpath, C.uint32_t(flags), &out, &e)
	return Pce{out}, Status(s), detail(&e)
}

// PceInfoOf is cuzk_pce_info.
func PceInfoOf(h Pce) (PceInfo, Status, string) {
	var out C.struct_cuzk_pce_info
	var e C.struct_cuzk_error
	s := C.cuzk_pce_info(h.p, &out, &e)
	return PceInfo{
		NumConstraints: uint64(out.num_constraints), NumInputs: uint64(out.num_inputs),
		NumAux: uint64(out.num_aux), Nnz: uint64(out.nnz), Bytes: uint64(out.bytes),
		HeapBytes: uint64(out.heap_bytes), Instance: uint64(out.instance),
		CircuitID: C.GoString(&out.circuit_id[0]),
	}, Status(s), detail(&e)
}

// PceUnload is cuzk_pce_unload.
func PceUnload(h Pce) (Status, string) {
	var e C.struct_cuzk_error
	s := C.cuzk_pce_unload(h.p, &e)
	return Status(s), detail(&e)
}

// PceFree is cuzk_pce_free.
func PceFree(h Pce) { C.cuzk_pce_free(h.p) }

// ParamsLoad is cuzk_params_load.
func ParamsLoad(path string, flags uint32) (Params, Status, string) {
	if s, m, bad := nulIn(path); bad {
		return Params{}, s, m
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var out *C.struct_cuzk_params
	var e C.struct_cuzk_error
	s := C.cuzk_params_load(cpath, C.uint32_t(flags), &out, &e)
	return Params{out}, Status(s), detail(&e)
}

// ParamsGenerate is cuzk_params_generate.
func ParamsGenerate(c Circuit, path string, seed uint64) (Params, Status, string) {
	if s, m, bad := nulIn(c.Name, path); bad {
		return Params{}, s, m
	}
	circuit, free := cCircuit(c)
	defer free()
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var out *C.struct_cuzk_params
	var e C.struct_cuzk_error
	s := C.cuzk_params_generate(&circuit, cpath, C.uint64_t(seed), &out, &e)
	return Params{out}, Status(s), detail(&e)
}

// ParamsWait is cuzk_params_wait.
func ParamsWait(h Params) (Status, string) {
	var e C.struct_cuzk_error
	s := C.cuzk_params_wait(h.p, &e)
	return Status(s), detail(&e)
}

// ParamsUnload is cuzk_params_unload.
func ParamsUnload(h Params) (Status, string) {
	var e C.struct_cuzk_error
	s := C.cuzk_params_unload(h.p, &e)
	return Status(s), detail(&e)
}

// ParamsFree is cuzk_params_free.
func ParamsFree(h Params) { C.cuzk_params_free(h.p) }

// Prove is cuzk_prove; the proof goes into out (borrowed for the call).
// A nil engine is the default engine, a nil cancel none.
func Prove(engine Engine, pce Pce, params Params, r Request, cancel Cancel, out []byte) (int, Timings, Status, string) {
	if s, m, bad := nulIn(r.Circuit.Name); bad {
		return 0, Timings{}, s, m
	}
	req, free := cRequest(r)
	defer free()
	var outPtr *C.uint8_t
	if len(out) > 0 {
		outPtr = (*C.uint8_t)(unsafe.Pointer(&out[0]))
	}
	var n C.size_t
	var t C.struct_cuzk_timings
	var e C.struct_cuzk_error
	s := C.cuzk_prove(engine.p, pce.p, params.p, &req, cancel.p, outPtr, C.size_t(len(out)), &n, &t, &e)
	return int(n), Timings{
		Queued: float64(t.queued), Witness: float64(t.witness), Spmv: float64(t.spmv), H: float64(t.h),
		MsmH: float64(t.msm_h), MsmL: float64(t.msm_l), MsmA: float64(t.msm_a),
		MsmBG1: float64(t.msm_b_g1), MsmBG2: float64(t.msm_b_g2), Assembly: float64(t.assembly),
		Verify: float64(t.verify), Total: float64(t.total),
		Backend: uint32(t.backend), Device: uint32(t.device),
	}, Status(s), detail(&e)
}

// ProofLen is cuzk_proof_len.
func ProofLen(c Circuit) (int, Status, string) {
	if s, m, bad := nulIn(c.Name); bad {
		return 0, s, m
	}
	circuit, free := cCircuit(c)
	defer free()
	var n C.size_t
	var e C.struct_cuzk_error
	s := C.cuzk_proof_len(&circuit, &n, &e)
	return int(n), Status(s), detail(&e)
}

// RequestProofLen is cuzk_request_proof_len.
func RequestProofLen(c Circuit, input []byte) (int, Status, string) {
	if s, m, bad := nulIn(c.Name); bad {
		return 0, s, m
	}
	circuit, free := cCircuit(c)
	defer free()
	var in unsafe.Pointer
	if len(input) > 0 {
		in = C.CBytes(input)
		defer C.free(in)
	}
	var n C.size_t
	var e C.struct_cuzk_error
	s := C.cuzk_request_proof_len(&circuit, (*C.uint8_t)(in), C.size_t(len(input)), &n, &e)
	return int(n), Status(s), detail(&e)
}

// EngineNew is cuzk_engine_new.
func EngineNew(c EngineConfig) (Engine, Status, string) {
	var cfg C.struct_cuzk_engine_config
	cfg.synthesis_threads = C.uint32_t(c.SynthesisThreads)
	cfg.workers_per_device = C.uint32_t(c.WorkersPerDevice)
	cfg.budget_bytes = C.uint64_t(c.BudgetBytes)
	cfg.budget_margin = C.uint64_t(c.BudgetMargin)
	cfg.flags = C.uint32_t(c.Flags)
	cfg.critical_reserve_bytes = C.uint64_t(c.CriticalReserveBytes)
	if len(c.Devices) > 0 {
		// C memory: the config struct must not hold a Go pointer.
		ids := (*C.uint32_t)(C.malloc(C.size_t(len(c.Devices)) * C.size_t(unsafe.Sizeof(C.uint32_t(0)))))
		defer C.free(unsafe.Pointer(ids))
		dst := unsafe.Slice(ids, len(c.Devices))
		for i, id := range c.Devices {
			dst[i] = C.uint32_t(id)
		}
		cfg.devices = ids
		cfg.num_devices = C.size_t(len(c.Devices))
	}
	var out *C.struct_cuzk_engine
	var e C.struct_cuzk_error
	s := C.cuzk_engine_new(&cfg, &out, &e)
	return Engine{out}, Status(s), detail(&e)
}

// EngineFree is cuzk_engine_free.
func EngineFree(h Engine) { C.cuzk_engine_free(h.p) }

// EngineStatsOf is cuzk_engine_stats.
func EngineStatsOf(h Engine) (EngineStats, Status, string) {
	var st C.struct_cuzk_engine_stats
	var e C.struct_cuzk_error
	s := C.cuzk_engine_stats(h.p, &st, &e)
	return EngineStats{
		BudgetBytes: uint64(st.budget_bytes), BudgetUsed: uint64(st.budget_used),
		BudgetPeak: uint64(st.budget_peak), Waiting: uint64(st.waiting),
		NumDevices: uint32(st.num_devices), WorkersPerDevice: uint32(st.workers_per_device),
	}, Status(s), detail(&e)
}

// EngineDevices is cuzk_engine_devices (every device of the engine).
func EngineDevices(h Engine) ([]DeviceStats, Status, string) {
	var n C.size_t
	var e C.struct_cuzk_error
	if s := C.cuzk_engine_devices(h.p, nil, 0, &n, &e); s != C.CUZK_OK {
		return nil, Status(s), detail(&e)
	}
	buf := make([]C.struct_cuzk_device_stats, int(n)+1)
	s := C.cuzk_engine_devices(h.p, &buf[0], C.size_t(len(buf)), &n, &e)
	if s != C.CUZK_OK {
		return nil, Status(s), detail(&e)
	}
	out := make([]DeviceStats, 0, int(n))
	for _, d := range buf[:int(n)] {
		out = append(out, DeviceStats{
			Backend: uint32(d.backend), Device: uint32(d.device), InUse: uint32(d.in_use),
			Healthy: d.healthy != 0, Proofs: uint64(d.proofs), Failures: uint64(d.failures),
			BusySeconds: float64(d.busy_seconds), VramFree: uint64(d.vram_free), VramTotal: uint64(d.vram_total),
		})
	}
	return out, Status(s), detail(&e)
}

// EngineFootprint is cuzk_engine_footprint.
func EngineFootprint(h Engine, pce Pce) (uint64, Status, string) {
	var out C.uint64_t
	var e C.struct_cuzk_error
	s := C.cuzk_engine_footprint(h.p, pce.p, &out, &e)
	return uint64(out), Status(s), detail(&e)
}

// EnginePrepare is cuzk_engine_prepare.
func EnginePrepare(h Engine, pce Pce, params Params) (Status, string) {
	var e C.struct_cuzk_error
	s := C.cuzk_engine_prepare(h.p, pce.p, params.p, &e)
	return Status(s), detail(&e)
}

// EnginePredictedPeak is cuzk_engine_predicted_peak.
func EnginePredictedPeak(h Engine, pce Pce, inFlight uint32) (uint64, Status, string) {
	var out C.uint64_t
	var e C.struct_cuzk_error
	s := C.cuzk_engine_predicted_peak(h.p, pce.p, C.uint32_t(inFlight), &out, &e)
	return uint64(out), Status(s), detail(&e)
}

// CancelNew is cuzk_cancel_new.
func CancelNew() (Cancel, Status, string) {
	var out *C.struct_cuzk_cancel
	var e C.struct_cuzk_error
	s := C.cuzk_cancel_new(&out, &e)
	return Cancel{out}, Status(s), detail(&e)
}

// CancelTrigger is cuzk_cancel_trigger.
func CancelTrigger(h Cancel) Status { return Status(C.cuzk_cancel_trigger(h.p, nil)) }

// CancelFree is cuzk_cancel_free.
func CancelFree(h Cancel) { C.cuzk_cancel_free(h.p) }

// Verify is cuzk_verify; proof is borrowed for the call.
func Verify(params Params, r Request, proof []byte) (Status, string) {
	if s, m, bad := nulIn(r.Circuit.Name); bad {
		return s, m
	}
	req, free := cRequest(r)
	defer free()
	var p *C.uint8_t
	if len(proof) > 0 {
		p = (*C.uint8_t)(unsafe.Pointer(&proof[0]))
	}
	var e C.struct_cuzk_error
	s := C.cuzk_verify(params.p, &req, p, C.size_t(len(proof)), &e)
	return Status(s), detail(&e)
}

// MemStatsNow is cuzk_mem_stats.
func MemStatsNow() (MemStats, Status, string) {
	var m C.struct_cuzk_mem_stats
	var e C.struct_cuzk_error
	s := C.cuzk_mem_stats(&m, &e)
	return MemStats{
		RssBytes: uint64(m.rss_bytes), PeakRssBytes: uint64(m.peak_rss_bytes),
		RssAnonBytes: uint64(m.rss_anon_bytes), RssFileBytes: uint64(m.rss_file_bytes),
		PceBytes: uint64(m.pce_bytes), PceMappedBytes: uint64(m.pce_mapped_bytes),
		SrsBytes: uint64(m.srs_bytes), WitnessBytes: uint64(m.witness_bytes),
		AbcBytes: uint64(m.abc_bytes), GpuBytes: uint64(m.gpu_bytes),
		PeakResetSupported: m.peak_reset_supported != 0,
	}, Status(s), detail(&e)
}

// MemResetPeak is cuzk_mem_reset_peak.
func MemResetPeak() (Status, string) {
	var e C.struct_cuzk_error
	s := C.cuzk_mem_reset_peak(&e)
	return Status(s), detail(&e)
}

// MemTrim is cuzk_mem_trim.
func MemTrim() Status { return Status(C.cuzk_mem_trim(nil)) }

// CudaDeviceCount is cuzk_cuda_device_count.
func CudaDeviceCount() (uint32, Status, string) {
	var n C.uint32_t
	var e C.struct_cuzk_error
	s := C.cuzk_cuda_device_count(&n, &e)
	return uint32(n), Status(s), detail(&e)
}

// AggSrsLoad is cuzk_agg_srs_load.
func AggSrsLoad(path string, maxProofs uint32) (AggSrs, Status, string) {
	if s, m, bad := nulIn(path); bad {
		return AggSrs{}, s, m
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var out *C.struct_cuzk_agg_srs
	var e C.struct_cuzk_error
	s := C.cuzk_agg_srs_load(cpath, C.uint32_t(maxProofs), &out, &e)
	return AggSrs{out}, Status(s), detail(&e)
}

// AggSrsGenerate is cuzk_agg_srs_generate.
func AggSrsGenerate(path string, maxProofs uint32, seed uint64) (AggSrs, Status, string) {
	if s, m, bad := nulIn(path); bad {
		return AggSrs{}, s, m
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var out *C.struct_cuzk_agg_srs
	var e C.struct_cuzk_error
	s := C.cuzk_agg_srs_generate(cpath, C.uint32_t(maxProofs), C.uint64_t(seed), &out, &e)
	return AggSrs{out}, Status(s), detail(&e)
}

// AggSrsFree is cuzk_agg_srs_free.
func AggSrsFree(h AggSrs) { C.cuzk_agg_srs_free(h.p) }

// SealProof mirrors struct cuzk_seal_proof.
type SealProof struct {
	Proof []byte
	CommR [32]byte
	Seed  [32]byte
}

// AggregateLen is cuzk_aggregate_len.
func AggregateLen(registeredProof string, seals int) (proofs, bytes int, s Status, msg string) {
	if s, m, bad := nulIn(registeredProof); bad {
		return 0, 0, s, m
	}
	rp := C.CString(registeredProof)
	defer C.free(unsafe.Pointer(rp))
	var p, b C.size_t
	var e C.struct_cuzk_error
	st := C.cuzk_aggregate_len(rp, C.size_t(seals), &p, &b, &e)
	return int(p), int(b), Status(st), detail(&e)
}

// Aggregate is cuzk_aggregate; the aggregate goes into out (borrowed for the
// call). The seals and their proofs are copied into C memory for the call (a
// struct holding Go pointers may not be passed to C).
func Aggregate(srs AggSrs, registeredProof string, seals []SealProof, version uint32, out []byte) (int, Status, string) {
	if s, m, bad := nulIn(registeredProof); bad {
		return 0, s, m
	}
	rp := C.CString(registeredProof)
	defer C.free(unsafe.Pointer(rp))
	var cseals *C.struct_cuzk_seal_proof
	if len(seals) > 0 {
		total := 0
		for _, s := range seals {
			total += len(s.Proof)
		}
		bytes := (*C.uint8_t)(C.malloc(C.size_t(total + 1)))
		defer C.free(unsafe.Pointer(bytes))
		cseals = (*C.struct_cuzk_seal_proof)(C.malloc(C.size_t(len(seals)) * C.sizeof_struct_cuzk_seal_proof))
		defer C.free(unsafe.Pointer(cseals))
		all := unsafe.Slice(bytes, total+1)
		list := unsafe.Slice(cseals, len(seals))
		at := 0
		for i, s := range seals {
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&all[at])), len(s.Proof)), s.Proof)
			list[i].proof = &all[at]
			list[i].proof_len = C.size_t(len(s.Proof))
			for j := 0; j < 32; j++ {
				list[i].comm_r[j] = C.uint8_t(s.CommR[j])
				list[i].seed[j] = C.uint8_t(s.Seed[j])
			}
			at += len(s.Proof)
		}
	}
	var outPtr *C.uint8_t
	if len(out) > 0 {
		outPtr = (*C.uint8_t)(unsafe.Pointer(&out[0]))
	}
	var n C.size_t
	var e C.struct_cuzk_error
	s := C.cuzk_aggregate(srs.p, rp, cseals, C.size_t(len(seals)), C.uint32_t(version), outPtr, C.size_t(len(out)), &n, &e)
	return int(n), Status(s), detail(&e)
}
