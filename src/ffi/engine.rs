//! `cuzk_engine` (many proofs in flight inside a memory budget, on the
//! configured devices).

use std::sync::{Arc, Mutex};

use super::boundary::{arg_opt_out, arg_opt_ref, arg_out};
use super::device::{cuzk_backend, device_present};
use super::handles::Handles;
use super::params::cuzk_params;
use super::pce::cuzk_pce;
use super::status::{cuzk_error, cuzk_status, cuzk_status::*, Failure, FfiResult};
use crate::engine::{BudgetSpec, Engine, EngineConfig, SYNTHESIS_NICE};
use crate::groth16::Backend;

/// Prove on the CPU only, even where GPUs are present. A flag of
/// `cuzk_engine_config`.
pub const CUZK_ENGINE_CPU_ONLY: u32 = 1;

/// Leave the synthesis threads at the priority of the thread that creates
/// the engine. Without it they run at nice +10 (relative to it), so the
/// backend's short host steps never wait behind them; set it where other
/// processes at the default priority would starve them. A flag of
/// `cuzk_engine_config`.
pub const CUZK_ENGINE_SYNTHESIS_FULL_PRIORITY: u32 = 2;

/// Keep no slice of the budget for critical requests (`CUZK_PRIORITY_CRITICAL`):
/// throughput work may take all of it, and a critical request may then wait for
/// memory. A flag of `cuzk_engine_config`.
pub const CUZK_ENGINE_NO_CRITICAL_RESERVE: u32 = 4;

/// Leave the host process's malloc as it is. Without it, making an engine
/// (the default engine too) fixes glibc's mmap threshold at 128 KiB, glibc's
/// own starting value, for the whole process, once
/// (`mallopt(M_MMAP_THRESHOLD)`), so that blocks of 128 KiB and more — the
/// proofs' buffers among them, the host's own too — are given back to the
/// kernel when freed. With it, glibc keeps adjusting its
/// threshold and may keep freed proof buffers in its arenas: the budget
/// cannot count on freed memory being returned, and RSS may exceed
/// `cuzk_engine_predicted_peak` by a buffer per synthesis thread. A flag of
/// `cuzk_engine_config`.
pub const CUZK_ENGINE_KEEP_MALLOC: u32 = 8;

/// Host bytes left free when the budget is derived from the available memory
/// and `cuzk_engine_config::budget_margin` is 0.
pub const CUZK_DEFAULT_BUDGET_MARGIN: u64 = 4 << 30;

/// How an engine proves. Read during `cuzk_engine_new` only.
///
/// A zero-initialised config is valid and is the default: a witness and an
/// SpMV thread per core (at nice +10), every CUDA device (the CPU when there
/// is none), one backend worker per device, a budget of the available memory
/// at creation (`MemAvailable`, or the room under a memory cgroup's limit —
/// a container's, its clean page cache counted as room — where that is less)
/// minus `CUZK_DEFAULT_BUDGET_MARGIN`.
/// Where `/proc/meminfo` has no `MemAvailable`, a zero `budget_bytes` is
/// `CUZK_IO`: give the budget in bytes. Of the budget, 1 GiB (at most an
/// eighth) is kept for critical requests.
///
/// Every engine of the process (the default one a NULL engine argument makes
/// included) draws from one ceiling: the memory available when the first
/// engine was made. Each stays inside its own budget, and all together
/// inside the ceiling: a request that fits its engine's budget but not what
/// other engines leave under the ceiling waits; one the ceiling could never
/// hold is `CUZK_OVER_BUDGET`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cuzk_engine_config {
    /// Threads for witness generation, and as many again for SpMV (two
    /// pools, so that no SpMV waits behind a witness); 0: one per core each.
    /// More than 4 per core is `CUZK_INVALID_ARGUMENT`.
    pub synthesis_threads: u32,
    /// Backend-stage workers per device (proofs on one GPU at once); 0: 1.
    /// More than 4 per core is `CUZK_INVALID_ARGUMENT`.
    pub workers_per_device: u32,
    /// The CUDA device ids to use, `num_devices` of them, borrowed for the
    /// call. `(NULL, 0)`: every device. Listing devices does not keep the
    /// others untouched: the first proof on any GPU starts the GPU layer
    /// (sppark's device registry), which makes a CUDA context, with its
    /// streams, on every usable GPU of the process, and the first H
    /// computation puts NTT twiddle tables (about 32 MiB) on each. Hide
    /// GPUs from the process (`CUDA_VISIBLE_DEVICES`) to keep them free.
    pub devices: *const u32,
    pub num_devices: usize,
    /// Host bytes the proofs in flight may hold together; 0: the available
    /// memory at creation (see above) minus `budget_margin`.
    pub budget_bytes: u64,
    /// With `budget_bytes` = 0, the bytes to leave free; 0:
    /// `CUZK_DEFAULT_BUDGET_MARGIN`.
    pub budget_margin: u64,
    /// `CUZK_ENGINE_*` flags.
    pub flags: u32,
    /// Must be zero.
    pub _reserved0: u32,
    /// Bytes of the budget only critical requests (`CUZK_PRIORITY_CRITICAL`)
    /// may take, so that one never waits for memory throughput work holds:
    /// make it at least one critical proof's footprint
    /// (`cuzk_engine_footprint`). 0: 1 GiB, at most an eighth of the budget
    /// (none with `CUZK_ENGINE_NO_CRITICAL_RESERVE`). Above the budget is
    /// `CUZK_INVALID_ARGUMENT`.
    pub critical_reserve_bytes: u64,
    /// Must be zero: room for later fields without breaking the ABI.
    pub reserved: [u64; 3],
}

/// An engine (opaque): pools of synthesis threads, per-device backend
/// workers and a memory budget shared by every proof it runs. Thread-safe:
/// one engine serves any number of concurrent `cuzk_prove` calls. Free it
/// with `cuzk_engine_free` after its last use; proofs in flight keep it alive.
pub struct cuzk_engine {
    pub(crate) engine: Arc<Engine>,
}

/// The live `cuzk_engine` handles.
pub(crate) static ENGINES: Handles<cuzk_engine> = Handles::new();

/// An engine's budget now.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct cuzk_engine_stats {
    /// The whole budget, bytes.
    pub budget_bytes: u64,
    /// Reserved by proofs in flight now.
    pub budget_used: u64,
    /// The most ever reserved at once, with the buffers the engine keeps from
    /// finished proofs for the next ones (they count against the budget too).
    pub budget_peak: u64,
    /// Requests waiting for budget now.
    pub waiting: u64,
    /// Devices of this engine (entries of `cuzk_engine_devices`).
    pub num_devices: u32,
    /// Backend workers per device.
    pub workers_per_device: u32,
}

/// What one device of an engine has done (filled by `cuzk_engine_devices`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct cuzk_device_stats {
    /// `CUZK_BACKEND_CPU` or `CUZK_BACKEND_CUDA`.
    pub backend: u32,
    /// The CUDA device id (0 for the CPU).
    pub device: u32,
    /// Workers running a backend stage now.
    pub in_use: u32,
    /// 1 while the device is in rotation for automatic requests; 0 after
    /// three device errors in a row, for a minute: then automatic requests
    /// probe it again (a success, or one of a request naming it, brings it
    /// back). `in_use` counts its express worker too.
    pub healthy: u32,
    /// Backend stages that succeeded / failed.
    pub proofs: u64,
    pub failures: u64,
    /// Seconds with at least one backend stage running; divided by the wall
    /// time of a run it is the device's busy fraction.
    pub busy_seconds: f64,
    /// Device memory now (cudaMemGetInfo); 0 for the CPU.
    pub vram_free: u64,
    pub vram_total: u64,
}

impl cuzk_engine_config {
    /// The safe config.
    ///
    /// # Safety
    /// `devices` is NULL or points to `num_devices` readable ids.
    unsafe fn to_config(self) -> FfiResult<EngineConfig> {
        if self._reserved0 != 0 || self.reserved.iter().any(|&v| v != 0) {
            return Err(Failure::new(CUZK_INVALID_ARGUMENT, "config.reserved fields must be zero"));
        }
        let known = CUZK_ENGINE_CPU_ONLY
            | CUZK_ENGINE_SYNTHESIS_FULL_PRIORITY
            | CUZK_ENGINE_NO_CRITICAL_RESERVE
            | CUZK_ENGINE_KEEP_MALLOC;
        if self.flags & !known != 0 {
            return Err(Failure::new(CUZK_INVALID_ARGUMENT, format!("unknown engine flags {:#x}", self.flags)));
        }
        let ids = super::boundary::arg_slice(self.devices, self.num_devices, "config.devices")?;
        let devices = if self.flags & CUZK_ENGINE_CPU_ONLY != 0 {
            if !ids.is_empty() {
                return Err(Failure::new(CUZK_INVALID_ARGUMENT, "CUZK_ENGINE_CPU_ONLY with devices listed"));
            }
            Some(vec![])
        } else if ids.is_empty() {
            None
        } else {
            Some(ids.to_vec())
        };
        let budget = match self.budget_bytes {
            0 => BudgetSpec::Available {
                margin: if self.budget_margin == 0 { CUZK_DEFAULT_BUDGET_MARGIN } else { self.budget_margin },
            },
            b => BudgetSpec::Bytes(b),
        };
        let critical_reserve = match (self.flags & CUZK_ENGINE_NO_CRITICAL_RESERVE != 0, self.critical_reserve_bytes) {
            (false, 0) => None,
            (false, r) => Some(r),
            (true, 0) => Some(0),
            (true, _) => {
                return Err(Failure::new(
                    CUZK_INVALID_ARGUMENT,
                    "CUZK_ENGINE_NO_CRITICAL_RESERVE with critical_reserve_bytes set",
                ))
            }
        };
        Ok(EngineConfig {
            synthesis_threads: self.synthesis_threads as usize,
            synthesis_nice: if self.flags & CUZK_ENGINE_SYNTHESIS_FULL_PRIORITY != 0 { 0 } else { SYNTHESIS_NICE },
            devices,
            workers_per_device: self.workers_per_device.max(1) as usize,
            budget,
            critical_reserve,
            tune_malloc: self.flags & CUZK_ENGINE_KEEP_MALLOC == 0,
            ..EngineConfig::default()
        })
    }
}

/// Makes an engine; fails if a listed device is not present (`CUZK_NO_SUCH_DEVICE`).
pub fn new_engine(cfg: EngineConfig) -> FfiResult<Arc<Engine>> {
    for &id in cfg.devices.iter().flatten() {
        device_present(id)?;
    }
    Ok(Arc::new(Engine::new(cfg)?))
}

/// The engine `cuzk_prove` uses when given none: made with the default config
/// on first use and kept for the life of the process.
pub fn default_engine() -> FfiResult<Arc<Engine>> {
    static DEFAULT: Mutex<Option<Arc<Engine>>> = Mutex::new(None);
    let mut slot = DEFAULT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = slot.as_ref() {
        return Ok(e.clone());
    }
    let e = new_engine(EngineConfig::default())?;
    *slot = Some(e.clone());
    Ok(e)
}

/// The engine behind a handle, or the default engine for none (a NULL
/// handle, checked by `arg_opt_ref`).
pub(crate) fn engine_or_default(engine: Option<&cuzk_engine>) -> FfiResult<Arc<Engine>> {
    match engine {
        Some(h) => Ok(h.engine.clone()),
        None => default_engine(),
    }
}

/// The engine behind a caller's handle, or the default engine for NULL.
fn engine_of(engine: *const cuzk_engine) -> FfiResult<Arc<Engine>> {
    engine_or_default(ENGINES.get_opt(engine, "engine")?.as_deref())
}

/// Creates an engine.
///
/// What it does to the host process: unless `CUZK_ENGINE_KEEP_MALLOC` is
/// set, it fixes glibc's mmap threshold at 128 KiB for the whole process (once;
/// the host's own blocks of that size are then mapped and unmapped too);
/// its synthesis threads run at nice +10 unless
/// `CUZK_ENGINE_SYNTHESIS_FULL_PRIORITY`. Devices are checked by their
/// attributes alone: no CUDA context is created here.
///
/// - `config`: NULL for the defaults (see `cuzk_engine_config`), else read
///   during the call only.
/// - `out`: on success receives a new handle the caller owns and frees with
///   `cuzk_engine_free`; untouched on failure.
/// - `err`: NULL or a caller-owned `cuzk_error`, always written.
///
/// Errors: `CUZK_NULL_ARGUMENT`, `CUZK_INVALID_ARGUMENT` (reserved fields,
/// flags), `CUZK_NO_SUCH_DEVICE`, `CUZK_IO` (`/proc/meminfo` unreadable).
/// Thread-safety: safe from many threads at once.
#[no_mangle]
pub unsafe extern "C" fn cuzk_engine_new(
    config: *const cuzk_engine_config,
    out: *mut *mut cuzk_engine,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let out = arg_out(out, "out")?;
        let cfg = match arg_opt_ref(config, "config")? {
            Some(c) => c.to_config()?,
            None => EngineConfig::default(),
        };
        let engine = new_engine(cfg)?;
        out.write(ENGINES.insert(cuzk_engine { engine }));
        Ok(())
    })
}

/// Frees an engine handle. Proofs still running on it finish first (they hold
/// their own reference). Call once per handle; NULL, or a handle already
/// freed, is a no-op, and later calls with it get `CUZK_INVALID_HANDLE`.
#[no_mangle]
pub unsafe extern "C" fn cuzk_engine_free(engine: *mut cuzk_engine) {
    ffi_boundary!(value_on_panic: (), {
        ENGINES.remove(engine);
    })
}

/// Fills `out` with the engine's budget figures. `engine` NULL: the default
/// engine (made if needed). `out` is caller-owned, written only on success.
/// It queries no device (no CUDA context is made).
/// Thread-safety: safe from many threads at once, beside proofs.
#[no_mangle]
pub unsafe extern "C" fn cuzk_engine_stats(
    engine: *const cuzk_engine,
    out: *mut cuzk_engine_stats,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let out = arg_out(out, "out")?;
        let e = engine_of(engine)?;
        let b = e.budget();
        out.write(cuzk_engine_stats {
            budget_bytes: b.total(),
            budget_used: b.held(),
            budget_peak: b.peak_used(),
            waiting: b.waiting() as u64,
            num_devices: e.backends().len() as u32,
            workers_per_device: e.workers_per_device() as u32,
        });
        Ok(())
    })
}

/// Writes the stats of the engine's devices (in the order they were
/// configured) to the caller's array `out` of `cap` entries: the first
/// `min(cap, devices)` are written and `len` receives the number of devices
/// (so `(NULL, 0)` asks how many). `engine` NULL: the default engine.
/// Reading a GPU's free memory needs its CUDA context: this makes the
/// primary context of each of the engine's own GPUs that has none yet (no
/// other GPU's), and leaves the calling thread's current device as it was.
/// The devices' memory is read after their counters, with nothing held that
/// proofs wait for: polling this never stalls them.
/// Thread-safety: safe from many threads at once, beside proofs.
#[no_mangle]
pub unsafe extern "C" fn cuzk_engine_devices(
    engine: *const cuzk_engine,
    out: *mut cuzk_device_stats,
    cap: usize,
    len: *mut usize,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let len = arg_out(len, "len")?;
        let out = match arg_opt_out(out, "out")? {
            Some(out) => out,
            None if cap > 0 => return Err(Failure::new(CUZK_NULL_ARGUMENT, "out is NULL with cap > 0")),
            None => out,
        };
        let e = engine_of(engine)?;
        let devices = e.device_stats();
        for (i, d) in devices.iter().take(cap).enumerate() {
            let (backend, device) = match d.backend {
                Backend::Cuda(id) => (cuzk_backend::CUZK_BACKEND_CUDA as u32, id),
                _ => (cuzk_backend::CUZK_BACKEND_CPU as u32, 0),
            };
            out.add(i).write(cuzk_device_stats {
                backend,
                device,
                in_use: d.in_use as u32,
                healthy: d.healthy as u32,
                proofs: d.proofs,
                failures: d.failures,
                busy_seconds: d.busy_seconds,
                vram_free: d.vram_free,
                vram_total: d.vram_total,
            });
        }
        len.write(devices.len());
        Ok(())
    })
}

/// Makes the engine's devices ready to prove `pce`'s circuit with `params`:
/// the parameters (where they fit) and the PCE's matrices are uploaded to
/// every GPU of the engine now, and each GPU's memory pool is grown by one
/// proof's working set, not by the first proof on each, which is then as fast
/// as the next ones; on the CPU there is nothing to do. Returns once done (it
/// waits while proofs in flight leave a GPU too little room, and for
/// parameters still being decoded after `CUZK_PARAMS_LOAD_BACKGROUND`: call
/// it from a thread of its own then, and proofs started meanwhile make their
/// witnesses while it waits and uploads). The handles are borrowed for the
/// call; `engine` NULL: the default engine.
///
/// Errors: `CUZK_NULL_ARGUMENT`, `CUZK_PARAMS_MISMATCH` (not the PCE's
/// circuit's parameters), `CUZK_TOO_LARGE` (a GPU could not hold one proof
/// of this circuit), `CUZK_GPU`, `CUZK_BAD_PARAMS_FILE` (a bad point of
/// parameters loaded in the background).
#[no_mangle]
pub unsafe extern "C" fn cuzk_engine_prepare(
    engine: *const cuzk_engine,
    pce: *const cuzk_pce,
    params: *const cuzk_params,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let pce = super::pce::HANDLES.get(pce, "pce")?;
        let params = super::params::HANDLES.get(params, "params")?;
        Ok(engine_of(engine)?.prepare(&pce.pce, &params.params)?)
    })
}

/// Writes to `out` the host bytes one proof of `pce`'s circuit holds at its
/// peak (witness, a/b/c and H buffers, from the PCE's dimensions); the budget
/// must hold at least this much. The a/b/c part is reserved only while the
/// proof holds them, by at most two proofs per device at once. A PoRep request reserves this per partition in
/// flight. `engine` NULL: the default engine.
#[no_mangle]
pub unsafe extern "C" fn cuzk_engine_footprint(
    engine: *const cuzk_engine,
    pce: *const cuzk_pce,
    out: *mut u64,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let pce = super::pce::HANDLES.get(pce, "pce")?;
        let out = arg_out(out, "out")?;
        out.write(engine_of(engine)?.footprint(&pce.pce));
        Ok(())
    })
}

/// Writes to `out` the peak RSS the engine predicts with `in_flight` proofs
/// of `pce`'s circuit at once: the process's RSS now (call it once the engine
/// is warm: PCE and parameters loaded, one proof done, so the GPU context and
/// resident SRS are counted; less the buffers the engine keeps for reuse),
/// plus `in_flight` footprints without a/b/c, plus a/b/c for at most two
/// proofs per device (the engine lets no more hold them at once). `engine`
/// NULL: the default engine.
#[no_mangle]
pub unsafe extern "C" fn cuzk_engine_predicted_peak(
    engine: *const cuzk_engine,
    pce: *const cuzk_pce,
    in_flight: u32,
    out: *mut u64,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let pce = super::pce::HANDLES.get(pce, "pce")?;
        let out = arg_out(out, "out")?;
        let engine = engine_of(engine)?;
        out.write(engine.predicted_peak_now(&pce.pce, in_flight as usize));
        Ok(())
    })
}
