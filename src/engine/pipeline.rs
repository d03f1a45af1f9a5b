//! The engine: many proofs at once, each reserving its exact footprint from a
//! memory budget before it allocates (its witness when admitted, its a, b, c
//! when SpMV starts, by at most two proofs per device at once); witnesses and
//! SpMVs on two CPU pools, the backend stage gated by a fixed number of
//! workers per device, so the next proof's synthesis overlaps the current
//! one's GPU (or CPU MSM) work.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use bellperson::groth16::{Parameters, Proof};
use blstrs::{Bls12, Scalar};

use super::budget::{CancelToken, MemoryBudget, Priority, Reservation};
use super::{gpu_count, prove_on, seconds_since, verify_into, Backend, ProveOptions, Timings};
use crate::groth16::ProveTimings;
use crate::mem::{Owner, Tracked};
use crate::pce::{check_satisfied, evaluate_into, Abc, AbcLease, Pce};
use crate::witness::{Room, Witness, WitnessSource};
use crate::{Error, Result};

/// The host memory the engine may use for in-flight proofs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetSpec {
    Bytes(u64),
    /// `MemAvailable` at start-up minus a safety margin.
    Available {
        margin: u64,
    },
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
    /// Threads for witness generation, and as many again for SpMV (0: one
    /// per core each).
    pub synthesis_threads: usize,
    /// Added to the nice value of the thread that creates the engine, for
    /// the synthesis threads ([`SYNTHESIS_NICE`] by default; 0: the same
    /// priority).
    pub synthesis_nice: i32,
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
            synthesis_nice: SYNTHESIS_NICE,
            devices: None,
            workers_per_device: 1,
            budget: BudgetSpec::Available { margin: 4 << 30 },
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
fn renice_this_thread(nice: i32) {
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

/// How many backend failures in a row take a device out of `Auto` rotation.
const FAILURES_TO_SIDELINE: u32 = 3;

/// One device's (or the CPU's) backend-stage workers and counters.
#[derive(Default)]
struct Lane {
    free: usize,
    proofs: u64,
    failures: u64,
    failures_in_a_row: u32,
    /// Seconds with at least one backend stage running, closed intervals.
    busy: f64,
    busy_since: Option<Instant>,
}

impl Lane {
    fn healthy(&self) -> bool {
        self.failures_in_a_row < FAILURES_TO_SIDELINE
    }
}

/// What one of the engine's devices has done so far.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceStats {
    pub backend: Backend,
    pub workers: usize,
    /// Workers running a backend stage now.
    pub in_use: usize,
    /// Backend stages that succeeded / failed.
    pub proofs: u64,
    pub failures: u64,
    /// Wall seconds with at least one backend stage running (the union of
    /// their intervals, so busy / wall is the device's busy fraction).
    pub busy_seconds: f64,
    /// False once it failed `FAILURES_TO_SIDELINE` times in a row: `Auto`
    /// requests avoid it (a request naming it still goes there, and a success
    /// brings it back).
    pub healthy: bool,
    /// Device memory (cudaMemGetInfo) now; 0 for the CPU.
    pub vram_free: u64,
    pub vram_total: u64,
}

/// The devices' workers behind one lock, so a request can wait for whichever
/// device frees a worker first.
struct Lanes {
    backends: Vec<Backend>,
    workers: usize,
    state: Mutex<Vec<Lane>>,
    freed: Condvar,
}

/// A backend-stage worker of lane `index`, given back on drop.
struct Slot<'a> {
    lanes: &'a Lanes,
    index: usize,
}

impl Lanes {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Lane>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a worker of the wanted device, or with `Auto` of whichever
    /// healthy device (other than `avoid`) has one free first.
    fn acquire(&self, want: Backend, avoid: Option<Backend>, cancel: &CancelToken) -> Result<Slot<'_>> {
        let allowed: Vec<usize> = match want {
            Backend::Auto => (0..self.backends.len()).filter(|&i| Some(self.backends[i]) != avoid).collect(),
            b => vec![self.index_of(b)?],
        };
        let mut st = self.lock();
        loop {
            cancel.check()?;
            let usable: Vec<usize> =
                allowed.iter().copied().filter(|&i| want != Backend::Auto || st[i].healthy()).collect();
            if usable.is_empty() {
                return Err(Error::Gpu(format!("no healthy device left among {:?}", self.backends)));
            }
            // Most free workers first; ties go to the first listed.
            if let Some(i) =
                usable.into_iter().filter(|&i| st[i].free > 0).min_by_key(|&i| std::cmp::Reverse(st[i].free))
            {
                let lane = &mut st[i];
                lane.free -= 1;
                if lane.free + 1 == self.workers {
                    lane.busy_since = Some(Instant::now());
                }
                return Ok(Slot { lanes: self, index: i });
            }
            st = self.freed.wait_timeout(st, std::time::Duration::from_millis(20)).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    fn index_of(&self, b: Backend) -> Result<usize> {
        self.backends.iter().position(|&x| x == b).ok_or_else(|| {
            Error::InvalidInput(format!("{b:?} is not one of this engine's devices {:?}", self.backends))
        })
    }

    /// Counts a backend outcome; only device errors count against its health.
    fn record<T>(&self, index: usize, outcome: &Result<T>) {
        let lane = &mut self.lock()[index];
        match outcome {
            Ok(_) => {
                lane.proofs += 1;
                lane.failures_in_a_row = 0;
            }
            Err(e) => {
                lane.failures += 1;
                if matches!(e, Error::Gpu(_)) {
                    lane.failures_in_a_row += 1;
                }
            }
        }
    }

    fn stats(&self) -> Vec<DeviceStats> {
        let st = self.lock();
        self.backends
            .iter()
            .zip(st.iter())
            .map(|(&backend, lane)| {
                let (vram_free, vram_total) = match backend {
                    Backend::Cuda(id) => super::device_memory(id).unwrap_or((0, 0)),
                    _ => (0, 0),
                };
                DeviceStats {
                    backend,
                    workers: self.workers,
                    in_use: self.workers - lane.free,
                    proofs: lane.proofs,
                    failures: lane.failures,
                    busy_seconds: lane.busy + lane.busy_since.map_or(0.0, |t| t.elapsed().as_secs_f64()),
                    healthy: lane.healthy(),
                    vram_free,
                    vram_total,
                }
            })
            .collect()
    }
}

impl Slot<'_> {
    fn backend(&self) -> Backend {
        self.lanes.backends[self.index]
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut st = self.lanes.lock();
        let lane = &mut st[self.index];
        lane.free += 1;
        if lane.free == self.lanes.workers {
            if let Some(t) = lane.busy_since.take() {
                lane.busy += t.elapsed().as_secs_f64();
            }
        }
        drop(st);
        self.lanes.freed.notify_all();
    }
}

/// The backend stage (H and the MSMs) on one device. The engine's seam: tests
/// put a double here to stand in for several GPUs, and to make one fail.
pub(crate) trait BackendStage: Send + Sync {
    fn prove(
        &self,
        backend: Backend,
        pce: &Pce,
        w: &Witness,
        abc: Abc,
        params: &Parameters<Bls12>,
        opts: &ProveOptions,
    ) -> Result<(Proof<Bls12>, ProveTimings)>;
}

/// The real backends.
struct Backends;

impl BackendStage for Backends {
    fn prove(
        &self,
        backend: Backend,
        pce: &Pce,
        w: &Witness,
        abc: Abc,
        params: &Parameters<Bls12>,
        opts: &ProveOptions,
    ) -> Result<(Proof<Bls12>, ProveTimings)> {
        prove_on(backend, pce, w, abc, params, opts)
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
    /// Witness generation. Its jobs are long and sequential (one circuit's
    /// synthesis, or a few partitions at once).
    witness: rayon::ThreadPool,
    /// SpMV, apart from the witnesses: a thread of one pool that waits in a
    /// join steals whatever job is queued, and a witness picked up there
    /// would hold a proof's SpMV — and the GPU waiting for its a, b, c — for
    /// the whole witness.
    spmv: rayon::ThreadPool,
    lanes: Lanes,
    stage: Box<dyn BackendStage>,
}

/// Host bytes one in-flight proof holds at its peak, from the PCE's exact
/// dimensions. Both backends hold the witness (`32·(inputs + aux)`, allocated
/// once at its final size) and a, b, c. The CPU backend pads a, b, c to the
/// domain in place for its NTTs and holds the domain's twiddle tables
/// (`3·32·m + 32·m`, the peak; the later MSM scalar copies are smaller). The
/// CUDA backend keeps them at `n` rows until they are on the device (`3·32·n`);
/// H, the aux upload and the density selections live on the device, and the
/// pinned staging the uploads go through is per device, not per proof.
pub fn footprint(pce: &Pce, backend: Backend) -> u64 {
    let witness = 32 * (pce.num_inputs + pce.num_aux) as u64;
    let (n, m) = (pce.num_constraints() as u64, pce.domain_size() as u64);
    match backend {
        Backend::Cuda(_) => witness + 96 * n,
        Backend::Cpu | Backend::Auto => witness + 128 * m,
    }
}

/// The part of [`footprint`] that is a, b and c: the proof's peak stage,
/// reserved from the budget just before SpMV and given back the moment the
/// backend frees them (after the upload on a GPU, after the NTTs on the CPU);
/// the rest covers the witness (and on the CPU H's coefficients).
fn abc_part(pce: &Pce, backend: Backend) -> u64 {
    match backend {
        Backend::Cuda(_) => 96 * pce.num_constraints() as u64,
        Backend::Cpu | Backend::Auto => 96 * pce.domain_size() as u64,
    }
}

/// Proofs per device that may hold a, b, c at once: one uploading (or in the
/// CPU's NTTs) and one ready for the next free worker. More would only queue
/// for the device holding memory; SpMV is short beside the backend stage, so
/// two keep every worker fed.
pub const ABC_HOLDERS_PER_DEVICE: usize = 2;

/// The budget's hold on one proof's a, b, c: their reservation, which keeps
/// their buffers for the next proof when the backend is done with them.
struct Lease {
    budget: Arc<MemoryBudget>,
    part: Reservation,
    _tracked: Tracked,
}

impl AbcLease for Lease {
    fn reuse(mut self: Box<Self>, bufs: [Vec<Scalar>; 3]) {
        for buf in bufs {
            self.budget.give_idle(buf, &mut self.part, Owner::Abc);
        }
    }
}

impl Engine {
    pub fn new(cfg: EngineConfig) -> Result<Engine> {
        let ids: Vec<u32> = match &cfg.devices {
            Some(ids) => ids.clone(),
            None => (0..gpu_count() as u32).collect(),
        };
        for &id in &ids {
            super::check_device(id)?;
        }
        let backends = if ids.is_empty() { vec![Backend::Cpu] } else { ids.into_iter().map(Backend::Cuda).collect() };
        Self::with_stage(cfg, backends, Box::new(Backends))
    }

    /// An engine over the given backends, with `stage` running their backend
    /// stage (a test double stands in for devices this machine lacks).
    pub(crate) fn with_stage(
        cfg: EngineConfig,
        backends: Vec<Backend>,
        stage: Box<dyn BackendStage>,
    ) -> Result<Engine> {
        // The budget counts a proof's buffers until they are freed; freed
        // must mean given back.
        crate::mem::unmap_large_frees();
        let nice = cfg.synthesis_nice;
        let pool = |name: &'static str| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(cfg.synthesis_threads)
                .thread_name(move |i| format!("cuzk-{name}-{i}"))
                .start_handler(move |_| renice_this_thread(nice))
                .build()
                .map_err(|e| Error::InvalidInput(format!("{name} pool: {e}")))
        };
        let (witness, spmv) = (pool("witness")?, pool("spmv")?);
        let mut seen = Vec::new();
        for b in &backends {
            if seen.contains(b) {
                return Err(Error::InvalidInput(format!("{b:?} is listed twice")));
            }
            seen.push(*b);
        }
        let workers = cfg.workers_per_device.max(1);
        let abc_holders = ABC_HOLDERS_PER_DEVICE * backends.len();
        Ok(Engine {
            budget: MemoryBudget::with_stage_limit(cfg.budget.bytes()?, abc_holders),
            witness,
            spmv,
            lanes: Lanes {
                state: Mutex::new(backends.iter().map(|_| Lane { free: workers, ..Lane::default() }).collect()),
                backends,
                workers,
                freed: Condvar::new(),
            },
            stage,
        })
    }

    pub fn budget(&self) -> &Arc<MemoryBudget> {
        &self.budget
    }

    /// The backends this engine proves on.
    pub fn backends(&self) -> Vec<Backend> {
        self.lanes.backends.clone()
    }

    /// What each device has done so far, in [`Engine::backends`] order.
    pub fn device_stats(&self) -> Vec<DeviceStats> {
        self.lanes.stats()
    }

    /// The footprint of a proof of `pce` on this engine's devices (all of one kind).
    pub fn footprint(&self, pce: &Pce) -> u64 {
        footprint(pce, self.lanes.backends[0])
    }

    /// Proofs that may hold a, b, c at once ([`ABC_HOLDERS_PER_DEVICE`] per device).
    pub fn abc_holders(&self) -> usize {
        self.budget.stage_limit()
    }

    /// Predicted peak RSS for `j` proofs in flight: what is resident once the
    /// engine is warm (`static_bytes`: runtime, GPU driver, PCE, SRS — measured
    /// after a first proof, or summed from the accounting), plus `j` witnesses
    /// (the footprint without a, b, c), plus a, b, c for as many proofs as may
    /// hold them at once.
    pub fn predicted_peak(&self, static_bytes: u64, pce: &Pce, j: usize) -> u64 {
        let abc = abc_part(pce, self.lanes.backends[0]);
        let rest = self.footprint(pce) - abc;
        static_bytes + j as u64 * rest + j.min(self.abc_holders()) as u64 * abc
    }

    /// Proves one request; safe to call from many threads at once. Waits for
    /// budget (by priority), makes the witness, waits for its turn to hold a,
    /// b, c, evaluates them, then waits for a worker of the named device — or,
    /// with `Auto`, of whichever healthy device frees one first.
    /// A cancel while waiting (or between stages) returns `Cancelled` and
    /// frees the reservation. An `Auto` request whose device fails is retried
    /// once on another one.
    pub fn prove<C: WitnessSource>(&self, req: ProofRequest<'_, C>) -> Result<(Proof<Bls12>, Timings)> {
        let ProofRequest { pce, params, circuit, public_inputs, opts, priority, cancel, observer } = req;
        let notify = |s: Stage| {
            if let Some(f) = observer {
                f(s)
            }
        };
        // Every lane of an engine is the same kind (CUDA devices, or the CPU).
        let kind = match opts.backend {
            Backend::Auto => self.lanes.backends[0],
            b => self.lanes.backends[self.lanes.index_of(b)?],
        };
        let start = Instant::now();
        let abc_bytes = abc_part(pce, kind);
        let (mut reservation, [aux]) =
            self.budget.admit(footprint(pce, kind) - abc_bytes, abc_bytes, priority, &cancel, [pce.num_aux])?;
        let mut t = Timings { queued: seconds_since(start), ..Timings::default() };
        let room = Room::reusing(pce.num_inputs, pce.num_aux, aux);
        let w = self.witness.install(|| circuit.witness(room))?;
        t.witness = seconds_since(start) - t.queued;
        notify(Stage::Witness);
        let _witness_bytes = Tracked::new(Owner::Witness, w.heap_bytes() as u64);
        let mut failed = None;
        let (proof, pt) = loop {
            // A GPU needs n rows; the CPU pads them to the domain in place.
            let rows = match kind {
                Backend::Cuda(_) => pce.num_constraints(),
                Backend::Cpu | Backend::Auto => pce.domain_size(),
            };
            // Waits on the caller's thread, not an SpMV thread: those run
            // the SpMVs of the proofs that hold a, b, c.
            let wait = Instant::now();
            let (part, bufs) = self.budget.reserve_stage(abc_bytes, priority, &cancel, [rows; 3])?;
            t.queued += seconds_since(wait);
            let spmv = Instant::now();
            let bufs = bufs.map(|mut b| {
                b.reserve_exact(rows);
                b
            });
            let mut abc = self.spmv.install(|| -> Result<_> {
                let abc = evaluate_into(pce, &w, bufs)?;
                check_satisfied(&abc)?;
                Ok(abc)
            })?;
            if failed.is_none() {
                t.spmv = seconds_since(spmv);
                notify(Stage::Spmv);
            }
            let tracked = Tracked::new(Owner::Abc, abc.heap_bytes() as u64);
            abc.hold(Lease { budget: self.budget.clone(), part, _tracked: tracked });
            let wait = Instant::now();
            let slot = self.lanes.acquire(opts.backend, failed, &cancel)?;
            t.queued += seconds_since(wait);
            notify(Stage::Backend);
            let outcome = self.stage.prove(slot.backend(), pce, &w, abc, params, &opts);
            self.lanes.record(slot.index, &outcome);
            let device = slot.backend();
            drop(slot);
            t.backend = Some(device);
            match outcome {
                Err(Error::Gpu(m))
                    if opts.backend == Backend::Auto && failed.is_none() && self.lanes.backends.len() > 1 =>
                {
                    // a, b, c died with the failed attempt; the loop makes them again.
                    log::warn!("{device:?} failed ({m}); retrying on another device");
                    failed = Some(device);
                }
                other => break other?,
            }
        };
        let Witness { inputs, aux } = w;
        self.budget.give_idle(aux, &mut reservation, Owner::Witness);
        drop(reservation);
        t.prove = pt;
        notify(Stage::Prove);
        verify_into(&mut t, params, &proof, public_inputs.as_deref().unwrap_or(&inputs[1..]), &opts)?;
        notify(Stage::Verify);
        t.total = seconds_since(start);
        Ok((proof, t))
    }
}
