//! The layer under the CUDA backend. In every build: the device queries
//! ([`device_count`], [`device_memory`], [`pool_peak`], [`check_device`]) and the
//! devices' turns ([`Turn`]: critical stages first). With the `cuda` feature: device
//! discovery and safe wrappers over the `cuda/` entry points (sppark 0.1.16 MSM and NTT, and
//! our sparse products), on plain slices of `blstrs` scalars and points. Knows nothing of
//! proofs or parameters.
//!
//! Without `cuda` there is no device: [`device_count`] is 0 and the other
//! queries return [`Error::Gpu`] saying the build has no `cuda` feature.
//!
//! The wrappers take an explicit device id (an index into `devices()`) and
//! return `GpuError` on failure, including "no device": nothing here panics
//! or aborts on a CUDA error. Scalars are passed in blstrs' own Montgomery form
//! and points as blstrs lays them out, without re-encoding (see `ffi.rs`).

// The C++ side calls blst (sppark's host field arithmetic); without a Rust
// reference the staticlib would drop blst's symbols.
#[cfg(feature = "cuda")]
extern crate blst;

#[cfg(feature = "cuda")]
mod device;
mod enumeration;
#[cfg(feature = "cuda")]
mod error;
#[cfg(feature = "cuda")]
mod ffi;
#[cfg(feature = "cuda")]
mod fixed_base;
#[cfg(feature = "cuda")]
mod msm;
#[cfg(feature = "cuda")]
mod ntt;
#[cfg(feature = "cuda")]
mod scalars;
mod sharing;
#[cfg(feature = "cuda")]
mod spmv;
#[cfg(not(feature = "cuda"))]
mod stub;
#[cfg(all(test, feature = "cuda"))]
mod tests;
mod turns;

#[cfg(feature = "cuda")]
pub use device::{
    device_count, device_info, device_memory, devices, pool_peak, room, trim_pools, warm_pool, DeviceInfo,
};
#[cfg(feature = "cuda")]
pub use error::{GpuError, Result};
#[cfg(feature = "cuda")]
pub use fixed_base::{fixed_base, fixed_base_table_len, FixedBasePoint};
#[cfg(feature = "cuda")]
pub use msm::{msm_g1_host, msm_g2_host, ResidentG1, ResidentG2};
#[cfg(feature = "cuda")]
pub use ntt::{compute_h, ntt_constants, MAX_LG_DOMAIN};
#[cfg(feature = "cuda")]
pub use scalars::{DeviceScalars, Scalars};
pub use sharing::SharingPolicy;
#[cfg(feature = "cuda")]
pub use spmv::{Csr, DeviceMatrices};
#[cfg(not(feature = "cuda"))]
pub use stub::{device_count, device_memory, no_device, pool_peak, trim_pools};
pub use turns::{Ahead, Turn, Urgency};

use crate::Error;

/// The number of usable GPUs, or `Error::Gpu` saying why the machine's GPUs cannot be used
/// (enumeration failed: see `judge_enumeration`). 0 without the `cuda` feature.
pub fn usable_device_count() -> crate::Result<usize> {
    #[cfg(feature = "cuda")]
    {
        device::discovery().clone().map_err(Error::Gpu)
    }
    #[cfg(not(feature = "cuda"))]
    {
        Ok(0)
    }
}

/// `Err` ([`Error::Gpu`]) saying how many devices there are when CUDA device
/// `id` is not one of them.
pub fn check_device(id: u32) -> crate::Result<()> {
    let n = device_count();
    if id as usize >= n {
        return Err(Error::Gpu(format!(
            "no CUDA device {id} ({n} present{})",
            if cfg!(feature = "cuda") { "" } else { "; built without the cuda feature" }
        )));
    }
    Ok(())
}
