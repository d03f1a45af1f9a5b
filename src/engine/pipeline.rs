//! The engine: many proofs at once, each reserving its exact footprint from a
//! memory budget before it allocates; synthesis on a CPU pool, the backend stage
//! gated by a fixed number of workers per device, so the next proof's synthesis
//! overlaps the current one's GPU (or CPU MSM) work.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use bellperson::groth16::{Parameters, Proof};
use bellperson::Circuit;
use blstrs::{Bls12, Scalar};

use super::budget::{CancelToken, MemoryBudget, Priority};
use super::{gpu_count, prove_on, seconds_since, verify_into, Backend, ProveOptions, Timings};
use crate::mem::{Owner, Tracked};
use crate::pce::{evaluate, Pce};
use crate::witness::Witness;
use crate::{Error, Result};

/// The host memory the engine may use for in-flight proofs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetSpec {
    Bytes(u64),
    /// `MemAvailable` at start-up minus a safety margin.
    Available { margin: u64 },
}

impl BudgetSpec {
    fn bytes(self) -> Result<u64> {
        match self {
            BudgetSpec::Bytes(b) => Ok(b),
            BudgetSpec::Available { margin } => {
                let info = std::fs::read_to_string("/proc/meminfo")?;
                let avail = crate::mem::parse_status_field(&info, "MemAvailable");
                Ok(avail.saturating_sub(margin))
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Threads for witness generation and SpMV (0: one per core).
    pub synthesis_threads: usize,
    /// GPUs to use (`None`: all; none present or an empty list: the CPU).
    pub devices: Option<Vec<u32>>,
    /// Backend-stage workers per device (the CPU counts as one device).
    pub workers_per_device: usize,
    pub budget: BudgetSpec,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            synthesis_threads: 0,
            devices: None,
            workers_per_device: 1,
            budget: BudgetSpec::Available { margin: 4 << 30 },
        }
    }
}

/// A counting semaphore for one device's backend workers.
struct Slots {
    backend: Backend,
    free: Mutex<usize>,
    cv: Condvar,
}

impl Slots {
    fn acquire(&self, cancel: &CancelToken) -> Result<SlotGuard<'_>> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            cancel.check()?;
            free = self.cv.wait_timeout(free, std::time::Duration::from_millis(20)).unwrap_or_else(|e| e.into_inner()).0;
        }
        *free -= 1;
        Ok(SlotGuard(self))
    }
    fn free(&self) -> usize {
        *self.free.lock().unwrap_or_else(|e| e.into_inner())
    }
}

struct SlotGuard<'a>(&'a Slots);

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.0.cv.notify_one();
    }
}

/// One proof to make.
pub struct ProofRequest<'a, C> {
    pub pce: &'a Pce,
    pub params: &'a Parameters<Bls12>,
    pub circuit: C,
    /// The statement to verify against (without the ONE); `None`: the witness's inputs.
    pub public_inputs: Option<Vec<Scalar>>,
    pub opts: ProveOptions,
    pub priority: Priority,
    pub cancel: CancelToken,
    /// Called after each stage (for benchmarks that sample memory per stage).
    pub observer: Option<&'a (dyn Fn(Stage) + Sync)>,
}

/// The stages a proof goes through, as reported to an observer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Witness,
    Spmv,
    /// A device worker was acquired: the backend stage starts.
    Backend,
    Prove,
    Verify,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Witness => "witness",
            Stage::Spmv => "spmv",
            Stage::Backend => "backend start",
            Stage::Prove => "prove",
            Stage::Verify => "verify",
        }
    }
}

pub struct Engine {
    budget: Arc<MemoryBudget>,
    synthesis: rayon::ThreadPool,
    devices: Vec<Slots>,
}

/// Host bytes one in-flight proof holds at its peak, from the PCE's exact
/// dimensions. Both backends hold the witness (`32·(inputs + aux)`, allocated
/// once at its final size) and a, b, c. The CPU backend pads a, b, c to the
/// domain in place for its NTTs and holds the domain's twiddle tables
/// (`3·32·m + 32·m`, the peak; the later MSM scalar copies are smaller). The CUDA backend keeps them at `n` rows and receives
/// the `m − 1` H coefficients while they are alive (`3·32·n + 32·m`); the
/// density-selected scalar copies that follow are smaller.
pub fn footprint(pce: &Pce, backend: Backend) -> u64 {
    let witness = 32 * (pce.num_inputs + pce.num_aux) as u64;
    let (n, m) = (pce.num_constraints() as u64, pce.domain_size() as u64);
    match backend {
        Backend::Cuda(_) => witness + 96 * n + 32 * m,
        Backend::Cpu | Backend::Auto => witness + 128 * m,
    }
}

impl Engine {
    pub fn new(cfg: EngineConfig) -> Result<Engine> {
        let synthesis = rayon::ThreadPoolBuilder::new()
            .num_threads(cfg.synthesis_threads)
            .thread_name(|i| format!("cuzk-synth-{i}"))
            .build()
            .map_err(|e| Error::InvalidInput(format!("synthesis pool: {e}")))?;
        let ids: Vec<u32> = match cfg.devices {
            Some(ids) => ids,
            None => (0..gpu_count() as u32).collect(),
        };
        for &id in &ids {
            if id as usize >= gpu_count() {
                return Err(Error::Gpu(format!("no CUDA device {id}")));
            }
        }
        let backends: Vec<Backend> =
            if ids.is_empty() { vec![Backend::Cpu] } else { ids.into_iter().map(Backend::Cuda).collect() };
        let workers = cfg.workers_per_device.max(1);
        Ok(Engine {
            budget: MemoryBudget::new(cfg.budget.bytes()?),
            synthesis,
            devices: backends
                .into_iter()
                .map(|backend| Slots { backend, free: Mutex::new(workers), cv: Condvar::new() })
                .collect(),
        })
    }

    pub fn budget(&self) -> &Arc<MemoryBudget> {
        &self.budget
    }

    /// The backends this engine proves on.
    pub fn backends(&self) -> Vec<Backend> {
        self.devices.iter().map(|d| d.backend).collect()
    }

    /// The largest footprint a proof of `pce` can have on this engine's devices.
    pub fn footprint(&self, pce: &Pce) -> u64 {
        self.devices.iter().map(|d| footprint(pce, d.backend)).max().unwrap_or(0)
    }

    /// Predicted peak RSS for `j` proofs in flight: what is resident once the
    /// engine is warm (`static_bytes`: runtime, GPU driver, PCE, SRS — measured
    /// after a first proof, or summed from the accounting) plus `j` footprints.
    pub fn predicted_peak(&self, static_bytes: u64, pce: &Pce, j: usize) -> u64 {
        static_bytes + j as u64 * self.footprint(pce)
    }

    /// The device for a request: the named one, or the one with most free workers.
    fn pick(&self, want: Backend) -> Result<&Slots> {
        match want {
            Backend::Auto => {
                Ok(self.devices.iter().max_by_key(|d| d.free()).expect("an engine has at least one device"))
            }
            b => self.devices.iter().find(|d| d.backend == b).ok_or_else(|| {
                Error::InvalidInput(format!("{b:?} is not one of this engine's devices {:?}", self.backends()))
            }),
        }
    }

    /// Proves one request; safe to call from many threads at once. Waits for
    /// budget (by priority) and for a worker of the chosen device; a cancel
    /// while waiting returns `Cancelled` and frees the reservation.
    pub fn prove<C: Circuit<Scalar> + Send>(&self, req: ProofRequest<'_, C>) -> Result<(Proof<Bls12>, Timings)> {
        let ProofRequest { pce, params, circuit, public_inputs, opts, priority, cancel, observer } = req;
        let notify = |s: Stage| {
            if let Some(f) = observer {
                f(s)
            }
        };
        let device = self.pick(opts.backend)?;
        let reservation = self.budget.reserve(footprint(pce, device.backend), priority, &cancel)?;
        let start = Instant::now();
        let mut t = Timings::default();
        let (w, abc) = self.synthesis.install(|| -> Result<_> {
            let w = Witness::generate_sized(circuit, pce.num_inputs, pce.num_aux)?;
            t.witness = seconds_since(start);
            notify(Stage::Witness);
            let spmv = Instant::now();
            let abc = evaluate(pce, &w)?;
            t.spmv = seconds_since(spmv);
            notify(Stage::Spmv);
            Ok((w, abc))
        })?;
        let _witness_bytes = Tracked::new(Owner::Witness, w.heap_bytes() as u64);
        let abc_bytes = Tracked::new(Owner::Abc, abc.heap_bytes() as u64);
        let slot = device.acquire(&cancel)?;
        notify(Stage::Backend);
        let (proof, pt) = prove_on(device.backend, pce, &w, abc, params, &opts)?;
        drop(slot);
        drop(abc_bytes);
        drop(reservation);
        t.prove = pt;
        notify(Stage::Prove);
        verify_into(&mut t, params, &proof, public_inputs.as_deref().unwrap_or(&w.inputs[1..]), &opts)?;
        notify(Stage::Verify);
        t.total = seconds_since(start);
        Ok((proof, t))
    }
}
