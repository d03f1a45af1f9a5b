//! Groth16 parameter storage: `.params` files decoded (`file.rs`) and their decoded cache
//! (`cache.rs`, `raw.rs`), one parameter set per file per process (`srs.rs`), real
//! parameters generated from a PCE (`setup.rs`) and written to a file, and cheap
//! structurally valid (unsound) ones for tests.

mod cache;
mod encode;
mod file;
#[allow(unsafe_code)] // points as the bytes they are in memory, for the cache
mod raw;
pub mod setup;
pub mod srs;

pub use cache::{path_of as cache_path, wait_for_writes as wait_for_cache_writes};
pub use encode::write_params;
pub use file::{decode_params, read_params};
pub use srs::{LoadOptions, Srs};

use std::path::Path;

use bellperson::groth16::{Parameters, VerifyingKey};
use blstrs::{Bls12, G1Affine, G1Projective, G2Projective, Scalar};
use group::{Curve, Group};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use crate::pce::Pce;
use crate::Result;
use setup::setup_on;

/// Distinct points in a dummy query; longer queries repeat them. Computing every point of a
/// 2^27-row circuit's queries took minutes; copies take seconds, and an MSM costs the same
/// whatever its bases are.
const DISTINCT: usize = 1 << 20;

/// `n` points `base, base + step, base + 2·step, …` in affine form: the first [`DISTINCT`]
/// distinct, then those repeated.
fn progression<G: Curve + Group + Send + Sync>(n: usize, base: G, step: G) -> Vec<G::AffineRepr>
where
    G::AffineRepr: Send + Sync + Default + Copy,
{
    const CHUNK: usize = 1 << 14;
    let mut out = vec![G::AffineRepr::default(); n];
    let (distinct, rest) = out.split_at_mut(n.min(DISTINCT));
    distinct.par_chunks_mut(CHUNK).enumerate().for_each(|(c, part)| {
        let mut p = base + step * G::Scalar::from((c * CHUNK) as u64);
        let mut proj = Vec::with_capacity(part.len());
        for _ in 0..part.len() {
            proj.push(p);
            p += step;
        }
        G::batch_normalize(&proj, part);
    });
    let distinct = &*distinct;
    rest.par_chunks_mut(DISTINCT).for_each(|part| part.copy_from_slice(&distinct[..part.len()]));
    out
}

/// Parameters of the right shape for `pce`, made of valid curve points (each query's first
/// 2^20 distinct, then repeated) with no trapdoor known to anyone but the seed holder: fine
/// for byte-equality tests against bellperson's prover and for timing, unsound for real use. Proofs made with them
/// verify only against these same parameters.
pub fn dummy_params(pce: &Pce, seed: u64) -> Parameters<Bls12> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut g1 = || G1Projective::random(&mut rng);
    let (alpha, beta1, delta1, b1, s1) = (g1(), g1(), g1(), g1(), g1());
    let mut g2 = || G2Projective::random(&mut rng);
    let (beta2, gamma2, delta2, b2, s2) = (g2(), g2(), g2(), g2(), g2());
    let d = &pce.density;
    let nb = d.b_input.ones + d.b_aux.ones;
    let g1s = |n: usize, k: u64| -> Vec<G1Affine> {
        progression(n, b1 * Scalar::from(k), s1 + G1Projective::generator() * Scalar::from(k))
    };
    Parameters {
        vk: VerifyingKey {
            alpha_g1: alpha.to_affine(),
            beta_g1: beta1.to_affine(),
            beta_g2: beta2.to_affine(),
            gamma_g2: gamma2.to_affine(),
            delta_g1: delta1.to_affine(),
            delta_g2: delta2.to_affine(),
            ic: g1s(pce.num_inputs, 1),
        },
        h: g1s(pce.domain_size() - 1, 2).into(),
        l: g1s(pce.num_aux, 3).into(),
        a: g1s(pce.num_inputs + d.a_aux.ones, 4).into(),
        b_g1: g1s(nb, 5).into(),
        b_g2: progression::<G2Projective>(nb, b2, s2).into(),
    }
}

/// Generates real (sound) parameters for the circuit of `pce` ([`setup::setup_on`]: bellperson's
/// generator's output for `seed`, in seconds; its products on CUDA device `device` when given)
/// and writes them to `path` whole or not at all ([`write_params`]). For demos and tests: the
/// 64-bit seed is the whole trapdoor.
pub fn generate_params(pce: &Pce, path: &Path, seed: u64, device: Option<usize>) -> Result<Parameters<Bls12>> {
    let params = setup_on(pce, seed, device)?;
    write_params(&params, path)?;
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dummy_queries_repeat_their_distinct_points() {
        let (base, step) = (G1Projective::generator(), G1Projective::generator().double());
        let p = progression(DISTINCT + 3, base, step);
        assert_eq!(p.len(), DISTINCT + 3);
        assert_eq!(
            (p[0], p[DISTINCT - 1]),
            (base.to_affine(), (base + step * Scalar::from(DISTINCT as u64 - 1)).to_affine())
        );
        assert_eq!(&p[DISTINCT..], &p[..3]);
        assert!(p[..64].windows(2).all(|w| w[0] != w[1]));
    }
}
