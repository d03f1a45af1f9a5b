//! `gpu-timings`: timings of the GPU layer's pieces on one GPU (`cuda`
//! builds only; without the feature the command parses and says so).
//!
//! - `primitives`: resident and streamed MSMs by size, H's NTTs, scalar upload and selection.
//! - `wide-window`: a long MSM by sppark's `msm_t` and by cuzk's driver at several windows,
//!   in pieces and whole, every sum compared with sppark's.
//! - `interference`: a critical proof's first device steps while throughput work of one kind
//!   runs beside them.
//! - `stage-breakdown`: where a proof's GPU stage goes, step by step.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use crate::anyhow_like::Result;

#[derive(Args)]
pub struct Opts {
    #[command(subcommand)]
    pub bench: Bench,
}

#[derive(Subcommand)]
pub enum Bench {
    /// Resident G1 and G2 MSMs (2^20, 2^22, ... up to the largest size), a streamed G1 MSM,
    /// compute_h, DeviceScalars upload and select: upload, first call and best of 3.
    Primitives(PrimitivesOpts),
    /// A long H-like MSM (resident bases, device scalars) by sppark's msm_t and by cuzk's
    /// driver at each window, in pieces and whole: first call and best of 2, each sum
    /// compared with sppark's.
    WideWindow(WideWindowOpts),
    /// A critical proof's 2^19 H NTTs and G1 MSM (express lane, in a critical turn) while two
    /// threads run one kind of throughput work back to back: their median and maximum, and
    /// the background's operations per second.
    Interference(InterferenceOpts),
    /// Three sha256-chain proofs on one GPU, each with its stages and GPU steps.
    StageBreakdown(StageBreakdownOpts),
}

#[derive(Args)]
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub struct PrimitivesOpts {
    /// The largest G1 MSM and compute_h: 2^N points (sizes 2^20, 2^22, ... up to it).
    #[arg(long, default_value_t = 24, value_parser = clap::value_parser!(u32).range(20..=26))]
    pub lg_g1: u32,
    /// The largest G2 MSM: 2^N points (sizes 2^20, 2^22, ... up to it).
    #[arg(long, default_value_t = 22, value_parser = clap::value_parser!(u32).range(20..=26))]
    pub lg_g2: u32,
    /// CUDA device.
    #[arg(long, default_value_t = 0)]
    pub device: u32,
}

#[derive(Args)]
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub struct WideWindowOpts {
    /// The MSM's length: 2^N points.
    #[arg(long, default_value_t = 27, value_parser = clap::value_parser!(u32).range(10..=28))]
    pub lg: u32,
    /// Piece lengths (2^P points each) to cut the MSM into; those longer than the MSM are skipped.
    #[arg(long, value_delimiter = ',', default_value = "26,25", value_parser = clap::value_parser!(u32).range(10..=28))]
    pub pieces: Vec<u32>,
    /// Windows of cuzk's driver, in bits (10 to 26).
    #[arg(long, value_delimiter = ',', default_value = "18,20,21,22", value_parser = clap::value_parser!(u32).range(10..=26))]
    pub wbits: Vec<u32>,
    /// The group: g1 (H's MSM) or g2 (B's).
    #[arg(long, value_enum, default_value_t = MsmGroup::G1)]
    pub group: MsmGroup,
    /// The scalars: uniformly random, or a witness-like mix (bits, one in 64 a random value).
    #[arg(long, value_enum, default_value_t = ScalarMix::Random)]
    pub scalars: ScalarMix,
    /// CUDA device.
    #[arg(long, default_value_t = 0)]
    pub device: u32,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MsmGroup {
    G1,
    G2,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScalarMix {
    Random,
    Bits,
}

#[derive(Args)]
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub struct InterferenceOpts {
    /// Critical samples per kind of background work.
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub samples: u32,
    /// The critical G1 MSM's window: 0 (sppark's msm_t) or 10 to 26 bits (cuzk's driver).
    #[arg(long, default_value_t = 0, value_parser = parse_window)]
    pub crit_wbits: u32,
    /// The kinds of background work to run (all by default): 0 idle, 1 G1 2^25 by cuzk's
    /// driver (20 bits), 2 G1 2^23 by msm_t, 3 G2 2^24 by msm_t, 4 G2 2^24 by cuzk's driver
    /// (20 bits), 5 H NTTs at 2^24.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(0..=5))]
    pub kinds: Option<Vec<u32>>,
    /// CUDA device.
    #[arg(long, default_value_t = 0)]
    pub device: u32,
}

#[derive(Args)]
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub struct StageBreakdownOpts {
    /// sha256-chain of 2^N rows.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(10..=27))]
    pub lg: u32,
    /// Parameters for the circuit (a .params file); without it, dummy parameters made here.
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// CUDA device.
    #[arg(long, default_value_t = 0)]
    pub device: u32,
}

/// A Pippenger window: 0 (sppark's) or 10 to 26 bits (cuzk's driver).
fn parse_window(s: &str) -> std::result::Result<u32, String> {
    let bits: u32 = s.parse().map_err(|e| format!("{e}"))?;
    if bits == 0 || (10..=26).contains(&bits) {
        Ok(bits)
    } else {
        Err(format!("a window of {bits} bits: 0 (sppark's) or 10 to 26"))
    }
}

#[cfg(not(feature = "cuda"))]
pub fn run(_: Opts) -> Result<()> {
    Err("gpu-timings: cuzk-bench was built without the cuda feature (build it with --features cuda)".into())
}

#[cfg(feature = "cuda")]
pub fn run(o: Opts) -> Result<()> {
    match o.bench {
        Bench::Primitives(o) => timings::primitives(o),
        Bench::WideWindow(o) => timings::wide_window(o),
        Bench::Interference(o) => timings::interference(o),
        Bench::StageBreakdown(o) => timings::stage_breakdown(o),
    }
}

#[cfg(feature = "cuda")]
mod timings {
    use std::ops::Range;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
    use ff::Field;
    use group::{prime::PrimeCurveAffine, Curve, Group};
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};
    use rayon::prelude::*;

    use cuzk::circuits::{Family, Synthetic, WitnessSource};
    use cuzk::gpu::{
        self, compute_h, msm_g1_host, DeviceScalars, ResidentG1, ResidentG2, Scalars, SharingPolicy, Turn, Urgency,
    };
    use cuzk::groth16::{ntt::z_inv_on_coset, Backend};
    use cuzk::params::{dummy_params, read_params, wait_for_cache_writes};
    use cuzk::pce::extract;
    use cuzk::witness::WitnessBuffer;

    use super::{InterferenceOpts, MsmGroup, PrimitivesOpts, ScalarMix, StageBreakdownOpts, WideWindowOpts};
    use crate::anyhow_like::Result;

    /// How long a throughput MSM on cuzk's driver gives way to critical stages: the default
    /// policy's.
    fn max_yield() -> Duration {
        SharingPolicy::default().max_yield
    }

    /// `Ok` when CUDA device `device` can be used (a failed enumeration says why not).
    fn usable(device: u32) -> Result<usize> {
        gpu::usable_device_count()?;
        gpu::check_device(device)?;
        Ok(device as usize)
    }

    /// `f` once, then `reps` more times: the first call's seconds, the best repeat's (the
    /// first call's when `reps` is 0) and the last result.
    fn time<T>(reps: usize, mut f: impl FnMut() -> Result<T>) -> Result<(f64, f64, T)> {
        let start = Instant::now();
        let mut out = f()?;
        let first = start.elapsed().as_secs_f64();
        let mut best = if reps == 0 { first } else { f64::MAX };
        for _ in 0..reps {
            let start = Instant::now();
            out = f()?;
            best = best.min(start.elapsed().as_secs_f64());
        }
        Ok((first, best, out))
    }

    /// `n` distinct points cheaply: chunks of consecutive multiples of the generator, each
    /// chunk from its own far-apart start, normalised chunk by chunk on every core.
    fn distinct_points<P: Curve + Group<Scalar = Scalar>>(n: usize, chunk: usize) -> Vec<P::AffineRepr>
    where
        P::AffineRepr: PrimeCurveAffine,
    {
        let mut out = vec![P::AffineRepr::identity(); n];
        out.par_chunks_mut(chunk).enumerate().for_each(|(k, dst)| {
            let g = P::generator();
            let mut acc = g * Scalar::from((k * chunk + 1) as u64 * 0x9e37_79b9);
            let proj: Vec<P> = (0..dst.len())
                .map(|_| {
                    acc += g;
                    acc
                })
                .collect();
            P::batch_normalize(&proj, dst);
        });
        out
    }

    fn g1_points(n: usize) -> Vec<G1Affine> {
        distinct_points::<G1Projective>(n, 1 << 14)
    }

    fn g2_points(n: usize) -> Vec<G2Affine> {
        distinct_points::<G2Projective>(n, 1 << 13)
    }

    /// `n` points repeating `tile`: a long resident MSM's bases without making them all.
    fn tiled<T: Copy + Send + Sync>(tile: &[T], n: usize) -> Vec<T> {
        (0..n).into_par_iter().map(|i| tile[i % tile.len()]).collect()
    }

    /// `n` uniformly random scalars, made in parallel (the same first ones whatever `n`).
    fn random_scalars(n: usize, seed: u64) -> Vec<Scalar> {
        let mut v = vec![Scalar::ZERO; n];
        v.par_chunks_mut(1 << 16).enumerate().for_each(|(k, dst)| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ ((k as u64) << 20));
            dst.iter_mut().for_each(|s| *s = Scalar::random(&mut rng));
        });
        v
    }

    /// H from host a, b, c (each 2^`lg` values) uploaded to the lane of `urgency`, left on the
    /// device.
    fn h_on_device(device: usize, urgency: Urgency, abc: [&[Scalar]; 3], lg: u32) -> Result<DeviceScalars> {
        let [a, b, c] = abc.map(|v| DeviceScalars::upload(device, urgency, v));
        Ok(compute_h(device, [a?, b?, c?], lg, z_inv_on_coset(lg))?)
    }

    /// The sizes 2^from, 2^(from + 2), ... up to 2^to.
    fn every_other(from: u32, to: u32) -> impl Iterator<Item = u32> {
        (from..=to).step_by(2)
    }

    pub fn primitives(o: PrimitivesOpts) -> Result<()> {
        let device = usable(o.device)?;
        for d in gpu::devices() {
            eprintln!("device {d:?}");
        }
        let reps = 3;
        println!("| primitive | size | upload s | first call s | best of {reps} s |");
        println!("|---|---|---|---|---|");

        let start = Instant::now();
        let g1 = g1_points(1 << o.lg_g1);
        let s = random_scalars(1 << o.lg_g1.max(o.lg_g2), 1);
        eprintln!("generated 2^{} G1 bases and scalars in {:.1}s", o.lg_g1, start.elapsed().as_secs_f64());
        for lg in every_other(20, o.lg_g1) {
            let n = 1usize << lg;
            let start = Instant::now();
            let r = ResidentG1::new(device, &g1[..n])?;
            let up = start.elapsed().as_secs_f64();
            let (first, best, got) = time(reps, || Ok(r.msm(0..n, &s[..n])?))?;
            println!("| G1 MSM resident | 2^{lg} | {up:.3} | {first:.3} | {best:.3} |");
            if lg == 20 {
                let proj: Vec<G1Projective> = g1[..n].par_iter().map(|p| p.to_curve()).collect();
                if got != G1Projective::multi_exp(&proj, &s[..n]) {
                    return Err("the G1 MSM of 2^20 points differs from blstrs' multi_exp".into());
                }
                let (first, best, _) = time(1, || Ok(msm_g1_host(device, &g1[..n], &s[..n], n, 0, max_yield())?))?;
                println!("| G1 MSM streamed | 2^{lg} | - | {first:.3} | {best:.3} |");
            }
        }
        drop(g1);

        let g2 = g2_points(1 << o.lg_g2);
        for lg in every_other(20, o.lg_g2) {
            let n = 1usize << lg;
            let start = Instant::now();
            let r = ResidentG2::new(device, &g2[..n])?;
            let up = start.elapsed().as_secs_f64();
            let (first, best, got) = time(reps, || Ok(r.msm(0..n, &s[..n])?))?;
            println!("| G2 MSM resident | 2^{lg} | {up:.3} | {first:.3} | {best:.3} |");
            if lg == 20 {
                let proj: Vec<G2Projective> = g2[..n].par_iter().map(|p| p.to_curve()).collect();
                if got != G2Projective::multi_exp(&proj, &s[..n]) {
                    return Err("the G2 MSM of 2^20 points differs from blstrs' multi_exp".into());
                }
            }
        }
        drop(g2);

        for lg in every_other(22, o.lg_g1) {
            let n = 1usize << lg;
            let (b, c) = (random_scalars(n, 2), random_scalars(n, 3));
            let (a, b, c) = (&s[..n], &b[..], &c[..]);
            let (first, best, _) = time(reps, || h_on_device(device, Urgency::Throughput, [a, b, c], lg))?;
            println!(
                "| compute_h (a, b, c uploaded, then 3 iNTT + 2 coset NTT + coset iNTT) | 2^{lg} | - | {first:.3} | {best:.3} |"
            );
            let (first, best, d) = time(reps, || Ok(DeviceScalars::upload(device, Urgency::Throughput, a)?))?;
            println!(
                "| DeviceScalars::upload ({:.1} GB/s best) | 2^{lg} | - | {first:.3} | {best:.3} |",
                (32 * n) as f64 / best / 1e9
            );
            let words: Vec<u64> = (0..n / 64).map(|i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
            let (first, best, _) = time(reps, || Ok(d.select(&words)?))?;
            println!("| DeviceScalars::select (half the bits) | 2^{lg} | - | {first:.3} | {best:.3} |");
        }
        Ok(())
    }

    pub fn wide_window(o: WideWindowOpts) -> Result<()> {
        let device = usable(o.device)?;
        let (lg, n) = (o.lg, 1usize << o.lg);
        let start = Instant::now();
        let mut s = random_scalars(n, 5);
        if o.scalars == ScalarMix::Bits {
            s.par_iter_mut()
                .enumerate()
                .filter(|(i, _)| i % 64 != 0)
                .for_each(|(i, x)| *x = Scalar::from((i * 7 / 5 % 2) as u64));
        }
        let d = DeviceScalars::upload(device, Urgency::Throughput, &s)?;
        drop(s);
        let mix = match o.scalars {
            ScalarMix::Random => "random",
            ScalarMix::Bits => "bits",
        };
        let on_device = |r: Range<usize>| Scalars::Device(&d, r);
        let table = |name: &str| WindowTable { name: format!("2^{lg} {mix} scalars, {name}"), n, o: &o };
        match o.group {
            MsmGroup::G1 => {
                let r = ResidentG1::new(device, &tiled(&g1_points(n.min(1 << 20)), n))?;
                eprintln!("bases and scalars on the device in {:.1}s", start.elapsed().as_secs_f64());
                table("g1").print(
                    |p| Ok(r.msm_piece(p.clone(), on_device(p), n)?),
                    |p, w| Ok(r.msm_with(p.clone(), on_device(p), n, w, max_yield())?),
                )
            }
            MsmGroup::G2 => {
                let r = ResidentG2::new(device, &tiled(&g2_points(n.min(1 << 17)), n))?;
                eprintln!("bases and scalars on the device in {:.1}s", start.elapsed().as_secs_f64());
                table("g2").print(
                    |p| Ok(r.msm_piece(p.clone(), on_device(p), n)?),
                    |p, w| Ok(r.msm_with(p.clone(), on_device(p), n, w, max_yield())?),
                )
            }
        }
    }

    /// [`wide_window`]'s table for one group.
    struct WindowTable<'a> {
        name: String,
        /// The MSM's points.
        n: usize,
        o: &'a WideWindowOpts,
    }

    impl WindowTable<'_> {
        /// `sppark(range)` and `wide(range, bits)` are the MSMs over `range` of the points.
        fn print<P: Group>(
            &self,
            sppark: impl Fn(Range<usize>) -> Result<P>,
            wide: impl Fn(Range<usize>, u32) -> Result<P>,
        ) -> Result<()> {
            let n = self.n;
            let in_pieces = |piece: usize, f: &dyn Fn(Range<usize>) -> Result<P>| -> Result<P> {
                (0..n).step_by(piece).try_fold(P::identity(), |sum, at| Ok(sum + f(at..at + piece.min(n - at))?))
            };
            let equal = |got: P, want: Option<P>| want.map_or("-".to_string(), |w| (got == w).to_string());
            println!("| {} | first s | best of 2 s | equal |", self.name);
            println!("|---|---|---|---|");
            let mut want = None;
            for &piece_lg in self.o.pieces.iter().filter(|&&p| 1usize << p <= n) {
                let piece = 1usize << piece_lg;
                let (first, best, got) = time(2, || in_pieces(piece, &sppark))?;
                println!("| sppark msm_t, pieces of 2^{piece_lg} | {first:.3} | {best:.3} | - |");
                let want = *want.get_or_insert(got);
                for &w in &self.o.wbits {
                    let (first, best, got) = time(2, || in_pieces(piece, &|p| wide(p, w)))?;
                    println!(
                        "| msm_wide {w} bits, pieces of 2^{piece_lg} | {first:.3} | {best:.3} | {} |",
                        got == want
                    );
                }
            }
            for &w in &self.o.wbits {
                let (first, best, got) = time(2, || wide(0..n, w))?;
                println!("| msm_wide {w} bits, whole | {first:.3} | {best:.3} | {} |", equal(got, want));
            }
            Ok(())
        }
    }

    /// Throughput work run back to back beside the critical steps.
    type Work<'a> = Box<dyn Fn() -> Result<()> + Sync + 'a>;

    fn work<'a>(f: impl Fn() -> Result<()> + Sync + 'a) -> Work<'a> {
        Box::new(f)
    }

    pub fn interference(o: InterferenceOpts) -> Result<()> {
        let device = usable(o.device)?;
        let (big, lg) = (1usize << 25, 19u32);
        let small = 1usize << lg;
        let start = Instant::now();
        let tile = g1_points(1 << 20);
        let r1 = ResidentG1::new(device, &tiled(&tile, big))?;
        let r2 = ResidentG2::new(device, &tiled(&g2_points(1 << 17), big / 2))?;
        let s = random_scalars(big, 9);
        let d = DeviceScalars::upload(device, Urgency::Throughput, &s)?;
        let crit_bases = ResidentG1::new(device, &tile[..small])?;
        eprintln!("bases and scalars on the device in {:.1}s", start.elapsed().as_secs_f64());
        let half = 0..big / 2;
        let kinds: Vec<(&str, Work)> = vec![
            (
                "idle",
                work(|| {
                    std::thread::sleep(Duration::from_millis(5));
                    Ok(())
                }),
            ),
            (
                "G1 2^25, cuzk driver (20 bits)",
                work(|| {
                    r1.msm_with(0..big, &d, big, 20, max_yield())?;
                    Ok(())
                }),
            ),
            (
                "G1 2^23, sppark msm_t",
                work(|| {
                    let quarter = 0..big / 4;
                    r1.msm_piece(quarter.clone(), Scalars::Device(&d, quarter), big / 4)?;
                    Ok(())
                }),
            ),
            (
                "G2 2^24, sppark msm_t",
                work(|| {
                    r2.msm_piece(half.clone(), Scalars::Device(&d, half.clone()), big / 2)?;
                    Ok(())
                }),
            ),
            (
                "G2 2^24, cuzk driver (20 bits)",
                work(|| {
                    r2.msm_with(half.clone(), Scalars::Device(&d, half.clone()), big / 2, 20, max_yield())?;
                    Ok(())
                }),
            ),
            (
                "H NTTs 2^24 (uploads included)",
                work(|| {
                    let v = &s[half.clone()];
                    h_on_device(device, Urgency::Throughput, [v, v, v], 24)?;
                    Ok(())
                }),
            ),
        ];
        println!(
            "| background (2 threads) | critical NTTs p50 / max s | critical G1 MSM 2^{lg} p50 / max s | background ops/s |"
        );
        println!("|---|---|---|---|");
        let (a, b, c) = (random_scalars(small, 1), random_scalars(small, 2), random_scalars(small, 3));
        let ms = random_scalars(small, 4);
        let warm_up = Duration::from_millis(1500);
        for (k, (name, work)) in kinds.iter().enumerate() {
            if o.kinds.as_ref().is_some_and(|only| !only.contains(&(k as u32))) {
                continue;
            }
            let stop = AtomicBool::new(false);
            let ops = AtomicUsize::new(0);
            // One critical sample: its NTTs' and its MSM's seconds.
            let sample = || -> Result<(f64, f64)> {
                let [a, b, c] = [&a, &b, &c].map(|v| DeviceScalars::upload(device, Urgency::Critical, v));
                let abc = [a?, b?, c?];
                let m = DeviceScalars::upload(device, Urgency::Critical, &ms)?;
                // As a critical backend stage does: throughput MSMs on cuzk's driver give way.
                let _turn = Turn::begin(device, Urgency::Critical, max_yield());
                let start = Instant::now();
                drop(compute_h(device, abc, lg, z_inv_on_coset(lg))?);
                let ntt = start.elapsed().as_secs_f64();
                let start = Instant::now();
                crit_bases.msm_with(0..small, &m, small, o.crit_wbits, max_yield())?;
                Ok((ntt, start.elapsed().as_secs_f64()))
            };
            let (mut ntt, mut msm, elapsed) = std::thread::scope(|sc| -> Result<(Vec<f64>, Vec<f64>, f64)> {
                let background: Vec<_> = (0..2)
                    .map(|_| {
                        sc.spawn(|| -> Result<()> {
                            while !stop.load(Ordering::SeqCst) {
                                if let Err(e) = work() {
                                    stop.store(true, Ordering::SeqCst);
                                    return Err(e);
                                }
                                ops.fetch_add(1, Ordering::SeqCst);
                            }
                            Ok(())
                        })
                    })
                    .collect();
                std::thread::sleep(warm_up);
                let start = Instant::now();
                let sampled = critical_samples(o.samples, &stop, sample);
                let elapsed = start.elapsed().as_secs_f64();
                stop.store(true, Ordering::SeqCst);
                for b in background {
                    b.join().map_err(|_| "a background thread panicked")??;
                }
                let (ntt, msm) = sampled?;
                Ok((ntt, msm, elapsed))
            })?;
            let stat = |v: &mut Vec<f64>| {
                v.sort_by(f64::total_cmp);
                (v[v.len() / 2], v[v.len() - 1])
            };
            let ((n50, nmax), (m50, mmax)) = (stat(&mut ntt), stat(&mut msm));
            let rate = ops.load(Ordering::SeqCst) as f64 / (elapsed + warm_up.as_secs_f64());
            println!("| {name} | {n50:.4} / {nmax:.4} | {m50:.4} / {mmax:.4} | {rate:.2} |");
        }
        Ok(())
    }

    /// `samples` of the critical steps (their NTTs' and MSM's seconds, by `sample`), each after
    /// a random pause of 20 to 220 ms; fewer once `stop` is set (a background thread failed).
    fn critical_samples(
        samples: u32,
        stop: &AtomicBool,
        mut sample: impl FnMut() -> Result<(f64, f64)>,
    ) -> Result<(Vec<f64>, Vec<f64>)> {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (mut ntt, mut msm) = (Vec::new(), Vec::new());
        for _ in 0..samples {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20 + rng.next_u32() as u64 % 200));
            let (n, m) = sample()?;
            ntt.push(n);
            msm.push(m);
        }
        Ok((ntt, msm))
    }

    pub fn stage_breakdown(o: StageBreakdownOpts) -> Result<()> {
        usable(o.device)?;
        let lg = o.lg;
        let circuit = Synthetic::new(Family::Sha256Chain, 1 << lg, 1);
        let pce = extract(circuit.blank())?;
        let params = match &o.params {
            Some(path) => read_params(path, false)?,
            None => dummy_params(&pce, 7),
        };
        let w = circuit.gadget_witness(WitnessBuffer::new(pce.num_inputs, pce.num_aux))?;
        println!(
            "sha256-chain 2^{lg}: {} rows, {} aux, domain {}",
            pce.num_constraints(),
            pce.num_aux,
            pce.domain_size()
        );
        let policy = SharingPolicy::default();
        let rs = (Scalar::from(11u64), Scalar::from(13u64));
        for i in 0..3 {
            let backend = Backend::Cuda(o.device);
            let (_, t) = cuzk::groth16::prove(backend, Urgency::Throughput, &policy, &pce, &w, None, &params, rs)?;
            println!("proof {i}: total {:.3} s {t:?}", t.total());
        }
        // A parameter file's decoded cache is written in the background: let it finish.
        wait_for_cache_writes();
        Ok(())
    }
}
