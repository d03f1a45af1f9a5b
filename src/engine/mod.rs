//! Proving pipelines: witness → SpMV → backend → verify, with per-stage timings,
//! and the [`Engine`] that runs many of them at once inside a memory budget.

pub mod budget;
mod pipeline;
#[cfg(test)]
mod tests;

pub use budget::{drop_idle_buffers, CancelToken, MemoryBudget, Priority, Reservation};
pub use pipeline::{
    footprint, BudgetSpec, DeviceStats, Engine, EngineConfig, ProofRequest, Stage, ABC_HOLDERS_PER_DEVICE,
    SYNTHESIS_NICE,
};

use std::time::Instant;

use bellperson::groth16::{Parameters, Proof};
use blstrs::{Bls12, Scalar};
use ff::Field;

use crate::groth16::{self, ProveTimings};
use crate::pce::{check_satisfied, evaluate, Pce};
use crate::witness::{Room, Witness, WitnessSource};
use crate::{Error, Result};

/// Where the H computation and the MSMs run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A GPU when one is present, else the CPU.
    Auto,
    Cpu,
    /// The CUDA device with this id.
    Cuda(u32),
}

impl Backend {
    /// Parses `auto`, `cpu`, `cuda` (device 0) or `cuda:N`.
    pub fn parse(s: &str) -> Result<Backend> {
        match s {
            "auto" => Ok(Backend::Auto),
            "cpu" => Ok(Backend::Cpu),
            "cuda" => Ok(Backend::Cuda(0)),
            _ => s
                .strip_prefix("cuda:")
                .and_then(|id| id.parse().ok())
                .map(Backend::Cuda)
                .ok_or_else(|| Error::InvalidInput(format!("unknown backend {s:?}"))),
        }
    }
}

/// How to prove.
#[derive(Debug, Clone, Copy)]
pub struct ProveOptions {
    pub backend: Backend,
    /// Verify every proof before returning it (the default).
    pub verify: bool,
    /// Fixed (r, s) for reproducible proofs; `None` draws them from the OS.
    pub randomness: Option<(Scalar, Scalar)>,
}

impl Default for ProveOptions {
    fn default() -> Self {
        ProveOptions { backend: Backend::Auto, verify: true, randomness: None }
    }
}

/// Seconds per stage of one proof.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timings {
    /// Waiting for the memory budget and for a device worker (engine only).
    pub queued: f64,
    pub witness: f64,
    pub spmv: f64,
    pub prove: ProveTimings,
    pub verify: f64,
    pub total: f64,
    /// Where the backend stage ran.
    pub backend: Option<Backend>,
}

impl Timings {
    /// Adds `o`'s seconds stage by stage (several partitions of one request);
    /// `total` is left to the caller, the backend is `o`'s.
    pub fn add(&mut self, o: &Timings) {
        self.queued += o.queued;
        self.witness += o.witness;
        self.spmv += o.spmv;
        self.prove.add(&o.prove);
        self.verify += o.verify;
        self.backend = o.backend;
    }
}

fn seconds_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64()
}

/// Proves one circuit through the PCE path. `public_inputs` (without the ONE)
/// is the statement the proof is verified against; when `None`, the witness's
/// own inputs are used.
pub fn prove_one<C: WitnessSource>(
    pce: &Pce,
    params: &Parameters<Bls12>,
    circuit: C,
    public_inputs: Option<&[Scalar]>,
    opts: &ProveOptions,
) -> Result<(Proof<Bls12>, Timings)> {
    let start = Instant::now();
    let mut t = Timings::default();
    let w = circuit.witness(Room::new(pce.num_inputs, pce.num_aux))?;
    t.witness = seconds_since(start);

    let spmv_start = Instant::now();
    let abc = evaluate(pce, &w)?;
    check_satisfied(&abc)?;
    t.spmv = seconds_since(spmv_start);

    let backend = resolve(opts.backend)?;
    let (proof, pt) = prove_on(backend, pce, &w, abc, params, opts)?;
    t.prove = pt;
    t.backend = Some(backend);
    verify_into(&mut t, params, &proof, public_inputs.unwrap_or(&w.inputs[1..]), opts)?;
    t.total = seconds_since(start);
    Ok((proof, t))
}

/// Runs the backend stage (H and the MSMs) on a resolved backend.
pub fn prove_on(
    backend: Backend,
    pce: &Pce,
    w: &Witness,
    abc: crate::pce::Abc,
    params: &Parameters<Bls12>,
    opts: &ProveOptions,
) -> Result<(Proof<Bls12>, ProveTimings)> {
    let (r, s) = opts.randomness.unwrap_or_else(|| {
        let mut rng = rand::rngs::OsRng;
        (Scalar::random(&mut rng), Scalar::random(&mut rng))
    });
    match backend {
        Backend::Cpu => groth16::prove(pce, w, abc, params, r, s),
        Backend::Cuda(id) => prove_cuda(pce, w, abc, params, r, s, id),
        Backend::Auto => Err(Error::InvalidInput("backend must be resolved first".into())),
    }
}

/// Verifies when asked to, recording the time.
fn verify_into(
    t: &mut Timings,
    params: &Parameters<Bls12>,
    proof: &Proof<Bls12>,
    inputs: &[Scalar],
    opts: &ProveOptions,
) -> Result<()> {
    if opts.verify {
        let start = Instant::now();
        groth16::verify(&params.vk, proof, inputs)?;
        t.verify = seconds_since(start);
    }
    Ok(())
}

/// Picks a concrete backend for `Auto`.
pub fn resolve(b: Backend) -> Result<Backend> {
    match b {
        Backend::Auto if gpu_count() > 0 => Ok(Backend::Cuda(0)),
        Backend::Auto => Ok(Backend::Cpu),
        Backend::Cuda(id) => check_device(id).map(|()| b),
        other => Ok(other),
    }
}

/// `Err` saying how many devices there are when CUDA device `id` is not one of them.
pub fn check_device(id: u32) -> Result<()> {
    let n = gpu_count();
    if id as usize >= n {
        return Err(Error::Gpu(format!(
            "no CUDA device {id} ({n} present{})",
            if cfg!(feature = "cuda") { "" } else { "; built without the cuda feature" }
        )));
    }
    Ok(())
}

/// Free and total memory of CUDA device `id`, now.
pub fn device_memory(id: u32) -> Result<(u64, u64)> {
    #[cfg(feature = "cuda")]
    {
        let d = crate::gpu::device_info(id as usize)?;
        Ok((d.free_bytes, d.total_bytes))
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(Error::Gpu(format!("no CUDA device {id}: built without the cuda feature")))
    }
}

/// CUDA devices usable by this build (0 without the `cuda` feature).
pub fn gpu_count() -> usize {
    #[cfg(feature = "cuda")]
    {
        crate::gpu::device_count()
    }
    #[cfg(not(feature = "cuda"))]
    {
        0
    }
}

#[cfg(feature = "cuda")]
fn prove_cuda(
    pce: &Pce,
    w: &Witness,
    abc: crate::pce::Abc,
    params: &Parameters<Bls12>,
    r: Scalar,
    s: Scalar,
    device: u32,
) -> Result<(Proof<Bls12>, ProveTimings)> {
    groth16::cuda::prove(pce, w, abc, params, r, s, device)
}

#[cfg(not(feature = "cuda"))]
fn prove_cuda(
    _: &Pce,
    _: &Witness,
    _: crate::pce::Abc,
    _: &Parameters<Bls12>,
    _: Scalar,
    _: Scalar,
    device: u32,
) -> Result<(Proof<Bls12>, ProveTimings)> {
    Err(Error::Gpu(format!("no CUDA device {device}: built without the cuda feature")))
}
