//! sppark's NTT constants and the Groth16 H polynomial on a device.

use blstrs::Scalar;
use ff::Field;

use super::device::c_device_for_upload;
use super::error::{check, invalid_argument, Result};
use super::ffi;
use super::scalars::DeviceScalars;

/// Largest NTT domain sppark 0.1.16 is built for (`MAX_LG_DOMAIN_SIZE`).
pub const MAX_LG_DOMAIN: u32 = 28;

/// sppark's NTT constants: the primitive 2^lg_domain-th root of unity and the
/// coset generator. Host constants: needs no GPU.
pub fn ntt_constants(lg_domain: u32) -> Result<(Scalar, Scalar)> {
    let mut omega = Scalar::ZERO;
    let mut g = Scalar::ZERO;
    // SAFETY: the C side writes one `fr_t` (the layout of `Scalar`, pinned in
    // ffi.rs) through each pointer, both to live locals, and keeps nothing.
    check(unsafe { ffi::cuzk_ntt_constants(lg_domain, &mut omega, &mut g) })?;
    Ok((omega, g))
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
/// `g·<omega>` (g = 7), combined as `(a·b − c)·z_inv`, and interpolated
/// back. `z_inv` must be `1 / (g^N − 1)`, the inverse of Z on the coset
/// (`groth16::ntt::z_inv_on_coset`). Its first `2^lg_domain − 1`
/// coefficients (the length of the H query) stay on the device, ready for
/// the H MSM.
pub fn compute_h_device(
    device_id: usize,
    a: &[Scalar],
    b: &[Scalar],
    c: &[Scalar],
    lg_domain: u32,
    z_inv: Scalar,
) -> Result<(DeviceScalars, HTimings)> {
    let c_id = c_device_for_upload(device_id)?;
    if lg_domain == 0 || lg_domain > MAX_LG_DOMAIN {
        return Err(invalid_argument(format!("lg_domain {lg_domain} outside 1..={MAX_LG_DOMAIN}")));
    }
    let domain = 1usize << lg_domain;
    let n = a.len();
    if b.len() != n || c.len() != n {
        return Err(invalid_argument(format!("a, b, c lengths differ: {}, {}, {}", a.len(), b.len(), c.len())));
    }
    if n > domain {
        return Err(invalid_argument(format!("{n} evaluations for a domain of {domain}")));
    }
    let mut handle = std::ptr::null_mut();
    let mut times = ffi::HTimesC::default();
    // SAFETY: `a`, `b` and `c` are valid for `n` scalars each (checked above);
    // the C side reads them before it returns and keeps no pointer to them.
    // `z_inv` is a live local read by value during the call; `Scalar` is
    // `[u64; 4]` underneath, the layout of `fr_bits_t`. `handle` and `times`
    // are live locals that the C side writes (`handle` null on failure).
    check(unsafe {
        ffi::cuzk_compute_h(
            c_id,
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
