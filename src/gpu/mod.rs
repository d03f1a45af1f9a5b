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

mod device;
mod error;
mod ffi;
mod msm;
mod ntt;
mod scalars;
#[cfg(test)]
mod tests;

pub use device::{device_count, device_info, devices, DeviceInfo};
pub use error::{GpuError, Result};
pub use msm::{msm_g1_host, msm_g2_host, ResidentG1, ResidentG2};
pub use ntt::{compute_h, compute_h_device, ntt_constants, HTimings, MAX_LG_DOMAIN};
pub use scalars::{DeviceScalars, Scalars};
