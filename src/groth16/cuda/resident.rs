//! The SRS resident per device and parameter set: uploaded once, kept across proofs, freed
//! once nobody holds the parameters. Where not every query fits beside the PCE, a proof's
//! room and the room critical proofs keep, the queries holding the most bytes stay and the
//! others stream from host memory in every proof (and a warning is logged).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use bellperson::groth16::Parameters;
use blstrs::{Bls12, G1Affine};

use super::working_set::{stream_bytes, working_set};
use crate::gpu::{self, ResidentG1, ResidentG2, SharingPolicy};
use crate::mem::{Owner, Tracked};
use crate::pce::Pce;
use crate::Result;

/// The SRS queries of one parameter set on one device: each resident (uploaded once, kept
/// across proofs) or, where it did not fit, `None`: its MSMs stream the bases from host memory.
pub(super) struct DeviceSrs {
    pub(super) h: Option<ResidentG1>,
    pub(super) l: Option<ResidentG1>,
    pub(super) a: Option<ResidentG1>,
    pub(super) b_g1: Option<ResidentG1>,
    pub(super) b_g2: Option<ResidentG2>,
    _accounted: Tracked,
}

impl DeviceSrs {
    /// Does any query stream?
    pub(super) fn streams(&self) -> bool {
        [&self.h, &self.l, &self.a, &self.b_g1].iter().any(|q| q.is_none()) || self.b_g2.is_none()
    }
}

/// Resident SRS per (device, parameter set). The key is the address of the
/// parameters' H query; the `Weak` beside it pins that address (it cannot be
/// reused while the weak lives) and tells whether any user still holds the
/// parameters. Entries whose parameters are gone are dropped, freeing their
/// device copies, by [`evict_unloaded`] and before every new placement.
pub(super) type Cache = HashMap<(u32, usize), (Weak<Vec<G1Affine>>, Arc<DeviceSrs>)>;
pub(super) static RESIDENT: Mutex<Option<Cache>> = Mutex::new(None);

/// Drops the entries of parameters nobody holds any more. A proof holds its
/// parameters while it runs, so no proof is using what this frees.
fn retain_alive(cache: &mut Cache) {
    cache.retain(|_, (weak, _)| weak.strong_count() > 0);
}

/// The queries in [`DeviceSrs`] order, for logs.
const QUERIES: [&str; 5] = ["H", "L", "A", "B G1", "B G2"];

/// Device bytes of the five queries of `p`, H, L, A, B G1, B G2 (the points as blstrs lays
/// them out).
fn query_bytes(p: &Parameters<Bls12>) -> [u64; 5] {
    let g1 = |q: &[G1Affine]| 96 * q.len() as u64;
    [g1(&p.h), g1(&p.l), g1(&p.a), g1(&p.b_g1), 192 * p.b_g2.len() as u64]
}

/// Which of the queries of `bytes` stay resident within `room` device bytes: the set that
/// holds the most bytes, so that the fewest stream from the host in each proof (a streamed
/// MSM waits for its bases to cross the bus); among equal sets, the one keeping the earlier
/// queries (H first). Every query when all fit.
pub(super) fn resident_queries(bytes: [u64; 5], room: u64) -> [bool; 5] {
    let total = |keep: &[bool; 5]| kept_bytes(bytes, keep);
    (0..32u32)
        .map(|set| std::array::from_fn(|i| set >> (4 - i) & 1 == 1))
        .filter(|keep| total(keep) <= room)
        .max_by_key(|keep| (total(keep), *keep))
        .unwrap_or_default()
}

/// The bytes of the queries `keep` names.
fn kept_bytes(bytes: [u64; 5], keep: &[bool; 5]) -> u64 {
    bytes.iter().zip(keep).filter(|(_, &k)| k).map(|(b, _)| b).sum()
}

/// Uploads the queries of `p` that `keep` names to `device`.
pub(super) fn place(device: u32, p: &Parameters<Bls12>, keep: [bool; 5]) -> Result<DeviceSrs> {
    let id = device as usize;
    let g1 = |k: bool, q: &[G1Affine]| k.then(|| ResidentG1::new(id, q)).transpose();
    Ok(DeviceSrs {
        h: g1(keep[0], &p.h)?,
        l: g1(keep[1], &p.l)?,
        a: g1(keep[2], &p.a)?,
        b_g1: g1(keep[3], &p.b_g1)?,
        b_g2: keep[4].then(|| ResidentG2::new(id, &p.b_g2)).transpose()?,
        _accounted: Tracked::new(Owner::Gpu, kept_bytes(query_bytes(p), &keep)),
    })
}

/// The queries of `p` on `device`: uploaded on first use, those that fit beside the PCE's
/// matrices, a proof's room and the room critical proofs keep
/// (the policy's `critical_room`) ([`resident_queries`]); the others stream. The cache
/// stays locked through the upload, so concurrent first proofs upload once.
pub(super) fn placement(
    device: u32,
    pce: &Pce,
    p: &Parameters<Bls12>,
    policy: &SharingPolicy,
) -> Result<Arc<DeviceSrs>> {
    let key = (device, Arc::as_ptr(&p.h) as usize);
    let mut guard = RESIDENT.lock().unwrap_or_else(|e| e.into_inner());
    let cache = guard.get_or_insert_with(HashMap::new);
    retain_alive(cache);
    if let Some((_, placed)) = cache.get(&key) {
        return Ok(placed.clone());
    }
    let free = gpu::device_info(device as usize)?.free_bytes;
    let bytes = query_bytes(p);
    let beside = pce.byte_len() as u64 + working_set(pce, policy) + policy.critical_room;
    let mut keep = resident_queries(bytes, free.saturating_sub(beside));
    if keep.contains(&false) {
        keep = resident_queries(bytes, free.saturating_sub(beside + stream_bytes(pce)));
        let streamed: Vec<_> = QUERIES.iter().zip(keep).filter(|(_, k)| !k).map(|(q, _)| *q).collect();
        let need: u64 = bytes.iter().sum();
        log::warn!(
            "SRS ({need} B) does not fit on device {device} ({free} B free) beside a proof: \
             the bases of {streamed:?} stream from host memory in every proof"
        );
    }
    let placed = Arc::new(place(device, p, keep)?);
    cache.insert(key, (Arc::downgrade(&p.h), placed.clone()));
    Ok(placed)
}

/// Frees the device copies of every parameter set nobody holds any more
/// (its last `Arc` dropped: unloaded from [`crate::params::srs`] and no handle or
/// proof left). Waits while another thread uploads parameters.
pub fn evict_unloaded() {
    let mut guard = RESIDENT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(cache) = guard.as_mut() {
        retain_alive(cache);
    }
}
