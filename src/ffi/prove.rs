//! `cuzk_prove` and `cuzk_verify`.

use super::boundary::{arg_bytes, arg_opt_out, arg_out, arg_ref, copy_out};
use super::cancel::cuzk_cancel;
use super::circuit::{circuit_from_c, cuzk_circuit};
use super::device::{cuzk_backend, device_present};
use super::engine::{cuzk_engine, engine_or_default};
use super::params::cuzk_params;
use super::pce::cuzk_pce;
use super::status::{cuzk_error, cuzk_status, cuzk_status::*, Failure, FfiResult};
use crate::circuits::{Circuit, Statement};
use crate::engine::{self, CancelToken, Engine, Priority, ProveOptions, Timings};
use crate::groth16::Backend;
use crate::params::Srs;

/// Bytes of one Groth16 proof (bellperson's encoding: A, B, C compressed).
pub const CUZK_PROOF_BYTES: usize = 192;
const _: () = assert!(CUZK_PROOF_BYTES == crate::groth16::PROOF_BYTES);

/// `cuzk_prove_request::priority` of the latency class: above every throughput level (0..=255).
pub const CUZK_PRIORITY_CRITICAL: u32 = 256;

/// One proof to make. Read during the call only; nothing is kept.
///
/// A zero-initialised request (`= {0}` / `memset`) is valid once `circuit`
/// is filled in: automatic backend, verification ON.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cuzk_prove_request {
    /// The circuit to prove: must be the circuit of the PCE handle.
    pub circuit: cuzk_circuit,
    /// Synthetic circuits: the seed of the witness (and so of the public
    /// inputs). Must be 0 for PoRep.
    pub seed: u64,
    /// Circuit input bytes, borrowed for the call: PoRep's C1 output JSON
    /// (`seal_commit_phase1`'s output, as filecoin-ffi passes it to
    /// `seal_commit_phase2`). Synthetic circuits take none: `(NULL, 0)`.
    pub input: *const u8,
    /// Bytes at `input`.
    pub input_len: usize,
    /// A `cuzk_backend` value.
    pub backend: u32,
    /// The CUDA device id when `backend` is `CUZK_BACKEND_CUDA`; else 0.
    pub device: u32,
    /// Non-zero skips the verification every proof gets by default.
    pub skip_verify: u32,
    /// 0..=255: a throughput request; one waiting for memory budget or a
    /// device is overtaken by any later one of higher priority (0, the
    /// default, is the lowest). `CUZK_PRIORITY_CRITICAL`: the latency class,
    /// which overtakes every other request and never waits for throughput
    /// work: it takes the engine's critical reserve of the budget, its express
    /// CPU threads and each device's express worker. The proof type raises it
    /// (never lowers it): a WinningPoSt is always critical, a WindowPoSt goes
    /// ahead of every PoRep and synthetic request, ordered among WindowPoSts
    /// by this value.
    pub priority: u32,
    /// Must be zero: room for later fields without breaking the ABI.
    pub reserved: [u64; 4],
}

/// Seconds spent in each stage of one `cuzk_prove` call.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct cuzk_timings {
    /// Waiting for the engine's memory budget, for parameters still being decoded, and for a
    /// device worker.
    pub queued: f64,
    /// Witness generation (alloc-only synthesis).
    pub witness: f64,
    /// a = A·z, b = B·z, c = C·z from the PCE.
    pub spmv: f64,
    /// H = (a·b − c)/Z by NTTs.
    pub h: f64,
    /// The MSM of each query.
    pub msm_h: f64,
    pub msm_l: f64,
    pub msm_a: f64,
    pub msm_b_g1: f64,
    pub msm_b_g2: f64,
    /// Combining the MSMs with r, s into A, B, C.
    pub assembly: f64,
    /// Verification (0 when skipped).
    pub verify: f64,
    /// The whole call.
    pub total: f64,
    /// The backend that ran: `CUZK_BACKEND_CPU` or `CUZK_BACKEND_CUDA`.
    pub backend: u32,
    /// The CUDA device that ran (0 on the CPU); for PoRep, the last
    /// partition's (partitions may run on different devices).
    pub device: u32,
}

impl From<&Timings> for cuzk_timings {
    fn from(t: &Timings) -> cuzk_timings {
        let (backend, device) = match t.backend {
            Some(Backend::Cuda(d)) => (cuzk_backend::CUZK_BACKEND_CUDA as u32, d),
            _ => (cuzk_backend::CUZK_BACKEND_CPU as u32, 0),
        };
        cuzk_timings {
            queued: t.queued,
            witness: t.witness,
            spmv: t.spmv,
            h: t.prove.h,
            msm_h: t.prove.msm_h,
            msm_l: t.prove.msm_l,
            msm_a: t.prove.msm_a,
            msm_b_g1: t.prove.msm_b_g1,
            msm_b_g2: t.prove.msm_b_g2,
            assembly: t.prove.assembly,
            verify: t.verify,
            total: t.total,
            backend,
            device,
        }
    }
}

/// A validated request (the safe side of [`cuzk_prove_request`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request<'a> {
    pub circuit: Circuit,
    pub seed: u64,
    pub input: &'a [u8],
    pub backend: Backend,
    pub verify: bool,
    pub priority: Priority,
}

impl<'a> Request<'a> {
    /// # Safety
    /// As `cuzk_prove`'s `request`.
    pub unsafe fn from_c(r: &'a cuzk_prove_request) -> FfiResult<Request<'a>> {
        let circuit = circuit_from_c(&r.circuit)?;
        let input = arg_bytes(r.input, r.input_len, "request.input")?;
        if r.reserved.iter().any(|&v| v != 0) {
            return Err(Failure::new(CUZK_INVALID_ARGUMENT, "request.reserved fields must be zero"));
        }
        let priority = match r.priority {
            CUZK_PRIORITY_CRITICAL => Priority::Critical,
            p => Priority::Throughput(u8::try_from(p).map_err(|_| {
                Failure::new(
                    CUZK_INVALID_ARGUMENT,
                    format!(
                        "request.priority {p} is neither 0..=255 nor CUZK_PRIORITY_CRITICAL ({CUZK_PRIORITY_CRITICAL})"
                    ),
                )
            })?),
        };
        let backend = match r.backend {
            0 => Backend::Auto,
            1 => Backend::Cpu,
            2 => Backend::Cuda(r.device),
            b => {
                return Err(Failure::new(CUZK_INVALID_ARGUMENT, format!("unknown backend {b} (0 auto, 1 cpu, 2 cuda)")))
            }
        };
        if r.backend != 2 && r.device != 0 {
            return Err(Failure::new(CUZK_INVALID_ARGUMENT, "request.device is set but the backend is not CUDA"));
        }
        Ok(Request { circuit, seed: r.seed, input, backend, verify: r.skip_verify == 0, priority })
    }

    fn statement(&self) -> FfiResult<Statement> {
        Ok(self.circuit.statement(self.seed, self.input)?)
    }
}

/// Proves a validated request on `engine`; returns the proof bytes and timings.
pub fn prove(
    engine: &Engine,
    pce: &cuzk_pce,
    params: &Srs,
    req: &Request<'_>,
    cancel: &CancelToken,
) -> FfiResult<(Vec<u8>, cuzk_timings)> {
    let id = req.circuit.circuit_id()?;
    if id != pce.id {
        return Err(Failure::new(
            CUZK_CIRCUIT_MISMATCH,
            format!("the request is for {id} but the PCE holds {}", pce.id),
        ));
    }
    if let Backend::Cuda(id) = req.backend {
        device_present(id)?;
    }
    let statement = req.statement()?;
    let (proofs, t) = engine.prove(engine::Request {
        pce: &pce.pce,
        params,
        statement: &statement,
        opts: ProveOptions { backend: req.backend, verify: req.verify, randomness: None },
        priority: req.priority,
        cancel: cancel.clone(),
        observer: None,
    })?;
    Ok((engine::proof_bytes(&proofs), cuzk_timings::from(&t)))
}

/// Proves one circuit instance through its PCE on an engine and writes the
/// proof.
///
/// - `engine`: NULL for the process-wide default engine (made on first use
///   with the default `cuzk_engine_config`), else borrowed for the call.
/// - `pce`, `params`: handles borrowed for the call (they must belong to the
///   request's circuit: `CUZK_CIRCUIT_MISMATCH` / `CUZK_PARAMS_MISMATCH`).
/// - `request`: read during the call only (see `cuzk_prove_request`).
/// - `cancel`: NULL, or a token borrowed for the call; triggering it from
///   another thread ends a waiting request with `CUZK_CANCELLED`.
/// - `proof_out`, `proof_cap`: a caller-owned buffer of `proof_cap` bytes,
///   at least `cuzk_request_proof_len(circuit, input, input_len)` (more
///   than `cuzk_proof_len(circuit)` for a WindowPoSt request for every
///   partition and a NonInteractivePoRep C1). Written only on success.
/// - `proof_len`: receives the bytes written; on `CUZK_BUFFER_TOO_SMALL` it
///   receives the bytes needed instead (checked before any work is done, so
///   `(NULL, 0)` is a cheap size query).
/// - `timings`: NULL or a caller-owned struct, filled on success.
/// - `err`: NULL or a caller-owned `cuzk_error`, always written.
///
/// Every pointer is checked (NULL where one is required, alignment for its
/// type) before any work is done or anything is written: a bad one is
/// `CUZK_NULL_ARGUMENT` or `CUZK_INVALID_ARGUMENT` with the outputs untouched.
///
/// The request waits until its memory footprint fits the engine's budget
/// (`CUZK_OVER_BUDGET` at once if it never could), synthesizes on the
/// engine's CPU pool, waits for the parameters' points if they are still
/// being decoded (`CUZK_PARAMS_LOAD_BACKGROUND`: `CUZK_BAD_PARAMS_FILE` if
/// their decoding failed), then waits for a worker of its device. A PoRep request
/// proves its partitions concurrently, each reserving its own footprint.
/// Verification is on unless `request->skip_verify`: a proof that does not
/// verify is `CUZK_VERIFICATION_FAILED` and is not written.
///
/// Thread-safety: safe from many threads at once, with the same or different
/// handles; each call has its own witness and buffers.
#[no_mangle]
pub unsafe extern "C" fn cuzk_prove(
    engine: *const cuzk_engine,
    pce: *const cuzk_pce,
    params: *const cuzk_params,
    request: *const cuzk_prove_request,
    cancel: *const cuzk_cancel,
    proof_out: *mut u8,
    proof_cap: usize,
    proof_len: *mut usize,
    timings: *mut cuzk_timings,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        // Every pointer is checked before anything is written or done.
        // Handles are held for the call: freed meanwhile on another thread, they stay alive.
        let pce = super::pce::HANDLES.get(pce, "pce")?;
        let params = super::params::HANDLES.get(params, "params")?;
        let req = Request::from_c(arg_ref(request, "request")?)?;
        let engine = super::engine::ENGINES.get_opt(engine, "engine")?;
        let cancel = super::cancel::CANCELS.get_opt(cancel, "cancel")?;
        let proof_len = arg_out(proof_len, "proof_len")?;
        let timings = arg_opt_out(timings, "timings")?;
        let needed = req.circuit.proof_len_for(req.input)?;
        if proof_cap < needed {
            proof_len.write(needed);
            return Err(Failure::new(
                CUZK_BUFFER_TOO_SMALL,
                format!("the proof needs {needed} bytes, the buffer has {proof_cap}"),
            ));
        }
        if proof_out.is_null() {
            return Err(Failure::new(CUZK_NULL_ARGUMENT, "proof_out is NULL"));
        }
        let cancel = cancel.map_or_else(CancelToken::new, |c| c.token.clone());
        let engine = engine_or_default(engine.as_deref())?;
        let (bytes, t) = prove(&engine, &pce, &params.params, &req, &cancel)?;
        copy_out(&bytes, needed, proof_out, proof_len)?;
        if let Some(timings) = timings {
            timings.write(t);
        }
        Ok(())
    })
}

/// Verifies a proof of `request`'s circuit instance (its public inputs are
/// recomputed from the request: the seed, or PoRep's C1 output, every
/// partition checked) with `params`' verifying key.
///
/// `params`, `request` and the `proof_len` bytes at `proof` are borrowed for
/// the call. Returns `CUZK_OK` when the proof verifies,
/// `CUZK_VERIFICATION_FAILED` when it does not, `CUZK_MALFORMED_PROOF` when
/// the bytes do not decode. Thread-safety: safe from many threads at once.
#[no_mangle]
pub unsafe extern "C" fn cuzk_verify(
    params: *const cuzk_params,
    request: *const cuzk_prove_request,
    proof: *const u8,
    proof_len: usize,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let params = super::params::HANDLES.get(params, "params")?;
        let req = Request::from_c(arg_ref(request, "request")?)?;
        let proof = arg_bytes(proof, proof_len, "proof")?;
        Ok(engine::verify(params.params.vk(), &req.statement()?, proof)?)
    })
}
