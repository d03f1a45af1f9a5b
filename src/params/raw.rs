//! blstrs points as the bytes they are in memory, for the decoded-parameters cache: written
//! out as they are, read back without decoding.
//!
//! `G1Affine` and `G2Affine` are `#[repr(transparent)]` over blst's affine points, which are
//! plain arrays of `u64` limbs (Montgomery form) with no padding and no invalid bit pattern:
//! every byte string of the right length is a value of the type (an arbitrary one is a
//! meaningless point, which is why the cache is checksummed; it is never undefined behaviour).

use blstrs::{G1Affine, G2Affine};
use rayon::prelude::*;

use crate::Result;

/// A point type whose in-memory bytes may be copied out and back in.
pub(crate) trait RawPoint: Copy + Send + Sync {}
impl RawPoint for G1Affine {}
impl RawPoint for G2Affine {}

const _: () = assert!(std::mem::size_of::<G1Affine>() == 96 && std::mem::size_of::<G2Affine>() == 192);

/// The in-memory bytes of `points`.
pub(crate) fn as_bytes<P: RawPoint>(points: &[P]) -> &[u8] {
    // SAFETY: `P` is one of the two point types above: no padding, so every byte of the slice is
    // initialised; the byte slice covers exactly the points' memory and borrows it immutably.
    unsafe { std::slice::from_raw_parts(points.as_ptr().cast::<u8>(), std::mem::size_of_val(points)) }
}

/// `n` points whose bytes `fill(first, bytes)` writes, chunk by chunk, in parallel (`first` is
/// the index of the chunk's first point, `bytes` covers `bytes.len() / size_of::<P>()` points).
/// `fill` must write every byte of its chunk or return an error (e.g. `read_exact_at`); on an
/// error from any chunk nothing is returned and no unwritten memory is ever read.
pub(crate) fn filled<P: RawPoint>(
    n: usize,
    points_per_chunk: usize,
    fill: impl Fn(usize, &mut [u8]) -> Result<()> + Sync,
) -> Result<Vec<P>> {
    let size = std::mem::size_of::<P>();
    let mut v: Vec<P> = Vec::with_capacity(n);
    let spare = &mut v.spare_capacity_mut()[..n];
    // SAFETY: the spare capacity is `n` allocated, uninitialised `P`s; viewed as `n · size`
    // bytes (u8 has no invalid values and alignment 1) they are only written, never read,
    // by `fill`, which gets disjoint chunks.
    let bytes = unsafe { std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast::<u8>(), n * size) };
    bytes
        .par_chunks_mut(points_per_chunk * size)
        .enumerate()
        .try_for_each(|(c, chunk)| fill(c * points_per_chunk, chunk))?;
    // SAFETY: every chunk was filled (`try_for_each` returned Ok), so all `n · size` bytes are
    // written, and every byte string is a valid `P` (module doc).
    unsafe { v.set_len(n) };
    Ok(v)
}
