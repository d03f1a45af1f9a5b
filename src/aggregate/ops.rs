//! The group arithmetic SnarkPack is made of, spread over the rayon pool: products of pairings
//! (one Miller loop per G2 point's lines, shared by every pairing with that point and by the
//! squarings of every pair of a job, with one final exponentiation per product), vectors folded
//! in half or scaled point by point (normalised to affine in batches: one inversion per batch,
//! not per point), and polynomial openings.

use blst::{
    blst_final_exp, blst_fp, blst_fp12, blst_fp12_conjugate, blst_fp12_mul_by_xy00z0, blst_fp12_one, blst_fp12_sqr,
    blst_fp6, blst_fp_add, blst_fp_cneg, blst_fp_mul, blst_p1_affine, blst_p2_affine, blst_precompute_lines,
};
use blstrs::{Fp12, G1Affine, G2Affine, Gt, Scalar};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rayon::prelude::*;

const _: () = assert!(std::mem::size_of::<G1Affine>() == std::mem::size_of::<blst_p1_affine>());
const _: () = assert!(std::mem::size_of::<G2Affine>() == std::mem::size_of::<blst_p2_affine>());

/// The most G2 points per Miller-loop job: their lines (19.6 KB each) stay in the core's cache
/// while every pairing with them is evaluated.
const Q_PER_JOB: usize = 32;
/// The fewest, when short vectors (the last GIPA rounds) are cut finer to fill the pool: each
/// job squares its accumulators once per step, so a job of fewer points squares more per pair.
const MIN_Q_PER_JOB: usize = 8;
/// Points per batch normalisation.
const POINTS_PER_JOB: usize = 256;
/// The lines of the Miller loop over |z| = 0xd201000000010000, in blst's order: a doubling at
/// every step but the five additions of Q (steps 1, 4, 8, 18, 51).
const STEPS: usize = 68;
/// The steps the accumulator is not squared before: the first and the additions.
const UNSQUARED: [usize; 6] = [0, 1, 4, 8, 18, 51];

/// `∏ᵢ e(p[i], q[i])` multiplied into product `k`: `(p, q, k)`.
pub(super) type Pairs<'a> = (&'a [G1Affine], &'a [G2Affine], usize);
type Uses<'a> = Vec<(&'a [G1Affine], usize)>;

/// Products `0..count` of pairings: each entry `(p, q, k)` multiplies `∏ᵢ e(p[i], q[i])` into
/// product `k`. The lines of each G2 point are computed once for all the entries over the same
/// slice `q` (the same address and length); pairs with an identity point are skipped (their
/// pairing is 1, as bellperson defines it). A product no entry names is 1.
pub(super) fn pairing_products(pairs: &[Pairs<'_>], count: usize) -> Vec<Gt> {
    // Each slice of G2 points with the G1 slices paired with it and their products.
    let mut by_q: Vec<(&[G2Affine], Uses<'_>)> = Vec::new();
    for &(p, q, k) in pairs {
        assert!(p.len() == q.len() && k < count, "pairing product entries of unequal lengths or out of range");
        match by_q.iter_mut().find(|(other, _)| std::ptr::eq(*other, q)) {
            Some((_, uses)) => uses.push((p, k)),
            None => by_q.push((q, vec![(p, k)])),
        }
    }
    let points: usize = by_q.iter().map(|(q, _)| q.len()).sum();
    let per_job = points.div_ceil(2 * rayon::current_num_threads()).clamp(MIN_Q_PER_JOB, Q_PER_JOB);
    let jobs: Vec<_> =
        by_q.iter().flat_map(|(q, uses)| (0..q.len()).step_by(per_job).map(move |at| (*q, uses, at))).collect();
    let loops = jobs
        .into_par_iter()
        .map(|(q, uses, at)| {
            let end = (at + per_job).min(q.len());
            let mut f = vec![Fp12::ONE; count];
            for ((_, k), value) in uses.iter().zip(miller_loop(&q[at..end], uses.iter().map(|(p, _)| &p[at..end]))) {
                f[*k] *= value;
            }
            f
        })
        .reduce(|| vec![Fp12::ONE; count], |a, b| a.into_iter().zip(b).map(|(a, b)| a * b).collect());
    loops
        .into_par_iter()
        .enumerate()
        .map(|(k, f)| match pairs.iter().any(|e| e.2 == k) {
            true => final_exp(f),
            false => Gt::identity(),
        })
        .collect()
}

/// The Miller-loop values (before the final exponentiation) of `∏ᵢ e(p[i], q[i])`, one per `p`
/// of `ps`: the lines of each `q[i]` computed once, evaluated at every `p[i]`, and one
/// accumulator per `p` squared once per step for all its pairs.
fn miller_loop<'a>(q: &[G2Affine], ps: impl Iterator<Item = &'a [G1Affine]>) -> Vec<Fp12> {
    let lines: Vec<[blst_fp6; STEPS]> = q
        .iter()
        .map(|q| {
            let mut lines = [blst_fp6::default(); STEPS];
            if !bool::from(q.is_identity()) {
                // SAFETY: blstrs' affine points are #[repr(transparent)] over blst's (sizes
                // checked above); blst writes STEPS lines.
                unsafe { blst_precompute_lines(lines.as_mut_ptr(), (q as *const G2Affine).cast()) };
            }
            lines
        })
        .collect();
    // Each pair's P as (−2x, 2y), the form blst's lines are evaluated at; None where the
    // pairing is 1.
    let at: Vec<Vec<Option<(blst_fp, blst_fp)>>> = ps
        .map(|p| {
            p.iter()
                .zip(q)
                .map(|(p, q)| {
                    if bool::from(p.is_identity() | q.is_identity()) {
                        return None;
                    }
                    // SAFETY: as above, for G1.
                    let p = unsafe { &*(p as *const G1Affine).cast::<blst_p1_affine>() };
                    let (mut x, mut y) = (blst_fp::default(), blst_fp::default());
                    // SAFETY: blst's field arithmetic on values owned here (outputs may alias).
                    unsafe {
                        blst_fp_add(&mut x, &p.x, &p.x);
                        blst_fp_cneg(&mut x, &x, true);
                        blst_fp_add(&mut y, &p.y, &p.y);
                    }
                    Some((x, y))
                })
                .collect()
        })
        .collect();
    // SAFETY: blst_fp12_one points to a static constant.
    let mut acc = vec![unsafe { *blst_fp12_one() }; at.len()];
    for step in 0..STEPS {
        if !UNSQUARED.contains(&step) {
            for f in &mut acc {
                let f: *mut blst_fp12 = f;
                // SAFETY: squaring in place (blst allows the output to alias the input).
                unsafe { blst_fp12_sqr(f, f) };
            }
        }
        for (i, lines) in lines.iter().enumerate() {
            for (f, at) in acc.iter_mut().zip(&at) {
                let Some((x, y)) = &at[i] else { continue };
                let mut line = lines[step];
                let f: *mut blst_fp12 = f;
                // SAFETY: the line's packed coefficients scaled by P's coordinates, then
                // multiplied into the accumulator in place (aliasing allowed by blst).
                unsafe {
                    for c in &mut line.fp2[1].fp {
                        blst_fp_mul(c, c, x);
                    }
                    for c in &mut line.fp2[2].fp {
                        blst_fp_mul(c, c, y);
                    }
                    blst_fp12_mul_by_xy00z0(f, f, &line);
                }
            }
        }
    }
    acc.into_iter()
        .map(|mut f| {
            // SAFETY: in place on a value owned here; z is negative.
            unsafe { blst_fp12_conjugate(&mut f) };
            Fp12::from(f)
        })
        .collect()
}

fn final_exp(f: Fp12) -> Gt {
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
    use blstrs::{Bls12, G1Projective, G2Prepared, G2Projective};
    use pairing::{MillerLoopResult, MultiMillerLoop};
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn pairing_products_are_blstrs_pairings() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
        let n = 150; // several jobs and a partial one
        let mut a: Vec<G1Affine> = (0..n).map(|_| G1Projective::random(&mut rng).to_affine()).collect();
        let c: Vec<G1Affine> = (0..n).map(|_| G1Projective::random(&mut rng).to_affine()).collect();
        let mut b: Vec<G2Affine> = (0..n).map(|_| G2Projective::random(&mut rng).to_affine()).collect();
        a[7] = G1Affine::identity();
        b[9] = G2Affine::identity();
        let want = |pairs: &[(&[G1Affine], &[G2Affine])]| {
            let terms: Vec<(G1Affine, G2Prepared)> =
                pairs.iter().flat_map(|(p, q)| p.iter().zip(*q).map(|(p, q)| (*p, (*q).into()))).collect();
            let refs: Vec<_> = terms.iter().map(|(p, q)| (p, q)).collect();
            Bls12::multi_miller_loop(&refs).final_exponentiation()
        };
        // Entries over one slice of b share its lines; entries over its halves are other slices.
        let (b_l, b_r) = b.split_at(100);
        let got = pairing_products(
            &[(&a, &b, 0), (&c, &b, 1), (&a[..100], b_l, 0), (&c[100..], b_r, 2), (&a[7..8], &b[7..8], 4)],
            5,
        );
        assert_eq!(got[0], want(&[(&a, &b), (&a[..100], b_l)]));
        assert_eq!(got[1], want(&[(&c, &b)]));
        assert_eq!(got[2], want(&[(&c[100..], b_r)]));
        assert_eq!(got[3], Gt::identity());
        assert_eq!(got[4], Gt::identity());
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
