//! The device queries of a build without the `cuda` feature: it has no device.

use crate::{Error, Result};

/// CUDA devices usable by this build: none (built without the `cuda` feature).
pub fn device_count() -> usize {
    0
}

/// Nothing to trim: this build has no CUDA device.
pub fn trim_pools() {}

/// Always `Err`: this build has no CUDA device.
pub fn device_memory(id: u32) -> Result<(u64, u64)> {
    Err(no_device(id))
}

/// Always `Err`: this build has no CUDA device.
pub fn pool_peak(id: usize, _reset: bool) -> Result<u64> {
    Err(no_device(id))
}

/// What every use of device `id` returns in this build.
pub fn no_device(id: impl std::fmt::Display) -> Error {
    Error::Gpu(format!("no CUDA device {id}: built without the cuda feature"))
}
