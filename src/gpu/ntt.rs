//! sppark's NTT constants and the Groth16 H polynomial on a device.

use blstrs::Scalar;
use ff::Field;

use super::device::c_device;
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

/// The Groth16 H polynomial, exactly as bellperson's `execute_fft`: `abc`
/// holds a, b, c as evaluations over the domain (`2^lg_domain` values each,
/// zero past the constraints: [`super::DeviceMatrices::eval`] makes them so),
/// on device `device_id`. bellperson interpolates them, evaluates them on the
/// coset `g·<omega>` (g = 7), and interpolates `(a·b − c)·z_inv` back; the
/// same H comes, bit for bit, from `(cosetiNTT(a·b) − iNTT(c))·z_inv`, with
/// c never taken to the coset: six NTTs instead of seven.
/// `z_inv` must be `1 / (g^N − 1)`, the inverse of Z on the coset
/// (`groth16::ntt::z_inv_on_coset`). H's first `2^lg_domain − 1`
/// coefficients (the length of the H query) stay on the device, ready for the
/// H MSM, in a's memory; b and c are freed.
pub fn compute_h(device_id: usize, abc: [DeviceScalars; 3], lg_domain: u32, z_inv: Scalar) -> Result<DeviceScalars> {
    let c_id = c_device(device_id)?;
    if lg_domain == 0 || lg_domain > MAX_LG_DOMAIN {
        return Err(invalid_argument(format!("lg_domain {lg_domain} outside 1..={MAX_LG_DOMAIN}")));
    }
    let domain = 1usize << lg_domain;
    if let Some(v) = abc.iter().find(|v| v.len() != domain || v.device_id() != device_id) {
        return Err(invalid_argument(format!(
            "a, b, c must be {domain} values on device {device_id}, not {} on device {}",
            v.len(),
            v.device_id()
        )));
    }
    let [a, b, c] = abc.map(DeviceScalars::into_raw);
    let mut handle = std::ptr::null_mut();
    // SAFETY: `a`, `b` and `c` are live `dev_vec_t` handles whose ownership
    // passes to the C side here: it frees them (or makes H of a's) on every
    // path. `z_inv` is a live local read by value during the call; `Scalar`
    // is `[u64; 4]` underneath, the layout of `fr_bits_t`. `handle` is a live
    // local the C side writes (null on failure).
    check(unsafe {
        ffi::cuzk_compute_h(
            c_id,
            a,
            b,
            c,
            lg_domain,
            &z_inv as *const Scalar as *const ffi::FrBits,
            domain - 1,
            &mut handle,
        )
    })?;
    DeviceScalars::from_raw(handle, device_id, domain - 1, domain)
}
