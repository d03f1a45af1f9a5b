//! The CUDA backend: H by sppark's NTTs and every MSM over the aux variables
//! and H (B in G2 included) on the GPU, against SRS queries kept resident on
//! the device across proofs (one upload per device and parameter set); the
//! public inputs' few terms on the host. When the queries do not fit beside a
//! proof's working set, the bases stream from host memory instead (and a
//! warning is logged). Randomisation and assembly stay on the host (constant
//! time).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use bellperson::groth16::Parameters;
use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective};

use super::msm::{msm_g1, msm_g2};
use super::{select, timed, ProofParts, ProveTimings};
use crate::gpu::{self, DeviceScalars, ResidentG1, ResidentG2, Scalars, Urgency};
use crate::mem::{Owner, Tracked};
use crate::pce::{Abc, Pce};
use crate::witness::Witness;
use crate::Result;

/// The SRS queries resident on one device.
struct DeviceSrs {
    h: ResidentG1,
    l: ResidentG1,
    a: ResidentG1,
    b_g1: ResidentG1,
    b_g2: ResidentG2,
    _accounted: Tracked,
}

/// Where a parameter set's bases live on one device.
enum Placement {
    Resident(DeviceSrs),
    /// Did not fit: every MSM streams its bases from host memory.
    Streamed,
}

/// Resident SRS per (device, parameter set). The key is the address of the
/// parameters' H query; the `Weak` beside it pins that address (it cannot be
/// reused while the weak lives) and tells whether any user still holds the
/// parameters. Entries whose parameters are gone are dropped, freeing their
/// device copies, by [`evict_unloaded`] and before every new placement.
type Cache = HashMap<(u32, usize), (Weak<Vec<G1Affine>>, Arc<Placement>)>;
static RESIDENT: Mutex<Option<Cache>> = Mutex::new(None);

/// Drops the entries of parameters nobody holds any more. A proof holds its
/// parameters while it runs, so no proof is using what this frees.
fn retain_alive(cache: &mut Cache) {
    cache.retain(|_, (weak, _)| weak.strong_count() > 0);
}

/// Device bytes a proof needs besides the SRS: a, b, c on the domain, then
/// aux and its A and B selections, plus MSM scratch (a conservative
/// 2 × domain × 32 B).
fn working_set(pce: &Pce) -> u64 {
    32 * (5 * pce.domain_size() + 3 * pce.num_aux) as u64
}

/// Device bytes of the five queries of `p` (the points as blstrs lays them out).
fn srs_bytes(p: &Parameters<Bls12>) -> u64 {
    96 * (p.h.len() + p.l.len() + p.a.len() + p.b_g1.len()) as u64 + 192 * p.b_g2.len() as u64
}

/// Where the queries of `p` are on `device`: uploaded on first use if they fit
/// beside a proof's working set, else streamed. The cache stays locked through
/// the upload, so concurrent first proofs upload once.
fn placement(device: u32, pce: &Pce, p: &Parameters<Bls12>) -> Result<Arc<Placement>> {
    let key = (device, Arc::as_ptr(&p.h) as usize);
    let mut guard = RESIDENT.lock().unwrap_or_else(|e| e.into_inner());
    let cache = guard.get_or_insert_with(HashMap::new);
    retain_alive(cache);
    if let Some((_, placed)) = cache.get(&key) {
        return Ok(placed.clone());
    }
    let device_id = device as usize;
    let free = gpu::device_info(device_id)?.free_bytes;
    let need = srs_bytes(p);
    let placed = if need + working_set(pce) <= free {
        Placement::Resident(DeviceSrs {
            h: ResidentG1::new(device_id, &p.h)?,
            l: ResidentG1::new(device_id, &p.l)?,
            a: ResidentG1::new(device_id, &p.a)?,
            b_g1: ResidentG1::new(device_id, &p.b_g1)?,
            b_g2: ResidentG2::new(device_id, &p.b_g2)?,
            _accounted: Tracked::new(Owner::Gpu, need),
        })
    } else {
        log::warn!("SRS ({need} B) does not fit on device {device} ({free} B free): streaming bases from host");
        Placement::Streamed
    };
    let placed = Arc::new(placed);
    cache.insert(key, (Arc::downgrade(&p.h), placed.clone()));
    Ok(placed)
}

/// Uploads the queries of `p` to `device` now (if they fit), so that the first proof does not
/// pay for it, and does not hold the upload lock other proofs' placements wait on.
pub fn prepare(device: u32, pce: &Pce, p: &Parameters<Bls12>) -> Result<()> {
    placement(device, pce, p).map(drop)
}

/// Frees the device copies of every parameter set nobody holds any more
/// (its last `Arc` dropped: unloaded from [`super::srs`] and no handle or
/// proof left). Waits while another thread uploads parameters.
pub fn evict_unloaded() {
    let mut guard = RESIDENT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(cache) = guard.as_mut() {
        retain_alive(cache);
    }
}

/// `Σ scalars · bases[range]` on the device, `bases` resident (the `query`
/// of the device's copy) or streamed from `host`.
fn device_msm_g1(
    device: u32,
    placed: &Placement,
    query: fn(&DeviceSrs) -> &ResidentG1,
    host: &[G1Affine],
    range: std::ops::Range<usize>,
    s: Scalars,
) -> Result<G1Projective> {
    Ok(match placed {
        Placement::Resident(srs) => query(srs).msm(range, s)?,
        Placement::Streamed => gpu::msm_g1_host(device as usize, &host[range], s)?,
    })
}

/// [`device_msm_g1`] for B in G2.
fn device_msm_g2(
    device: u32,
    placed: &Placement,
    host: &[G2Affine],
    range: std::ops::Range<usize>,
    s: Scalars,
) -> Result<G2Projective> {
    Ok(match placed {
        Placement::Resident(srs) => srs.b_g2.msm(range, s)?,
        Placement::Streamed => gpu::msm_g2_host(device as usize, &host[range], s)?,
    })
}

/// The MSM results of a proof on CUDA device `device`, byte-identical to the CPU backend's.
///
/// Everything large stays on the device: H goes from the NTTs straight into
/// its MSM, and aux is uploaded once (during the H MSM) for L and
/// density-selected there for A and B. The inputs (a handful: a verifier
/// pays for each one) are selected and multiplied on the host, since a GPU
/// MSM costs milliseconds whatever its size (launches, then its final sums
/// on the host) and three of them per proof held the device for nothing.
/// A throughput stage lets critical stages on the device go first before each
/// step (H, each MSM: [`gpu::Turn`]).
pub fn proof_parts(
    device: u32,
    urgency: Urgency,
    pce: &Pce,
    w: &Witness,
    abc: Abc,
    params: &Parameters<Bls12>,
    t: &mut ProveTimings,
) -> Result<ProofParts> {
    let turn = gpu::Turn::begin(device as usize, urgency);
    turn.step();
    let placed = placement(device, pce, params)?;
    let lg = pce.domain_size().trailing_zeros();

    let z_inv = super::ntt::z_inv_on_coset(lg);
    let (h_coeffs, ht) = timed(&mut t.h, || gpu::compute_h_device(device as usize, &abc.a, &abc.b, &abc.c, lg, z_inv))?;
    (t.gpu.h_upload, t.gpu.h_ntt) = (ht.upload, ht.ntt);
    abc.release();
    let m1 = h_coeffs.len();
    // The aux upload (host copies into the pinned staging, DMA) runs beside
    // the H MSM, which keeps the GPU busy and the host idle.
    let mut aux_upload = 0.0;
    turn.step();
    let (h, aux) = timed(&mut t.msm_h, || {
        std::thread::scope(|sc| {
            let up = sc.spawn(|| timed(&mut aux_upload, || DeviceScalars::upload(device as usize, &w.aux)));
            let h = device_msm_g1(device, &placed, |d| &d.h, &params.h, 0..m1, (&h_coeffs).into());
            let aux = up
                .join()
                .unwrap_or_else(|_| Err(gpu::GpuError { code: -1, message: "aux upload thread panicked".into() }));
            (h, aux)
        })
    });
    let (h, aux) = (h?, aux?);
    t.gpu.aux_upload = aux_upload;
    drop(h_coeffs);

    let na = w.aux.len();
    turn.step();
    let l = timed(&mut t.msm_l, || device_msm_g1(device, &placed, |d| &d.l, &params.l, 0..na, (&aux).into()))?;

    let d = &pce.density;
    let ni = pce.num_inputs;
    let (mut select_a, mut select_b) = (0.0, 0.0);
    turn.step();
    let a = timed(&mut t.msm_a, || -> Result<G1Projective> {
        let a_aux = timed(&mut select_a, || aux.select(&d.a_aux.words))?;
        Ok(msm_g1(&params.a[..ni], &w.inputs)
            + device_msm_g1(device, &placed, |d| &d.a, &params.a, ni..ni + a_aux.len(), (&a_aux).into())?)
    })?;
    let b_inputs = select(&d.b_input, &w.inputs);
    let nbi = b_inputs.len();
    turn.step();
    let (b_aux, b_g1) = timed(&mut t.msm_b_g1, || -> Result<_> {
        let b_aux = timed(&mut select_b, || aux.select(&d.b_aux.words))?;
        let nb = nbi + b_aux.len();
        let b_g1 = msm_g1(&params.b_g1[..nbi], &b_inputs)
            + device_msm_g1(device, &placed, |d| &d.b_g1, &params.b_g1, nbi..nb, (&b_aux).into())?;
        Ok((b_aux, b_g1))
    })?;
    t.gpu.select = select_a + select_b;
    drop(aux);
    let nb = nbi + b_aux.len();
    turn.step();
    let b_g2 = timed(&mut t.msm_b_g2, || -> Result<G2Projective> {
        Ok(msm_g2(&params.b_g2[..nbi], &b_inputs)
            + device_msm_g2(device, &placed, &params.b_g2, nbi..nb, (&b_aux).into())?)
    })?;
    drop(b_aux);
    Ok(ProofParts { a, b_g1, b_g2, h, l })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::{Family, Synthetic};
    use crate::groth16::Backend;
    use crate::pce::{evaluate, extract};
    use crate::witness::WitnessBuffer;
    use bellperson::groth16::Proof;
    use blstrs::Scalar;

    /// Proofs from four threads at once on one device (shared streams,
    /// staging ring, interleaved MSMs) equal the serial GPU proof and the CPU one.
    #[test]
    fn concurrent_proofs_match_serial_and_cpu() {
        if gpu::device_count() == 0 {
            eprintln!("concurrent_proofs_match_serial_and_cpu: skipped, no CUDA device");
            return;
        }
        let circuit = Synthetic::new(Family::Sha256Chain, 1 << 16, 3);
        let pce = extract(circuit.blank()).unwrap();
        let params = super::super::dummy_params(&pce, 7);
        let w = Witness::generate_sized(circuit, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
        let (r, s) = (Scalar::from(5u64), Scalar::from(9u64));
        let on = |backend| {
            let abc = evaluate(&pce, &w).unwrap();
            super::super::prove(backend, Urgency::Throughput, &pce, &w, abc, &params, (r, s)).unwrap().0
        };
        let one = || on(Backend::Cuda(0));
        let want = one();
        let cpu = on(Backend::Cpu);
        assert!(want == cpu, "GPU proof differs from the CPU backend's");
        let got: Vec<Proof<Bls12>> = std::thread::scope(|sc| {
            let threads: Vec<_> = (0..4).map(|_| sc.spawn(|| (0..3).map(|_| one()).collect::<Vec<_>>())).collect();
            threads.into_iter().flat_map(|t| t.join().unwrap()).collect()
        });
        assert_eq!(got.len(), 12);
        assert!(got.iter().all(|p| *p == want), "a concurrent proof differs");
    }

    /// The device copies of parameters stay while anyone holds them, and go
    /// at the next `evict_unloaded` once nobody does.
    #[test]
    fn prepared_device_copies_freed_once_params_dropped() {
        if gpu::device_count() == 0 {
            eprintln!("prepared_device_copies_freed_once_params_dropped: skipped, no CUDA device");
            return;
        }
        let circuit = Synthetic::new(Family::Sha256Chain, 1 << 12, 1);
        let pce = extract(circuit.blank()).unwrap();
        let params = super::super::dummy_params(&pce, 3);
        // Pins the address the cache is keyed by, so no other test's
        // parameters can take it once these are dropped.
        let h = Arc::downgrade(&params.h);
        let key = (0u32, h.as_ptr() as usize);
        let cached = || RESIDENT.lock().unwrap().as_ref().is_some_and(|c| c.contains_key(&key));
        assert!(!cached());
        super::super::prepare(Backend::Cuda(0), &pce, &params).unwrap();
        assert!(cached(), "prepare uploads the parameters");
        let placed = placement(0, &pce, &params).unwrap();
        assert!(matches!(*placed, Placement::Resident(_)));
        drop(placed);
        assert!(cached());
        evict_unloaded();
        assert!(cached(), "evicted while the parameters are alive");
        drop(params);
        assert_eq!(h.strong_count(), 0);
        evict_unloaded();
        assert!(!cached(), "device copies outlived their parameters");
    }

    /// Where one proof's GPU stage goes, step by step: sha256-chain at
    /// 2^CUZK_BREAKDOWN_LG rows (default 20), parameters read from
    /// CUZK_BREAKDOWN_PARAMS or made as dummies; prints each of 3 proofs'
    /// `ProveTimings` (stages and their `GpuSteps`).
    #[test]
    #[ignore]
    fn gpu_stage_breakdown() {
        if gpu::device_count() == 0 {
            eprintln!("gpu_stage_breakdown: skipped, no CUDA device");
            return;
        }
        let lg: u32 = std::env::var("CUZK_BREAKDOWN_LG").ok().and_then(|s| s.parse().ok()).unwrap_or(20);
        let circuit = Synthetic::new(Family::Sha256Chain, 1 << lg, 1);
        let pce = extract(circuit.blank()).unwrap();
        let params = match std::env::var("CUZK_BREAKDOWN_PARAMS") {
            Ok(p) => super::super::read_params(std::path::Path::new(&p), false).unwrap(),
            Err(_) => super::super::dummy_params(&pce, 7),
        };
        let w = Witness::generate_sized(circuit, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
        println!(
            "sha256-chain 2^{lg}: {} rows, {} aux, domain {}",
            pce.num_constraints(),
            pce.num_aux,
            pce.domain_size()
        );
        for i in 0..3 {
            let abc = evaluate(&pce, &w).unwrap();
            let (_, t) = super::super::prove(
                Backend::Cuda(0),
                Urgency::Throughput,
                &pce,
                &w,
                abc,
                &params,
                (Scalar::from(11u64), Scalar::from(13u64)),
            )
            .unwrap();
            println!("proof {i}: total {:.3} s {t:?}", t.total());
        }
    }
}
