//! The Groth16 setup evaluated from a PCE: real (sound) parameters for a circuit in
//! seconds. bellperson's generator synthesizes the circuit again and spends most of its
//! time on the doublings of wNAF products; here the QAP polynomials at τ come from the
//! recorded matrices and every point from a fixed-base table (one mixed addition per
//! window, no doublings), computed on every core or, at 100M+ constraints, on a GPU
//! (`setup_on`: the same bytes). The random values are drawn in the order
//! `bellperson::groth16::generate_random_parameters` draws them, so a seed gives the
//! same parameters, byte for byte, as bellperson's generator with that seed.
//!
//! For tests and benchmarks only: a 64-bit seed is the whole trapdoor.

use std::ops::AddAssign;
use std::sync::Arc;

use bellperson::groth16::{Parameters, VerifyingKey};
use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{Field, PrimeField};
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use crate::groth16::ntt::Domain;
use crate::pce::matrix::{decode, CsrMatrix, TAG_MINUS_ONE, TAG_PLUS_ONE};
use crate::pce::Pce;
use crate::progress::Progress;
use crate::{mem, Error, Result};

/// Products per batch normalisation (one inversion for the batch).
const CHUNK: usize = 1 << 12;

/// `s·P` for many scalars `s` and one point `P`: the table holds `d·2^(w·k)·P` for every
/// window `k` and digit `d ≥ 1`, so a product is one mixed addition per non-zero window.
struct FixedBase<G: Curve> {
    window: usize,
    table: Vec<G::AffineRepr>,
}

impl<G> FixedBase<G>
where
    G: Curve + Group<Scalar = Scalar> + Send + Sync + for<'a> AddAssign<&'a G::AffineRepr>,
    G::AffineRepr: Copy + Default + Send + Sync,
{
    /// A table sized for `products` products: wider windows pay off over more of them
    /// (`2^w` table points per window against `255/w` additions per product).
    fn new(base: G, products: usize) -> Self {
        let bits = (usize::BITS - products.max(1).leading_zeros()) as usize;
        Self::with_window(base, bits.saturating_sub(4).clamp(4, 16))
    }

    fn with_window(base: G, window: usize) -> Self {
        let digits = (1 << window) - 1;
        let windows = (Scalar::NUM_BITS as usize).div_ceil(window);
        let mut starts = Vec::with_capacity(windows);
        let mut b = base;
        for _ in 0..windows {
            starts.push(b);
            for _ in 0..window {
                b = b.double();
            }
        }
        let mut table = vec![G::AffineRepr::default(); windows * digits];
        table.par_chunks_mut(digits).zip(starts).for_each(|(row, start)| {
            let mut multiples = Vec::with_capacity(digits);
            let mut p = start;
            for _ in 0..digits {
                multiples.push(p);
                p += start;
            }
            G::batch_normalize(&multiples, row);
        });
        FixedBase { window, table }
    }

    fn mul(&self, s: &Scalar) -> G {
        let mut bytes = [0u8; 36];
        bytes[..32].copy_from_slice(&s.to_bytes_le());
        let digits = (1 << self.window) - 1;
        let mut acc = G::identity();
        for (k, row) in self.table.chunks(digits).enumerate() {
            let bit = k * self.window;
            let word = u32::from_le_bytes(bytes[bit / 8..bit / 8 + 4].try_into().unwrap());
            let d = (word >> (bit % 8)) as usize & digits;
            if d != 0 {
                acc += &row[d - 1];
            }
        }
        acc
    }

    /// `s·P` for every `s`, in affine form: on `device` when given, else on every core.
    fn mul_all(&self, scalars: &[Scalar], device: Option<usize>, progress: &Progress) -> Result<Vec<G::AffineRepr>>
    where
        G::AffineRepr: OnDevice,
    {
        if let Some(id) = device {
            let out = G::AffineRepr::products(id, &self.table, self.window, scalars)?;
            progress.add(scalars.len() as u64);
            return Ok(out);
        }
        let mut out = vec![G::AffineRepr::default(); scalars.len()];
        out.par_chunks_mut(CHUNK).zip(scalars.par_chunks(CHUNK)).for_each(|(out, s)| {
            let proj: Vec<G> = s.iter().map(|s| self.mul(s)).collect();
            G::batch_normalize(&proj, out);
            progress.add(s.len() as u64);
        });
        Ok(out)
    }
}

/// The fixed-base products of a point type on a GPU (`gpu::fixed_base`); an error in a build
/// without the `cuda` feature.
trait OnDevice: Sized {
    fn products(device: usize, table: &[Self], window: usize, scalars: &[Scalar]) -> Result<Vec<Self>>;
}

macro_rules! on_device {
    ($($affine:ty),*) => {$(
        impl OnDevice for $affine {
            #[cfg(feature = "cuda")]
            fn products(device: usize, table: &[Self], window: usize, scalars: &[Scalar]) -> Result<Vec<Self>> {
                Ok(crate::gpu::fixed_base(device, table, window, scalars)?)
            }
            #[cfg(not(feature = "cuda"))]
            fn products(device: usize, _: &[Self], _: usize, _: &[Scalar]) -> Result<Vec<Self>> {
                Err(crate::gpu::no_device(device))
            }
        }
    )*};
}
on_device!(G1Affine, G2Affine);

/// Every column's `Σ coefficient·L_row(τ)` over the rows of `m`: the QAP polynomial of
/// each variable evaluated at τ. Each core takes a range of columns and reads every row.
fn at_tau(m: &CsrMatrix, dict: &[Scalar], lagrange: &[Scalar], cols: usize) -> Vec<Scalar> {
    let span = cols.div_ceil(rayon::current_num_threads().max(1)).max(1);
    let mut out = vec![Scalar::ZERO; cols];
    out.par_chunks_mut(span).enumerate().for_each(|(p, part)| {
        let lo = p * span;
        for (r, l) in lagrange.iter().enumerate().take(m.rows()) {
            let row = m.row(r);
            let mut k = 0;
            while k < row.len() {
                let (tag, col) = decode(row[k]);
                let at = (col as usize).wrapping_sub(lo);
                match tag {
                    TAG_PLUS_ONE if at < part.len() => part[at] += l,
                    TAG_MINUS_ONE if at < part.len() => part[at] -= l,
                    TAG_PLUS_ONE | TAG_MINUS_ONE => {}
                    _ => {
                        k += 1;
                        if at < part.len() {
                            part[at] += dict[row[k] as usize] * l;
                        }
                    }
                }
                k += 1;
            }
        }
    });
    out
}

/// The points of `t·P` for the columns where `t ≠ 0`, which must be exactly the columns
/// the PCE's density marks (`present`): bellperson drops the identity points, the prover
/// takes a query point for every marked column.
fn query<G>(
    table: &FixedBase<G>,
    t: &[Scalar],
    present: impl Fn(usize) -> bool + Sync,
    name: &str,
    device: Option<usize>,
    progress: &Progress,
) -> Result<Vec<G::AffineRepr>>
where
    G: Curve + Group<Scalar = Scalar> + Send + Sync + for<'a> AddAssign<&'a G::AffineRepr>,
    G::AffineRepr: Copy + Default + Send + Sync + OnDevice,
{
    if let Some(col) = (0..t.len()).into_par_iter().find_first(|&i| present(i) == bool::from(t[i].is_zero())) {
        return Err(Error::Synthesis(format!(
            "the {name} query's column {col} is {} at τ but {} in the PCE's density",
            if t[col].is_zero_vartime() { "zero" } else { "non-zero" },
            if present(col) { "marked" } else { "unmarked" }
        )));
    }
    let kept: Vec<Scalar> = t.iter().copied().filter(|t| !t.is_zero_vartime()).collect();
    table.mul_all(&kept, device, progress)
}

/// About the bytes [`setup`] holds at its peak for `pce`.
pub fn setup_bytes(pce: &Pce) -> u64 {
    let (n, m) = ((pce.num_inputs + pce.num_aux) as u64, pce.domain_size() as u64);
    // τ powers and L_j(τ); at, bt, ct; the queries (G1 96 B, G2 192 B); the largest tables.
    m * 64 + n * 96 + m * 96 + n * (3 * 96 + 192) + 16 * (1 << 16) * (96 + 192)
}

/// Real parameters for the circuit of `pce`, with the trapdoor drawn from `seed` as
/// bellperson's `generate_random_parameters` draws it from `ChaCha20Rng::seed_from_u64(seed)`.
pub fn setup(pce: &Pce, seed: u64) -> Result<Parameters<Bls12>> {
    setup_on(pce, seed, None)
}

/// [`setup`] with the fixed-base products (nearly all its work at 100M+ constraints) on CUDA
/// device `device` when given: the same bytes as on the host.
pub fn setup_on(pce: &Pce, seed: u64, device: Option<usize>) -> Result<Parameters<Bls12>> {
    if let Some(id) = device {
        crate::gpu::check_device(id as u32)?;
    }
    mem::check_room("generating the parameters", setup_bytes(pce))?;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let g1 = G1Projective::random(&mut rng);
    let g2 = G2Projective::random(&mut rng);
    let [alpha, beta, gamma, delta, tau] = [(); 5].map(|_| Scalar::random(&mut rng));
    let invert = |x: Scalar, what: &str| {
        Option::<Scalar>::from(x.invert()).ok_or_else(|| Error::Synthesis(format!("{what} is zero")))
    };
    let (gamma_inv, delta_inv) = (invert(gamma, "γ")?, invert(delta, "δ")?);

    let domain = Domain::for_size(pce.num_constraints())?;
    let m = domain.size();
    let (ni, n) = (pce.num_inputs, pce.num_inputs + pce.num_aux);
    let d = &pce.density;
    let b_points = d.b_input.ones + d.b_aux.ones;
    // H, IC and L, A, B in G1 and G2.
    let points = (m - 1) + n + (ni + d.a_aux.ones) + 2 * b_points;
    let job = format!("generating parameters for {} constraints", pce.num_constraints());
    let progress = Progress::start(job, "points", Some(points as u64));
    let g1_table = FixedBase::new(g1, (m - 1) + 3 * n);
    let g2_table = FixedBase::new(g2, b_points);

    // H: τ^i·t(τ)/δ for i < m − 1, with t(τ) = τ^m − 1.
    let mut lagrange = vec![Scalar::ZERO; m];
    lagrange.par_chunks_mut(CHUNK).enumerate().for_each(|(c, part)| {
        let mut p = tau.pow_vartime([(c * CHUNK) as u64]);
        for x in part {
            *x = p;
            p *= tau;
        }
    });
    let t_over_delta = (tau.pow_vartime([m as u64]) - Scalar::ONE) * delta_inv;
    let h_exps: Vec<Scalar> = lagrange[..m - 1].par_iter().map(|p| p * t_over_delta).collect();
    let h = g1_table.mul_all(&h_exps, device, &progress)?;
    drop(h_exps);

    // The powers of τ become L_j(τ), the Lagrange basis at τ; then each variable's A, B, C at τ.
    domain.ifft(&mut lagrange);
    let [at, bt, ct] = [&pce.a, &pce.b, &pce.c].map(|mx| at_tau(mx, &pce.dict, &lagrange, n));
    drop(lagrange);

    // IC (inputs, over γ) and L (aux, over δ): (β·A + α·B + C)/γ or δ at τ.
    let ext = |range: std::ops::Range<usize>, inv: Scalar| -> Vec<Scalar> {
        range.into_par_iter().map(|i| (beta * at[i] + alpha * bt[i] + ct[i]) * inv).collect()
    };
    let ic = g1_table.mul_all(&ext(0..ni, gamma_inv), device, &progress)?;
    let l = g1_table.mul_all(&ext(ni..n, delta_inv), device, &progress)?;
    if let Some(col) = l.iter().position(|p| bool::from(p.is_identity())) {
        return Err(Error::Synthesis(format!("aux variable {col} is unconstrained")));
    }
    let a = query(&g1_table, &at, |i| i < ni || d.a_aux.get(i - ni), "A", device, &progress)?;
    let b_present = &|i: usize| if i < ni { d.b_input.get(i) } else { d.b_aux.get(i - ni) };
    let b_g1 = query(&g1_table, &bt, b_present, "B", device, &progress)?;
    let b_g2 = query(&g2_table, &bt, b_present, "B (G2)", device, &progress)?;
    progress.finish();

    let (g1, g2) = (g1.to_affine(), g2.to_affine());
    let vk = VerifyingKey {
        alpha_g1: (g1 * alpha).to_affine(),
        beta_g1: (g1 * beta).to_affine(),
        beta_g2: (g2 * beta).to_affine(),
        gamma_g2: (g2 * gamma).to_affine(),
        delta_g1: (g1 * delta).to_affine(),
        delta_g2: (g2 * delta).to_affine(),
        ic,
    };
    Ok(Parameters { vk, h: Arc::new(h), l: Arc::new(l), a: Arc::new(a), b_g1: Arc::new(b_g1), b_g2: Arc::new(b_g2) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_base_products_equal_plain_ones() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let mut scalars: Vec<Scalar> = (0..40).map(|_| Scalar::random(&mut rng)).collect();
        scalars.extend([Scalar::ZERO, Scalar::ONE, -Scalar::ONE, Scalar::from(u64::MAX)]);
        let (g1, g2) = (G1Projective::random(&mut rng), G2Projective::random(&mut rng));
        for window in [4, 5, 7, 8, 13, 16] {
            let (t1, t2) = (FixedBase::with_window(g1, window), FixedBase::with_window(g2, window));
            for s in &scalars {
                assert_eq!(t1.mul(s), g1 * s, "G1, window {window}");
                assert_eq!(t2.mul(s), g2 * s, "G2, window {window}");
            }
        }
    }

    /// The fixed-base products and a whole setup on CUDA device 0 equal the host's, byte for
    /// byte (skipped without a device).
    #[cfg(feature = "cuda")]
    mod gpu {
        use super::*;
        use crate::circuits::{Family, Synthetic};
        use crate::pce::extract;

        fn have_gpu(test: &str) -> bool {
            let n = crate::gpu::device_count();
            if n == 0 {
                eprintln!("{test}: skipped, no CUDA device");
            }
            n > 0
        }

        fn scalars(n: usize, seed: u64) -> Vec<Scalar> {
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            let mut s = vec![Scalar::ZERO, Scalar::ONE, -Scalar::ONE, Scalar::from(u64::MAX), Scalar::ONE.double()];
            s.extend((s.len()..n).map(|_| Scalar::random(&mut rng)));
            s
        }

        #[test]
        fn fixed_base_products_equal_the_hosts() {
            if !have_gpu("fixed_base_products_equal_the_hosts") {
                return;
            }
            let progress = Progress::start("test", "points", None);
            let mut rng = ChaCha20Rng::seed_from_u64(9);
            let (g1, g2) = (G1Projective::random(&mut rng), G2Projective::random(&mut rng));
            for (window, n) in [(4, 1000), (5, 777), (8, 4099), (13, 300), (16, 1 << 12)] {
                let s = scalars(n, window as u64);
                let t1 = FixedBase::with_window(g1, window);
                assert_eq!(
                    t1.mul_all(&s, Some(0), &progress).unwrap(),
                    t1.mul_all(&s, None, &progress).unwrap(),
                    "G1, window {window}"
                );
                let t2 = FixedBase::with_window(g2, window);
                assert_eq!(
                    t2.mul_all(&s, Some(0), &progress).unwrap(),
                    t2.mul_all(&s, None, &progress).unwrap(),
                    "G2, window {window}"
                );
            }
            // Past one device piece (2^22 products).
            let s = scalars((1 << 22) + 300, 17);
            let t1 = FixedBase::with_window(g1, 16);
            assert_eq!(
                t1.mul_all(&s, Some(0), &progress).unwrap(),
                t1.mul_all(&s, None, &progress).unwrap(),
                "G1, 2^22 + 300"
            );
        }

        #[test]
        fn setup_on_a_device_is_the_hosts() {
            if !have_gpu("setup_on_a_device_is_the_hosts") {
                return;
            }
            for (family, n) in [(Family::MimcChain, 3000), (Family::Sha256Chain, 1 << 14)] {
                let pce = extract(Synthetic::new(family, n, 1).blank()).unwrap();
                let (host, device) = (setup(&pce, 7).unwrap(), setup_on(&pce, 7, Some(0)).unwrap());
                let bytes = |p: &Parameters<Bls12>| {
                    let mut v = Vec::new();
                    p.write(&mut v).unwrap();
                    v
                };
                assert!(bytes(&host) == bytes(&device), "{family:?} {n}");
            }
            assert!(
                setup_on(&extract(Synthetic::new(Family::MimcChain, 10, 1).blank()).unwrap(), 7, Some(999)).is_err()
            );
        }
    }
}
