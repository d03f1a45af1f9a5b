//! Multi-scalar multiplication on the CPU: blst's Pippenger cut into tiles (a window of the
//! scalars' bits over a run of the points), one rayon job per tile, on the pool the caller runs
//! in. (blst's own multi-threaded `mult` uses a process-wide pool of its own, where a critical
//! proof's MSMs would queue behind every other proof's; on the engine's pools they share the
//! cores by the pools' priorities.)
//!
//! blstrs' affine points are `#[repr(transparent)]` wrappers of blst's affine
//! types; reading a slice of one as the other, and blst's C entry points, are the only
//! `unsafe` here.

use blst::{
    blst_p1, blst_p1_affine, blst_p1s_mult_pippenger_scratch_sizeof, blst_p1s_tile_pippenger, blst_p2, blst_p2_affine,
    blst_p2s_mult_pippenger_scratch_sizeof, blst_p2s_tile_pippenger, limb_t,
};
use blstrs::{Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::Group;
use rayon::prelude::*;

const _: () = assert!(std::mem::size_of::<G1Affine>() == std::mem::size_of::<blst_p1_affine>());
const _: () = assert!(std::mem::size_of::<G2Affine>() == std::mem::size_of::<blst_p2_affine>());

/// Bits of a scalar.
const NBITS: usize = 255;
/// Fewest points per tile: below this a run's bucket sums outweigh what the split gains.
const MIN_RUN: usize = 1 << 10;
/// Fewer points than this are multiplied one by one (a tile needs at least two).
const MIN_PIPPENGER: usize = 32;
/// Widest window: 2^15 buckets per tile (a few MB of scratch per thread).
const MAX_WINDOW: usize = 16;

/// Scalars as blst's Pippenger reads them: each one's canonical little-endian bytes (blstrs keeps
/// Montgomery form), 32 per scalar. Made in the scalars' own buffer where the caller gives it up,
/// so that an MSM holds no second copy of its scalars; one form serves every MSM over the same
/// scalars (B in G1 and G2).
pub struct Canonical {
    /// Each slot holds a scalar's canonical bytes in memory order, no longer a Montgomery value:
    /// read only through [`Canonical::bytes`].
    slots: Vec<Scalar>,
}

impl Canonical {
    /// `scalars` in canonical form, converted in place.
    pub fn new(mut scalars: Vec<Scalar>) -> Canonical {
        scalars.par_chunks_mut(1 << 10).for_each(|part| {
            for s in part {
                let b = s.to_bytes_le();
                let limb = |i: usize| u64::from_ne_bytes(b[8 * i..8 * i + 8].try_into().expect("8 bytes"));
                *s = Scalar::from(blst::blst_fr { l: [limb(0), limb(1), limb(2), limb(3)] });
            }
        });
        Canonical { slots: scalars }
    }

    /// A canonical copy of scalars the caller keeps.
    pub fn copy_of(scalars: &[Scalar]) -> Canonical {
        Canonical::new(scalars.to_vec())
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The bytes blst reads, 32 per scalar.
    fn bytes(&self) -> &[u8] {
        // SAFETY: Scalar is #[repr(transparent)] over blst_fr, four u64 limbs: 32 bytes without
        // padding, each slot's limbs hold its canonical bytes in memory order.
        unsafe { std::slice::from_raw_parts(self.slots.as_ptr().cast(), 32 * self.slots.len()) }
    }

    /// Scalar `i` again (for the few points multiplied one by one).
    fn scalar(&self, i: usize) -> Scalar {
        let b: [u8; 32] = self.bytes()[32 * i..32 * i + 32].try_into().expect("32 bytes");
        Scalar::from_bytes_le(&b).expect("canonical bytes of a scalar")
    }
}

/// Pippenger's window for `n` points (blst's rule: about log2(n) − 4 bits for large n).
fn window_bits(n: usize) -> usize {
    let bits = usize::BITS as usize - n.leading_zeros() as usize;
    match bits {
        14.. => bits - 4,
        6..=13 => bits - 3,
        _ => 2,
    }
    .min(MAX_WINDOW)
}

/// blst's Pippenger tile over one group, `(ret, points, npoints, scalars, nbits, scratch, bit0,
/// window)`, and the scratch bytes per bucket it needs (`scratch_sizeof(0)`).
struct Pippenger<A, P> {
    tile: unsafe extern "C" fn(*mut P, *const *const A, usize, *const *const u8, usize, *mut limb_t, usize, usize),
    scratch_sizeof: unsafe extern "C" fn(usize) -> usize,
}

impl<A: Sync, P: Default> Pippenger<A, P> {
    /// `Σ digit · points[i]` on this thread, the digit being scalar i's signed (Booth) digit at
    /// bits `bit0..bit0 + window`; the top tile (`bit0 + window > NBITS`) takes the carry of
    /// the digit below it. `scalars`: 32 bytes per point, at least one point.
    fn tile(&self, points: &[A], scalars: &[u8], bit0: usize, window: usize) -> P {
        debug_assert!(!points.is_empty() && scalars.len() == 32 * points.len() && bit0 <= NBITS);
        let mut out = P::default();
        // SAFETY: blst reads `points.len()` points from the contiguous array its first pointer
        // names (a NULL second pointer says so), as many 32-byte scalars likewise, and uses
        // 2^(window − 1) buckets of the scratch it sized.
        unsafe {
            let mut scratch = vec![0 as limb_t; ((self.scratch_sizeof)(0) / 8) << (window - 1)];
            let p = [points.as_ptr(), std::ptr::null()];
            let s = [scalars.as_ptr(), std::ptr::null()];
            (self.tile)(&mut out, p.as_ptr(), points.len(), s.as_ptr(), NBITS, scratch.as_mut_ptr(), bit0, window);
        }
        out
    }

    /// `Σ scalars[i] · points[i]`: rows of `window` bits (the top one partial, or empty but for
    /// the carry) times runs of the points (each at least `MIN_PIPPENGER`), at least two tiles
    /// per thread of the current rayon pool; each tile's sum turned into `R`, the rows added up
    /// and put together by doubling (Horner's rule, top row first).
    fn msm<R: Group + Send>(&self, points: &[A], scalars: &Canonical, into: impl Fn(P) -> R + Sync) -> R {
        let n = points.len();
        debug_assert!(n == scalars.len() && n >= MIN_PIPPENGER);
        let bytes = scalars.bytes();
        let window = window_bits(n);
        let rows = NBITS / window + 1;
        let cols = (2 * rayon::current_num_threads()).div_ceil(rows).min(n / MIN_RUN).max(1);
        let tiles: Vec<(usize, usize)> = (0..rows).flat_map(|r| (0..cols).map(move |c| (r, c))).collect();
        let sums: Vec<(usize, R)> = tiles
            .into_par_iter()
            .map(|(r, c)| {
                let (lo, hi) = (c * n / cols, (c + 1) * n / cols);
                (r, into(self.tile(&points[lo..hi], &bytes[32 * lo..32 * hi], r * window, window)))
            })
            .collect();
        let mut row = vec![R::identity(); rows];
        for (r, s) in sums {
            row[r] += s;
        }
        row.into_iter().rev().fold(R::identity(), |acc, r| (0..window).fold(acc, |a, _| a.double()) + r)
    }
}

const G1: Pippenger<blst_p1_affine, blst_p1> =
    Pippenger { tile: blst_p1s_tile_pippenger, scratch_sizeof: blst_p1s_mult_pippenger_scratch_sizeof };
const G2: Pippenger<blst_p2_affine, blst_p2> =
    Pippenger { tile: blst_p2s_tile_pippenger, scratch_sizeof: blst_p2s_mult_pippenger_scratch_sizeof };

/// `Σ scalars[i] · bases[i]` point by point, for a few points.
fn few<A: Copy + std::ops::Mul<Scalar, Output = R>, R: Group>(bases: &[A], scalars: &Canonical) -> R {
    bases.iter().take(scalars.len()).enumerate().fold(R::identity(), |sum, (i, &p)| sum + p * scalars.scalar(i))
}

/// `Σ scalars[i] · bases[i]` over G1 (`bases.len() == scalars.len()`), from a canonical copy of
/// the scalars.
pub fn msm_g1(bases: &[G1Affine], scalars: &[Scalar]) -> G1Projective {
    msm_g1_canonical(bases, &Canonical::copy_of(scalars))
}

/// `Σ scalars[i] · bases[i]` over G2, from a canonical copy of the scalars.
pub fn msm_g2(bases: &[G2Affine], scalars: &[Scalar]) -> G2Projective {
    msm_g2_canonical(bases, &Canonical::copy_of(scalars))
}

/// [`msm_g1`] of scalars already in canonical form.
pub fn msm_g1_canonical(bases: &[G1Affine], scalars: &Canonical) -> G1Projective {
    if bases.len() < MIN_PIPPENGER {
        return few(bases, scalars);
    }
    // SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine (size checked above).
    let points: &[blst_p1_affine] = unsafe { std::slice::from_raw_parts(bases.as_ptr().cast(), bases.len()) };
    G1.msm(points, scalars, g1)
}

/// [`msm_g2`] of scalars already in canonical form.
pub fn msm_g2_canonical(bases: &[G2Affine], scalars: &Canonical) -> G2Projective {
    if bases.len() < MIN_PIPPENGER {
        return few(bases, scalars);
    }
    // SAFETY: G2Affine is #[repr(transparent)] over blst_p2_affine (size checked above).
    let points: &[blst_p2_affine] = unsafe { std::slice::from_raw_parts(bases.as_ptr().cast(), bases.len()) };
    G2.msm(points, scalars, g2)
}

fn g1(p: blst_p1) -> G1Projective {
    G1Projective::from_raw_unchecked(Fp::from(p.x), Fp::from(p.y), Fp::from(p.z))
}

fn g2(p: blst_p2) -> G2Projective {
    G2Projective::from_raw_unchecked(Fp2::from(p.x), Fp2::from(p.y), Fp2::from(p.z))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    /// The form made in place is each scalar's canonical bytes.
    #[test]
    fn canonical_bytes_in_place() {
        let mut rng = ChaCha20Rng::seed_from_u64(6);
        let s: Vec<Scalar> = (0..3000).map(|_| Scalar::random(&mut rng)).collect();
        let want: Vec<u8> = s.iter().flat_map(|s| s.to_bytes_le()).collect();
        let c = Canonical::new(s.clone());
        assert_eq!(c.bytes(), &want[..]);
        assert!((0..s.len()).all(|i| c.scalar(i) == s[i]));
    }

    /// Every tiling (sizes around the window and run boundaries, pools of 1 to 5 threads)
    /// against the sum done point by point.
    #[test]
    fn tiled_msm_equals_the_plain_sum() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let n = 3000;
        let g1: Vec<G1Affine> = (0..n).map(|_| G1Projective::random(&mut rng).into()).collect();
        let g2: Vec<G2Affine> = (0..n).map(|_| G2Projective::random(&mut rng).into()).collect();
        let mut s: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        (s[0], s[1], s[2]) = (Scalar::ZERO, -Scalar::ONE, Scalar::ONE);
        for threads in [1, 2, 5] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for len in [0, 1, 2, 3, 31, 64, 1023, 1024, 1025, 2100, n] {
                let want1: G1Projective = g1[..len].iter().zip(&s).map(|(p, k)| *p * k).sum();
                let want2: G2Projective = g2[..len].iter().zip(&s).map(|(p, k)| *p * k).sum();
                pool.install(|| {
                    assert_eq!(msm_g1(&g1[..len], &s[..len]), want1, "G1 n={len} threads={threads}");
                    assert_eq!(msm_g2(&g2[..len], &s[..len]), want2, "G2 n={len} threads={threads}");
                    let c = Canonical::new(s[..len].to_vec());
                    assert_eq!(msm_g1_canonical(&g1[..len], &c), want1, "G1 in place n={len}");
                    assert_eq!(msm_g2_canonical(&g2[..len], &c), want2, "G2 in place n={len}");
                });
            }
        }
    }
}
