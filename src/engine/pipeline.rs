//! The [`Engine`] and one partition's way through it: admitted by the budget, its witness made
//! on the witness pool, its a, b, c (for the CPU backend; a GPU evaluates them on the device)
//! on the SpMV pool once it may hold them, its backend stage on a worker of a device, then
//! verified.

use std::sync::Arc;
use std::time::Instant;

use bellperson::groth16::{Parameters, Proof};
use blstrs::{Bls12, Scalar};
use ff::Field;

use super::budget::{MemoryBudget, Priority, Reservation};
use super::ceiling::Ceiling;
use super::config::{renice_this_thread, EngineConfig};
use super::footprint::{abc_part, footprint, ABC_HOLDERS_PER_DEVICE};
use super::lanes::{DeviceStats, Lanes};
use super::timings::Timings;
use super::CancelToken;
use crate::circuits::WitnessSource;
use crate::gpu::{self, SharingPolicy};
use crate::groth16::{self, Backend, ProveTimings, Urgency};
use crate::mem::{Owner, Tracked};
use crate::params::Srs;
use crate::pce::{check_satisfied, evaluate_into, Abc, AbcLease, Pce};
use crate::witness::{Witness, WitnessBuffer};
use crate::{Error, Result};

/// The backend stage (H and the MSMs; on a GPU a, b, c too) on one device: [`groth16::prove`].
/// The engine's seam: tests put a double here to stand in for several GPUs, and to make one
/// fail.
pub(crate) type BackendStage = dyn Fn(
        Backend,
        Urgency,
        &SharingPolicy,
        &Pce,
        &Witness,
        Option<Abc>,
        &Parameters<Bls12>,
        (Scalar, Scalar),
    ) -> Result<(Proof<Bls12>, ProveTimings)>
    + Send
    + Sync;

/// One partition to prove (a request's part; see `request.rs`).
pub(crate) struct Partition<'a, C> {
    pub pce: &'a Pce,
    pub params: &'a Srs,
    pub circuit: C,
    /// The public inputs to verify against (without the ONE); `None`: no verification.
    pub verify_against: Option<Vec<Scalar>>,
    pub backend: Backend,
    /// Fixed (r, s); `None` draws them from the OS.
    pub randomness: Option<(Scalar, Scalar)>,
    pub priority: Priority,
    pub cancel: CancelToken,
    pub observer: Option<&'a (dyn Fn(Stage) + Sync)>,
}

/// The stages a proof goes through, as reported to an observer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Witness,
    /// a, b, c evaluated on the host (the CPU backend's; a GPU's are part of its stage).
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

/// Proves many requests at once, safe to share between threads.
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
    /// Critical requests' witnesses, SpMVs and CPU backend stages: one thread per core at the
    /// engine creator's priority, so they neither queue behind throughput jobs nor share the
    /// cores evenly with the (reniced) synthesis threads.
    express: rayon::ThreadPool,
    pub(super) lanes: Lanes,
    stage: Box<BackendStage>,
    /// How throughput stages share each GPU with critical ones (`EngineConfig::sharing`).
    sharing: SharingPolicy,
    /// Whether witnesses are replayed from the PCE's witness program where the circuit has one
    /// (`EngineConfig::witness_program`), or always made by the circuit's gadgets.
    witness_program: bool,
}

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
    /// An engine on the configured GPUs (all of them by default), or on the CPU when there are
    /// none or the list is empty.
    pub fn new(cfg: EngineConfig) -> Result<Engine> {
        let ids: Vec<u32> = match &cfg.devices {
            Some(ids) => ids.clone(),
            None => (0..gpu::usable_device_count()? as u32).collect(),
        };
        for &id in &ids {
            gpu::check_device(id)?;
        }
        let backends = if ids.is_empty() { vec![Backend::Cpu] } else { ids.into_iter().map(Backend::Cuda).collect() };
        Self::with_stage(cfg, backends, Box::new(groth16::prove))
    }

    /// An engine over the given backends, with `stage` running their backend
    /// stage (a test double stands in for devices this machine lacks).
    pub(crate) fn with_stage(cfg: EngineConfig, backends: Vec<Backend>, stage: Box<BackendStage>) -> Result<Engine> {
        Self::under(Ceiling::process(), cfg, backends, stage)
    }

    /// [`Engine::with_stage`], its budget drawing from `ceiling` (tests: engines on a small
    /// machine).
    pub(crate) fn under(
        ceiling: Arc<Ceiling>,
        cfg: EngineConfig,
        backends: Vec<Backend>,
        stage: Box<BackendStage>,
    ) -> Result<Engine> {
        cfg.sharing.check()?;
        let most = max_threads();
        for (name, n) in [("synthesis_threads", cfg.synthesis_threads), ("workers_per_device", cfg.workers_per_device)]
        {
            if n > most {
                return Err(Error::InvalidInput(format!("{name} {n} is above {most} (4 per core)")));
            }
        }
        // The budget counts a proof's buffers until they are freed; freed
        // must mean given back.
        if cfg.tune_malloc {
            crate::mem::unmap_large_frees()
        }
        let pool = |name: &'static str, threads: usize, nice: i32| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(move |i| format!("cuzk-{name}-{i}"))
                .start_handler(move |_| renice_this_thread(nice))
                .build()
                .map_err(|e| Error::InvalidInput(format!("{name} pool: {e}")))
        };
        let (threads, nice) = (cfg.synthesis_threads, cfg.synthesis_nice);
        let (witness, spmv, express) =
            (pool("witness", threads, nice)?, pool("spmv", threads, nice)?, pool("express", 0, 0)?);
        let abc_holders = ABC_HOLDERS_PER_DEVICE * backends.len();
        let total = cfg.budget.bytes()?;
        Ok(Engine {
            budget: MemoryBudget::within(ceiling, total, abc_holders, cfg.critical_reserve_bytes(total)?),
            witness,
            spmv,
            express,
            lanes: Lanes::new(backends, cfg.workers_per_device.max(1))?,
            stage,
            sharing: cfg.sharing,
            witness_program: cfg.witness_program,
        })
    }

    pub fn budget(&self) -> &Arc<MemoryBudget> {
        &self.budget
    }

    /// The backends this engine proves on.
    pub fn backends(&self) -> Vec<Backend> {
        self.lanes.backends.clone()
    }

    /// What each device has done so far, in [`Engine::backends`] order, with its memory now
    /// (read with no lock held that a proof needs).
    pub fn device_stats(&self) -> Vec<DeviceStats> {
        self.lanes.stats()
    }

    /// Backend workers per device (each device also has one express worker).
    pub fn workers_per_device(&self) -> usize {
        self.lanes.workers() / self.lanes.backends.len()
    }

    /// The kind of device this engine proves on (every lane is the same kind).
    fn kind(&self) -> Backend {
        self.lanes.backends[0]
    }

    /// The footprint of a proof of `pce` on this engine's devices.
    pub fn footprint(&self, pce: &Pce) -> u64 {
        footprint(pce, self.kind())
    }

    /// How many partitions of one request are moved along at once (each on a thread of its
    /// own): one per backend worker, plus [`ABC_HOLDERS_PER_DEVICE`] per device making their
    /// witness (and for the CPU a, b, c) ahead of them. More would only wait for budget, each
    /// holding a thread.
    pub fn partitions_at_once(&self) -> usize {
        self.abc_holders() + self.lanes.workers()
    }

    /// Proofs that may hold a, b, c at once ([`ABC_HOLDERS_PER_DEVICE`] per device).
    pub fn abc_holders(&self) -> usize {
        self.budget.stage_limit()
    }

    /// Makes every device of the engine ready for proofs of `pce` with `params` (on each GPU:
    /// the parameters and the PCE's matrices uploaded, the memory pool grown by a proof's
    /// working set), so that the first proof is as fast as the next ones.
    /// Parameters still being decoded in the background are waited for.
    pub fn prepare(&self, pce: &Pce, params: &Srs) -> Result<()> {
        let params = params.queries()?;
        self.lanes.backends.iter().try_for_each(|&b| groth16::prepare(b, pce, params, &self.sharing))
    }

    /// Predicted peak RSS for `j` proofs of `pce` in flight, over `static_bytes` resident once
    /// the engine is warm (see `engine/footprint.rs`: `predicted_peak`).
    pub fn predicted_peak(&self, static_bytes: u64, pce: &Pce, j: usize) -> u64 {
        super::footprint::predicted_peak(static_bytes, pce, self.kind(), j, self.abc_holders())
    }

    /// [`Engine::predicted_peak`] over the process's RSS now, less the buffers this engine keeps
    /// for reuse: call it once warm (PCE and parameters loaded, one proof done).
    pub fn predicted_peak_now(&self, pce: &Pce, j: usize) -> u64 {
        let now = crate::mem::stats().rss_bytes.saturating_sub(self.budget.idle_bytes());
        self.predicted_peak(now, pce, j)
    }

    /// Proves one partition; safe to call from many threads at once. Waits for
    /// budget (by priority), makes the witness, for the CPU backend waits for its turn to
    /// hold a, b, c and evaluates them, then waits for a worker of the named device — or,
    /// with `Auto`, of whichever healthy device frees one first. A critical
    /// partition does all of it on the express threads and workers.
    /// A cancel while waiting (or between stages) returns `Cancelled` and
    /// frees the reservation. An `Auto` request whose device fails is retried
    /// once on another one. Its reservation also covers `input` bytes: its share of what the
    /// request's parsed input holds.
    pub(crate) fn prove_partition_holding<C: WitnessSource>(
        &self,
        p: Partition<'_, C>,
        input: u64,
    ) -> Result<(Proof<Bls12>, Timings)> {
        let Partition { pce, params, circuit, verify_against, backend, randomness, priority, cancel, observer } = p;
        let notify = |s: Stage| {
            if let Some(f) = observer {
                f(s)
            }
        };
        let kind = match backend {
            Backend::Auto => self.kind(),
            b => self.lanes.backends[self.lanes.index_of(b)?],
        };
        let critical = priority.is_critical();
        // Throughput MSMs cut short pieces from now until this request's backend stage ends.
        let ahead = critical.then(gpu::Ahead::announce);
        let (witness_pool, spmv_pool) =
            if critical { (&self.express, &self.express) } else { (&self.witness, &self.spmv) };
        let start = Instant::now();
        let abc_bytes = abc_part(pce, kind);
        let (mut reservation, [aux]) =
            self.budget.admit(footprint(pce, kind) - abc_bytes + input, abc_bytes, priority, &cancel, [pce.num_aux])?;
        let mut t = Timings { queued: seconds_since(start), ..Timings::default() };
        let into = WitnessBuffer::reusing(pce.num_inputs, pce.num_aux, aux);
        let w = witness_pool.install(|| match self.witness_program {
            true => circuit.witness(pce, into),
            false => circuit.gadget_witness(into),
        })?;
        t.witness = seconds_since(start) - t.queued;
        notify(Stage::Witness);
        let _witness_bytes = Tracked::new(Owner::Witness, w.heap_bytes() as u64);
        let (r, s) = randomness.unwrap_or_else(|| {
            let mut rng = rand::rngs::OsRng;
            (Scalar::random(&mut rng), Scalar::random(&mut rng))
        });
        let wait = Instant::now();
        let queries = queries_of(params, &cancel)?;
        t.queued += seconds_since(wait);
        let mut failed = None;
        let (proof, pt) = loop {
            let abc = if kind.takes_host_abc() {
                let abc = self.host_abc(pce, &w, priority, &cancel, spmv_pool, &mut t)?;
                notify(Stage::Spmv);
                Some(abc)
            } else {
                None
            };
            let wait = Instant::now();
            let worker = self.lanes.acquire(backend, failed, priority, &cancel)?;
            t.queued += seconds_since(wait);
            notify(Stage::Backend);
            let device = worker.backend();
            let urgency = if critical { Urgency::Critical } else { Urgency::Throughput };
            let stage = || (self.stage)(device, urgency, &self.sharing, pce, &w, abc, queries, (r, s));
            // The CPU backend's MSMs and NTTs run on the pool they are called from: a critical
            // stage's on the express threads, a throughput one's at the synthesis threads' nice.
            let outcome = match (critical, device) {
                (true, _) => self.express.install(stage),
                (false, Backend::Cpu) => self.spmv.install(stage),
                (false, _) => stage(),
            };
            self.lanes.record(worker.index(), &outcome);
            drop(worker);
            t.backend = Some(device);
            match outcome {
                Err(Error::Gpu(m)) if backend == Backend::Auto && failed.is_none() && self.lanes.backends.len() > 1 => {
                    log::warn!("{device:?} failed ({m}); retrying on another device");
                    failed = Some(device);
                }
                other => break other?,
            }
        };
        drop(ahead);
        self.budget.give_idle(w.aux, &mut reservation, Owner::Witness);
        drop(reservation);
        t.prove = pt;
        notify(Stage::Prove);
        if let Some(inputs) = verify_against {
            let verify = Instant::now();
            groth16::verify(params.vk(), &proof, &inputs)?;
            t.verify = seconds_since(verify);
        }
        notify(Stage::Verify);
        t.total = seconds_since(start);
        Ok((proof, t))
    }

    /// [`Engine::prove_partition_holding`] of a partition without input (the tests').
    #[cfg(test)]
    pub(crate) fn prove_partition<C: WitnessSource>(&self, p: Partition<'_, C>) -> Result<(Proof<Bls12>, Timings)> {
        self.prove_partition_holding(p, 0)
    }

    /// The CPU backend's a, b, c on the host: once the partition may hold them (its turn among
    /// the a/b/c holders, its reservation), evaluated on `pool` and checked to satisfy every
    /// constraint. The reservation goes with them ([`Lease`]), given back when the backend
    /// frees them.
    fn host_abc(
        &self,
        pce: &Pce,
        w: &Witness,
        priority: Priority,
        cancel: &CancelToken,
        pool: &rayon::ThreadPool,
        t: &mut Timings,
    ) -> Result<Abc> {
        // The CPU pads them to the domain in place for its NTTs.
        let rows = pce.domain_size();
        // Waits on the caller's thread, not an SpMV thread: those run the SpMVs of the proofs
        // that hold a, b, c.
        let wait = Instant::now();
        let (part, bufs) = self.budget.reserve_stage(abc_part(pce, self.kind()), priority, cancel, [rows; 3])?;
        t.queued += seconds_since(wait);
        let spmv = Instant::now();
        let bufs = bufs.map(|mut b| {
            b.reserve_exact(rows);
            b
        });
        let mut abc = pool.install(|| -> Result<_> {
            let abc = evaluate_into(pce, w, bufs)?;
            check_satisfied(&abc)?;
            Ok(abc)
        })?;
        t.spmv += seconds_since(spmv);
        let tracked = Tracked::new(Owner::Abc, abc.heap_bytes() as u64);
        abc.hold(Lease { budget: self.budget.clone(), part, _tracked: tracked });
        Ok(abc)
    }
}

/// The most synthesis threads (per pool) and backend workers (per device) an engine takes:
/// 4 per core. More only thrash (two pools of 100,000 threads took the machine down).
pub fn max_threads() -> usize {
    4 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub(super) fn seconds_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64()
}

/// The queries of `params`, waited for while they are decoded in the background (a cancel
/// ends the wait).
fn queries_of<'p>(params: &'p Srs, cancel: &CancelToken) -> Result<&'p Parameters<Bls12>> {
    loop {
        cancel.check()?;
        if let Some(r) = params.wait_for(std::time::Duration::from_millis(50)) {
            return r;
        }
    }
}
