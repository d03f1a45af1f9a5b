//! Groth16 proving from a PCE evaluation, byte-identical to
//! `bellperson::groth16::create_proof` for the same r and s.
//!
//! Notation follows the paper: with `Σa = Σ zᵢ·Aᵢ(τ)` (inputs full, aux by the
//! A density), likewise `Σb` in G1 and G2, `h` the H-query MSM and `l` the
//! L-query MSM over aux:
//!   A = α + Σa + r·δ,   B = β + Σb + s·δ,
//!   C = s·(Σa) + r·(Σb₁) + r·s·δ + s·α + r·β + h + l.

mod backend;
pub mod cpu;
pub mod cuda;
#[allow(unsafe_code)] // blstrs points read as blst's, the same layout
pub mod msm;
pub mod ntt;

use std::time::Instant;

use bellperson::groth16::{prepare_verifying_key, verify_proof, Proof};
use blstrs::{Bls12, G1Projective, G2Projective, Scalar};
use group::prime::PrimeCurveAffine;
use group::Curve;

use crate::{Error, Result};

pub use crate::gpu::Urgency;
pub use backend::{check_shape, prepare, prove, Backend};

/// Seconds spent in each proving stage.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProveTimings {
    pub h: f64,
    pub msm_h: f64,
    pub msm_l: f64,
    pub msm_a: f64,
    pub msm_b_g1: f64,
    pub msm_b_g2: f64,
    pub assembly: f64,
    /// Where the CUDA backend's time went inside the stages above (already
    /// counted in them, not in `total`); zero on the CPU backend.
    pub gpu: GpuSteps,
}

/// Sub-steps of the CUDA backend's stages, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GpuSteps {
    /// The witness (inputs and aux) host → device through the pinned staging
    /// (part of `h`).
    pub witness_upload: f64,
    /// a, b, c evaluated on the device from the PCE's matrices, and every
    /// constraint checked (part of `h`).
    pub spmv: f64,
    /// The NTTs, until H is ready (part of `h`).
    pub h_ntt: f64,
    /// Density selection of the aux scalars for A and B, on the device (part
    /// of `msm_a` and `msm_b_g1`).
    pub select: f64,
}

impl ProveTimings {
    /// Seconds of the whole backend stage.
    pub fn total(&self) -> f64 {
        self.h + self.msm_h + self.msm_l + self.msm_a + self.msm_b_g1 + self.msm_b_g2 + self.assembly
    }

    /// Adds `o`'s seconds stage by stage (several partitions of one request).
    pub fn add(&mut self, o: &ProveTimings) {
        self.h += o.h;
        self.msm_h += o.msm_h;
        self.msm_l += o.msm_l;
        self.msm_a += o.msm_a;
        self.msm_b_g1 += o.msm_b_g1;
        self.msm_b_g2 += o.msm_b_g2;
        self.assembly += o.assembly;
        self.gpu.witness_upload += o.gpu.witness_upload;
        self.gpu.spmv += o.gpu.spmv;
        self.gpu.h_ntt += o.gpu.h_ntt;
        self.gpu.select += o.gpu.select;
    }
}

/// The MSM results a backend produces for one proof.
#[derive(Debug, Clone, Copy)]
pub struct ProofParts {
    /// `Σa`: inputs and aux against the A query.
    pub a: G1Projective,
    /// `Σb` in G1 and G2.
    pub b_g1: G1Projective,
    pub b_g2: G2Projective,
    /// The H-query MSM over `(a·b − c)/Z`.
    pub h: G1Projective,
    /// The L-query MSM over aux.
    pub l: G1Projective,
}

/// The selected values of `values` whose bit is set, in order (in parallel:
/// at 2^24 aux this copy is a large part of a GPU proof's host time).
pub(crate) fn select(bits: &crate::pce::Bitmap, values: &[Scalar]) -> Vec<Scalar> {
    use rayon::prelude::*;
    values.par_iter().enumerate().filter(|(i, _)| bits.get(*i)).map(|(_, v)| *v).collect()
}

/// Runs `f`, storing its duration in seconds into `slot`.
pub(crate) fn timed<T>(slot: &mut f64, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    *slot = start.elapsed().as_secs_f64();
    out
}

/// Combines the MSM results with the randomisers r, s (constant-time scalar
/// multiplications; secret r and s never meet a variable-time routine).
pub fn assemble(
    vk: &bellperson::groth16::VerifyingKey<Bls12>,
    p: &ProofParts,
    r: Scalar,
    s: Scalar,
) -> Result<Proof<Bls12>> {
    if bool::from(vk.delta_g1.is_identity() | vk.delta_g2.is_identity()) {
        return Err(Error::IdentityDelta);
    }
    let g_a = vk.delta_g1 * r + vk.alpha_g1 + p.a;
    let g_b = vk.delta_g2 * s + vk.beta_g2 + p.b_g2;
    let g_c = p.a * s + p.b_g1 * r + vk.delta_g1 * (r * s) + vk.alpha_g1 * s + vk.beta_g1 * r + p.h + p.l;
    Ok(Proof { a: g_a.to_affine(), b: g_b.to_affine(), c: g_c.to_affine() })
}

/// Verifies with bellperson's verifier; `inputs` excludes the ONE.
pub fn verify(vk: &bellperson::groth16::VerifyingKey<Bls12>, proof: &Proof<Bls12>, inputs: &[Scalar]) -> Result<()> {
    let pvk = prepare_verifying_key(vk);
    match verify_proof(&pvk, proof, inputs) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Error::VerificationFailed),
        Err(e) => Err(Error::InvalidInput(format!("verifier: {e}"))),
    }
}

/// Bytes of one Groth16 proof, bellperson's encoding (A, C compressed G1; B compressed G2).
pub const PROOF_BYTES: usize = 192;

/// The encoding bellperson writes.
pub fn proof_bytes(proof: &Proof<Bls12>) -> [u8; PROOF_BYTES] {
    let mut out = [0u8; PROOF_BYTES];
    proof.write(&mut out[..]).expect("a 192-byte buffer holds a proof");
    out
}
