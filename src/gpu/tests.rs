//! GPU-layer tests. Those that need a device print a note and pass when
//! `device_count() == 0`, so they are harmless on CPU-only machines; the
//! constants test and the H reference's own test need no GPU at all.

use super::*;
use crate::groth16::ntt::z_inv_on_coset;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{Field, PrimeField};
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use rayon::prelude::*;
use std::time::{Duration, Instant};

/// How long a throughput MSM gives way to critical stages here: the default policy's.
const MAX_YIELD: Duration = Duration::from_secs(1);

fn have_gpu(test: &str) -> bool {
    let n = device_count();
    if n == 0 {
        eprintln!("{test}: skipped, no CUDA device");
    }
    n > 0
}

/// Scalars exercising the MSM's special cases: 0, 1 (sppark sums those
/// separately), −1, small values and uniformly random ones.
pub(super) fn scalars(n: usize, seed: u64) -> Vec<Scalar> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| match i % 7 {
            0 => Scalar::ZERO,
            1 => Scalar::ONE,
            2 => -Scalar::ONE,
            3 => Scalar::from(i as u64),
            _ => Scalar::random(&mut rng),
        })
        .collect()
}

/// Distinct points cheaply: running sums of a few random points; every
/// 13th is the identity.
fn g1_bases(n: usize, seed: u64) -> Vec<G1Affine> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let steps: Vec<G1Projective> = (0..16).map(|_| G1Projective::random(&mut rng)).collect();
    let mut acc = G1Projective::random(&mut rng);
    let proj: Vec<G1Projective> = (0..n)
        .map(|i| {
            acc += steps[i % 16];
            if i % 13 == 5 {
                G1Projective::identity()
            } else {
                acc
            }
        })
        .collect();
    let mut out = vec![G1Affine::identity(); n];
    G1Projective::batch_normalize(&proj, &mut out);
    out
}

fn g2_bases(n: usize, seed: u64) -> Vec<G2Affine> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let steps: Vec<G2Projective> = (0..16).map(|_| G2Projective::random(&mut rng)).collect();
    let mut acc = G2Projective::random(&mut rng);
    let proj: Vec<G2Projective> = (0..n)
        .map(|i| {
            acc += steps[i % 16];
            if i % 13 == 5 {
                G2Projective::identity()
            } else {
                acc
            }
        })
        .collect();
    let mut out = vec![G2Affine::identity(); n];
    G2Projective::batch_normalize(&proj, &mut out);
    out
}

/// `v` zero-padded to the domain of 2^lg and uploaded to the lane of `urgency`.
fn padded(device_id: usize, urgency: Urgency, v: &[Scalar], lg: u32) -> Result<DeviceScalars> {
    let mut v = v.to_vec();
    v.resize(1 << lg, Scalar::ZERO);
    DeviceScalars::upload(device_id, urgency, &v)
}

/// H on the device (on the lane of `urgency`) from host a, b, c, with the `z_inv` the CUDA
/// backend passes.
fn device_h(
    device_id: usize,
    urgency: Urgency,
    a: &[Scalar],
    b: &[Scalar],
    c: &[Scalar],
    lg: u32,
) -> Result<DeviceScalars> {
    let up = |v| padded(device_id, urgency, v, lg);
    super::compute_h(device_id, [up(a)?, up(b)?, up(c)?], lg, z_inv_on_coset(lg))
}

/// [`device_h`] on the throughput lane, brought back to the host.
fn compute_h(device_id: usize, a: &[Scalar], b: &[Scalar], c: &[Scalar], lg: u32) -> Result<Vec<Scalar>> {
    device_h(device_id, Urgency::Throughput, a, b, c, lg)?.to_host()
}

fn naive_g1(bases: &[G1Affine], s: &[Scalar]) -> G1Projective {
    bases.par_iter().zip(s.par_iter()).map(|(p, s)| p.to_curve() * s).reduce(G1Projective::identity, |a, b| a + b)
}

fn naive_g2(bases: &[G2Affine], s: &[Scalar]) -> G2Projective {
    bases.par_iter().zip(s.par_iter()).map(|(p, s)| p.to_curve() * s).reduce(G2Projective::identity, |a, b| a + b)
}

#[test]
fn ntt_constants_match_blstrs() {
    // A different omega would interpolate different polynomials and a
    // different g would shift the coset: either breaks bellperson parity.
    let mut omega = Scalar::ROOT_OF_UNITY;
    for lg in (0..=Scalar::S).rev() {
        let (w, g) = ntt_constants(lg).expect("constants");
        assert_eq!(w, omega, "omega for 2^{lg}");
        assert_eq!(g, Scalar::MULTIPLICATIVE_GENERATOR);
        omega = omega.square();
    }
    assert_eq!(Scalar::MULTIPLICATIVE_GENERATOR, Scalar::from(7u64));
    assert!(ntt_constants(33).is_err());
}

#[test]
fn errors_without_device() {
    let n = device_count();
    let bases = g1_bases(4, 1);
    let s = scalars(4, 2);
    // An id past the last device is an error, never an abort.
    assert!(ResidentG1::new(n, &bases).is_err());
    assert!(msm_g1_host(n, &bases, &s, 4, 0, MAX_YIELD).is_err());
    assert!(compute_h(n, &s, &s, &s, 2).is_err());
    assert!(device_info(n).is_err());
    assert_eq!(devices().len(), n);
    if n == 0 {
        eprintln!("errors_without_device: no CUDA device, all calls failed cleanly");
        return;
    }
    for d in devices() {
        eprintln!("device {d:?}");
        assert!(d.total_bytes > 0 && d.free_bytes <= d.total_bytes);
    }
    let r = ResidentG1::new(0, &bases).unwrap();
    assert!(r.msm(0..5, &scalars(5, 3)).is_err());
    assert!(r.msm(1..3, &s).is_err());
    // a, b, c of other lengths than the domain, or a domain out of range.
    let up = |v: &[Scalar]| DeviceScalars::upload(0, Urgency::Throughput, v).unwrap();
    let z = z_inv_on_coset(2);
    assert!(super::compute_h(0, [up(&s), up(&s), up(&s[..3])], 2, z).is_err());
    assert!(super::compute_h(0, [up(&s), up(&s), up(&s)], 1, z).is_err());
    assert!(super::compute_h(0, [up(&s), up(&s), up(&s)], 29, z).is_err());
}

#[test]
fn msm_g1_matches_cpu() {
    if !have_gpu("msm_g1_matches_cpu") {
        return;
    }
    for &n in &[1usize, 2, 31, 100, 1000, 4099, 1 << 13] {
        let bases = g1_bases(n, n as u64);
        let s = scalars(n, 7 + n as u64);
        let want = naive_g1(&bases, &s);
        let r = ResidentG1::new(0, &bases).unwrap();
        assert_eq!(r.msm(0..n, &s).unwrap(), want, "resident G1 n={n}");
        assert_eq!(msm_g1_host(0, &bases, &s, n, 0, MAX_YIELD).unwrap(), want, "streamed G1 n={n}");
        // A sub-range of the resident bases.
        let (lo, hi) = (n / 3, n - n / 5);
        assert_eq!(r.msm(lo..hi, &s[lo..hi]).unwrap(), naive_g1(&bases[lo..hi], &s[lo..hi]), "sub-range G1 n={n}");
        assert_eq!(r.msm(lo..lo, Scalars::Host(&[])).unwrap(), G1Projective::identity());
        // All-zero and all-one scalars.
        let zeros = vec![Scalar::ZERO; n];
        assert_eq!(r.msm(0..n, &zeros).unwrap(), G1Projective::identity());
        let ones = vec![Scalar::ONE; n];
        assert_eq!(r.msm(0..n, &ones).unwrap(), naive_g1(&bases, &ones), "ones n={n}");
    }
}

#[test]
fn msm_g2_matches_cpu() {
    if !have_gpu("msm_g2_matches_cpu") {
        return;
    }
    for &n in &[1usize, 3, 100, 2053, 1 << 12] {
        let bases = g2_bases(n, 100 + n as u64);
        let s = scalars(n, 200 + n as u64);
        let want = naive_g2(&bases, &s);
        let r = ResidentG2::new(0, &bases).unwrap();
        assert_eq!(r.msm(0..n, &s).unwrap(), want, "resident G2 n={n}");
        assert_eq!(msm_g2_host(0, &bases, &s, n, 0, MAX_YIELD).unwrap(), want, "streamed G2 n={n}");
        let (lo, hi) = (n / 4, n);
        assert_eq!(r.msm(lo..hi, &s[lo..hi]).unwrap(), naive_g2(&bases[lo..hi], &s[lo..hi]), "sub-range G2 n={n}");
    }
}

// ---- CPU reference for H, step by step as bellperson 0.27's execute_fft
// with EvaluationDomain (from_coeffs, ifft, coset_fft, mul_assign,
// sub_assign, divide_by_z_on_coset, icoset_fft), written out serially.
// bellperson's own EvaluationDomain needs ec-gpu-gen's Worker; ec-gpu-gen is
// a dev-dependency, and tests/parity.rs uses the two to check the CPU NTTs
// (groth16::ntt) against bellperson. These tests do not use them:
// `reference_h_is_the_quotient` checks this reference instead.

fn bitreverse(mut n: usize, l: u32) -> usize {
    let mut r = 0;
    for _ in 0..l {
        r = (r << 1) | (n & 1);
        n >>= 1;
    }
    r
}

/// As ec-gpu-gen's serial_fft: in-place radix-2 DIT with bit-reversed input.
fn serial_fft(a: &mut [Scalar], omega: Scalar, log_n: u32) {
    let n = a.len();
    assert_eq!(n, 1 << log_n);
    for k in 0..n {
        let rk = bitreverse(k, log_n);
        if k < rk {
            a.swap(rk, k);
        }
    }
    let mut m = 1;
    for _ in 0..log_n {
        let w_m = omega.pow_vartime([(n / (2 * m)) as u64]);
        let mut k = 0;
        while k < n {
            let mut w = Scalar::ONE;
            for j in 0..m {
                let mut t = a[k + j + m];
                t *= w;
                let mut tmp = a[k + j];
                tmp -= t;
                a[k + j + m] = tmp;
                a[k + j] += t;
                w *= w_m;
            }
            k += 2 * m;
        }
        m *= 2;
    }
}

fn distribute_powers(a: &mut [Scalar], g: Scalar) {
    let mut u = Scalar::ONE;
    for v in a.iter_mut() {
        *v *= u;
        u *= g;
    }
}

struct Domain {
    exp: u32,
    omega: Scalar,
    omegainv: Scalar,
    geninv: Scalar,
    minv: Scalar,
}

fn domain(n: usize) -> Domain {
    let (mut m, mut exp) = (1usize, 0u32);
    while m < n {
        m *= 2;
        exp += 1;
    }
    let mut omega = Scalar::ROOT_OF_UNITY;
    for _ in exp..Scalar::S {
        omega = omega.square();
    }
    Domain {
        exp,
        omega,
        omegainv: omega.invert().unwrap(),
        geninv: Scalar::MULTIPLICATIVE_GENERATOR.invert().unwrap(),
        minv: Scalar::from(m as u64).invert().unwrap(),
    }
}

fn ifft(a: &mut [Scalar], d: &Domain) {
    serial_fft(a, d.omegainv, d.exp);
    a.iter_mut().for_each(|v| *v *= d.minv);
}

fn reference_h(a: &[Scalar], b: &[Scalar], c: &[Scalar], lg: u32) -> Vec<Scalar> {
    let n = 1usize << lg;
    let pad = |v: &[Scalar]| {
        let mut v = v.to_vec();
        v.resize(n, Scalar::ZERO);
        v
    };
    let (mut a, mut b, mut c) = (pad(a), pad(b), pad(c));
    let d = domain(n);
    for v in [&mut a, &mut b, &mut c] {
        ifft(v, &d);
        distribute_powers(v, Scalar::MULTIPLICATIVE_GENERATOR);
        serial_fft(v, d.omega, d.exp);
    }
    for i in 0..n {
        a[i] *= b[i];
        a[i] -= c[i];
    }
    let z = Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([n as u64]) - Scalar::ONE;
    let i = z.invert().unwrap();
    a.iter_mut().for_each(|v| *v *= i);
    ifft(&mut a, &d);
    distribute_powers(&mut a, d.geninv);
    a.truncate(n - 1);
    a
}

fn horner(coeffs: &[Scalar], x: Scalar) -> Scalar {
    coeffs.iter().rev().fold(Scalar::ZERO, |acc, c| acc * x + c)
}

#[test]
fn reference_h_is_the_quotient() {
    // Sanity of the reference itself (no GPU): with c = a∘b on the domain,
    // H·Z = A·B − C as polynomials; check at a random point.
    let lg = 6;
    let n = 1usize << lg;
    let a = scalars(n - 3, 1);
    let b = scalars(n - 3, 2);
    let c: Vec<Scalar> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
    let h = reference_h(&a, &b, &c, lg);
    let d = domain(n);
    let interp = |v: &[Scalar]| {
        let mut v = v.to_vec();
        v.resize(n, Scalar::ZERO);
        ifft(&mut v, &d);
        v
    };
    let tau = Scalar::from(0x1234_5678_9abc_def1u64);
    let (pa, pb, pc) = (interp(&a), interp(&b), interp(&c));
    let lhs = horner(&h, tau) * (tau.pow_vartime([n as u64]) - Scalar::ONE);
    let rhs = horner(&pa, tau) * horner(&pb, tau) - horner(&pc, tau);
    assert_eq!(lhs, rhs);
}

#[test]
fn compute_h_matches_bellperson() {
    if !have_gpu("compute_h_matches_bellperson") {
        return;
    }
    for &(lg, n) in &[
        (1u32, 2usize),
        (2, 3),
        (5, 32),
        (10, 1000),
        (11, 2048),
        (14, 10_000),
        (17, (1 << 17) - 5),
        (19, (1 << 18) + 1),
    ] {
        let a = scalars(n, 10 + lg as u64);
        let b = scalars(n, 20 + lg as u64);
        let c = scalars(n, 30 + lg as u64);
        let want = reference_h(&a, &b, &c, lg);
        let got = compute_h(0, &a, &b, &c, lg).unwrap();
        assert_eq!(got.len(), (1 << lg) - 1);
        if got != want {
            let first = got.iter().zip(&want).position(|(x, y)| x != y).unwrap();
            panic!("compute_h lg={lg} n={n}: first mismatch at {first}");
        }
        // A satisfiable (divisible) instance as well.
        let c2: Vec<Scalar> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
        assert_eq!(compute_h(0, &a, &b, &c2, lg).unwrap(), reference_h(&a, &b, &c2, lg), "divisible lg={lg}");
    }
}

#[test]
fn repeated_calls_do_not_leak() {
    if !have_gpu("repeated_calls_do_not_leak") {
        return;
    }
    let n = 1 << 14;
    let bases = g1_bases(n, 5);
    let s = scalars(n, 6);
    // Covers the 2^15-long H as well as the 2^14 scalars.
    let words: Vec<u64> = (0..512u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    let run = || {
        let r = ResidentG1::new(0, &bases).unwrap();
        r.msm(0..n, &s).unwrap();
        compute_h(0, &s, &s, &s, 15).unwrap();
        device_h(0, Urgency::Throughput, &s, &s, &s, 15).unwrap().select(&words).unwrap();
        let d = DeviceScalars::upload(0, Urgency::Throughput, &s).unwrap();
        let sel = d.select(&words).unwrap();
        r.msm(0..sel.len(), &sel).unwrap();
    };
    run(); // first use allocates sppark's per-device twiddles
    let before = device_info(0).unwrap().free_bytes;
    for _ in 0..20 {
        run();
    }
    let after = device_info(0).unwrap().free_bytes;
    eprintln!("free bytes before {before} after {after}");
    assert!(after + (64 << 20) >= before, "leaked {} bytes", before - after);
}

/// Host reference for [`DeviceScalars::select`].
fn select_host(words: &[u64], s: &[Scalar]) -> Vec<Scalar> {
    s.iter().enumerate().filter(|(i, _)| words[i / 64] >> (i % 64) & 1 == 1).map(|(_, v)| *v).collect()
}

#[test]
fn device_scalars_upload_select_msm() {
    if !have_gpu("device_scalars_upload_select_msm") {
        return;
    }
    // 3·2^20 + 7 scalars cross the staging's 16 MiB chunks and wrap its ring; the sizes
    // alternate between the lanes (a selection and an MSM run on their scalars' lane).
    for (i, &n) in [0usize, 1, 63, 64, 65, 1000, 4099, (3 << 20) + 7].iter().enumerate() {
        let lane = if i % 2 == 0 { Urgency::Throughput } else { Urgency::Critical };
        let s = scalars(n, 40 + n as u64);
        let d = DeviceScalars::upload(0, lane, &s).unwrap();
        assert_eq!(d.len(), n);
        assert!(d.to_host().unwrap() == s, "round trip n={n}");
        // Random words, bits past n set too (they must be ignored), plus
        // the all-ones and all-zeros bitmaps.
        let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
        let nw = n.div_ceil(64);
        for words in [
            (0..nw).map(|_| rand_core::RngCore::next_u64(&mut rng)).collect::<Vec<u64>>(),
            vec![u64::MAX; nw],
            vec![0; nw + 1],
        ] {
            let sel = d.select(&words).unwrap();
            let want = select_host(&words, &s);
            assert_eq!(sel.len(), want.len(), "select length n={n}");
            assert!(sel.to_host().unwrap() == want, "select n={n}");
            if n <= 4099 {
                let bases = g1_bases(want.len(), 3);
                let r = ResidentG1::new(0, &bases).unwrap();
                let host = r.msm(0..want.len(), &want).unwrap();
                assert_eq!(r.msm(0..want.len(), &sel).unwrap(), host, "device scalars n={n}");
                let k = want.len();
                assert_eq!(
                    msm_g1_host(0, &bases, &sel, k, 0, MAX_YIELD).unwrap(),
                    host,
                    "streamed, device scalars n={n}"
                );
            }
        }
        if n > 0 {
            assert!(d.select(&vec![0; nw - 1]).is_err(), "short bitmap n={n}");
        }
    }
    let s = scalars(2053, 9);
    let d = DeviceScalars::upload(0, Urgency::Critical, &s).unwrap();
    let bases = g2_bases(2053, 8);
    let r = ResidentG2::new(0, &bases).unwrap();
    let want = naive_g2(&bases, &s);
    assert_eq!(r.msm(0..2053, &d).unwrap(), want, "G2 device scalars");
    assert_eq!(msm_g2_host(0, &bases, &d, 2053, 0, MAX_YIELD).unwrap(), want, "G2 streamed, device scalars");
    // Device scalars must match the range exactly.
    assert!(r.msm(0..2052, &d).is_err());
}

#[test]
fn compute_h_stays_on_device() {
    if !have_gpu("compute_h_stays_on_device") {
        return;
    }
    let lg = 12;
    let n = 3000;
    let (a, b, c) = (scalars(n, 1), scalars(n, 2), scalars(n, 3));
    let h = device_h(0, Urgency::Throughput, &a, &b, &c, lg).unwrap();
    assert_eq!(h.len(), (1 << lg) - 1);
    // a, b, c must be the domain's length, on the named device, on one lane.
    let short = || DeviceScalars::upload(0, Urgency::Throughput, &a).unwrap();
    assert!(super::compute_h(0, [short(), short(), short()], lg, z_inv_on_coset(lg)).is_err());
    let (t, e) = (Urgency::Throughput, Urgency::Critical);
    let mixed = [padded(0, t, &a, lg), padded(0, e, &b, lg), padded(0, t, &c, lg)].map(Result::unwrap);
    let Err(err) = super::compute_h(0, mixed, lg, z_inv_on_coset(lg)) else { panic!("a, b, c of two lanes taken") };
    assert!(err.to_string().contains("one lane"), "{err}");
    let want = reference_h(&a, &b, &c, lg);
    assert!(h.to_host().unwrap() == want);
    let express = device_h(0, Urgency::Critical, &a, &b, &c, lg).unwrap();
    assert!(express.to_host().unwrap() == want, "H on the express lane");
    // The H MSM straight from the device equals the one from host coefficients.
    let bases = g1_bases(h.len(), 4);
    let r = ResidentG1::new(0, &bases).unwrap();
    assert_eq!(r.msm(0..h.len(), &h).unwrap(), r.msm(0..h.len(), &want).unwrap());
}

/// n distinct G1 points fast: chunks of running sums of the generator.
fn many_g1(n: usize) -> Vec<G1Affine> {
    let chunk = 1 << 14;
    let mut out = vec![G1Affine::identity(); n];
    out.par_chunks_mut(chunk).enumerate().for_each(|(k, dst)| {
        let g = G1Projective::generator();
        let mut acc = g * Scalar::from((k * chunk + 1) as u64 * 0x9e37_79b9);
        let proj: Vec<G1Projective> = (0..dst.len())
            .map(|_| {
                acc += g;
                acc
            })
            .collect();
        G1Projective::batch_normalize(&proj, dst);
    });
    out
}

fn many_g2(n: usize) -> Vec<G2Affine> {
    let chunk = 1 << 13;
    let mut out = vec![G2Affine::identity(); n];
    out.par_chunks_mut(chunk).enumerate().for_each(|(k, dst)| {
        let g = G2Projective::generator();
        let mut acc = g * Scalar::from((k * chunk + 1) as u64 * 0x9e37_79b9);
        let proj: Vec<G2Projective> = (0..dst.len())
            .map(|_| {
                acc += g;
                acc
            })
            .collect();
        G2Projective::batch_normalize(&proj, dst);
    });
    out
}

/// `n` distinct G1 bases, four of them at infinity (the first, the last and two between), and
/// their resident copy on device 0.
fn resident_with_infinities(n: usize) -> (Vec<G1Affine>, ResidentG1) {
    let mut bases = many_g1(n);
    for i in [0, 5, n / 2, n - 1] {
        bases[i] = G1Affine::identity();
    }
    let r = ResidentG1::new(0, &bases).unwrap();
    (bases, r)
}

/// Mostly bit-valued device scalars (a witness's aux) take the split MSM in G1: the ones'
/// bases summed by a bitmap batch addition, the other values through Pippenger. Bits with a
/// few others, all ones, all zeros, and too many others (the plain MSM) all equal the same MSM
/// from host scalars, with resident bases and streamed ones; the first also equals blstrs, in
/// G1 and (the plain MSM) in G2.
#[test]
fn bit_scalars_split_equals_the_plain_msm() {
    if !have_gpu("bit_scalars_split_equals_the_plain_msm") {
        return;
    }
    let n = (1 << 20) + 77;
    let (bases, r) = resident_with_infinities(n);
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let mut mixed = |other_every: usize| -> Vec<Scalar> {
        (0..n)
            .map(|i| match (i % other_every == 3, i % 3) {
                (true, _) => Scalar::random(&mut rng),
                (false, 0) => Scalar::ZERO,
                _ => Scalar::ONE,
            })
            .collect()
    };
    let bits = mixed(33);
    let cases = [
        ("bits, 3% others", bits.clone()),
        ("all ones", vec![Scalar::ONE; n]),
        ("all zeros", vec![Scalar::ZERO; n]),
        ("20% others", mixed(5)),
    ];
    for (what, s) in &cases {
        let d = DeviceScalars::upload(0, Urgency::Throughput, s).unwrap();
        let want = r.msm(0..n, &s[..]).unwrap();
        assert_eq!(r.msm(0..n, &d).unwrap(), want, "{what}");
        assert_eq!(msm_g1_host(0, &bases, &d, n, 0, MAX_YIELD).unwrap(), want, "{what}, streamed");
    }
    let proj: Vec<G1Projective> = bases.iter().map(|p| p.to_curve()).collect();
    let d = DeviceScalars::upload(0, Urgency::Throughput, &bits).unwrap();
    assert_eq!(r.msm(0..n, &d).unwrap(), G1Projective::multi_exp(&proj, &bits), "G1 vs blstrs");
    // A sub-range of the device scalars, as the pieces of a long MSM take them.
    let (len, off) = (1 << 20, 77);
    assert_eq!(
        r.msm(0..len, Scalars::Device(&d, off..off + len)).unwrap(),
        G1Projective::multi_exp(&proj[..len], &bits[off..off + len]),
        "G1 piece vs blstrs"
    );

    let g2 = many_g2(n);
    let r2 = ResidentG2::new(0, &g2).unwrap();
    let proj2: Vec<G2Projective> = g2.iter().map(|p| p.to_curve()).collect();
    assert_eq!(r2.msm(0..n, &d).unwrap(), G2Projective::multi_exp(&proj2, &bits), "G2 vs blstrs");
}

/// A piece of a long MSM run with the whole's Pippenger window (wider than its own: 12 bits
/// against 10 here) equals blstrs, from host and from device scalars (G1's split and plain
/// MSMs, the device scalars' also with the piece's bases streamed) and in G2 (resident and
/// streamed); a window for more points than the bases is an argument error.
#[test]
fn a_piece_with_the_whole_window_equals_blstrs() {
    if !have_gpu("a_piece_with_the_whole_window_equals_blstrs") {
        return;
    }
    let n = (1 << 20) + 77;
    let (len, off) = (1 << 18, 1000);
    let bases = many_g1(n);
    let r = ResidentG1::new(0, &bases).unwrap();
    let proj: Vec<G1Projective> = bases[off..off + len].iter().map(|p| p.to_curve()).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(22);
    let random: Vec<Scalar> = (0..len).map(|_| Scalar::random(&mut rng)).collect();
    let bits: Vec<Scalar> = (0..len).map(|i| if i % 3 == 0 { Scalar::ONE } else { Scalar::ZERO }).collect();
    for (what, s) in [("random", &random), ("bits", &bits)] {
        let want = G1Projective::multi_exp(&proj, s);
        assert_eq!(r.msm_piece(off..off + len, &s[..], n).unwrap(), want, "{what}, host scalars");
        let d = DeviceScalars::upload(0, Urgency::Throughput, s).unwrap();
        assert_eq!(r.msm_piece(off..off + len, &d, n).unwrap(), want, "{what}, device scalars");
        let streamed = msm_g1_host(0, &bases[off..off + len], &d, n, 0, MAX_YIELD).unwrap();
        assert_eq!(streamed, want, "{what}, device scalars, streamed");
    }
    assert!(r.msm_piece(off..off + len, &random[..], n + 1).is_err(), "a window past the bases");

    let g2 = many_g2(len);
    let r2 = ResidentG2::new(0, &g2).unwrap();
    let proj2: Vec<G2Projective> = g2[..len / 4].iter().map(|p| p.to_curve()).collect();
    let want = G2Projective::multi_exp(&proj2, &random[..len / 4]);
    assert_eq!(r2.msm_piece(0..len / 4, &random[..len / 4], len).unwrap(), want, "G2");
    assert_eq!(msm_g2_host(0, &g2[..len / 4], &random[..len / 4], len, 0, MAX_YIELD).unwrap(), want, "G2, streamed");
}

/// cuzk's own Pippenger driver (`msm_with` a window) equals blstrs at every kind of window:
/// full top windows (17 bits), top windows of a few bits (19, 21, 23), of more (20, 22), and
/// the narrowest (10), which take every branch of the bucket reduction's levels; over the
/// special scalars (0, 1, −1, small ones), bases at infinity, and a piece of the device
/// scalars (with its bases resident and streamed), and on the express lane; in G2 too (a pair
/// of threads per point). Windows outside 10-26 bits are argument errors.
#[test]
fn wide_windows_equal_blstrs() {
    if !have_gpu("wide_windows_equal_blstrs") {
        return;
    }
    let n = (1 << 20) + 77;
    let (bases, r) = resident_with_infinities(n);
    let s = scalars(n, 23);
    let d = DeviceScalars::upload(0, Urgency::Throughput, &s).unwrap();
    let proj: Vec<G1Projective> = bases.iter().map(|p| p.to_curve()).collect();
    let want = G1Projective::multi_exp(&proj, &s);
    let (len, off) = (1 << 19, 333);
    let want_piece = G1Projective::multi_exp(&proj[..len], &s[off..off + len]);
    for wbits in [10, 17, 19, 20, 21, 22, 23] {
        assert_eq!(r.msm_with(0..n, &d, n, wbits, MAX_YIELD).unwrap(), want, "{wbits}-bit window");
        let piece = Scalars::Device(&d, off..off + len);
        assert_eq!(
            r.msm_with(0..len, piece.clone(), n, wbits, MAX_YIELD).unwrap(),
            want_piece,
            "{wbits}-bit window, a piece"
        );
        let streamed = msm_g1_host(0, &bases[..len], piece, n, wbits, MAX_YIELD).unwrap();
        assert_eq!(streamed, want_piece, "{wbits}-bit window, a streamed piece");
    }
    for wbits in [9, 27] {
        assert!(r.msm_with(0..n, &d, n, wbits, MAX_YIELD).is_err(), "a {wbits}-bit window");
    }
    let express = DeviceScalars::upload(0, Urgency::Critical, &s).unwrap();
    assert_eq!(r.msm_with(0..n, &express, n, 16, MAX_YIELD).unwrap(), want, "on the express lane");
    let n2 = (1 << 17) + 77;
    let mut g2 = many_g2(n2);
    for i in [0, 5, n2 - 1] {
        g2[i] = G2Affine::identity();
    }
    let r2 = ResidentG2::new(0, &g2).unwrap();
    let proj2: Vec<G2Projective> = g2.iter().map(|p| p.to_curve()).collect();
    let d2 = DeviceScalars::upload(0, Urgency::Throughput, &s[..n2]).unwrap();
    let want2 = G2Projective::multi_exp(&proj2, &s[..n2]);
    let want2_piece = G2Projective::multi_exp(&proj2[..len / 8], &s[off..off + len / 8]);
    for wbits in [10, 17, 20, 23] {
        assert_eq!(r2.msm_with(0..n2, &d2, n2, wbits, MAX_YIELD).unwrap(), want2, "G2, {wbits}-bit window");
        let piece = Scalars::Device(&d, off..off + len / 8);
        assert_eq!(
            r2.msm_with(0..len / 8, piece.clone(), n2, wbits, MAX_YIELD).unwrap(),
            want2_piece,
            "G2, {wbits}-bit window, a piece"
        );
        let streamed = msm_g2_host(0, &g2[..len / 8], piece, n2, wbits, MAX_YIELD).unwrap();
        assert_eq!(streamed, want2_piece, "G2, {wbits}-bit window, a streamed piece");
    }
    for wbits in [9, 27] {
        assert!(r2.msm_with(0..n2, &d2, n2, wbits, MAX_YIELD).is_err(), "G2, a {wbits}-bit window");
    }
}

/// A throughput MSM on cuzk's driver gives way to a critical stage on its device before each of
/// its kernels (`pace_t` in `cuda/msm_wide.cuh`) until the stage ends, and for at most
/// `MAX_YIELD` in all under a stage that does not end; an express one never waits. Every result
/// equals blstrs'.
#[test]
fn throughput_wide_msms_yield_to_critical_stages() {
    if !have_gpu("throughput_wide_msms_yield_to_critical_stages") {
        return;
    }
    let n = (1 << 18) + 5;
    let (bases, r) = resident_with_infinities(n);
    let s = scalars(n, 29);
    let want = naive_g1(&bases, &s);
    let throughput = DeviceScalars::upload(0, Urgency::Throughput, &s).unwrap();
    let express = DeviceScalars::upload(0, Urgency::Critical, &s).unwrap();
    let timed = |d: &DeviceScalars| {
        let t = Instant::now();
        let sum = r.msm_with(0..n, d, n, 13, MAX_YIELD).unwrap();
        assert_eq!(sum, want);
        t.elapsed()
    };
    timed(&throughput);
    let alone = timed(&throughput);
    let critical = Turn::begin(0, Urgency::Critical, MAX_YIELD);
    let took = timed(&express);
    assert!(took < MAX_YIELD / 2, "an express MSM waited {took:?}");
    let held = std::time::Duration::from_millis(300);
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| timed(&throughput));
        std::thread::sleep(held);
        drop(critical);
        let took = waiter.join().unwrap();
        assert!(took >= held * 4 / 5 && took < MAX_YIELD, "waited {took:?} for a stage of {held:?}");
    });
    let _flood = Turn::begin(0, Urgency::Critical, MAX_YIELD);
    let took = timed(&throughput);
    assert!(took >= MAX_YIELD && took < 2 * MAX_YIELD + 4 * alone, "{took:?} under a stage that does not end");
}

/// A proof's freed device buffers stay in the device's pool (it keeps them for the next
/// proof) until `trim_pools` gives them back to the driver.
#[test]
fn trim_gives_the_pools_memory_back() {
    if !have_gpu("trim_gives_the_pools_memory_back") {
        return;
    }
    let n = 1 << 24; // 512 MiB on the device
    let s = vec![Scalar::ONE; n];
    drop(DeviceScalars::upload(0, Urgency::Throughput, &s).unwrap());
    let kept = device_info(0).unwrap().free_bytes;
    trim_pools();
    let after = device_info(0).unwrap().free_bytes;
    assert!(after >= kept + (n as u64 * 32) / 2, "free {kept} before the trim, {after} after");
}
