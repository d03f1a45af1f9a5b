//! How an engine is made: its threads, devices, workers and memory budget.

use crate::gpu::SharingPolicy;
use crate::{Error, Result};

/// The host memory the engine may use for in-flight proofs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetSpec {
    Bytes(u64),
    /// What the process may still take at start-up (`MemAvailable`, or less under a cgroup
    /// limit: `mem::available_bytes`) minus a safety margin.
    Available {
        margin: u64,
    },
}

impl BudgetSpec {
    pub(super) fn bytes(self) -> Result<u64> {
        match self {
            BudgetSpec::Bytes(b) => Ok(b),
            BudgetSpec::Available { margin } => Ok(crate::mem::available_bytes()?.saturating_sub(margin)),
        }
    }
}

#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Threads for witness generation, and as many again for SpMV (0: one
    /// per core each; at most [`super::max_threads`]).
    pub synthesis_threads: usize,
    /// Added to the nice value of the thread that creates the engine, for
    /// the synthesis threads ([`SYNTHESIS_NICE`] by default; 0: the same
    /// priority).
    pub synthesis_nice: i32,
    /// GPUs to use (`None`: all; none present or an empty list: the CPU).
    pub devices: Option<Vec<u32>>,
    /// Backend-stage workers per device (the CPU counts as one device; at
    /// most [`super::max_threads`]).
    pub workers_per_device: usize,
    pub budget: BudgetSpec,
    /// Whether making the engine fixes glibc's mmap threshold for the whole
    /// process ([`crate::mem::unmap_large_frees`]; default true), so that
    /// the buffers the budget counts as freed are given back to the kernel.
    /// False leaves the host's malloc as it is: freed proof buffers may then
    /// stay in malloc's arenas, and RSS exceed the budget's prediction.
    pub tune_malloc: bool,
    /// Bytes of the budget only critical requests may take (`None`: `default_critical_reserve`
    /// of the budget; `Some(0)`: none). Enough for one critical proof's footprint means a
    /// critical request never waits for memory that throughput work holds.
    pub critical_reserve: Option<u64>,
    /// How throughput work shares each GPU with critical work, and the MSMs' windows. Not in
    /// the C header: the defaults are the measured best; benchmarks change them to experiment.
    pub sharing: SharingPolicy,
    /// Replay witnesses from the PCE's witness program where the circuit has one (default
    /// true); false makes every witness by the circuit's gadgets (the benchmarks' comparison
    /// point, and an operator's way back).
    pub witness_program: bool,
}

/// The critical reserve an engine keeps by default: 1 GiB (a 32 GiB WinningPoSt's footprint is
/// a few hundred MB), at most an eighth of the budget.
pub fn default_critical_reserve(budget: u64) -> u64 {
    (1u64 << 30).min(budget / 8)
}

impl EngineConfig {
    /// The critical reserve out of a budget of `total` bytes.
    pub(super) fn critical_reserve_bytes(&self, total: u64) -> Result<u64> {
        match self.critical_reserve {
            None => Ok(default_critical_reserve(total)),
            Some(r) if r > total => {
                Err(Error::InvalidInput(format!("a critical reserve of {r} bytes is above the budget of {total}")))
            }
            Some(r) => Ok(r),
        }
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            synthesis_threads: 0,
            synthesis_nice: SYNTHESIS_NICE,
            devices: None,
            workers_per_device: 1,
            budget: BudgetSpec::Available { margin: 4 << 30 },
            critical_reserve: None,
            tune_malloc: true,
            sharing: SharingPolicy::default(),
            witness_program: true,
        }
    }
}

/// The synthesis threads' default nice value: above the callers' and the
/// backend's, so that the short host steps of a GPU's backend stage (copies
/// into the pinned staging, an MSM's final sums) preempt the synthesis
/// threads, which have slack (a proof's SpMV finishes well before a worker
/// is free for it), instead of leaving the GPU waiting.
pub const SYNTHESIS_NICE: i32 = 10;

/// Adds `nice` to the calling thread's nice value (on Linux a nice value is
/// per thread; raising it needs no privilege, lowering it would).
#[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
pub(super) fn renice_this_thread(nice: i32) {
    #[cfg(target_os = "linux")]
    if nice > 0 {
        // SAFETY: getpriority/setpriority on this thread's own id; no memory
        // is involved. A failure leaves the priority as it was.
        unsafe {
            let tid = libc::gettid() as libc::id_t;
            let now = libc::getpriority(libc::PRIO_PROCESS, tid);
            libc::setpriority(libc::PRIO_PROCESS, tid, now.saturating_add(nice));
        }
    }
}
