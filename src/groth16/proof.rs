//! The paper's proof elements: the MSM parts a backend computes, combined with r and s into
//! A, B and C; verification and bellperson's encoding.

use bellperson::groth16::{prepare_verifying_key, verify_proof, Proof};
use blstrs::{Bls12, G1Projective, G2Projective, Scalar};
use group::prime::PrimeCurveAffine;
use group::Curve;

use crate::{Error, Result};

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
pub(super) fn select(bits: &crate::pce::Bitmap, values: &[Scalar]) -> Vec<Scalar> {
    use rayon::prelude::*;
    values.par_iter().enumerate().filter(|(i, _)| bits.get(*i)).map(|(_, v)| *v).collect()
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
