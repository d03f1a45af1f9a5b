//! MSMs over G1 and G2: bases resident on one device, or streamed from the host.

use std::ffi::c_void;
use std::ops::Range;
use std::ptr::NonNull;
use std::time::Duration;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};

use super::device::{c_device, c_device_for_upload};
use super::error::{check, invalid_argument, Result};
use super::ffi;
use super::scalars::Scalars;
use super::turns::{self, Urgency};

/// The count of critical stages on `device_id` that cuzk's driver yields to on the throughput
/// lane ([`turns::critical_running`]); null, yielding to none, past its devices.
fn critical_running(device_id: usize) -> *const u32 {
    turns::critical_running(device_id).map_or(std::ptr::null(), |c| c.as_ptr().cast_const())
}

/// `d` in whole microseconds, for the C side (saturating).
fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

macro_rules! resident {
    ($name:ident, $affine:ty, $proj:ty, $new:ident, $free:ident, $msm:ident, $host_msm:ident,
     $host_fn:ident, $doc:literal) => {
        #[doc = $doc]
        ///
        /// The bases are copied to the device once, in [`Self::new`], and stay
        /// there until the value is dropped. `msm` may be called from many
        /// threads at once: MSMs on one device are not serialised but
        /// interleave, each with its own scratch memory and events, their
        /// kernels queued on the streams of their scalars' lane (host scalars:
        /// the throughput lane's, shared by every throughput proof).
        pub struct $name {
            /// The C++ `dev_vec_t` (cuda/dev_vec.cuh) holding the bases.
            handle: NonNull<c_void>,
            device_id: usize,
            len: usize,
        }

        // SAFETY: `handle` owns a C++ `dev_vec_t`: a device id, a length and
        // a device allocation, none of which the C side changes after `new`
        // returns (the upload has been synchronised by then). Nothing in it
        // belongs to the creating thread: every entry point selects the
        // device for the calling thread, and so does the free (in `drop`),
        // so the value may move to, and be dropped on, any thread.
        unsafe impl Send for $name {}
        // SAFETY: `msm`, the only C call through `&self`, only reads the
        // handle's fields and (its kernels) the bases. Each call allocates
        // its own buckets, scratch and events (sppark's `msm_t`) and writes
        // only those and its own `out`, so concurrent calls share no mutable
        // memory; the CUDA runtime is thread-safe. The free runs in `drop`,
        // with `&mut self`: after every `msm` has returned.
        unsafe impl Sync for $name {}

        impl $name {
            /// Uploads `bases` to `device_id` (through the pinned staging).
            pub fn new(device_id: usize, bases: &[$affine]) -> Result<Self> {
                let c_id = c_device_for_upload(device_id, Urgency::Throughput)?;
                let mut handle: *mut c_void = std::ptr::null_mut();
                // SAFETY: `bases` is valid for `bases.len()` points whose layout
                // is sppark's affine type (pinned in ffi.rs); the C side copies
                // them to the device before it returns and keeps no pointer to
                // them. It writes `handle` (null on failure) and nothing else.
                check(unsafe { ffi::$new(c_id, bases.as_ptr(), bases.len(), &mut handle) })?;
                let handle = NonNull::new(handle).ok_or_else(|| invalid_argument("null bases handle"))?;
                Ok(Self { handle, device_id, len: bases.len() })
            }

            pub fn device_id(&self) -> usize {
                self.device_id
            }

            /// Number of resident bases.
            pub fn len(&self) -> usize {
                self.len
            }

            pub fn is_empty(&self) -> bool {
                self.len == 0
            }

            /// Σ scalars[i] · bases[range.start + i]; `scalars` in blstrs'
            /// Montgomery form, `scalars.len() == range.len()`, on the host or
            /// on this device.
            pub fn msm<'a>(&self, range: Range<usize>, scalars: impl Into<Scalars<'a>>) -> Result<$proj> {
                let whole = range.len();
                self.msm_piece(range, scalars, whole)
            }

            /// [`Self::msm`] over one piece of an MSM of `whole` points (at most
            /// [`Self::len`]): Pippenger's window is the whole's, so cutting an
            /// MSM into pieces adds no windows to sum. A throughput MSM's only: on
            /// the express lane the piece's own window is used.
            pub fn msm_piece<'a>(
                &self,
                range: Range<usize>,
                scalars: impl Into<Scalars<'a>>,
                whole: usize,
            ) -> Result<$proj> {
                self.msm_with(range, scalars, whole, 0, Duration::ZERO)
            }

            /// [`Self::msm_piece`] with a Pippenger window of `wbits` bits (10 to 26) by
            /// cuzk's own driver (`cuda/msm_wide.cuh`), on the scalars' lane, when `wbits` is
            /// not 0 and the scalars are on the device (in G1 on the throughput lane: not
            /// mostly bits). Any other `wbits` is an argument error. On the throughput lane
            /// the driver gives way before each of its kernels while a critical stage runs on
            /// the device ([`super::Turn`]), for at most `max_yield` in all.
            pub fn msm_with<'a>(
                &self,
                range: Range<usize>,
                scalars: impl Into<Scalars<'a>>,
                whole: usize,
                wbits: u32,
                max_yield: Duration,
            ) -> Result<$proj> {
                let scalars = scalars.into();
                if range.start > range.end || range.end > self.len {
                    return Err(invalid_argument(format!("MSM range {range:?} outside {} resident bases", self.len)));
                }
                if whole > self.len {
                    return Err(invalid_argument(format!("an MSM of {whole} points over {} resident bases", self.len)));
                }
                if scalars.len() != range.len() {
                    return Err(invalid_argument(format!("{} scalars for {} bases", scalars.len(), range.len())));
                }
                let (host_scalars, dev_scalars, dev_start) = scalars.c_pointers(self.device_id)?;
                let mut out = <$proj as group::Group>::identity();
                // SAFETY: `handle` is the live `dev_vec_t` from `new` (freed
                // only in `drop`), and `range` lies inside its `len` bases
                // (checked above, and again by the C side). `c_pointers` gave
                // either a host pointer valid for `range.len()` scalars, read
                // before the call returns, or the handle of a `DeviceScalars`
                // on this device and a first scalar whose range the C side
                // checks against the vector's length; the borrow in `scalars`
                // keeps either alive for the call. `whole` and `wbits` only
                // size the window (checked above, and by the C side). The C side
                // only loads the process-long count `critical_running` points to. `out` is a live
                // local of sppark's Jacobian layout; the C side writes only it.
                check(unsafe {
                    ffi::$msm(
                        self.handle.as_ptr(),
                        range.start,
                        range.len(),
                        whole,
                        wbits,
                        host_scalars,
                        dev_scalars,
                        dev_start,
                        critical_running(self.device_id),
                        micros(max_yield),
                        &mut out,
                    )
                })?;
                Ok(out)
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                // SAFETY: `handle` came from `new` and is freed exactly once,
                // here; no call can be using it (`drop` has `&mut self`). The C
                // side's destructor catches every exception.
                unsafe { ffi::$free(self.handle.as_ptr()) }
            }
        }

        /// Σ scalars[i] · bases[i] with the bases in host memory (the fallback when
        /// they do not fit on the device): copied to device memory of the scalars'
        /// lane for this call (as many bytes as `bases`: the caller bounds them), then
        /// summed as resident bases' `msm_with`: a piece of an MSM of `whole` points, `wbits`,
        /// yielding to critical stages for at most `max_yield`.
        /// The scalars on the host or on `device_id`.
        pub fn $host_fn<'a>(
            device_id: usize,
            bases: &[$affine],
            scalars: impl Into<Scalars<'a>>,
            whole: usize,
            wbits: u32,
            max_yield: Duration,
        ) -> Result<$proj> {
            let scalars = scalars.into();
            // The copy goes through the staging of the scalars' lane; device scalars' upload
            // accounted theirs already.
            let c_id = match scalars {
                Scalars::Host(_) => c_device_for_upload(device_id, Urgency::Throughput)?,
                Scalars::Device(..) => c_device(device_id)?,
            };
            if scalars.len() != bases.len() {
                return Err(invalid_argument(format!("{} scalars for {} bases", scalars.len(), bases.len())));
            }
            let (host_scalars, dev_scalars, dev_start) = scalars.c_pointers(device_id)?;
            let mut out = <$proj as group::Group>::identity();
            // SAFETY: `bases` is valid for `bases.len()` points of sppark's
            // affine layout, and the scalars (host pointer or a live
            // `DeviceScalars` on this device, as in `msm`) number as many
            // (checked above; the C side checks the device length again). All
            // are only read, and not after the call returns; the C side writes
            // only `out`, a live local of sppark's Jacobian layout. `whole` and
            // `wbits` only size the window (checked by the C side); the count
            // `critical_running` points to lives for the process and is only loaded.
            check(unsafe {
                ffi::$host_msm(
                    c_id,
                    bases.as_ptr(),
                    bases.len(),
                    whole,
                    wbits,
                    host_scalars,
                    dev_scalars,
                    dev_start,
                    critical_running(device_id),
                    micros(max_yield),
                    &mut out,
                )
            })?;
            Ok(out)
        }
    };
}

resident!(
    ResidentG1,
    G1Affine,
    G1Projective,
    cuzk_g1_bases_new,
    cuzk_g1_bases_free,
    cuzk_g1_msm_resident,
    cuzk_g1_msm_host,
    msm_g1_host,
    "G1 bases resident on one device, for repeated MSMs (SRS H, L, A, B_G1)."
);
resident!(
    ResidentG2,
    G2Affine,
    G2Projective,
    cuzk_g2_bases_new,
    cuzk_g2_bases_free,
    cuzk_g2_msm_resident,
    cuzk_g2_msm_host,
    msm_g2_host,
    "G2 bases resident on one device, for repeated MSMs (SRS B_G2)."
);
