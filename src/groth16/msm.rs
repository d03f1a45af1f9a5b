//! Multi-scalar multiplication on the CPU with blst's Pippenger (multi-threaded).
//!
//! blstrs' affine points are `#[repr(transparent)]` wrappers of blst's affine
//! types; reading a slice of one as the other is the only `unsafe` here.

use blst::{blst_p1, blst_p1_affine, blst_p2, blst_p2_affine, MultiPoint};
use blstrs::{Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::Group;
use rayon::prelude::*;

const _: () = assert!(std::mem::size_of::<G1Affine>() == std::mem::size_of::<blst_p1_affine>());
const _: () = assert!(std::mem::size_of::<G2Affine>() == std::mem::size_of::<blst_p2_affine>());

/// Canonical little-endian bytes of each scalar, as blst's Pippenger reads them.
fn scalar_bytes(scalars: &[Scalar]) -> Vec<u8> {
    let mut out = vec![0u8; scalars.len() * 32];
    out.par_chunks_mut(32 << 10).zip(scalars.par_chunks(1 << 10)).for_each(|(bytes, s)| {
        for (b, s) in bytes.chunks_mut(32).zip(s) {
            b.copy_from_slice(&s.to_bytes_le());
        }
    });
    out
}

/// `Σ scalars[i] · bases[i]` over G1 (`bases.len() == scalars.len()`).
pub fn msm_g1(bases: &[G1Affine], scalars: &[Scalar]) -> G1Projective {
    debug_assert_eq!(bases.len(), scalars.len());
    if bases.is_empty() {
        return G1Projective::identity();
    }
    // SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine (size checked above).
    let points: &[blst_p1_affine] = unsafe { std::slice::from_raw_parts(bases.as_ptr().cast(), bases.len()) };
    g1(points.mult(&scalar_bytes(scalars), 255))
}

/// `Σ scalars[i] · bases[i]` over G2.
pub fn msm_g2(bases: &[G2Affine], scalars: &[Scalar]) -> G2Projective {
    debug_assert_eq!(bases.len(), scalars.len());
    if bases.is_empty() {
        return G2Projective::identity();
    }
    // SAFETY: G2Affine is #[repr(transparent)] over blst_p2_affine (size checked above).
    let points: &[blst_p2_affine] = unsafe { std::slice::from_raw_parts(bases.as_ptr().cast(), bases.len()) };
    g2(points.mult(&scalar_bytes(scalars), 255))
}

fn g1(p: blst_p1) -> G1Projective {
    G1Projective::from_raw_unchecked(Fp::from(p.x), Fp::from(p.y), Fp::from(p.z))
}

fn g2(p: blst_p2) -> G2Projective {
    G2Projective::from_raw_unchecked(Fp2::from(p.x), Fp2::from(p.y), Fp2::from(p.z))
}
