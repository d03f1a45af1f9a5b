//! `cuzk_mem_stats`: what memory the process and the library hold.

use super::boundary::arg_out;
use super::status::{cuzk_error, cuzk_status, cuzk_status::*, Failure};
use crate::mem;

/// The process's memory, from the kernel (`/proc/self/status`) and from the
/// library's own accounting. All sizes in bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct cuzk_mem_stats {
    /// Resident set size now (VmRSS).
    pub rss_bytes: u64,
    /// Peak resident set since start or the last `cuzk_mem_reset_peak` (VmHWM).
    pub peak_rss_bytes: u64,
    /// Resident anonymous memory (heap, stacks): RssAnon.
    pub rss_anon_bytes: u64,
    /// Resident file-backed memory (mapped PCE files, the binary): RssFile.
    pub rss_file_bytes: u64,
    /// PCE bytes in anonymous memory.
    pub pce_bytes: u64,
    /// PCE bytes mapped from `.pce` files (page cache, shared, reclaimable).
    pub pce_mapped_bytes: u64,
    /// Groth16 parameters (SRS) held resident.
    pub srs_bytes: u64,
    /// Witnesses of proofs in flight, and witness buffers engines keep for
    /// the next proofs (`cuzk_mem_trim` frees those).
    pub witness_bytes: u64,
    /// a, b, c evaluations of proofs in flight on the CPU backend, and their
    /// buffers kept for the next proofs (a GPU evaluates them on the device:
    /// none on the host).
    pub abc_bytes: u64,
    /// Device memory in use on all GPUs together (resident SRS and PCE copies,
    /// proofs' buffers).
    pub gpu_bytes: u64,
    /// 1 when `cuzk_mem_reset_peak` works on this system, else 0.
    pub peak_reset_supported: u32,
    /// Zero.
    pub _reserved: u32,
}

impl From<mem::MemStats> for cuzk_mem_stats {
    fn from(m: mem::MemStats) -> Self {
        cuzk_mem_stats {
            rss_bytes: m.rss_bytes,
            peak_rss_bytes: m.peak_rss_bytes,
            rss_anon_bytes: m.rss_anon_bytes,
            rss_file_bytes: m.rss_file_bytes,
            pce_bytes: m.pce_bytes,
            pce_mapped_bytes: m.pce_mapped_bytes,
            srs_bytes: m.srs_bytes,
            witness_bytes: m.witness_bytes,
            abc_bytes: m.abc_bytes,
            gpu_bytes: m.gpu_bytes,
            peak_reset_supported: m.peak_reset_supported as u32,
            _reserved: 0,
        }
    }
}

/// Fills `out` (caller-owned, written only on success) with current memory
/// figures. Cheap (reads `/proc/self/status`); never fails on a system
/// without some figure (it reads as 0). Thread-safety: safe from many threads
/// at once.
#[no_mangle]
pub unsafe extern "C" fn cuzk_mem_stats(out: *mut cuzk_mem_stats, err: *mut cuzk_error) -> cuzk_status {
    ffi_boundary!(err, {
        let out = arg_out(out, "out")?;
        out.write(mem::stats().into());
        Ok(())
    })
}

/// Resets the peak RSS (VmHWM) to the current RSS. `CUZK_UNSUPPORTED` where
/// the kernel or container refuses (then `peak_reset_supported` reads 0).
/// Process-wide: affects every thread's view of the peak.
#[no_mangle]
pub unsafe extern "C" fn cuzk_mem_reset_peak(err: *mut cuzk_error) -> cuzk_status {
    ffi_boundary!(err, { mem::reset_peak().map_err(|e| Failure::new(CUZK_UNSUPPORTED, e.to_string())) })
}

/// Frees the buffers engines keep from finished proofs for the next ones
/// (freed anyway after a minute unused, or when a reservation needs their
/// room), the GPU copies of parameters no handle or proof holds any more and
/// those of PCEs no proof is using now (the next proof remakes them), gives
/// the device memory the GPUs' pools keep of freed proof buffers back
/// to the driver (free again in `nvidia-smi`), then returns freed heap memory
/// to the kernel (`malloc_trim`; a no-op outside glibc). Always `CUZK_OK` unless a panic is caught. Safe from any
/// thread.
#[no_mangle]
pub unsafe extern "C" fn cuzk_mem_trim(err: *mut cuzk_error) -> cuzk_status {
    ffi_boundary!(err, {
        crate::engine::drop_idle_buffers();
        crate::params::srs::release_unused_device_copies();
        crate::pce::registry::drop_unused_device_copies();
        crate::gpu::trim_pools();
        mem::trim();
        Ok(())
    })
}
