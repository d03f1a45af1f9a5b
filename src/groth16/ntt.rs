//! Radix-2 NTTs over the scalar field with bellperson's `EvaluationDomain`
//! conventions: domain `m = 2^k ≥ n`, `ω = ROOT_OF_UNITY^(2^(S−k))`, coset
//! generator `g = MULTIPLICATIVE_GENERATOR`, `Z(x) = x^m − 1`.

use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;

use crate::{Error, Result};

/// Elements per independent block for the first stages (fits in L2).
const BLOCK: usize = 1 << 12;

/// An evaluation domain of size `2^log_m`, with its twiddle tables (`ω^j` and
/// `ω^-j` for `j < m/2`: `32·m` bytes, shared by every transform on it).
pub struct Domain {
    pub log_m: u32,
    twiddles: Vec<Scalar>,
    inv_twiddles: Vec<Scalar>,
    m_inv: Scalar,
}

/// `[1, w, w², …]` of length `n`, in parallel chunks each seeded by one power.
fn powers(w: Scalar, n: usize) -> Vec<Scalar> {
    const CHUNK: usize = 1 << 12;
    let mut out = vec![Scalar::ZERO; n];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, part)| {
        let mut p = w.pow_vartime([(c * CHUNK) as u64]);
        for x in part {
            *x = p;
            p *= w;
        }
    });
    out
}

impl Domain {
    /// The smallest domain holding `n` values, or an error past 2^S.
    pub fn for_size(n: usize) -> Result<Domain> {
        let m = n.max(1).next_power_of_two();
        let log_m = m.trailing_zeros();
        if log_m > Scalar::S {
            return Err(Error::TooLarge(format!("domain 2^{log_m} exceeds 2^{}", Scalar::S)));
        }
        let mut omega = Scalar::ROOT_OF_UNITY;
        for _ in log_m..Scalar::S {
            omega = omega.square();
        }
        Ok(Domain {
            log_m,
            twiddles: powers(omega, m / 2),
            inv_twiddles: powers(omega.invert().unwrap(), m / 2),
            m_inv: Scalar::from(m as u64).invert().unwrap(),
        })
    }

    pub fn size(&self) -> usize {
        1 << self.log_m
    }

    pub fn fft(&self, v: &mut [Scalar]) {
        ntt(v, &self.twiddles);
    }

    pub fn ifft(&self, v: &mut [Scalar]) {
        ntt(v, &self.inv_twiddles);
        let m_inv = self.m_inv;
        v.par_iter_mut().for_each(|x| *x *= m_inv);
    }

    /// Evaluates on the coset `g·⟨ω⟩`.
    pub fn coset_fft(&self, v: &mut [Scalar]) {
        distribute_powers(v, Scalar::MULTIPLICATIVE_GENERATOR);
        self.fft(v);
    }

    pub fn icoset_fft(&self, v: &mut [Scalar]) {
        self.ifft(v);
        distribute_powers(v, Scalar::MULTIPLICATIVE_GENERATOR.invert().unwrap());
    }
}

/// `1 / Z(g)` for the domain of size `m = 2^log_m`: `Z(x) = x^m − 1` is
/// constant on the coset `g·⟨ω⟩` (`(g·ω^i)^m = g^m`), so dividing by Z there
/// is multiplying by this. The CPU and CUDA backends both use it.
pub fn z_inv_on_coset(log_m: u32) -> Scalar {
    (Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([1u64 << log_m]) - Scalar::ONE).invert().unwrap()
}

/// `v[i] *= g^i`.
fn distribute_powers(v: &mut [Scalar], g: Scalar) {
    let chunk = (v.len() / rayon::current_num_threads().max(1)).max(1024);
    v.par_chunks_mut(chunk).enumerate().for_each(|(c, part)| {
        let mut p = g.pow_vartime([(c * chunk) as u64]);
        for x in part {
            *x *= p;
            p *= g;
        }
    });
}

fn bit_reverse(v: &mut [Scalar]) {
    let n = v.len();
    let bits = n.trailing_zeros();
    if bits == 0 {
        return;
    }
    for i in 0..n {
        let j = i.reverse_bits() >> (usize::BITS - bits);
        if i < j {
            v.swap(i, j);
        }
    }
}

/// In-place decimation-in-time NTT (`v.len()` a power of two) with `tw` the
/// powers `w^j`, `j < n/2`, of its root; stage `len` uses stride `n/(2·len)`.
fn ntt(v: &mut [Scalar], tw: &[Scalar]) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    bit_reverse(v);
    let stage = |chunk: &mut [Scalar], len: usize| {
        let stride = n / (2 * len);
        for block in chunk.chunks_mut(2 * len) {
            let (lo, hi) = block.split_at_mut(len);
            for j in 0..len {
                let t = hi[j] * tw[j * stride];
                hi[j] = lo[j] - t;
                lo[j] += t;
            }
        }
    };
    // Early stages: independent blocks that stay in cache.
    let block = BLOCK.min(n);
    v.par_chunks_mut(block).for_each(|chunk| {
        let mut len = 1;
        while len < block {
            stage(chunk, len);
            len *= 2;
        }
    });
    // Late stages: split each butterfly group across threads.
    let mut len = block;
    while len < n {
        let stride = n / (2 * len);
        v.par_chunks_mut(2 * len).for_each(|group| {
            let (lo, hi) = group.split_at_mut(len);
            lo.par_chunks_mut(BLOCK).zip(hi.par_chunks_mut(BLOCK)).enumerate().for_each(|(c, (lo, hi))| {
                for j in 0..lo.len() {
                    let t = hi[j] * tw[(c * BLOCK + j) * stride];
                    hi[j] = lo[j] - t;
                    lo[j] += t;
                }
            });
        });
        len *= 2;
    }
}

/// bellperson's H: coefficients of `(a·b − c) / Z` computed on the coset, the
/// top one dropped (`m − 1` values, the length of the H query). bellperson takes
/// a, b and c to the coset and `(a·b − c)·z_inv` back; the coset iFFT is linear
/// and undoes c's coset FFT, so `(icoset_fft(a·b) − ifft(c))·z_inv` is the same
/// bit for bit, with six FFTs instead of seven.
pub fn compute_h(mut a: Vec<Scalar>, mut b: Vec<Scalar>, mut c: Vec<Scalar>) -> Result<Vec<Scalar>> {
    let domain = Domain::for_size(a.len())?;
    let m = domain.size();
    for v in [&mut a, &mut b, &mut c] {
        v.resize(m, Scalar::ZERO);
    }
    let d = &domain;
    let ((), ((), ())) = rayon::join(
        || {
            d.ifft(&mut a);
            d.coset_fft(&mut a)
        },
        || {
            rayon::join(
                || {
                    d.ifft(&mut b);
                    d.coset_fft(&mut b)
                },
                || d.ifft(&mut c),
            )
        },
    );
    a.par_iter_mut().zip(b.par_iter()).for_each(|(a, b)| *a *= b);
    drop(b);
    domain.icoset_fft(&mut a);
    let z_inv = z_inv_on_coset(domain.log_m);
    a.par_iter_mut().zip(c.par_iter()).for_each(|(a, c)| *a = (*a - c) * z_inv);
    drop(c);
    a.truncate(m - 1);
    Ok(a)
}
