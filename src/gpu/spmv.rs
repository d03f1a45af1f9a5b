//! Sparse matrices on one device and their products with a witness there: a PCE's A, B, C
//! (compact CSR words, `pce/matrix.rs`'s format) uploaded once, then `a = A·z`, `b = B·z`,
//! `c = C·z` per proof, straight into the buffers the H NTTs transform.

use std::ffi::c_void;
use std::ptr::NonNull;

use blstrs::Scalar;

use super::device::{c_device, c_device_for_upload};
use super::error::{check, invalid_argument, Result};
use super::ffi;
use super::scalars::DeviceScalars;
use super::turns::Urgency;
use crate::mem::{Owner, Tracked};

/// One sparse matrix as the host holds it: `rows + 1` word offsets and the words.
#[derive(Clone, Copy)]
pub struct Csr<'a> {
    pub row_ptr: &'a [u32],
    pub words: &'a [u32],
}

/// Three matrices over the same columns (`num_inputs` inputs, then aux) and their
/// dictionary of coefficients, resident on one device until dropped.
pub struct DeviceMatrices {
    /// The C++ `matrices_t` (cuda/spmv.cu).
    handle: NonNull<c_void>,
    device_id: usize,
    rows: usize,
    num_inputs: usize,
    num_cols: usize,
    _accounted: Tracked,
}

// SAFETY: `handle` owns a C++ `matrices_t`: dimensions and device
// allocations that the C side never changes after `new` returns (its upload
// synchronised). Every entry point, and the free, selects the device for the
// calling thread, so the value may move to, and be dropped on, any thread.
unsafe impl Send for DeviceMatrices {}
// SAFETY: `eval`, the only C call through `&self`, only reads the matrices;
// each call allocates its own outputs and flags and synchronises before it
// returns. The free runs in `drop`, with `&mut self`: after every `eval`.
unsafe impl Sync for DeviceMatrices {}

impl DeviceMatrices {
    /// Copies `m` (three matrices of the same rows), `dict` and the column counts to
    /// `device_id`. The words are trusted only as far as their bounds: the device checks every
    /// index again and fails the product on one out of range.
    pub fn new(
        device_id: usize,
        m: [Csr; 3],
        dict: &[Scalar],
        num_inputs: usize,
        num_cols: usize,
    ) -> Result<DeviceMatrices> {
        let rows = m[0].row_ptr.len().checked_sub(1).ok_or_else(|| invalid_argument("matrix without row pointers"))?;
        if m.iter().any(|x| x.row_ptr.len() != rows + 1) || num_inputs > num_cols {
            return Err(invalid_argument("matrices of different rows, or more inputs than columns"));
        }
        let c_id = c_device_for_upload(device_id, Urgency::Throughput)?;
        let row_ptr = m.map(|x| x.row_ptr.as_ptr());
        let words = m.map(|x| x.words.as_ptr());
        let nwords = m.map(|x| x.words.len());
        let mut handle = std::ptr::null_mut();
        let mut nlong = 0usize;
        // SAFETY: each `row_ptr[i]` is valid for `rows + 1` u32s and each
        // `words[i]` for `nwords[i]` (the slices above); `dict` for
        // `dict.len()` scalars of sppark's `fr_t` layout (pinned in ffi.rs).
        // The three pointer arrays are live locals. The C side copies
        // everything to the device before it returns and keeps no host
        // pointer; it writes `handle` (null on failure) and `nlong`, live locals.
        check(unsafe {
            ffi::cuzk_matrices_new(
                c_id,
                row_ptr.as_ptr(),
                words.as_ptr(),
                nwords.as_ptr(),
                rows,
                dict.as_ptr(),
                dict.len(),
                num_inputs,
                num_cols,
                &mut handle,
                &mut nlong,
            )
        })?;
        let handle = NonNull::new(handle).ok_or_else(|| invalid_argument("null matrices handle"))?;
        // The row pointers, the words, the lists of long rows and the dictionary.
        let bytes = 4 * (3 * (rows + 1) + nwords.iter().sum::<usize>() + nlong) + 32 * dict.len();
        Ok(DeviceMatrices {
            handle,
            device_id,
            rows,
            num_inputs,
            num_cols,
            _accounted: Tracked::new(Owner::Gpu, bytes as u64),
        })
    }

    pub fn device_id(&self) -> usize {
        self.device_id
    }

    /// The three products with `z = [inputs | aux]` (both on this device), each
    /// `2^lg_domain` values long and zero past the rows, and the first row where
    /// `a·b ≠ c` (`None`: every row holds).
    pub fn eval(
        &self,
        inputs: &DeviceScalars,
        aux: &DeviceScalars,
        lg_domain: u32,
    ) -> Result<([DeviceScalars; 3], Option<usize>)> {
        c_device(self.device_id)?;
        if inputs.device_id() != self.device_id || aux.device_id() != self.device_id {
            return Err(invalid_argument(format!("witness not on device {}", self.device_id)));
        }
        if inputs.len() != self.num_inputs || inputs.len() + aux.len() != self.num_cols {
            return Err(invalid_argument(format!(
                "witness of {} inputs and {} aux for matrices of {} inputs and {} columns",
                inputs.len(),
                aux.len(),
                self.num_inputs,
                self.num_cols
            )));
        }
        if lg_domain > super::MAX_LG_DOMAIN || (1usize << lg_domain) < self.rows {
            return Err(invalid_argument(format!("a domain of 2^{lg_domain} for {} rows", self.rows)));
        }
        let domain = 1usize << lg_domain;
        let mut out = [std::ptr::null_mut(); 3];
        let mut first = u64::MAX;
        // SAFETY: the three handles are live until their values drop (after
        // this call); `out` has room for the three handles the C side writes
        // (null on failure) and `first` is a live local.
        let status = check(unsafe {
            ffi::cuzk_matrices_eval(
                self.handle.as_ptr(),
                inputs.raw(),
                aux.raw(),
                lg_domain,
                out.as_mut_ptr(),
                &mut first,
            )
        });
        // Owned before the status is looked at: nothing the C side made is leaked.
        let owned = out.map(|h| (!h.is_null()).then(|| DeviceScalars::from_raw(h, self.device_id, domain, domain)));
        status?;
        let [a, b, c] = owned.map(|v| v.unwrap_or_else(|| Err(invalid_argument("null product handle"))));
        Ok(([a?, b?, c?], usize::try_from(first).ok().filter(|_| first != u64::MAX)))
    }
}

impl Drop for DeviceMatrices {
    fn drop(&mut self) {
        // SAFETY: `handle` came from `cuzk_matrices_new` and is freed exactly once, here, after
        // every call through `&self` returned. The C destructor catches every exception.
        unsafe { ffi::cuzk_matrices_free(self.handle.as_ptr()) }
    }
}
