//! Device discovery, and the checked device ids the C entry points take.

use std::sync::Mutex;

use super::error::{check, GpuError, Result};
use super::ffi;
use super::turns::Urgency;
use crate::mem::{Owner, Tracked};

/// `device_id` as the C entry points take it, or an error if it is not a
/// usable device.
pub(super) fn c_device(device_id: usize) -> Result<i32> {
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
/// launch), from their attributes alone: no CUDA context is made. 0 when
/// there is no GPU or no driver, and when enumeration failed ([`discovery`] says why).
pub fn device_count() -> usize {
    discovery().as_ref().map_or(0, |&n| n)
}

/// The GPUs found, once per process: their number, or why none can be used although the
/// machine has some (the CUDA runtime failed to enumerate them, or one of them is in
/// prohibited compute mode: sppark's registry opens every GPU at once and fails on one it
/// cannot open, so then no GPU is used rather than a registry that fails on every proof).
pub fn discovery() -> &'static std::result::Result<usize, String> {
    static FOUND: std::sync::OnceLock<std::result::Result<usize, String>> = std::sync::OnceLock::new();
    FOUND.get_or_init(|| {
        let (mut n, mut count_err, mut prohibited) = (0usize, 0i32, -1i32);
        // SAFETY: the C side writes one `size_t` and two `int`s through the pointers, which
        // point to live locals, and keeps nothing.
        check(unsafe { ffi::cuzk_gpu_count(&mut n, &mut count_err, &mut prohibited) })
            .map_err(|e| e.to_string())
            .and_then(|()| super::enumeration::judge_enumeration(n, count_err, prohibited))
    })
}

/// One usable GPU. `free_bytes` is a snapshot (cudaMemGetInfo).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The `device_id` the wrappers of this module take.
    pub id: usize,
    /// The CUDA runtime's ordinal (differs from `id` if a GPU was skipped).
    pub cuda_id: i32,
    pub name: String,
    pub sm_count: u32,
    pub compute_capability: (u32, u32),
    pub total_bytes: u64,
    pub free_bytes: u64,
}

/// Describes one device, with its current free memory (read on a thread of
/// its own: this makes the device's primary context if there is none, on no
/// other device, and leaves the calling thread's current device as it was).
pub fn device_info(device_id: usize) -> Result<DeviceInfo> {
    let c_id = c_device(device_id)?;
    let mut info =
        ffi::GpuInfoC { cuda_id: 0, sm_count: 0, major: 0, minor: 0, total_bytes: 0, free_bytes: 0, name: [0; 256] };
    // SAFETY: `info` is a live local of the `repr(C)` mirror of
    // `cuzk_gpu_info_t`; the C side writes its fields, the name at most 255
    // bytes plus a NUL, and keeps no pointer.
    check(unsafe { ffi::cuzk_gpu_info(c_id, &mut info) })?;
    let len = info.name.iter().position(|&b| b == 0).unwrap_or(info.name.len());
    Ok(DeviceInfo {
        id: device_id,
        cuda_id: info.cuda_id,
        name: String::from_utf8_lossy(&info.name[..len]).into_owned(),
        sm_count: info.sm_count as u32,
        compute_capability: (info.major as u32, info.minor as u32),
        total_bytes: info.total_bytes as u64,
        free_bytes: info.free_bytes as u64,
    })
}

/// Free and total memory of CUDA device `id`, now (cudaMemGetInfo).
pub fn device_memory(id: u32) -> crate::Result<(u64, u64)> {
    let d = device_info(id as usize)?;
    Ok((d.free_bytes, d.total_bytes))
}

/// Device memory a new buffer of a proof could take on device `id` now: the driver's free
/// memory plus what the device's pool keeps of buffers freed before (every other process's
/// use counted as taken).
pub fn room(id: usize) -> Result<u64> {
    let c_id = c_device(id)?;
    let mut bytes = 0usize;
    // SAFETY: the C side writes one `size_t` (= usize) through the pointer, which points to a
    // live local, and keeps nothing.
    check(unsafe { ffi::cuzk_gpu_room(c_id, &mut bytes) })?;
    Ok(bytes as u64)
}

/// Grows device `id`'s memory pool by `bytes` of free memory it keeps, so that a first proof's
/// buffers are not the ones the driver maps fresh memory for. The caller holds room for them
/// (`device_room`): the bytes are free again, in the pool, when this returns.
pub fn warm_pool(id: usize, bytes: u64) -> Result<()> {
    let c_id = c_device(id)?;
    // SAFETY: a plain call on a device id the C side checks; no pointers.
    check(unsafe { ffi::cuzk_gpu_warm(c_id, bytes as usize) })
}

/// The most bytes proofs' device buffers held at once on device `id` since the count was last
/// reset (`reset`: a new count starts now). The SRS and the PCE's matrices are not in it, so
/// with one proof at a time it is that proof's device working set, measured.
pub fn pool_peak(id: usize, reset: bool) -> crate::Result<u64> {
    let c_id = c_device(id)?;
    let mut bytes = 0usize;
    // SAFETY: the C side writes one `size_t` (= usize) through the pointer, which points to a
    // live local, and keeps nothing.
    check(unsafe { ffi::cuzk_gpu_pool_peak(c_id, reset, &mut bytes) })?;
    Ok(bytes as u64)
}

/// All usable devices; empty without a GPU.
pub fn devices() -> Vec<DeviceInfo> {
    (0..device_count()).filter_map(|i| device_info(i).ok()).collect()
}

/// The C lane (cuda/common.cuh: `lane_t`) a stage of `urgency` runs its device work on: the
/// shared throughput lane, or the device's express lane (its own streams at the highest
/// priority, host threads and staging) for critical stages.
pub(super) fn c_lane(urgency: Urgency) -> i32 {
    match urgency {
        Urgency::Throughput => 0,
        Urgency::Critical => 1,
    }
}

/// Pinned host memory of each device lane's upload staging, accounted once per device and
/// lane (it is allocated on the lane's first upload and kept).
static STAGING: Mutex<Vec<(i32, i32, Tracked)>> = Mutex::new(Vec::new());

/// Gives back to the driver what the memory pools of the devices proofs have used keep of
/// their freed buffers (devices never used are not touched: no context is made for them).
pub fn trim_pools() {
    let mut used: Vec<i32> = STAGING.lock().unwrap_or_else(|e| e.into_inner()).iter().map(|(id, ..)| *id).collect();
    used.dedup();
    for id in used {
        // SAFETY: a plain call on a device id the C side checks; no pointers.
        if let Err(e) = check(unsafe { ffi::cuzk_gpu_trim(id) }) {
            log::warn!("trimming device {id}'s memory pool: {e}");
        }
    }
}

/// [`c_device`] for a call that uploads on the lane of `urgency` ([`c_lane`]): also makes sure
/// that lane's pinned staging exists and is accounted as host memory.
pub(super) fn c_device_for_upload(device_id: usize, urgency: Urgency) -> Result<i32> {
    let c_id = c_device(device_id)?;
    let lane = c_lane(urgency);
    let mut staging = STAGING.lock().unwrap_or_else(|e| e.into_inner());
    if !staging.iter().any(|&(id, l, _)| (id, l) == (c_id, lane)) {
        let mut bytes = 0usize;
        // SAFETY: the C side writes one `size_t` (= usize) through the
        // pointer, which points to a live local, and keeps nothing.
        check(unsafe { ffi::cuzk_staging_bytes(c_id, lane, &mut bytes) })?;
        // It holds the witnesses (and once each, the SRS and PCE) on their way to the device.
        staging.push((c_id, lane, Tracked::new(Owner::Witness, bytes as u64)));
        staging.sort_by_key(|&(id, l, _)| (id, l));
    }
    Ok(c_id)
}
