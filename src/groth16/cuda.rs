//! The CUDA backend: H by sppark's NTTs and every MSM (B in G2 included) on the
//! GPU, against SRS queries kept resident on the device across proofs (one
//! upload per device and parameter set). When the queries do not fit beside a
//! proof's working set, the bases stream from host memory instead, and the
//! stats say so. Randomisation and assembly stay on the host (constant time).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use bellperson::groth16::{Parameters, Proof};
use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

use super::{assemble, check_inputs, select, timed, ProofParts, ProveTimings};
use crate::gpu::{self, ResidentG1, ResidentG2};
use crate::mem::{Owner, Tracked};
use crate::pce::{Abc, Pce};
use crate::witness::Witness;
use crate::{Error, Result};

impl From<gpu::GpuError> for Error {
    fn from(e: gpu::GpuError) -> Self {
        Error::Gpu(e.to_string())
    }
}

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
    Resident(Arc<DeviceSrs>),
    /// Did not fit: every MSM streams its bases from host memory.
    Streamed,
}

/// Resident SRS per (device, parameter set). The key is the address of the
/// parameters' H query; the `Weak` beside it pins that address (it cannot be
/// reused while the weak lives) and tells whether the parameters are still loaded.
type Cache = HashMap<(u32, usize), (Weak<Vec<G1Affine>>, Arc<Placement>)>;
static RESIDENT: Mutex<Option<Cache>> = Mutex::new(None);

/// Device bytes a proof needs besides the SRS: a, b, c on the domain plus MSM
/// scratch (a conservative 2 × domain × 32 B).
fn working_set(pce: &Pce) -> u64 {
    5 * 32 * pce.domain_size() as u64
}

fn srs_bytes(p: &Parameters<Bls12>) -> u64 {
    96 * (p.h.len() + p.l.len() + p.a.len() + p.b_g1.len()) as u64 + 192 * p.b_g2.len() as u64
}

fn placement(device: u32, pce: &Pce, p: &Parameters<Bls12>) -> Result<Arc<Placement>> {
    let key = (device, Arc::as_ptr(&p.h) as usize);
    let mut guard = RESIDENT.lock().unwrap_or_else(|e| e.into_inner());
    let cache = guard.get_or_insert_with(HashMap::new);
    cache.retain(|_, (weak, _)| weak.strong_count() > 0);
    if let Some((_, placed)) = cache.get(&key) {
        return Ok(placed.clone());
    }
    let dev = device as usize;
    let free = gpu::device_info(dev)?.free_bytes;
    let need = srs_bytes(p);
    let placed = if need + working_set(pce) <= free {
        Placement::Resident(Arc::new(DeviceSrs {
            h: ResidentG1::new(dev, &p.h)?,
            l: ResidentG1::new(dev, &p.l)?,
            a: ResidentG1::new(dev, &p.a)?,
            b_g1: ResidentG1::new(dev, &p.b_g1)?,
            b_g2: ResidentG2::new(dev, &p.b_g2)?,
            _accounted: Tracked::new(Owner::Gpu, need),
        }))
    } else {
        log::warn!("SRS ({need} B) does not fit on device {device} ({free} B free): streaming bases from host");
        Placement::Streamed
    };
    let placed = Arc::new(placed);
    cache.insert(key, (Arc::downgrade(&p.h), placed.clone()));
    Ok(placed)
}

/// Whether the parameters are resident on `device` (false: streamed or not yet used).
pub fn is_resident(device: u32, p: &Parameters<Bls12>) -> bool {
    let guard = RESIDENT.lock().unwrap_or_else(|e| e.into_inner());
    guard
        .as_ref()
        .and_then(|c| c.get(&(device, Arc::as_ptr(&p.h) as usize)))
        .is_some_and(|(_, p)| matches!(**p, Placement::Resident(_)))
}

/// Frees every device copy of parameters that are no longer loaded, and of
/// `p` when given.
pub fn evict(p: Option<&Parameters<Bls12>>) {
    let mut guard = RESIDENT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(cache) = guard.as_mut() {
        let gone = p.map(|p| Arc::as_ptr(&p.h) as usize);
        cache.retain(|k, (weak, _)| weak.strong_count() > 0 && Some(k.1) != gone);
    }
}

/// `Σ scalars · bases[range]` on the device, resident or streamed.
fn g1(dev: u32, placed: &Placement, pick: fn(&DeviceSrs) -> &ResidentG1, host: &[G1Affine], range: std::ops::Range<usize>, s: &[Scalar]) -> Result<G1Projective> {
    Ok(match placed {
        Placement::Resident(srs) => pick(srs).msm(range, s)?,
        Placement::Streamed => gpu::msm_g1_host(dev as usize, &host[range], s)?,
    })
}

fn g2(dev: u32, placed: &Placement, host: &[G2Affine], range: std::ops::Range<usize>, s: &[Scalar]) -> Result<G2Projective> {
    Ok(match placed {
        Placement::Resident(srs) => srs.b_g2.msm(range, s)?,
        Placement::Streamed => gpu::msm_g2_host(dev as usize, &host[range], s)?,
    })
}

/// Proves on CUDA device `device`; byte-identical to the CPU backend.
pub fn prove(
    pce: &Pce,
    w: &Witness,
    abc: Abc,
    params: &Parameters<Bls12>,
    r: Scalar,
    s: Scalar,
    device: u32,
) -> Result<(Proof<Bls12>, ProveTimings)> {
    check_inputs(pce, w, &abc, params)?;
    let mut t = ProveTimings::default();
    let placed = placement(device, pce, params)?;
    let dev = device;
    let lg = pce.domain_size().trailing_zeros();

    let h_coeffs = timed(&mut t.h, || gpu::compute_h(dev as usize, &abc.a, &abc.b, &abc.c, lg))?;
    drop(abc);
    let m1 = h_coeffs.len();
    let h = timed(&mut t.msm_h, || g1(dev, &placed, |d| &d.h, &params.h, 0..m1, &h_coeffs))?;
    drop(h_coeffs);
    let na = w.aux.len();
    let l = timed(&mut t.msm_l, || g1(dev, &placed, |d| &d.l, &params.l, 0..na, &w.aux))?;

    let d = &pce.density;
    let ni = pce.num_inputs;
    let a = timed(&mut t.msm_a, || -> Result<G1Projective> {
        let a_aux = select(&d.a_aux, &w.aux);
        Ok(g1(dev, &placed, |d| &d.a, &params.a, 0..ni, &w.inputs)?
            + g1(dev, &placed, |d| &d.a, &params.a, ni..ni + a_aux.len(), &a_aux)?)
    })?;
    let b_inputs = select(&d.b_input, &w.inputs);
    let b_aux = select(&d.b_aux, &w.aux);
    let (nbi, nb) = (b_inputs.len(), b_inputs.len() + b_aux.len());
    let b_g1 = timed(&mut t.msm_b_g1, || -> Result<G1Projective> {
        Ok(g1(dev, &placed, |d| &d.b_g1, &params.b_g1, 0..nbi, &b_inputs)?
            + g1(dev, &placed, |d| &d.b_g1, &params.b_g1, nbi..nb, &b_aux)?)
    })?;
    let b_g2 = timed(&mut t.msm_b_g2, || -> Result<G2Projective> {
        Ok(g2(dev, &placed, &params.b_g2, 0..nbi, &b_inputs)? + g2(dev, &placed, &params.b_g2, nbi..nb, &b_aux)?)
    })?;
    let start = Instant::now();
    let proof = assemble(&params.vk, &ProofParts { a, b_g1, b_g2, h, l }, r, s)?;
    t.assembly = start.elapsed().as_secs_f64();
    Ok((proof, t))
}
