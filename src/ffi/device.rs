//! The devices a build can use, and where a proof runs.

use super::boundary::arg_out;
use super::status::{cuzk_error, cuzk_status, cuzk_status::*, Failure, FfiResult};
use crate::gpu;

/// Where a proof runs (values of `cuzk_prove_request::backend`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cuzk_backend {
    /// CUDA device 0 when one is present, else the CPU (the default: 0).
    CUZK_BACKEND_AUTO = 0,
    /// The CPU.
    CUZK_BACKEND_CPU = 1,
    /// The CUDA device `cuzk_prove_request::device`.
    CUZK_BACKEND_CUDA = 2,
}

/// `CUZK_NO_SUCH_DEVICE` when CUDA device `id` is not present.
pub(crate) fn device_present(id: u32) -> FfiResult<()> {
    crate::gpu::check_device(id).map_err(|e| Failure::new(CUZK_NO_SUCH_DEVICE, e.to_string()))
}

/// Writes the number of CUDA devices this build can use (0 without the
/// `cuda` feature, or without a GPU or driver) to `out`. `CUZK_GPU` when the
/// machine's GPUs cannot be used (enumeration failed, or one of them is in
/// prohibited compute mode: then no GPU is used), with the reason in `err`.
/// Thread-safety: safe from many threads at once.
#[no_mangle]
pub unsafe extern "C" fn cuzk_cuda_device_count(out: *mut u32, err: *mut cuzk_error) -> cuzk_status {
    ffi_boundary!(err, {
        let out = arg_out(out, "out")?;
        out.write(gpu::usable_device_count()? as u32);
        Ok(())
    })
}
