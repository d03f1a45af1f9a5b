//! `cuzk_prove` and `cuzk_verify`.

use bellperson::groth16::{Parameters, Proof};
use blstrs::{Bls12, Scalar};

use super::boundary::{arg_bytes, arg_out, arg_ref};
use super::circuit::{cuzk_circuit, porep_unsupported, Circuit};
use super::params::cuzk_params;
use super::pce::cuzk_pce;
use super::status::{cuzk_error, cuzk_status, cuzk_status::*, Failure, FfiResult};
use crate::circuits::Synthetic;
use crate::engine::{self, Backend, ProveOptions, Timings};
use crate::groth16::{self, proof_bytes};

/// Bytes of one Groth16 proof (bellperson's encoding: A, B, C compressed).
pub const CUZK_PROOF_BYTES: usize = 192;

/// Where a proof runs (values of `cuzk_prove_request::backend`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cuzk_backend {
    /// CUDA device 0 when one is present, else the CPU (the default: 0).
    CUZK_BACKEND_AUTO = 0,
    /// The CPU.
    CUZK_BACKEND_CPU = 1,
    /// The CUDA device `cuzk_prove_request::device`.
    CUZK_BACKEND_CUDA = 2,
}

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
    /// inputs). Ignored by PoRep.
    pub seed: u64,
    /// Circuit input bytes, borrowed for the call: PoRep's C1 output JSON.
    /// Synthetic circuits take none: `(NULL, 0)`.
    pub input: *const u8,
    /// Bytes at `input`.
    pub input_len: usize,
    /// A `cuzk_backend` value.
    pub backend: u32,
    /// The CUDA device id when `backend` is `CUZK_BACKEND_CUDA`; else 0.
    pub device: u32,
    /// Non-zero skips the verification every proof gets by default.
    pub skip_verify: u32,
    /// Must be zero.
    pub _reserved0: u32,
    /// Must be zero: room for later fields without breaking the ABI.
    pub reserved: [u64; 4],
}

/// Seconds spent in each stage of one `cuzk_prove` call.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct cuzk_timings {
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
    /// The CUDA device that ran (0 on the CPU).
    pub device: u32,
}

impl cuzk_timings {
    fn new(t: &Timings, b: Backend) -> cuzk_timings {
        let (backend, device) = match b {
            Backend::Cuda(d) => (cuzk_backend::CUZK_BACKEND_CUDA as u32, d),
            _ => (cuzk_backend::CUZK_BACKEND_CPU as u32, 0),
        };
        cuzk_timings {
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
}

impl<'a> Request<'a> {
    /// # Safety
    /// As `cuzk_prove`'s `request`.
    pub unsafe fn from_c(r: &'a cuzk_prove_request) -> FfiResult<Request<'a>> {
        let circuit = Circuit::from_c(&r.circuit)?;
        let input = arg_bytes(r.input, r.input_len, "request.input")?;
        if r._reserved0 != 0 || r.reserved.iter().any(|&v| v != 0) {
            return Err(Failure::new(CUZK_INVALID_ARGUMENT, "request.reserved fields must be zero"));
        }
        let backend = match r.backend {
            0 => Backend::Auto,
            1 => Backend::Cpu,
            2 => Backend::Cuda(r.device),
            b => return Err(Failure::new(CUZK_INVALID_ARGUMENT, format!("unknown backend {b} (0 auto, 1 cpu, 2 cuda)"))),
        };
        if r.backend != 2 && r.device != 0 {
            return Err(Failure::new(CUZK_INVALID_ARGUMENT, "request.device is set but the backend is not CUDA"));
        }
        if matches!(circuit, Circuit::Synthetic { .. }) && !input.is_empty() {
            return Err(Failure::new(CUZK_INVALID_ARGUMENT, "synthetic circuits take no input bytes"));
        }
        Ok(Request { circuit, seed: r.seed, input, backend, verify: r.skip_verify == 0 })
    }

    /// The synthetic instance this request proves.
    fn instance(&self) -> FfiResult<Synthetic> {
        match self.circuit {
            Circuit::Porep { .. } => Err(porep_unsupported()),
            Circuit::Synthetic { .. } => self.circuit.synthetic(self.seed),
        }
    }
}

/// Proves a validated request; returns the proof bytes and timings.
pub fn prove(pce: &cuzk_pce, params: &Parameters<Bls12>, req: &Request<'_>) -> FfiResult<(Vec<u8>, cuzk_timings)> {
    // Hook for the engine's queue: a request waiting for a pipeline will be
    // cancellable here (Error::Cancelled → CUZK_CANCELLED).
    let circuit = req.instance()?;
    if circuit.circuit_id() != pce.id {
        return Err(Failure::new(
            CUZK_CIRCUIT_MISMATCH,
            format!("the request is for {} but the PCE holds {}", circuit.circuit_id(), pce.id),
        ));
    }
    let backend = resolve(req.backend)?;
    let public = circuit.public_inputs();
    let opts = ProveOptions { backend, verify: req.verify, randomness: None };
    let (proof, t) = engine::prove_one(&pce.pce, params, circuit, Some(&public), &opts)?;
    Ok((proof_bytes(&proof).to_vec(), cuzk_timings::new(&t, backend)))
}

fn resolve(b: Backend) -> FfiResult<Backend> {
    if let Backend::Cuda(id) = b {
        let n = engine::gpu_count();
        if id as usize >= n {
            return Err(Failure::new(
                CUZK_NO_SUCH_DEVICE,
                format!(
                    "no CUDA device {id}: {n} present{}",
                    if cfg!(feature = "cuda") { "" } else { " (built without the cuda feature)" }
                ),
            ));
        }
    }
    Ok(engine::resolve(b)?)
}

/// Verifies proof bytes against a validated request's public inputs.
pub fn verify(params: &Parameters<Bls12>, req: &Request<'_>, proof: &[u8]) -> FfiResult<()> {
    if proof.len() != CUZK_PROOF_BYTES {
        return Err(Failure::new(
            CUZK_INVALID_ARGUMENT,
            format!("a proof has {CUZK_PROOF_BYTES} bytes, not {}", proof.len()),
        ));
    }
    let inputs: Vec<Scalar> = req.instance()?.public_inputs();
    let proof = Proof::<Bls12>::read(proof)
        .map_err(|e| Failure::new(CUZK_MALFORMED_PROOF, format!("proof does not decode: {e}")))?;
    Ok(groth16::verify(&params.vk, &proof, &inputs)?)
}

/// Proves one circuit instance through its PCE and writes the proof.
///
/// - `pce`, `params`: handles borrowed for the call (they must belong to the
///   request's circuit: `CUZK_CIRCUIT_MISMATCH` / `CUZK_PARAMS_MISMATCH`).
/// - `request`: read during the call only (see `cuzk_prove_request`).
/// - `proof_out`, `proof_cap`: a caller-owned buffer of `proof_cap` bytes;
///   a synthetic circuit needs `CUZK_PROOF_BYTES`. Written only on success.
/// - `proof_len`: receives the bytes written; on `CUZK_BUFFER_TOO_SMALL` it
///   receives the bytes needed instead (checked before any work is done, so
///   `(NULL, 0)` is a cheap size query).
/// - `timings`: NULL or a caller-owned struct, filled on success.
/// - `err`: NULL or a caller-owned `cuzk_error`, always written.
///
/// Verification is on unless `request->skip_verify`: a proof that does not
/// verify is `CUZK_VERIFICATION_FAILED` and is not written.
///
/// Thread-safety: safe from many threads at once, with the same or different
/// handles; each call has its own witness and buffers.
#[no_mangle]
pub unsafe extern "C" fn cuzk_prove(
    pce: *const cuzk_pce,
    params: *const cuzk_params,
    request: *const cuzk_prove_request,
    proof_out: *mut u8,
    proof_cap: usize,
    proof_len: *mut usize,
    timings: *mut cuzk_timings,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let pce = arg_ref(pce, "pce")?;
        let params = arg_ref(params, "params")?;
        let req = Request::from_c(arg_ref(request, "request")?)?;
        let proof_len = arg_out(proof_len, "proof_len")?;
        let needed = match req.circuit {
            Circuit::Synthetic { .. } => CUZK_PROOF_BYTES,
            Circuit::Porep { .. } => return Err(porep_unsupported()),
        };
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
        let (bytes, t) = prove(pce, &params.params, &req)?;
        if bytes.len() > proof_cap {
            return Err(Failure::new(CUZK_INTERNAL, "proof longer than announced"));
        }
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), proof_out, bytes.len());
        proof_len.write(bytes.len());
        if !timings.is_null() {
            arg_out(timings, "timings")?.write(t);
        }
        Ok(())
    })
}

/// Verifies a proof of `request`'s circuit instance (its public inputs are
/// recomputed from the request) with `params`' verifying key.
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
        let params = arg_ref(params, "params")?;
        let req = Request::from_c(arg_ref(request, "request")?)?;
        let proof = arg_bytes(proof, proof_len, "proof")?;
        verify(&params.params, &req, proof)
    })
}

/// Writes the number of CUDA devices this build can use (0 without the
/// `cuda` feature) to `out`. Thread-safety: safe from many threads at once.
#[no_mangle]
pub unsafe extern "C" fn cuzk_cuda_device_count(out: *mut u32, err: *mut cuzk_error) -> cuzk_status {
    ffi_boundary!(err, {
        let out = arg_out(out, "out")?;
        out.write(engine::gpu_count() as u32);
        Ok(())
    })
}
