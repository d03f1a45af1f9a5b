//! The group arithmetic SnarkPack is made of, spread over the rayon pool: products of pairings
//! (blst's multi-Miller loop, which shares its squarings between the pairs of a batch, over
//! batches in parallel, with one final exponentiation per product), vectors folded in half or
//! scaled point by point (normalised to affine in batches: one inversion per batch, not per
//! point), and polynomial openings.

use blst::{blst_final_exp, blst_fp12, blst_miller_loop_n, blst_p1_affine, blst_p2_affine};
use blstrs::{Fp12, G1Affine, G2Affine, Gt, Scalar};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::Curve;
use rayon::prelude::*;

const _: () = assert!(std::mem::size_of::<G1Affine>() == std::mem::size_of::<blst_p1_affine>());
const _: () = assert!(std::mem::size_of::<G2Affine>() == std::mem::size_of::<blst_p2_affine>());

/// Pairs per Miller-loop job: a few of blst's batches of 16, enough to amortise the job.
const PAIRS_PER_JOB: usize = 64;
/// Points per batch normalisation.
const POINTS_PER_JOB: usize = 256;

/// The Miller loop of `∏ e(left[i], right[i])`; pairs with an identity point are skipped (their
/// pairing is 1, as bellperson defines it).
fn miller(left: &[G1Affine], right: &[G2Affine]) -> Fp12 {
    debug_assert_eq!(left.len(), right.len());
    left.par_chunks(PAIRS_PER_JOB)
        .zip(right.par_chunks(PAIRS_PER_JOB))
        .map(|(l, r)| {
            let (ps, qs): (Vec<*const blst_p1_affine>, Vec<*const blst_p2_affine>) = l
                .iter()
                .zip(r)
                .filter(|(p, q)| !bool::from(p.is_identity() | q.is_identity()))
                .map(|(p, q)| ((p as *const G1Affine).cast(), (q as *const G2Affine).cast()))
                .unzip();
            if ps.is_empty() {
                return Fp12::ONE;
            }
            let mut out = blst_fp12::default();
            // SAFETY: blstrs' affine points are #[repr(transparent)] over blst's (sizes checked
            // above); blst reads `ps.len()` points through each array of pointers.
            unsafe { blst_miller_loop_n(&mut out, qs.as_ptr(), ps.as_ptr(), ps.len()) };
            Fp12::from(out)
        })
        .reduce(|| Fp12::ONE, |a, b| a * b)
}

/// `∏ₖ ∏ᵢ e(pairs[k].0[i], pairs[k].1[i])`: several inner pairing products as one element of
/// `Gt`, with one final exponentiation.
pub(super) fn pairing_product(pairs: &[(&[G1Affine], &[G2Affine])]) -> Gt {
    let f = pairs.par_iter().map(|(l, r)| miller(l, r)).reduce(|| Fp12::ONE, |a, b| a * b);
    let mut out = blst_fp12::default();
    let f: blst_fp12 = f.into();
    // SAFETY: both are valid blst_fp12 values owned here.
    unsafe { blst_final_exp(&mut out, &f) };
    Gt::from(Fp12::from(out))
}

/// Projective points to affine, a batch normalisation per job.
fn to_affine<C: Curve + Send + Sync>(points: &[C]) -> Vec<C::AffineRepr>
where
    C::AffineRepr: Send + Default + Copy,
{
    let mut out = vec![C::AffineRepr::default(); points.len()];
    out.par_chunks_mut(POINTS_PER_JOB)
        .zip(points.par_chunks(POINTS_PER_JOB))
        .for_each(|(o, p)| C::batch_normalize(p, o));
    out
}

/// `left[i] + x · right[i]` for the two halves of `v`: the vector folded in half.
pub(super) fn fold<A>(v: &[A], x: &Scalar) -> Vec<A>
where
    A: PrimeCurveAffine<Scalar = Scalar> + Default + Send + Sync,
    A::Curve: Send + Sync + Curve<AffineRepr = A>,
{
    let (l, r) = v.split_at(v.len() / 2);
    let points: Vec<A::Curve> = l.par_iter().zip(r).map(|(l, r)| *r * *x + l.to_curve()).collect();
    to_affine(&points)
}

/// `s[i] · v[i]`.
pub(super) fn scale<A>(v: &[A], s: &[Scalar]) -> Vec<A>
where
    A: PrimeCurveAffine<Scalar = Scalar> + Default + Send + Sync,
    A::Curve: Send + Sync + Curve<AffineRepr = A>,
{
    let points: Vec<A::Curve> = v.par_iter().zip(s).map(|(p, s)| *p * *s).collect();
    to_affine(&points)
}

/// `left[i] + x · right[i]` over scalars.
pub(super) fn fold_scalars(v: &[Scalar], x: &Scalar) -> Vec<Scalar> {
    let (l, r) = v.split_at(v.len() / 2);
    l.iter().zip(r).map(|(l, r)| *l + *r * x).collect()
}

/// `1, x, x², …` (`n` of them).
pub(super) fn powers(x: &Scalar, n: usize) -> Vec<Scalar> {
    std::iter::successors(Some(Scalar::ONE), |p| Some(*p * x)).take(n).collect()
}

/// The coefficients of `(f(X) − f(z)) / (X − z)` for `f` of the given coefficients (lowest
/// first): `len − 1` of them.
pub(super) fn quotient(f: &[Scalar], z: &Scalar) -> Vec<Scalar> {
    let mut q = vec![Scalar::ZERO; f.len().saturating_sub(1)];
    let mut carry = Scalar::ZERO;
    for i in (1..f.len()).rev() {
        carry = f[i] + carry * z;
        q[i - 1] = carry;
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::{Bls12, G1Projective, G2Projective};
    use group::Group;
    use pairing::{MillerLoopResult, MultiMillerLoop};
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn pairing_product_is_blstrs_pairings() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
        let n = 150; // several jobs and a partial batch
        let mut a: Vec<G1Affine> = (0..n).map(|_| G1Projective::random(&mut rng).to_affine()).collect();
        let b: Vec<G2Affine> = (0..n).map(|_| G2Projective::random(&mut rng).to_affine()).collect();
        a[7] = G1Affine::identity();
        let prepared: Vec<_> = b.iter().map(|q| (*q).into()).collect();
        let terms: Vec<_> = a.iter().zip(&prepared).collect();
        let want = Bls12::multi_miller_loop(&terms).final_exponentiation();
        assert_eq!(pairing_product(&[(&a[..100], &b[..100]), (&a[100..], &b[100..])]), want);
        assert_eq!(pairing_product(&[(&a[7..8], &b[7..8])]), Gt::identity());
    }

    #[test]
    fn quotient_divides_exactly() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(2);
        let f: Vec<Scalar> = (0..9).map(|_| Scalar::random(&mut rng)).collect();
        let (z, x) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
        let eval = |c: &[Scalar], at: &Scalar| c.iter().rev().fold(Scalar::ZERO, |acc, c| acc * at + c);
        let q = quotient(&f, &z);
        assert_eq!(eval(&q, &x) * (x - z), eval(&f, &x) - eval(&f, &z));
    }
}
