//! How a throughput MSM is cut into pieces and which Pippenger window each MSM takes, both
//! by the engine's [`SharingPolicy`].
//!
//! Pieces: a throughput MSM of more than 2^23 points runs in pieces of half its length, at
//! least 2^23 and at most 2^`piece_max_lg` points, with a [`gpu::Turn::step`] before each
//! (and the pieces' sums added). A critical stage arriving on the device then shares the SMs
//! with the rest of one piece of each running partition. Each piece keeps the whole MSM's
//! window: with sppark's msm_t a piece runs as the whole's batches (of 2^24 points at
//! 2^26-2^27), with cuzk's driver as one batch of its own, so cutting costs a host round trip
//! and a bucket reduction per piece, not extra windows. While a critical request is in the
//! engine ([`gpu::Turn::short_pieces`]) pieces are at most 2^`piece_ahead_lg` points, so the
//! piece a critical stage finds running began after the request arrived, if its witness took
//! longer than the piece before. A critical stage's MSMs are never cut.
//!
//! Windows ([`window_bits`]): sppark's msm_t up to [`WIDE_ABOVE`] points, then cuzk's own
//! driver (`cuda/msm_wide.cuh`) with the fastest window measured around each length.

use crate::gpu::{self, Scalars, SharingPolicy};
use crate::{Error, Result};

/// The shortest piece: an MSM of at most this many points is not cut.
pub(super) const MIN_PIECE: usize = 1 << 23;

/// The piece length of a throughput MSM of `n` points.
pub(super) fn piece_of(n: usize, policy: &SharingPolicy) -> usize {
    n.div_ceil(2).clamp(MIN_PIECE, MIN_PIECE.max(1 << policy.piece_max_lg))
}

/// The longest MSM that keeps sppark's msm_t by default: cuzk's driver costs about 8 ms
/// whatever the length (sppark's 4 ms at 2^12 points, 7 ms at 2^16) and wins from 2^19 points
/// on (an H100: 9 ms against 20 at 2^19 in G1).
pub(super) const WIDE_ABOVE: usize = 1 << 17;

/// The default window for an MSM of `whole` points: 0 (sppark's) up to [`WIDE_ABOVE`] points,
/// then cuzk's driver: 13 bits up to 2^20 points (measured at 2^19), 16 up to 2^23
/// (2^21-2^23; 2^22 in G2), 20 above (2^24-2^27 in G1, 2^25 in G2).
fn default_bits(whole: usize) -> u32 {
    [(WIDE_ABOVE, 0), (1 << 20, 13), (1 << 23, 16)]
        .into_iter()
        .find(|&(most, _)| whole <= most)
        .map_or(20, |(_, bits)| bits)
}

/// The Pippenger window of an MSM of `whole` points over device scalars (in G1 on the
/// throughput lane, those that are not mostly bits: `cuda/msm.cu` splits the others): the
/// policy's `window_bits`, else [`default_bits`]. 0 is sppark's msm_t (its window at most 18
/// bits); 10 to 26 bits cuzk's driver (runs of sorted points per thread, in G2 a pair of
/// threads per point, the buckets reduced on every SM, batches of up to 2^26 points, on the
/// scalars' lane). A wider window adds each point to fewer buckets and needs more of them,
/// 2^(bits − 1) per window of 192 B in G1 and 384 B in G2 (about 6.6 GB in G1 and 8.6 GB in
/// G2 at 20 bits for a batch of 2^26 points).
pub(super) fn window_bits(whole: usize, policy: &SharingPolicy) -> u32 {
    policy.window_bits.unwrap_or_else(|| default_bits(whole))
}

/// `msm` over `range` (its scalars `s`, as long) in pieces of at most `piece` points (at most
/// 2^`piece_ahead_lg` while `turn` says [`gpu::Turn::short_pieces`]), a step of `turn` before
/// each, summed; `msm` gets each piece's range and scalars and the whole's length.
pub(super) fn in_pieces<P: group::Group>(
    turn: &gpu::Turn,
    policy: &SharingPolicy,
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
    let ahead = MIN_PIECE.max(1 << policy.piece_ahead_lg);
    let mut sum = P::identity();
    let mut at = 0usize;
    loop {
        turn.step();
        let len = if turn.short_pieces() { piece.min(ahead) } else { piece };
        let end = n.min(at.saturating_add(len.max(1)));
        let part = s.part(at..end).ok_or_else(wrong)?;
        sum += msm(range.start + at..range.start + end, part, n)?;
        at = end;
        if at == n {
            return Ok(sum);
        }
    }
}
