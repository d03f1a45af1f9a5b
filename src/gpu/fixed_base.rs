//! Fixed-base scalar multiplication on a device: `s·P` for many scalars and one point, the
//! work of the Groth16 setup's queries (`params::setup`), from the window table the host
//! built (`d·2^(w·k)·P` for every window `k` and digit `d ≥ 1`, affine).

use blstrs::{G1Affine, G2Affine, Scalar};
use ff::PrimeField;
use rayon::prelude::*;

use super::device::c_device;
use super::error::{check, invalid_argument, Result};
use super::ffi;

/// An affine point type with a device fixed-base product (`G1Affine`, `G2Affine`).
pub trait FixedBasePoint: Copy + Default + Send + Sync {
    /// The C entry: `out[i] = scalars[i]·P` for `i < n` from P's table.
    #[doc(hidden)]
    unsafe fn c_fixed_base(
        device_id: i32,
        out: *mut Self,
        table: *const Self,
        window: u32,
        scalars: *const ffi::FrBits,
        n: usize,
    ) -> sppark::Error;
}

macro_rules! fixed_base_point {
    ($($affine:ty => $entry:ident),*) => {$(
        impl FixedBasePoint for $affine {
            unsafe fn c_fixed_base(
                d: i32,
                o: *mut Self,
                t: *const Self,
                w: u32,
                s: *const ffi::FrBits,
                n: usize,
            ) -> sppark::Error {
                // SAFETY: forwarded; the caller upholds `fixed_base`'s contract.
                unsafe { ffi::$entry(d, o, t, w, s, n) }
            }
        }
    )*};
}
fixed_base_point!(G1Affine => cuzk_g1_fixed_base, G2Affine => cuzk_g2_fixed_base);

/// Scalars per call: bounds the canonical copy the host holds at once.
const BATCH: usize = 1 << 24;

/// The number of points in a table of `window`-bit windows over a scalar.
pub fn fixed_base_table_len(window: usize) -> usize {
    (Scalar::NUM_BITS as usize).div_ceil(window) * ((1usize << window) - 1)
}

/// `s·P` for every `s` of `scalars`, in affine form, on device `device_id`, where `table` is
/// P's table of `window`-bit windows (row `k` holds `d·2^(window·k)·P` for `d = 1 .. 2^window`,
/// as `params::setup` builds it). The same points as the host's products, byte for byte.
pub fn fixed_base<G: FixedBasePoint>(
    device_id: usize,
    table: &[G],
    window: usize,
    scalars: &[Scalar],
) -> Result<Vec<G>> {
    let c_id = c_device(device_id)?;
    if !(1..=24).contains(&window) || table.len() != fixed_base_table_len(window) {
        return Err(invalid_argument(format!(
            "a table of {} points for {window}-bit windows (want {})",
            table.len(),
            if (1..=24).contains(&window) { fixed_base_table_len(window) } else { 0 }
        )));
    }
    let mut out = vec![G::default(); scalars.len()];
    for (out, scalars) in out.chunks_mut(BATCH).zip(scalars.chunks(BATCH)) {
        let canonical: Vec<ffi::FrBits> = scalars
            .par_iter()
            .map(|s| {
                let b = s.to_bytes_le();
                std::array::from_fn(|i| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap()))
            })
            .collect();
        // SAFETY: `table` holds `fixed_base_table_len(window)` points (checked) and `canonical`
        // and `out` hold `out.len()` scalars and points, all live for the call, laid out as the
        // C side's types (pinned in ffi.rs); the C side writes only `out` and keeps no pointer.
        check(unsafe {
            G::c_fixed_base(c_id, out.as_mut_ptr(), table.as_ptr(), window as u32, canonical.as_ptr(), out.len())
        })?;
    }
    Ok(out)
}
