//! The CUDA backend: a, b, c by sparse products on the device, H by sppark's NTTs and every
//! MSM over the aux variables and H (B in G2 included) on the GPU, against SRS queries kept resident on
//! the device across proofs (one upload per device and parameter set); the
//! public inputs' few terms on the host. When not every query fits beside a
//! proof's working set (an 80 GB card under a dense 2^27 SRS), those holding the most bytes
//! stay resident and the others' bases are copied up, a piece at a time, for
//! each MSM (and a warning is logged). Randomisation and assembly stay on the
//! host (constant time).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use bellperson::groth16::Parameters;
use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective};

use super::msm::{msm_g1, msm_g2};
use super::{select, timed, ProofParts, ProveTimings};
use crate::gpu::{self, Csr, DeviceMatrices, DeviceScalars, ResidentG1, ResidentG2, Scalars, Urgency};
use crate::mem::{Owner, Tracked};
use crate::pce::{CsrMatrix, Pce};
use crate::witness::Witness;
use crate::{Error, Result};

/// The SRS queries of one parameter set on one device: each resident (uploaded once, kept
/// across proofs) or, where it did not fit, `None`: its MSMs stream the bases from host memory.
struct DeviceSrs {
    h: Option<ResidentG1>,
    l: Option<ResidentG1>,
    a: Option<ResidentG1>,
    b_g1: Option<ResidentG1>,
    b_g2: Option<ResidentG2>,
    _accounted: Tracked,
}

impl DeviceSrs {
    /// Does any query stream?
    fn streams(&self) -> bool {
        [&self.h, &self.l, &self.a, &self.b_g1].iter().any(|q| q.is_none()) || self.b_g2.is_none()
    }
}

/// Resident SRS per (device, parameter set). The key is the address of the
/// parameters' H query; the `Weak` beside it pins that address (it cannot be
/// reused while the weak lives) and tells whether any user still holds the
/// parameters. Entries whose parameters are gone are dropped, freeing their
/// device copies, by [`evict_unloaded`] and before every new placement.
type Cache = HashMap<(u32, usize), (Weak<Vec<G1Affine>>, Arc<DeviceSrs>)>;
static RESIDENT: Mutex<Option<Cache>> = Mutex::new(None);

/// Drops the entries of parameters nobody holds any more. A proof holds its
/// parameters while it runs, so no proof is using what this frees.
fn retain_alive(cache: &mut Cache) {
    cache.retain(|_, (weak, _)| weak.strong_count() > 0);
}

/// Device bytes one proof needs besides the SRS and the PCE's matrices, at its peak. Its
/// buffers live in two phases: H (the witness, and a, b, c on the domain, transformed in
/// place into H's coefficients) and the MSMs (the witness beside H's coefficients, then
/// beside aux's selection for A or for B, one at a time, with one MSM's scratch:
/// [`msm_scratch`]). The pool's high-water mark of a proof is checked against this in the
/// GPU tests and printed by `cuzk-bench gpu-scaling`.
pub fn working_set(pce: &Pce) -> u64 {
    let (domain, aux) = (pce.domain_size() as u64, pce.num_aux as u64);
    let witness = 32 * (pce.num_inputs as u64 + aux);
    let longest = domain.max(aux);
    let h = witness + 3 * 32 * domain;
    let msms = witness + 32 * longest + msm_scratch(longest as usize);
    h.max(msms) + POOL_SLACK
}

/// What the device's pool may round a proof's allocations up by, in all.
const POOL_SLACK: u64 = 64 << 20;

/// Device bytes one MSM of at most `n` points takes besides its bases and scalars: in G1 the
/// bit split's bitmaps and gathered scalars and bases (at most an eighth of the points) and
/// the larger of the two drivers' scratch, sppark's ([`sppark_scratch`]) and cuzk's for the
/// whole MSM uncut ([`wide_scratch`]; a piece takes no more); in G2 (no split) the larger of
/// the two drivers' scratch, with G2's buckets.
fn msm_scratch(n: usize) -> u64 {
    let n64 = n as u64;
    let split = n64 / 4 + (32 + 96) * n64.div_ceil(8);
    let wide = |bucket| match window_bits(n) {
        0 => 0,
        bits => wide_scratch(n, bits, bucket),
    };
    let sppark = sppark_scratch(n);
    (split + sppark.max(wide(G1_BUCKET))).max(sppark.max(wide(G2_BUCKET)))
}

/// Bytes of a Pippenger bucket (XYZZ coordinates) in G1 and in G2.
const G1_BUCKET: u64 = 4 * 48;
const G2_BUCKET: u64 = 2 * G1_BUCKET;

/// Device bytes sppark's `msm_t` allocates for `n` points whose bases and scalars are on the
/// device: per window its buckets (G2's, the larger: 384 B) and histogram, and per point of a
/// batch its digits and sort's scratch (or a host scalar's copy), a batch being at most
/// 2^(window + 7) points.
fn sppark_scratch(n: usize) -> u64 {
    let n = n.max(1) as u64;
    let bits = ((n + n / 2).ilog2().saturating_sub(8)).clamp(10, 18) as u64;
    let wins = 254 / bits + 1;
    let stride = n.min(1 << (bits + 7));
    (wins << (bits - 1)) * (384 + 4) + stride * (32 + 4 * wins) + (1 << 20)
}

/// The longest piece of a streamed query's MSM: each piece's bases are copied to the device
/// for its MSM (at most 3.2 GB in G2, counted in the proof's room: [`proof_room`]).
const STREAM_PIECE: usize = 1 << 24;

/// Device bytes of one streamed piece of bases of a proof of `pce` (G2's 192 B a point, the
/// larger).
fn stream_bytes(pce: &Pce) -> u64 {
    192 * pce.domain_size().max(pce.num_aux).min(STREAM_PIECE) as u64
}

/// Device bytes a proof of `pce` reserves with the queries `placed`: its working set, and one
/// streamed piece of bases when a query streams.
fn proof_room(pce: &Pce, placed: &DeviceSrs) -> u64 {
    working_set(pce) + if placed.streams() { stream_bytes(pce) } else { 0 }
}

/// Device bytes cuzk's MSM driver (`cuda/msm_wide.cuh`) allocates for an MSM of `n` points with a
/// `bits`-bit window and buckets of `bucket` bytes: per window its buckets and their histogram
/// (4 B) and the reduction's levels (buckets); per point of a batch (at most 2^26, the driver's
/// `WIDE_BATCH_MAX`) and window its digit (4 B) and a 256th of a carry (a bucket); per point of
/// a batch the sort's 16 B.
fn wide_scratch(n: usize, bits: u32, bucket: u64) -> u64 {
    let wins = (254 / bits + 1) as u64;
    let batch = n.min(1 << 26) as u64;
    // The driver's first level keeps at most 2^14 segments per window of at least 16
    // buckets, and at least 2^8; the last four rows of 2^8.
    let row_lg = bits - 1;
    let l1 = row_lg.saturating_sub(14).max(4.min(row_lg - 8));
    let levels = (2 << (row_lg - l1)) + 4 * 256;
    (wins << (bits - 1)) * (bucket + 4)
        + wins * levels * bucket
        + wins * batch * 4
        + wins * batch.div_ceil(256) * bucket
        + 16 * batch
        + (1 << 20)
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
fn resident_queries(bytes: [u64; 5], room: u64) -> [bool; 5] {
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
fn place(device: u32, p: &Parameters<Bls12>, keep: [bool; 5]) -> Result<DeviceSrs> {
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
/// ([`super::device_room::CRITICAL_ROOM`]) ([`resident_queries`]); the others stream. The cache
/// stays locked through the upload, so concurrent first proofs upload once.
fn placement(device: u32, pce: &Pce, p: &Parameters<Bls12>) -> Result<Arc<DeviceSrs>> {
    let key = (device, Arc::as_ptr(&p.h) as usize);
    let mut guard = RESIDENT.lock().unwrap_or_else(|e| e.into_inner());
    let cache = guard.get_or_insert_with(HashMap::new);
    retain_alive(cache);
    if let Some((_, placed)) = cache.get(&key) {
        return Ok(placed.clone());
    }
    let free = gpu::device_info(device as usize)?.free_bytes;
    let bytes = query_bytes(p);
    let beside = pce.byte_len() as u64 + working_set(pce) + super::device_room::CRITICAL_ROOM;
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

/// Makes `device` ready for proofs of `pce` with `p` now, so that the first proof does not
/// pay for it: the queries of `p` uploaded (those that fit; the first proof would hold the
/// upload lock other proofs' placements wait on), the PCE's matrices uploaded, and the
/// device's pool grown by a proof's room ([`proof_room`]; within the room proofs reserve
/// from).
pub fn prepare(device: u32, pce: &Pce, p: &Parameters<Bls12>) -> Result<()> {
    let placed = placement(device, pce, p)?;
    let room = proof_room(pce, &placed);
    device_matrices(device, pce)?;
    let _room = super::device_room::reserve(device as usize, room, Urgency::Throughput)?;
    Ok(gpu::warm_pool(device as usize, room)?)
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

/// `Σ scalars · bases[range]` on the device, the bases `resident` there or copied up from
/// `host` for this call; `range` is a piece of an MSM of `whole` points, whose window it takes.
fn device_msm_g1(
    device: u32,
    resident: Option<&ResidentG1>,
    host: &[G1Affine],
    range: std::ops::Range<usize>,
    s: Scalars,
    whole: usize,
) -> Result<G1Projective> {
    Ok(match resident {
        Some(bases) => bases.msm_with(range, s, whole, window_bits(whole))?,
        None => gpu::msm_g1_host(device as usize, &host[range], s, whole, window_bits(whole))?,
    })
}

/// [`device_msm_g1`] for B in G2.
fn device_msm_g2(
    device: u32,
    resident: Option<&ResidentG2>,
    host: &[G2Affine],
    range: std::ops::Range<usize>,
    s: Scalars,
    whole: usize,
) -> Result<G2Projective> {
    Ok(match resident {
        Some(bases) => bases.msm_with(range, s, whole, window_bits(whole))?,
        None => gpu::msm_g2_host(device as usize, &host[range], s, whole, window_bits(whole))?,
    })
}

/// How long a throughput MSM runs before a critical stage on its device may go first: an MSM
/// of more than [`MIN_PIECE`] points is cut into pieces of half its length, at least
/// `MIN_PIECE` and at most [`max_piece`], with a [`gpu::Turn::step`] before each (and the
/// pieces' sums added). A critical stage arriving on the device then shares the SMs with the
/// rest of one piece of each running partition: sppark's accumulation kernel holds every SM
/// for one batch, and the next batch is queued at once (cuzk's driver accumulates in ordinary
/// blocks, which the express lane's higher-priority blocks can pass between). Each piece keeps
/// the whole MSM's Pippenger window: with sppark's msm_t a piece runs as the whole's batches
/// (of 2^24 points at 2^26-2^27), with cuzk's driver ([`window_bits`]) as one batch of
/// its own, so cutting costs a host round trip and a bucket reduction per piece, not extra
/// windows. A critical stage's MSMs are never cut.
const MIN_PIECE: usize = 1 << 23;

/// The default of [`max_piece`]: a 2^27-point H runs as two pieces of 2^26, each one batch of
/// cuzk's driver; a 2^26-point H as two of 2^25. On the H200, 2^27 points took 0.991 s in
/// pieces of 2^24 and 0.913 s in pieces of 2^25: about 20 ms per batch saved.
const MAX_PIECE_LG: u32 = 26;

/// The longest piece of a throughput MSM: 2^`CUZK_MSM_PIECE_MAX_LG` points ([`piece_lg`]; 26
/// when unset). Smaller pieces shorten a critical proof's wait beside 2^26-2^27 partitions;
/// larger ones cost those partitions fewer host round trips and reductions.
fn max_piece() -> usize {
    static LG: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    1 << *LG.get_or_init(|| piece_lg("CUZK_MSM_PIECE_MAX_LG", MAX_PIECE_LG))
}

/// The longest piece of a throughput MSM while a critical request is on its way
/// ([`gpu::Turn::short_pieces`]): 2^`CUZK_MSM_PIECE_AHEAD_LG` points ([`piece_lg`]; 23, so
/// [`MIN_PIECE`], when unset). The piece a critical stage finds running on its device is then
/// one that began after the request arrived, if its witness took longer than the piece before;
/// the partitions pay for short pieces only while critical requests are in the engine.
fn ahead_piece() -> usize {
    static LG: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    1 << *LG.get_or_init(|| piece_lg("CUZK_MSM_PIECE_AHEAD_LG", MIN_PIECE.trailing_zeros()))
}

/// A piece length's log from the variable `name`, read once by its caller: 23 to 30 (never
/// below [`MIN_PIECE`]), `default` when unset, and `default` with a warning when set to
/// anything else.
fn piece_lg(name: &str, default: u32) -> u32 {
    let var = std::env::var(name);
    match var.as_deref().map(str::parse::<u32>) {
        Err(std::env::VarError::NotPresent) => default,
        Ok(Ok(lg)) if (23..=30).contains(&lg) => lg,
        _ => {
            log::warn!("{name}={var:?} is not a number from 23 to 30: using {default}");
            default
        }
    }
}

/// The piece length of a throughput MSM of `n` points ([`MIN_PIECE`]).
fn piece_of(n: usize) -> usize {
    n.div_ceil(2).clamp(MIN_PIECE, max_piece())
}

/// The longest MSM that keeps sppark's msm_t by default ([`window_bits`]): cuzk's driver
/// costs about 8 ms whatever the length (sppark's 4 ms at 2^12 points, 7 ms at 2^16) and
/// wins from 2^19 points on (an H100: 9 ms against 20 at 2^19 in G1).
const WIDE_ABOVE: usize = 1 << 17;

/// The default window for an MSM of `whole` points: 0 (sppark's) up to [`WIDE_ABOVE`] points,
/// then cuzk's driver with the fastest window measured around each length: 13 bits up to
/// 2^20 points (2^19), 16 up to 2^23 (2^21-2^23; 2^22 in G2), 20 above (2^24-2^27 in G1, 2^25
/// in G2).
fn default_bits(whole: usize) -> u32 {
    [(WIDE_ABOVE, 0), (1 << 20, 13), (1 << 23, 16)]
        .into_iter()
        .find(|&(most, _)| whole <= most)
        .map_or(20, |(_, bits)| bits)
}

/// The Pippenger window of an MSM of `whole` points over device scalars, in G1 on the
/// throughput lane those that are not mostly bits (`cuda/msm.cu` splits the others), else
/// any: [`default_bits`] by cuzk's own driver (`cuda/msm_wide.cuh`: runs of sorted points per
/// thread, in G2 a pair of threads per point, the buckets reduced on every SM, batches of up
/// to 2^26 points, on the scalars' lane) above [`WIDE_ABOVE`] points, else 0, sppark's msm_t
/// (its window at most 18 bits). `CUZK_MSM_WINDOW_BITS` (read once) sets the window of every
/// such MSM: 0 for sppark's, or 10 to 26 bits for cuzk's; anything else is warned about and
/// ignored. A wider window adds each point to fewer buckets and needs more of them,
/// 2^(bits − 1) per window of 192 B in G1 and 384 B in G2 ([`wide_scratch`]: about 6.6 GB in
/// G1 and 8.6 GB in G2 at 20 bits for a batch of 2^26 points). Over a witness's bits in G2 a
/// narrower window is faster still (BENCHMARKS.md).
fn window_bits(whole: usize) -> u32 {
    static FORCED: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    let forced = *FORCED.get_or_init(|| {
        let var = std::env::var("CUZK_MSM_WINDOW_BITS");
        match var.as_deref().map(str::parse::<u32>) {
            Err(std::env::VarError::NotPresent) => None,
            Ok(Ok(bits)) if bits == 0 || (10..=26).contains(&bits) => Some(bits),
            _ => {
                log::warn!("CUZK_MSM_WINDOW_BITS={var:?} is not 0 or a number from 10 to 26: ignored");
                None
            }
        }
    });
    forced.unwrap_or_else(|| default_bits(whole))
}

/// `msm` over `range` (its scalars `s`, as long) in pieces of at most `piece` points (at most
/// [`ahead_piece`] while `turn` says [`gpu::Turn::short_pieces`]), a step of `turn` before
/// each, summed; `msm` gets each piece's range and scalars and the whole's length.
fn in_pieces<P: group::Group>(
    turn: &gpu::Turn,
    piece: usize,
    range: std::ops::Range<usize>,
    s: Scalars,
    msm: impl Fn(std::ops::Range<usize>, Scalars, usize) -> Result<P>,
) -> Result<P> {
    let n = range.len();
    let wrong = || Error::Gpu(format!("{} scalars for {n} bases", s.len()));
    if s.len() != n {
        return Err(wrong());
    }
    let mut sum = P::identity();
    let mut at = 0usize;
    loop {
        turn.step();
        let len = if turn.short_pieces() { piece.min(ahead_piece()) } else { piece };
        let end = n.min(at.saturating_add(len.max(1)));
        let part = s.part(at..end).ok_or_else(wrong)?;
        sum += msm(range.start + at..range.start + end, part, n)?;
        at = end;
        if at == n {
            return Ok(sum);
        }
    }
}

/// A, B and C of `pce` on `device`: uploaded by its first proof there, kept with the PCE.
fn device_matrices(device: u32, pce: &Pce) -> Result<Arc<DeviceMatrices>> {
    pce.device_copies.get_or_make(device, || {
        fn csr(m: &CsrMatrix) -> Csr<'_> {
            Csr { row_ptr: &m.row_ptr, words: &m.words }
        }
        let cols = pce.num_inputs + pce.num_aux;
        Ok(DeviceMatrices::new(
            device as usize,
            [csr(&pce.a), csr(&pce.b), csr(&pce.c)],
            &pce.dict,
            pce.num_inputs,
            cols,
        )?)
    })
}

/// The MSM results of a proof on CUDA device `device`, byte-identical to the CPU backend's.
/// The proof waits for room for its working set on the device first ([`super::device_room`]).
///
/// Everything large stays on the device: the witness goes up once, a, b, c are evaluated
/// there from the PCE's matrices (resident with the PCE) and checked to satisfy every
/// constraint, H goes from the NTTs straight into its MSM, and aux serves L and, selected by
/// the densities there, A and B. The inputs (a handful: a verifier pays for each one) are
/// selected and multiplied on the host, since a GPU MSM costs milliseconds whatever its size
/// (launches, then its final sums on the host) and three of them per proof held the device
/// for nothing. A throughput stage lets critical stages on the device go first before each
/// step ([`gpu::Turn`]: the witness upload and SpMV, the NTTs, each piece of each MSM:
/// [`piece_of`]). A critical stage's device work runs on the device's express lane.
pub fn proof_parts(
    device: u32,
    urgency: Urgency,
    pce: &Pce,
    w: &Witness,
    params: &Parameters<Bls12>,
    t: &mut ProveTimings,
) -> Result<ProofParts> {
    let turn = gpu::Turn::begin(device as usize, urgency);
    // A streamed query's MSM runs in pieces of at most STREAM_PIECE points whatever the lane.
    let piece = |n, resident: bool| {
        let turns = if urgency == Urgency::Throughput { piece_of(n) } else { usize::MAX };
        if resident {
            turns
        } else {
            turns.min(STREAM_PIECE)
        }
    };
    turn.step();
    let placed = placement(device, pce, params)?;
    let matrices = device_matrices(device, pce)?;
    let id = device as usize;
    let _room = super::device_room::reserve(id, proof_room(pce, &placed), urgency)?;
    let lg = pce.domain_size().trailing_zeros();
    let steps = &mut t.gpu;
    let (h_coeffs, aux) = timed(&mut t.h, || -> Result<_> {
        let (inputs, aux) = timed(&mut steps.witness_upload, || -> Result<_> {
            Ok((DeviceScalars::upload(id, urgency, &w.inputs)?, DeviceScalars::upload(id, urgency, &w.aux)?))
        })?;
        let (abc, unsatisfied) = timed(&mut steps.spmv, || matrices.eval(&inputs, &aux, lg))?;
        if let Some(constraint) = unsatisfied {
            return Err(Error::Unsatisfied { constraint });
        }
        turn.step();
        let z_inv = super::ntt::z_inv_on_coset(lg);
        let h = timed(&mut steps.h_ntt, || gpu::compute_h(id, abc, lg, z_inv))?;
        Ok((h, aux))
    })?;
    let m1 = h_coeffs.len();
    let g1 = |query: fn(&DeviceSrs) -> &Option<ResidentG1>,
              host: &[G1Affine],
              range: std::ops::Range<usize>,
              s: Scalars<'_>| {
        let resident = query(&placed).as_ref();
        in_pieces(&turn, piece(range.len(), resident.is_some()), range, s, |r, s, whole| {
            device_msm_g1(device, resident, host, r, s, whole)
        })
    };
    let h = timed(&mut t.msm_h, || g1(|d| &d.h, &params.h, 0..m1, (&h_coeffs).into()))?;
    drop(h_coeffs);

    let na = w.aux.len();
    let l = timed(&mut t.msm_l, || g1(|d| &d.l, &params.l, 0..na, (&aux).into()))?;

    let d = &pce.density;
    let ni = pce.num_inputs;
    let (mut select_a, mut select_b) = (0.0, 0.0);
    let a = timed(&mut t.msm_a, || -> Result<G1Projective> {
        turn.step();
        let a_aux = timed(&mut select_a, || aux.select(&d.a_aux.words))?;
        Ok(msm_g1(&params.a[..ni], &w.inputs) + g1(|d| &d.a, &params.a, ni..ni + a_aux.len(), (&a_aux).into())?)
    })?;
    let b_inputs = select(&d.b_input, &w.inputs);
    let nbi = b_inputs.len();
    let (b_aux, b_g1) = timed(&mut t.msm_b_g1, || -> Result<_> {
        turn.step();
        let b_aux = timed(&mut select_b, || aux.select(&d.b_aux.words))?;
        let nb = nbi + b_aux.len();
        let b_g1 = msm_g1(&params.b_g1[..nbi], &b_inputs) + g1(|d| &d.b_g1, &params.b_g1, nbi..nb, (&b_aux).into())?;
        Ok((b_aux, b_g1))
    })?;
    t.gpu.select = select_a + select_b;
    drop(aux);
    let nb = nbi + b_aux.len();
    let b_g2 = timed(&mut t.msm_b_g2, || -> Result<G2Projective> {
        let resident = placed.b_g2.as_ref();
        let device_part =
            in_pieces(&turn, piece(nb - nbi, resident.is_some()), nbi..nb, (&b_aux).into(), |r, s, whole| {
                device_msm_g2(device, resident, &params.b_g2, r, s, whole)
            })?;
        Ok(msm_g2(&params.b_g2[..nbi], &b_inputs) + device_part)
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
    use ff::Field;

    /// Proofs from four threads at once on one device (shared streams, staging ring,
    /// interleaved MSMs; two of the threads' proofs critical, on the express lane) equal the
    /// serial GPU proof and the CPU one.
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
        let on = |backend, urgency| super::super::prove(backend, urgency, &pce, &w, None, &params, (r, s)).unwrap().0;
        let one = |urgency| on(Backend::Cuda(0), urgency);
        let want = one(Urgency::Throughput);
        let cpu = on(Backend::Cpu, Urgency::Throughput);
        assert!(want == cpu, "GPU proof differs from the CPU backend's");
        assert!(one(Urgency::Critical) == want, "the express lane's proof differs");
        let got: Vec<Proof<Bls12>> = std::thread::scope(|sc| {
            let threads: Vec<_> = [Urgency::Throughput, Urgency::Critical, Urgency::Throughput, Urgency::Critical]
                .map(|u| sc.spawn(move || (0..3).map(|_| one(u)).collect::<Vec<_>>()))
                .into_iter()
                .collect();
            threads.into_iter().flat_map(|t| t.join().unwrap()).collect()
        });
        assert_eq!(got.len(), 12);
        assert!(got.iter().all(|p| *p == want), "a concurrent proof differs");
    }

    /// An MSM cut into pieces of any size (device scalars from an offset, host scalars, a
    /// sub-range of the bases) sums to the whole; scalars fewer or more than the bases are an
    /// error.
    #[test]
    fn msm_in_pieces_equals_the_whole() {
        if gpu::device_count() == 0 {
            eprintln!("msm_in_pieces_equals_the_whole: skipped, no CUDA device");
            return;
        }
        let pce = extract(Synthetic::new(Family::MimcChain, 5000, 1).blank()).unwrap();
        let params = super::super::dummy_params(&pce, 3);
        let n = params.h.len();
        let bases = ResidentG1::new(0, &params.h).unwrap();
        let s: Vec<Scalar> = (0..n as u64).map(|i| Scalar::from(i * 7919 + 3)).collect();
        let d = DeviceScalars::upload(0, Urgency::Throughput, &s).unwrap();
        let whole = bases.msm(0..n, &d).unwrap();
        let tail = bases.msm(10..n, &s[10..]).unwrap();
        let turn = gpu::Turn::begin(0, Urgency::Throughput);
        for piece in [777, 4096, n - 1, n, usize::MAX] {
            let cut = in_pieces(&turn, piece, 0..n, (&d).into(), |r, s, w| Ok(bases.msm_piece(r, s, w)?)).unwrap();
            assert_eq!(cut, whole, "device scalars in pieces of {piece}");
            let cut = in_pieces(&turn, piece, 10..n, Scalars::Host(&s[10..]), |r, s, w| Ok(bases.msm_piece(r, s, w)?))
                .unwrap();
            assert_eq!(cut, tail, "host scalars in pieces of {piece}");
        }
        for wrong in [&s[1..], &s[..n - 1]] {
            assert!(in_pieces(&turn, 1000, 1..n, Scalars::Host(wrong), |r, s, _| Ok(bases.msm(r, s)?)).is_ok());
            assert!(in_pieces(&turn, 1000, 0..n, Scalars::Host(wrong), |r, s, _| Ok(bases.msm(r, s)?)).is_err());
        }
        let long = Scalars::Host(&s);
        assert!(in_pieces(&turn, 1000, 1..n, long, |r, s, _| Ok(bases.msm(r, s)?)).is_err(), "more scalars than bases");
    }

    /// Throughput MSMs are cut from 2^23 points on, in halves of at most the longest piece.
    #[test]
    fn pieces_are_halves_between_the_bounds() {
        assert_eq!(max_piece(), 1 << 26, "CUZK_MSM_PIECE_MAX_LG unset in tests");
        for (n, want) in [(1000, MIN_PIECE), (1 << 23, 1 << 23), ((1 << 23) + 1, 1 << 23), (1 << 24, 1 << 23)] {
            assert_eq!(piece_of(n), want, "n = {n}");
        }
        assert_eq!(piece_of(3 << 23), 3 << 22);
        assert_eq!(piece_of(1 << 26), 1 << 25);
        assert_eq!(piece_of(1 << 27), 1 << 26);
        assert_eq!(piece_of(1 << 28), 1 << 26);
    }

    /// The resident queries are the set of the most bytes within the room, ties keeping the
    /// earlier queries; empty queries are always "resident".
    #[test]
    fn the_most_bytes_stay_resident() {
        let (t, f) = (true, false);
        let bytes = [13, 13, 10, 10, 26];
        assert_eq!(resident_queries(bytes, 72), [t; 5]);
        assert_eq!(resident_queries(bytes, u64::MAX), [t; 5]);
        assert_eq!(resident_queries(bytes, 71), [t, t, t, f, t], "62 B: A before B G1");
        assert_eq!(resident_queries(bytes, 40), [t, f, f, f, t], "39 B: H before L");
        assert_eq!(resident_queries(bytes, 36), [t, t, t, f, f], "36 B: H, L, A before A, B G2");
        assert_eq!(resident_queries(bytes, 9), [f; 5]);
        assert_eq!(resident_queries([0, 5, 0, 5, 0], 0), [t, f, t, f, t]);
    }

    /// Proofs whose queries are partly resident and partly streamed from the host (a card too
    /// small for the whole SRS) equal the CPU backend's, on both lanes, for two complementary
    /// sets of resident queries.
    #[test]
    fn partly_resident_queries_prove_the_same() {
        if gpu::device_count() == 0 {
            eprintln!("partly_resident_queries_prove_the_same: skipped, no CUDA device");
            return;
        }
        let circuit = Synthetic::new(Family::Sha256Chain, 1 << 14, 2);
        let pce = extract(circuit.blank()).unwrap();
        let w = Witness::generate_sized(circuit, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
        let (r, s) = (Scalar::from(3u64), Scalar::from(11u64));
        let (t, f) = (true, false);
        for keep in [[t, f, t, f, t], [f, t, f, t, f]] {
            let params = super::super::dummy_params(&pce, 5);
            let placed = Arc::new(place(0, &params, keep).unwrap());
            let key = (0u32, Arc::as_ptr(&params.h) as usize);
            let mut cache = RESIDENT.lock().unwrap();
            cache.get_or_insert_with(HashMap::new).insert(key, (Arc::downgrade(&params.h), placed.clone()));
            drop(cache);
            let on =
                |backend, urgency| super::super::prove(backend, urgency, &pce, &w, None, &params, (r, s)).unwrap().0;
            let cpu = on(Backend::Cpu, Urgency::Throughput);
            for urgency in [Urgency::Throughput, Urgency::Critical] {
                assert!(on(Backend::Cuda(0), urgency) == cpu, "{keep:?} resident, {urgency:?}: the proof differs");
            }
            assert!(Arc::ptr_eq(&placed, &placement(0, &pce, &params).unwrap()), "the proofs used this placement");
        }
    }

    /// MSMs of more than 2^17 points take cuzk's driver at a window that grows with them,
    /// shorter ones sppark's; the working set counts the driver's scratch with G2's buckets,
    /// the larger.
    #[test]
    fn long_msms_take_the_wide_window() {
        assert_eq!(window_bits(WIDE_ABOVE), 0, "CUZK_MSM_WINDOW_BITS unset in tests");
        let bits = [(WIDE_ABOVE + 1, 13), (1 << 19, 13), (1 << 20, 13), (1 << 21, 16), (1 << 23, 16)];
        for (n, want) in bits.into_iter().chain([((1 << 24) - 1, 20), (1 << 27, 20)]) {
            assert_eq!(window_bits(n), want, "2^{:.2}", (n as f64).log2());
            let g2 = wide_scratch(n, want, G2_BUCKET);
            assert!(g2 > wide_scratch(n, want, G1_BUCKET) && msm_scratch(n) >= g2, "2^{}", n.ilog2());
        }
        // A 13-bit window's levels: 2^8 segments per window.
        let wins = 254 / 13 + 1;
        let scratch = (wins << 12) * (G2_BUCKET + 4) + wins * (2 * 256 + 4 * 256) * G2_BUCKET;
        assert_eq!(
            wide_scratch(1 << 19, 13, G2_BUCKET),
            scratch + wins * (1 << 19) * 4 + wins * (1 << 11) * G2_BUCKET + (16 << 19) + (1 << 20)
        );
        assert_eq!(
            msm_scratch(WIDE_ABOVE),
            WIDE_ABOVE as u64 / 4 + 128 * (WIDE_ABOVE as u64 / 8) + sppark_scratch(WIDE_ABOVE)
        );
    }

    /// A proof's device buffers at their peak (the pool's high-water mark, one proof at a
    /// time, both lanes) fit the working set the device room reserves for it, on both
    /// families: the bit-valued aux of sha256-chain and the dense aux of mimc-chain.
    #[test]
    fn a_proofs_device_buffers_fit_its_working_set() {
        if gpu::device_count() == 0 {
            eprintln!("a_proofs_device_buffers_fit_its_working_set: skipped, no CUDA device");
            return;
        }
        let mut over = Vec::new();
        for family in [Family::Sha256Chain, Family::MimcChain] {
            for lg in [16, 20] {
                let circuit = Synthetic::new(family, 1 << lg, 1);
                let pce = extract(circuit.blank()).unwrap();
                let params = super::super::dummy_params(&pce, 3);
                let w = Witness::generate_sized(circuit, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
                let estimate = working_set(&pce);
                for urgency in [Urgency::Throughput, Urgency::Critical] {
                    let prove = || {
                        super::super::prove(
                            Backend::Cuda(0),
                            urgency,
                            &pce,
                            &w,
                            None,
                            &params,
                            (Scalar::ONE, Scalar::ONE),
                        )
                    };
                    prove().unwrap();
                    gpu::pool_peak(0, true).unwrap();
                    prove().unwrap();
                    let peak = gpu::pool_peak(0, false).unwrap();
                    let case = format!("{family:?} 2^{lg} {urgency:?}: {peak} B at most, {estimate} B reserved");
                    eprintln!("{case} ({:.2})", peak as f64 / estimate as f64);
                    if peak > estimate {
                        over.push(case);
                    }
                }
            }
        }
        assert!(over.is_empty(), "proofs over their working set: {over:?}");
    }

    /// a, b, c evaluated on the device equal the CPU's SpMV bit for bit, zero past the rows,
    /// on every circuit family (the synthetic ones and a real 2 KiB PoRep partition); the
    /// first unsatisfied row is the CPU check's; the PCE's device copy is made once and
    /// dropped with it (or when unused).
    #[test]
    fn device_spmv_matches_the_host() {
        if gpu::device_count() == 0 {
            eprintln!("device_spmv_matches_the_host: skipped, no CUDA device");
            return;
        }
        for family in Family::ALL {
            for size in [1000, 1 << 14] {
                let circuit = Synthetic::new(family, size, 5);
                let pce = extract(circuit.blank()).unwrap();
                let w = Witness::generate_sized(circuit, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
                device_spmv_matches(&pce, w, &format!("{family:?} {size}"));
            }
        }
        #[cfg(feature = "porep")]
        {
            use crate::circuits::porep::{self, PorepSize};
            use crate::circuits::Circuit;
            use crate::circuits::WitnessSource;
            let dir = std::env::temp_dir().join(format!("cuzk-spmv-porep-{}", std::process::id()));
            let c1 =
                porep::make_c1(PorepSize::KiB2, porep::SealVariant::Interactive, &dir, 7).map(|c1| c1.bytes).unwrap();
            let _ = std::fs::remove_dir_all(&dir);
            let statement = Circuit::Porep(PorepSize::KiB2).statement(0, &c1).unwrap();
            let pce = porep::extract_pce(PorepSize::KiB2).unwrap();
            let w =
                statement.instance(0).unwrap().witness(&pce, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
            device_spmv_matches(&pce, w, "PoRep 2 KiB");
        }
    }

    fn device_spmv_matches(pce: &Pce, mut w: Witness, what: &str) {
        let lg = pce.domain_size().trailing_zeros();
        let m = device_matrices(0, pce).unwrap();
        assert!(Arc::ptr_eq(&m, &device_matrices(0, pce).unwrap()), "uploaded once");
        let on_device = |w: &Witness, lane| {
            let (inputs, aux) =
                (DeviceScalars::upload(0, lane, &w.inputs).unwrap(), DeviceScalars::upload(0, lane, &w.aux).unwrap());
            let (abc, unsat) = m.eval(&inputs, &aux, lg).unwrap();
            (abc.map(|v| v.to_host().unwrap()), unsat)
        };
        let host = evaluate(pce, &w).unwrap();
        for lane in [Urgency::Throughput, Urgency::Critical] {
            let ([a, b, c], unsat) = on_device(&w, lane);
            assert_eq!(unsat, None, "{what}");
            for (got, want) in [(a, &host.a), (b, &host.b), (c, &host.c)] {
                assert_eq!(got.len(), pce.domain_size());
                assert!(got[..want.len()] == want[..], "{what} ({lane:?}): a device product differs");
                assert!(got[want.len()..].iter().all(|x| *x == Scalar::ZERO), "{what}: padding");
            }
        }
        // A wrong aux value: both sides name the same first broken row.
        w.aux[pce.num_aux / 2] += Scalar::from(3u64);
        let want = match crate::pce::check_satisfied(&evaluate(pce, &w).unwrap()) {
            Err(crate::Error::Unsatisfied { constraint }) => constraint,
            other => panic!("{what}: the host check says {other:?}"),
        };
        assert_eq!(on_device(&w, Urgency::Critical).1, Some(want), "{what}");
        drop(m);
        assert_eq!(pce.device_copies.drop_unused(), 1);
    }

    /// Matrices whose words name a column or dictionary entry out of range (a PCE changed
    /// under a mapping) fail the product with an error; the device stays usable.
    #[test]
    fn out_of_range_words_fail_the_product_not_the_device() {
        if gpu::device_count() == 0 {
            eprintln!("out_of_range_words_fail_the_product_not_the_device: skipped, no CUDA device");
            return;
        }
        let row_ptr = [0u32, 1, 3];
        let dict = [Scalar::from(5u64)];
        let inputs = DeviceScalars::upload(0, Urgency::Throughput, &[Scalar::ONE]).unwrap();
        let aux = DeviceScalars::upload(0, Urgency::Throughput, &[Scalar::from(2u64), Scalar::from(4u64)]).unwrap();
        let eval = |words: &[u32], row_ptr: &[u32]| {
            let m = Csr { row_ptr, words };
            DeviceMatrices::new(0, [m, m, m], &dict, 1, 3).and_then(|d| d.eval(&inputs, &aux, 1))
        };
        let tag = |t: u32, col: u32| t << crate::pce::matrix::COL_BITS | col;
        let valid = (vec![tag(0, 0), tag(0, 1), tag(2, 2), 0], vec![0u32, 1, 4]);
        // 1·z0 ; z1 + 5·z2 = 2 + 20 = 22 (in each of a, b, c; the product check fails row 1).
        let (abc, unsat) = eval(&valid.0, &valid.1).unwrap();
        assert_eq!(abc[0].to_host().unwrap(), [Scalar::ONE, Scalar::from(22u64)]);
        assert_eq!(unsat, Some(1));
        for (words, row_ptr) in [
            (vec![tag(0, 0), tag(0, 3), tag(0, 1)], row_ptr.to_vec()), // column 3 of 3
            (vec![tag(0, 0), tag(2, 1), 1], row_ptr.to_vec()),         // dictionary entry 1 of 1
            (vec![tag(0, 0), tag(3, 1), tag(0, 1)], row_ptr.to_vec()), // tag 3
            (vec![tag(0, 0), tag(0, 1), tag(2, 2)], row_ptr.to_vec()), // dictionary index cut off
            (vec![tag(0, 0), tag(0, 1), tag(0, 1)], vec![0, 1, 9]),    // row past the words
            (vec![tag(0, 0), tag(0, 1), tag(0, 1)], vec![0, 2, 1]),    // rows backwards
        ] {
            let e = eval(&words, &row_ptr).err().expect("refused");
            assert!(e.message.contains("out of range"), "{e}");
        }
        assert!(eval(&valid.0, &valid.1).is_ok(), "the device still works");

        // Row 1 long enough for a warp (spmv_long_rows): 31·z1, then 5·z2 across the lanes' first
        // round of 32 words and the next, then −4·z1: 62 + 20 − 8 = 74.
        let long = |dict_pair: [u32; 2], last: u32| {
            let mut words = vec![tag(0, 0)];
            words.extend([tag(0, 1); 31]);
            words.extend(dict_pair);
            words.extend([tag(1, 1), tag(1, 1), tag(1, 1), last]);
            let row_ptr = vec![0, 1, words.len() as u32];
            (words, row_ptr)
        };
        let (words, row_ptr) = long([tag(2, 2), 0], tag(1, 1));
        let (abc, _) = eval(&words, &row_ptr).unwrap();
        assert_eq!(abc[2].to_host().unwrap(), [Scalar::ONE, Scalar::from(74u64)], "a long row");
        for (words, row_ptr) in [
            long([tag(2, 2), 1], tag(1, 1)),                     // dictionary entry 1 of 1
            long([tag(2, 3), 0], tag(1, 1)),                     // column 3 of 3
            long([tag(2, 2), 0], tag(3, 1)),                     // tag 3
            long([tag(2, 2), tag(2, 2)], tag(1, 1)),             // a tag word as the dictionary index
            long([tag(2, 2), 0], tag(2, 1)),                     // dictionary index cut off
            (long([tag(2, 2), 0], tag(1, 1)).0, vec![0, 40, 1]), // rows backwards
        ] {
            let e = eval(&words, &row_ptr).err().expect("refused");
            assert!(e.message.contains("out of range"), "{e}");
        }
        assert!(eval(&valid.0, &valid.1).is_ok(), "the device still works");
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
        assert!(!placed.streams(), "a small SRS is resident");
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
            let (_, t) = super::super::prove(
                Backend::Cuda(0),
                Urgency::Throughput,
                &pce,
                &w,
                None,
                &params,
                (Scalar::from(11u64), Scalar::from(13u64)),
            )
            .unwrap();
            println!("proof {i}: total {:.3} s {t:?}", t.total());
        }
    }
}
