//! A proof's device working set: the bytes its buffers and its MSMs' scratch take at their
//! peak besides the SRS and the PCE's matrices, by the same window choice its MSMs make.

use super::pieces::window_bits;
use crate::gpu::SharingPolicy;
use crate::pce::Pce;

/// Device bytes one proof needs besides the SRS and the PCE's matrices, at its peak. Its
/// buffers live in two phases: H (the witness, and a, b, c on the domain, transformed in
/// place into H's coefficients) and the MSMs (the witness beside H's coefficients, then
/// beside aux's selection for A or for B, one at a time, with one MSM's scratch:
/// [`msm_scratch`]). The pool's high-water mark of a proof is checked against this in the
/// GPU tests and printed by `cuzk-bench gpu-scaling`.
pub fn working_set(pce: &Pce, policy: &SharingPolicy) -> u64 {
    let (domain, aux) = (pce.domain_size() as u64, pce.num_aux as u64);
    let witness = 32 * (pce.num_inputs as u64 + aux);
    let longest = domain.max(aux);
    let h = witness + 3 * 32 * domain;
    let msms = witness + 32 * longest + msm_scratch(longest as usize, policy);
    h.max(msms) + POOL_SLACK
}

/// What the device's pool may round a proof's allocations up by, in all.
const POOL_SLACK: u64 = 64 << 20;

/// Device bytes one MSM of at most `n` points takes besides its bases and scalars: in G1 the
/// bit split's bitmaps and gathered scalars and bases (at most an eighth of the points) and
/// the larger of the two drivers' scratch, sppark's ([`sppark_scratch`]) and cuzk's for the
/// whole MSM uncut ([`wide_scratch`]; a piece takes no more); in G2 (no split) the larger of
/// the two drivers' scratch, with G2's buckets.
pub(super) fn msm_scratch(n: usize, policy: &SharingPolicy) -> u64 {
    let n64 = n as u64;
    let split = n64 / 4 + (32 + 96) * n64.div_ceil(8);
    let wide = |bucket| match window_bits(n, policy) {
        0 => 0,
        bits => wide_scratch(n, bits, bucket),
    };
    let sppark = sppark_scratch(n);
    (split + sppark.max(wide(G1_BUCKET))).max(sppark.max(wide(G2_BUCKET)))
}

/// Bytes of a Pippenger bucket (XYZZ coordinates) in G1 and in G2.
pub(super) const G1_BUCKET: u64 = 4 * 48;
pub(super) const G2_BUCKET: u64 = 2 * G1_BUCKET;

/// Device bytes sppark's `msm_t` allocates for `n` points whose bases and scalars are on the
/// device: per window its buckets (G2's, the larger: 384 B) and histogram, and per point of a
/// batch its digits and sort's scratch (or a host scalar's copy), a batch being at most
/// 2^(window + 7) points.
pub(super) fn sppark_scratch(n: usize) -> u64 {
    let n = n.max(1) as u64;
    let bits = ((n + n / 2).ilog2().saturating_sub(8)).clamp(10, 18) as u64;
    let wins = 254 / bits + 1;
    let stride = n.min(1 << (bits + 7));
    (wins << (bits - 1)) * (384 + 4) + stride * (32 + 4 * wins) + (1 << 20)
}

/// The longest piece of a streamed query's MSM: each piece's bases are copied to the device
/// for its MSM (at most 3.2 GB in G2, counted in the proof's room: [`proof_room`]).
pub(super) const STREAM_PIECE: usize = 1 << 24;

/// Device bytes of one streamed piece of bases of a proof of `pce` (G2's 192 B a point, the
/// larger).
pub(super) fn stream_bytes(pce: &Pce) -> u64 {
    192 * pce.domain_size().max(pce.num_aux).min(STREAM_PIECE) as u64
}

/// Device bytes a proof of `pce` reserves: its working set, and one streamed piece of bases
/// when a query of its parameters `streams` from host memory.
pub(super) fn proof_room(pce: &Pce, streams: bool, policy: &SharingPolicy) -> u64 {
    working_set(pce, policy) + if streams { stream_bytes(pce) } else { 0 }
}

/// Device bytes cuzk's MSM driver (`cuda/msm_wide.cuh`) allocates for an MSM of `n` points with a
/// `bits`-bit window and buckets of `bucket` bytes: per window its buckets and their histogram
/// (4 B) and the reduction's levels (buckets); per point of a batch (at most 2^26, the driver's
/// `WIDE_BATCH_MAX`) and window its digit (4 B) and a 256th of a carry (a bucket); per point of
/// a batch the sort's 16 B.
pub(super) fn wide_scratch(n: usize, bits: u32, bucket: u64) -> u64 {
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
