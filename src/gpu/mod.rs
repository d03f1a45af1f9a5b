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

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{Field, PrimeField};
use std::ffi::c_void;
use std::ops::Range;
use std::ptr::NonNull;

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
        Err(GpuError {
            code: err.code,
            message: String::from(&err),
        })
    }
}

fn invalid(message: impl Into<String>) -> GpuError {
    GpuError {
        code: -1,
        message: message.into(),
    }
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
    let mut c = ffi::GpuInfoC {
        cuda_id: 0,
        sm_count: 0,
        major: 0,
        minor: 0,
        total_bytes: 0,
        free_bytes: 0,
        name: [0; 256],
    };
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
            /// Uploads `bases` to `device_id`.
            pub fn new(device_id: usize, bases: &[$affine]) -> Result<Self> {
                let dev = device_arg(device_id)?;
                let mut handle: *mut c_void = std::ptr::null_mut();
                check(unsafe { ffi::$new(dev, bases.as_ptr(), bases.len(), &mut handle) })?;
                let handle = NonNull::new(handle).ok_or_else(|| invalid("null bases handle"))?;
                Ok(Self {
                    handle,
                    device_id,
                    len: bases.len(),
                })
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
            /// Montgomery form, `scalars.len() == range.len()`.
            pub fn msm(&self, range: Range<usize>, scalars: &[Scalar]) -> Result<$proj> {
                if range.start > range.end || range.end > self.len {
                    return Err(invalid(format!(
                        "MSM range {range:?} outside {} resident bases",
                        self.len
                    )));
                }
                if scalars.len() != range.len() {
                    return Err(invalid(format!(
                        "{} scalars for {} bases",
                        scalars.len(),
                        range.len()
                    )));
                }
                let mut out = <$proj as group::Group>::identity();
                check(unsafe {
                    ffi::$msm(
                        self.handle.as_ptr(),
                        range.start,
                        range.len(),
                        scalars.as_ptr(),
                        &mut out,
                    )
                })?;
                Ok(out)
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                unsafe { ffi::$free(self.handle.as_ptr()) }
            }
        }

        /// Σ scalars[i] · bases[i] with the bases streamed from host memory
        /// (the fallback when they do not fit on the device).
        pub fn $host_fn(device_id: usize, bases: &[$affine], scalars: &[Scalar]) -> Result<$proj> {
            let dev = device_arg(device_id)?;
            if scalars.len() != bases.len() {
                return Err(invalid(format!(
                    "{} scalars for {} bases",
                    scalars.len(),
                    bases.len()
                )));
            }
            let mut out = <$proj as group::Group>::identity();
            check(unsafe {
                ffi::$host_msm(dev, bases.as_ptr(), bases.len(), scalars.as_ptr(), &mut out)
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

/// The Groth16 H polynomial, exactly as bellperson's `execute_fft`:
/// a, b, c (evaluations, `len <= 2^lg_domain`, all the same length) are
/// zero-padded to the domain, interpolated, evaluated on the coset
/// `7·<omega>`, combined as `(a·b − c) / Z` with `Z = g^N − 1`, and
/// interpolated back. Returns the first `2^lg_domain − 1` coefficients (the
/// length of the H query).
pub fn compute_h(
    device_id: usize,
    a: &[Scalar],
    b: &[Scalar],
    c: &[Scalar],
    lg_domain: u32,
) -> Result<Vec<Scalar>> {
    if lg_domain == 0 || lg_domain > MAX_LG_DOMAIN {
        return Err(invalid(format!("lg_domain {lg_domain} outside 1..={MAX_LG_DOMAIN}")));
    }
    let mut out = vec![Scalar::ZERO; (1usize << lg_domain) - 1];
    compute_h_into(device_id, a, b, c, lg_domain, &mut out)?;
    Ok(out)
}

/// [`compute_h`] into a caller buffer: `out.len() <= 2^lg_domain`, its first
/// `out.len()` coefficients are written.
pub fn compute_h_into(
    device_id: usize,
    a: &[Scalar],
    b: &[Scalar],
    c: &[Scalar],
    lg_domain: u32,
    out: &mut [Scalar],
) -> Result<()> {
    let dev = device_arg(device_id)?;
    if lg_domain == 0 || lg_domain > MAX_LG_DOMAIN {
        return Err(invalid(format!("lg_domain {lg_domain} outside 1..={MAX_LG_DOMAIN}")));
    }
    let domain = 1usize << lg_domain;
    let n = a.len();
    if b.len() != n || c.len() != n {
        return Err(invalid(format!(
            "a, b, c lengths differ: {}, {}, {}",
            a.len(),
            b.len(),
            c.len()
        )));
    }
    if n > domain || out.len() > domain {
        return Err(invalid(format!(
            "{n} evaluations / {} outputs for a domain of {domain}",
            out.len()
        )));
    }
    let z_inv = z_inv_on_coset(lg_domain);
    check(unsafe {
        ffi::cuzk_compute_h(
            dev,
            a.as_ptr(),
            b.as_ptr(),
            c.as_ptr(),
            n,
            lg_domain,
            &z_inv as *const Scalar as *const ffi::FrBits,
            out.as_mut_ptr(),
            out.len(),
        )
    })
}

/// 1 / (g^N − 1): Z on the coset is this single constant.
fn z_inv_on_coset(lg_domain: u32) -> Scalar {
    let z = Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([1u64 << lg_domain]) - Scalar::ONE;
    z.invert().unwrap()
}
