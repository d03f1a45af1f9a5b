//! The layer under the CUDA backend: device discovery and safe wrappers over
//! the `cuda/` entry points (sppark 0.1.16 MSM and NTT), on plain slices of
//! `blstrs` scalars and points. Knows nothing of proofs or parameters.
//!
//! Every function takes an explicit device id (an index into [`devices`]) and
//! returns [`GpuError`] on failure, including "no device": nothing here panics
//! or aborts on a CUDA error. Scalars are passed in blstrs' own Montgomery form
//! and points as blstrs lays them out, without re-encoding (see `ffi.rs`).

// The C++ side calls blst (sppark's host field arithmetic); without a Rust
// reference the staticlib would drop blst's symbols.
extern crate blst;

mod ffi;
#[cfg(test)]
mod tests;

use crate::mem::{Owner, Tracked};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{Field, PrimeField};
use std::ffi::c_void;
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::Mutex;

/// A CUDA or argument error from the GPU layer, with sppark's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuError {
    /// Negated `cudaError_t` for CUDA failures, -1 otherwise.
    pub code: i32,
    pub message: String,
}

impl std::fmt::Display for GpuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GPU error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for GpuError {}

pub type Result<T> = std::result::Result<T, GpuError>;

fn check(err: sppark::Error) -> Result<()> {
    if err.code == 0 {
        Ok(())
    } else {
        Err(GpuError { code: err.code, message: String::from(&err) })
    }
}

fn invalid(message: impl Into<String>) -> GpuError {
    GpuError { code: -1, message: message.into() }
}

fn device_arg(device_id: usize) -> Result<i32> {
    let n = device_count();
    if device_id >= n {
        return Err(GpuError {
            code: -101, // -cudaErrorInvalidDevice
            message: format!("no CUDA device {device_id} ({n} usable)"),
        });
    }
    Ok(device_id as i32)
}

/// Number of GPUs sppark can use (compute capability >= 7.0 with cooperative
/// launch). 0 when there is no GPU or no driver.
pub fn device_count() -> usize {
    let mut n = 0usize;
    match check(unsafe { ffi::cuzk_gpu_count(&mut n) }) {
        Ok(()) => n,
        Err(_) => 0,
    }
}

/// One usable GPU. `free_bytes` is a snapshot (cudaMemGetInfo).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Index for every function of this module.
    pub id: usize,
    /// The CUDA runtime's ordinal (differs from `id` if a GPU was skipped).
    pub cuda_id: i32,
    pub name: String,
    pub sm_count: u32,
    pub compute_capability: (u32, u32),
    pub total_bytes: u64,
    pub free_bytes: u64,
}

/// Describes one device, with its current free memory.
pub fn device_info(device_id: usize) -> Result<DeviceInfo> {
    let dev = device_arg(device_id)?;
    let mut c =
        ffi::GpuInfoC { cuda_id: 0, sm_count: 0, major: 0, minor: 0, total_bytes: 0, free_bytes: 0, name: [0; 256] };
    check(unsafe { ffi::cuzk_gpu_info(dev, &mut c) })?;
    let len = c.name.iter().position(|&b| b == 0).unwrap_or(c.name.len());
    Ok(DeviceInfo {
        id: device_id,
        cuda_id: c.cuda_id,
        name: String::from_utf8_lossy(&c.name[..len]).into_owned(),
        sm_count: c.sm_count as u32,
        compute_capability: (c.major as u32, c.minor as u32),
        total_bytes: c.total_bytes as u64,
        free_bytes: c.free_bytes as u64,
    })
}

/// All usable devices; empty without a GPU.
pub fn devices() -> Vec<DeviceInfo> {
    (0..device_count()).filter_map(|i| device_info(i).ok()).collect()
}

macro_rules! resident {
    ($name:ident, $affine:ty, $proj:ty, $new:ident, $free:ident, $msm:ident, $host_msm:ident,
     $host_fn:ident, $bytes:expr, $doc:literal) => {
        #[doc = $doc]
        ///
        /// The bases are copied to the device once, in [`Self::new`], and stay
        /// there until the value is dropped. `msm` may be called from many
        /// threads; MSMs on one device run one at a time.
        pub struct $name {
            handle: NonNull<c_void>,
            device_id: usize,
            len: usize,
        }

        // The handle is an immutable device buffer plus its size; the C++
        // side serializes MSMs per device.
        unsafe impl Send for $name {}
        unsafe impl Sync for $name {}

        impl $name {
            /// Uploads `bases` to `device_id` (through the pinned staging).
            pub fn new(device_id: usize, bases: &[$affine]) -> Result<Self> {
                let dev = staging_arg(device_id)?;
                let mut handle: *mut c_void = std::ptr::null_mut();
                check(unsafe { ffi::$new(dev, bases.as_ptr(), bases.len(), &mut handle) })?;
                let handle = NonNull::new(handle).ok_or_else(|| invalid("null bases handle"))?;
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

            /// Device bytes the bases occupy.
            pub fn device_bytes(&self) -> u64 {
                (self.len * $bytes) as u64
            }

            /// Σ scalars[i] · bases[range.start + i]; `scalars` in blstrs'
            /// Montgomery form, `scalars.len() == range.len()`, on the host or
            /// on this device.
            pub fn msm<'a>(&self, range: Range<usize>, scalars: impl Into<Scalars<'a>>) -> Result<$proj> {
                let scalars = scalars.into();
                if range.start > range.end || range.end > self.len {
                    return Err(invalid(format!("MSM range {range:?} outside {} resident bases", self.len)));
                }
                if scalars.len() != range.len() {
                    return Err(invalid(format!("{} scalars for {} bases", scalars.len(), range.len())));
                }
                let (host, dev) = scalars.raw(self.device_id)?;
                let mut out = <$proj as group::Group>::identity();
                check(unsafe { ffi::$msm(self.handle.as_ptr(), range.start, range.len(), host, dev, &mut out) })?;
                Ok(out)
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                unsafe { ffi::$free(self.handle.as_ptr()) }
            }
        }

        /// Σ scalars[i] · bases[i] with the bases streamed from host memory
        /// (the fallback when they do not fit on the device); the scalars on
        /// the host or on `device_id`.
        pub fn $host_fn<'a>(device_id: usize, bases: &[$affine], scalars: impl Into<Scalars<'a>>) -> Result<$proj> {
            let dev = device_arg(device_id)?;
            let scalars = scalars.into();
            if scalars.len() != bases.len() {
                return Err(invalid(format!("{} scalars for {} bases", scalars.len(), bases.len())));
            }
            let (host, d) = scalars.raw(device_id)?;
            let mut out = <$proj as group::Group>::identity();
            check(unsafe { ffi::$host_msm(dev, bases.as_ptr(), bases.len(), host, d, &mut out) })?;
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
    96,
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
    192,
    "G2 bases resident on one device, for repeated MSMs (SRS B_G2)."
);

/// Largest NTT domain sppark 0.1.16 is built for (`MAX_LG_DOMAIN_SIZE`).
pub const MAX_LG_DOMAIN: u32 = 28;

/// sppark's NTT constants: the primitive 2^lg_domain-th root of unity and the
/// coset generator. Host constants: needs no GPU.
pub fn ntt_constants(lg_domain: u32) -> Result<(Scalar, Scalar)> {
    let mut omega = Scalar::ZERO;
    let mut g = Scalar::ZERO;
    check(unsafe { ffi::cuzk_ntt_constants(lg_domain, &mut omega, &mut g) })?;
    Ok((omega, g))
}

/// Pinned host memory of each device's upload staging, accounted once per
/// device (it is allocated on the device's first upload and kept).
static STAGING: Mutex<Vec<(i32, Tracked)>> = Mutex::new(Vec::new());

/// [`device_arg`] for a call that uploads: makes sure the device's pinned
/// staging exists and is accounted as host memory.
fn staging_arg(device_id: usize) -> Result<i32> {
    let dev = device_arg(device_id)?;
    let mut staging = STAGING.lock().unwrap_or_else(|e| e.into_inner());
    if !staging.iter().any(|(d, _)| *d == dev) {
        let mut bytes = 0usize;
        check(unsafe { ffi::cuzk_staging_bytes(dev, &mut bytes) })?;
        // It holds a, b, c (and aux) on their way to the device.
        staging.push((dev, Tracked::new(Owner::Abc, bytes as u64)));
    }
    Ok(dev)
}

/// Scalars in one device's memory (an H polynomial, a witness's aux, a
/// density selection of them), freed on drop.
pub struct DeviceScalars {
    handle: NonNull<c_void>,
    device_id: usize,
    len: usize,
    _accounted: Tracked,
}

// An immutable device buffer plus its length.
unsafe impl Send for DeviceScalars {}
unsafe impl Sync for DeviceScalars {}

impl DeviceScalars {
    /// Takes ownership of a vector the C side allocated (`alloc` scalars).
    fn from_raw(handle: *mut c_void, device_id: usize, len: usize, alloc: usize) -> Result<Self> {
        let handle = NonNull::new(handle).ok_or_else(|| invalid("null scalars handle"))?;
        Ok(Self { handle, device_id, len, _accounted: Tracked::new(Owner::Gpu, 32 * alloc.max(1) as u64) })
    }

    /// Copies `scalars` to `device_id` (through the pinned staging).
    pub fn upload(device_id: usize, scalars: &[Scalar]) -> Result<Self> {
        let dev = staging_arg(device_id)?;
        let mut handle = std::ptr::null_mut();
        check(unsafe { ffi::cuzk_scalars_upload(dev, scalars.as_ptr(), scalars.len(), &mut handle) })?;
        Self::from_raw(handle, device_id, scalars.len(), scalars.len())
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
            return Err(invalid(format!("{} bitmap words for {} scalars", words.len(), self.len)));
        }
        let mut handle = std::ptr::null_mut();
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
        check(unsafe { ffi::cuzk_scalars_download(self.handle.as_ptr(), out.as_mut_ptr(), self.len) })?;
        Ok(out)
    }
}

impl Drop for DeviceScalars {
    fn drop(&mut self) {
        unsafe { ffi::cuzk_scalars_free(self.handle.as_ptr()) }
    }
}

/// An MSM's scalars: in host memory, or already on the MSM's device.
#[derive(Clone, Copy)]
pub enum Scalars<'a> {
    Host(&'a [Scalar]),
    Device(&'a DeviceScalars),
}

impl Scalars<'_> {
    pub fn len(&self) -> usize {
        match self {
            Scalars::Host(s) => s.len(),
            Scalars::Device(d) => d.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The (host pointer, device handle) pair the C MSMs take.
    fn raw(&self, device_id: usize) -> Result<(*const Scalar, *const c_void)> {
        match self {
            Scalars::Host(s) => Ok((s.as_ptr(), std::ptr::null())),
            Scalars::Device(d) if d.device_id == device_id => Ok((std::ptr::null(), d.handle.as_ptr())),
            Scalars::Device(d) => {
                Err(invalid(format!("scalars on device {} for an MSM on device {device_id}", d.device_id)))
            }
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
        Scalars::Device(s)
    }
}

/// Where [`compute_h_device`]'s time went, from CUDA events.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HTimings {
    /// Seconds until a, b and c were all on the device (host copies into the
    /// pinned staging and DMA; overlaps the NTTs of a and b).
    pub upload: f64,
    /// Seconds from there until H was ready (the NTTs not hidden by the upload).
    pub ntt: f64,
}

/// The Groth16 H polynomial, exactly as bellperson's `execute_fft`:
/// a, b, c (evaluations, `len <= 2^lg_domain`, all the same length) are
/// zero-padded to the domain, interpolated, evaluated on the coset
/// `7·<omega>`, combined as `(a·b − c) / Z` with `Z = g^N − 1`, and
/// interpolated back. Its first `2^lg_domain − 1` coefficients (the length of
/// the H query) stay on the device, ready for the H MSM.
pub fn compute_h_device(
    device_id: usize,
    a: &[Scalar],
    b: &[Scalar],
    c: &[Scalar],
    lg_domain: u32,
) -> Result<(DeviceScalars, HTimings)> {
    let dev = staging_arg(device_id)?;
    if lg_domain == 0 || lg_domain > MAX_LG_DOMAIN {
        return Err(invalid(format!("lg_domain {lg_domain} outside 1..={MAX_LG_DOMAIN}")));
    }
    let domain = 1usize << lg_domain;
    let n = a.len();
    if b.len() != n || c.len() != n {
        return Err(invalid(format!("a, b, c lengths differ: {}, {}, {}", a.len(), b.len(), c.len())));
    }
    if n > domain {
        return Err(invalid(format!("{n} evaluations for a domain of {domain}")));
    }
    let z_inv = z_inv_on_coset(lg_domain);
    let mut handle = std::ptr::null_mut();
    let mut times = ffi::HTimesC::default();
    check(unsafe {
        ffi::cuzk_compute_h(
            dev,
            a.as_ptr(),
            b.as_ptr(),
            c.as_ptr(),
            n,
            lg_domain,
            &z_inv as *const Scalar as *const ffi::FrBits,
            domain - 1,
            &mut handle,
            &mut times,
        )
    })?;
    let h = DeviceScalars::from_raw(handle, device_id, domain - 1, domain)?;
    let t = HTimings { upload: times.upload_ms as f64 / 1e3, ntt: times.ntt_ms as f64 / 1e3 };
    Ok((h, t))
}

/// [`compute_h_device`] with the coefficients brought back to the host.
pub fn compute_h(device_id: usize, a: &[Scalar], b: &[Scalar], c: &[Scalar], lg_domain: u32) -> Result<Vec<Scalar>> {
    compute_h_device(device_id, a, b, c, lg_domain)?.0.to_host()
}

/// 1 / (g^N − 1): Z on the coset is this single constant.
fn z_inv_on_coset(lg_domain: u32) -> Scalar {
    let z = Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([1u64 << lg_domain]) - Scalar::ONE;
    z.invert().unwrap()
}
