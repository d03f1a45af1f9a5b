//! Scalar vectors on one device, and an MSM's scalars on the host or a device.

use std::ffi::c_void;
use std::ops::Range;
use std::ptr::NonNull;

use blstrs::Scalar;
use ff::Field;

use super::device::{c_device_for_upload, c_lane};
use super::error::{check, invalid_argument, Result};
use super::ffi;
use super::turns::Urgency;
use crate::mem::{Owner, Tracked};

/// Scalars in one device's memory (an H polynomial, a witness's aux, a
/// density selection of them), freed on drop. They belong to the lane of the stage that
/// uploaded them (`upload`'s urgency): what is computed from them (a, b, c, H, selections, the
/// MSMs they are the scalars of) runs on that lane's streams and is a vector of that lane.
pub struct DeviceScalars {
    /// The C++ `dev_vec_t<fr_t>` (cuda/dev_vec.cuh) holding the scalars.
    handle: NonNull<c_void>,
    device_id: usize,
    len: usize,
    _accounted: Tracked,
}

// SAFETY: `handle` owns a C++ `dev_vec_t<fr_t>`: a device id, a length and
// a device allocation, none of which changes after the constructor
// (`upload`, `select`, `DeviceMatrices::eval`, `compute_h`) returns; every constructor
// synchronises its writes to the buffer before returning. Nothing in it
// belongs to the creating thread: every entry point selects the device for
// the calling thread, and so does the free (in `drop`), so the value may
// move to, and be dropped on, any thread.
unsafe impl Send for DeviceScalars {}
// SAFETY: the C calls through `&self` (`select`, `to_host`, MSMs through
// `Scalars::Device`) only read the handle's fields and the buffer, each
// writing only memory it allocated itself (or its own output) and
// synchronising before it returns, so concurrent calls share no mutable
// memory; the CUDA runtime is thread-safe. The free runs in `drop`, with
// `&mut self`: after every call on a borrow has returned.
unsafe impl Sync for DeviceScalars {}

impl DeviceScalars {
    /// Takes ownership of a vector the C side allocated (`alloc` scalars).
    pub(super) fn from_raw(handle: *mut c_void, device_id: usize, len: usize, alloc: usize) -> Result<Self> {
        let handle = NonNull::new(handle).ok_or_else(|| invalid_argument("null scalars handle"))?;
        Ok(Self { handle, device_id, len, _accounted: Tracked::new(Owner::Gpu, 32 * alloc.max(1) as u64) })
    }

    /// Copies `scalars` to `device_id` (through the pinned staging of the lane of `urgency`),
    /// as a vector of that lane.
    pub fn upload(device_id: usize, urgency: Urgency, scalars: &[Scalar]) -> Result<Self> {
        let c_id = c_device_for_upload(device_id, urgency)?;
        let mut handle = std::ptr::null_mut();
        // SAFETY: `scalars` is valid for `scalars.len()` values of sppark's
        // `fr_t` layout (pinned in ffi.rs); the C side copies them to the
        // device before it returns and keeps no pointer to them. It writes
        // `handle` (null on failure) and nothing else.
        check(unsafe {
            ffi::cuzk_scalars_upload(c_id, c_lane(urgency), scalars.as_ptr(), scalars.len(), &mut handle)
        })?;
        Self::from_raw(handle, device_id, scalars.len(), scalars.len())
    }

    /// Hands the C vector to a C call that takes ownership of it (and frees it);
    /// its bytes stop counting here.
    pub(super) fn into_raw(self) -> *mut c_void {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never dropped, so its `Tracked` is read out exactly
        // once, here, and dropped (its bytes released); the handle is not freed.
        drop(unsafe { std::ptr::read(&me._accounted) });
        me.handle.as_ptr()
    }

    pub(super) fn raw(&self) -> *const c_void {
        self.handle.as_ptr()
    }

    pub fn device_id(&self) -> usize {
        self.device_id
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The values whose bit is set in `words` (bit `i % 64` of word
    /// `i / 64`; bits past `len()` ignored), in order, as a new vector on the
    /// same device: bellperson's density selection, done on the device.
    pub fn select(&self, words: &[u64]) -> Result<DeviceScalars> {
        if words.len() < self.len.div_ceil(64) {
            return Err(invalid_argument(format!("{} bitmap words for {} scalars", words.len(), self.len)));
        }
        let mut handle = std::ptr::null_mut();
        // SAFETY: `self.handle` is live until `drop`. `words` is valid for
        // `words.len()` u64s, at least the `len / 64` rounded up the C side
        // reads (checked above, and by the C side); it reads them before it
        // returns and keeps no pointer. It writes `handle` (null on failure).
        check(unsafe { ffi::cuzk_scalars_select(self.handle.as_ptr(), words.as_ptr(), words.len(), &mut handle) })?;
        let ones: usize = words[..self.len.div_ceil(64)]
            .iter()
            .enumerate()
            .map(|(w, &x)| {
                let valid = self.len - 64 * w;
                let x = if valid < 64 { x & ((1u64 << valid) - 1) } else { x };
                x.count_ones() as usize
            })
            .sum();
        Self::from_raw(handle, self.device_id, ones, ones)
    }

    /// Copies the scalars back to the host.
    pub fn to_host(&self) -> Result<Vec<Scalar>> {
        let mut out = vec![Scalar::ZERO; self.len];
        // SAFETY: `self.handle` is live until `drop`; `out` has room for the
        // `self.len` scalars the C side writes (it checks that `self.len` is
        // the vector's length), and every bit pattern is a valid `Scalar`.
        check(unsafe { ffi::cuzk_scalars_download(self.handle.as_ptr(), out.as_mut_ptr(), self.len) })?;
        Ok(out)
    }
}

impl Drop for DeviceScalars {
    fn drop(&mut self) {
        // SAFETY: `handle` came from a C constructor (taken over in
        // `from_raw`) and is freed exactly once, here; no call can be using
        // it (`drop` has `&mut self`). The C side's destructor catches every
        // exception.
        unsafe { ffi::cuzk_scalars_free(self.handle.as_ptr()) }
    }
}

/// An MSM's scalars: in host memory, or a range of a vector already on the MSM's device.
#[derive(Clone)]
pub enum Scalars<'a> {
    Host(&'a [Scalar]),
    Device(&'a DeviceScalars, Range<usize>),
}

impl<'a> Scalars<'a> {
    pub fn len(&self) -> usize {
        match self {
            Scalars::Host(s) => s.len(),
            Scalars::Device(_, r) => r.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The scalars `range` of these (relative to their start), or `None` past their end.
    pub fn part(&self, range: Range<usize>) -> Option<Scalars<'a>> {
        if range.start > range.end || range.end > self.len() {
            return None;
        }
        Some(match self {
            Scalars::Host(s) => Scalars::Host(&s[range]),
            Scalars::Device(d, r) => Scalars::Device(d, r.start + range.start..r.start + range.end),
        })
    }

    /// The (host pointer, device handle, first device scalar) triple the C MSMs take.
    pub(super) fn c_pointers(&self, device_id: usize) -> Result<(*const Scalar, *const c_void, usize)> {
        match self {
            Scalars::Host(s) => Ok((s.as_ptr(), std::ptr::null(), 0)),
            Scalars::Device(d, _) if d.device_id != device_id => {
                Err(invalid_argument(format!("scalars on device {} for an MSM on device {device_id}", d.device_id)))
            }
            Scalars::Device(d, r) if r.start > r.end || r.end > d.len => {
                Err(invalid_argument(format!("scalars {r:?} of a device vector of {}", d.len)))
            }
            Scalars::Device(d, r) => Ok((std::ptr::null(), d.handle.as_ptr(), r.start)),
        }
    }
}

impl<'a> From<&'a [Scalar]> for Scalars<'a> {
    fn from(s: &'a [Scalar]) -> Self {
        Scalars::Host(s)
    }
}

impl<'a> From<&'a Vec<Scalar>> for Scalars<'a> {
    fn from(s: &'a Vec<Scalar>) -> Self {
        Scalars::Host(s)
    }
}

impl<'a> From<&'a DeviceScalars> for Scalars<'a> {
    fn from(s: &'a DeviceScalars) -> Self {
        Scalars::Device(s, 0..s.len)
    }
}
