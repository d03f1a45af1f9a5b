//! A request: every partition of a statement proven through the engine, as many at once as the
//! engine moves along, each reserving its own footprint, the first failure cancelling the rest;
//! and its proof bytes verified.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use bellperson::groth16::{Proof, VerifyingKey};
use blstrs::{Bls12, Scalar};

use super::pipeline::{seconds_since, Partition, Stage};
use super::timings::Timings;
use super::{CancelToken, Engine, Priority};
use crate::circuits::WitnessSource;
use crate::circuits::{Instance, ProofClass, Statement};
use crate::groth16::{self, Backend, PROOF_BYTES};
use crate::params::Srs;
use crate::pce::Pce;
use crate::{Error, Result};

/// How to prove a request.
#[derive(Debug, Clone)]
pub struct ProveOptions {
    pub backend: Backend,
    /// Verify every partition's proof before returning it (the default).
    pub verify: bool,
    /// Fixed (r, s) per partition, for reproducible proofs; `None` draws them from the OS.
    pub randomness: Option<Vec<(Scalar, Scalar)>>,
}

impl Default for ProveOptions {
    fn default() -> Self {
        ProveOptions { backend: Backend::Auto, verify: true, randomness: None }
    }
}

/// One request: a statement and how to prove it. (`S` is a [`Statement`]; the engine's tests
/// put other partitions there.)
pub struct Request<'a, S = Statement> {
    /// The PCE of the statement's circuit.
    pub pce: &'a Pce,
    /// Its parameters (their queries may still be decoding: a partition waits for them after
    /// its witness).
    pub params: &'a Srs,
    pub statement: &'a S,
    pub opts: ProveOptions,
    /// 0..=255: a request waiting for the budget or a device is overtaken by any later one of
    /// higher priority. Raised to the statement's class ([`Priority::in_class`]): a WinningPoSt
    /// is critical, a WindowPoSt ahead of every throughput request.
    pub priority: Priority,
    pub cancel: CancelToken,
    /// Called after each stage of each partition (benchmarks sample memory there).
    pub observer: Option<&'a (dyn Fn(Stage) + Sync)>,
}

/// What the fan-out needs of a statement: its partitions' circuits and public inputs (a seam:
/// the engine's tests give it partitions that fail).
pub(crate) trait Partitions: Sync {
    type Instance: WitnessSource;
    /// The class its proof type puts a request in.
    fn class(&self) -> ProofClass {
        ProofClass::Throughput
    }
    fn count(&self) -> usize;
    fn instance(&self, k: usize) -> Result<Self::Instance>;
    fn public_inputs(&self, k: usize) -> Result<Vec<Scalar>>;
    /// Host bytes its parsed input holds while the request runs.
    fn input_bytes(&self) -> u64 {
        0
    }
}

impl Partitions for Statement {
    type Instance = Instance;
    fn class(&self) -> ProofClass {
        Statement::class(self)
    }
    fn count(&self) -> usize {
        self.partitions()
    }
    fn instance(&self, k: usize) -> Result<Instance> {
        Statement::instance(self, k)
    }
    fn public_inputs(&self, k: usize) -> Result<Vec<Scalar>> {
        Statement::public_inputs(self, k)
    }
    fn input_bytes(&self) -> u64 {
        Statement::input_bytes(self)
    }
}

impl Engine {
    /// Proves every partition of `req.statement` ([`Engine::partitions_at_once`] at a time) and
    /// returns their proofs in partition order, with the partitions' stage times summed
    /// (`total`: the request's wall time). Each partition is checked against its public inputs
    /// unless `opts.verify` is off. The first partition that fails cancels the others and its
    /// error is the request's; a cancel of `req.cancel` ends every partition still waiting.
    pub fn prove(&self, req: Request<'_>) -> Result<(Vec<Proof<Bls12>>, Timings)> {
        self.prove_partitions(req)
    }

    /// [`Engine::prove`] over any [`Partitions`].
    pub(crate) fn prove_partitions<P: Partitions>(&self, req: Request<'_, P>) -> Result<(Vec<Proof<Bls12>>, Timings)> {
        let start = Instant::now();
        let Request { pce, params, statement, opts, priority, cancel, observer } = req;
        let priority = priority.in_class(statement.class());
        let n = statement.count();
        if let Some(rs) = &opts.randomness {
            if rs.len() != n {
                return Err(Error::InvalidInput(format!("{} (r, s) pairs given for {n} partitions", rs.len())));
            }
        }
        // Parameters that are not this circuit's are refused before any witness is made: in full
        // once their queries are decoded, else by their verifying key (a load in the background);
        // the backend stage checks the queries again.
        match params.wait_for(Duration::ZERO) {
            Some(queries) => groth16::check_shape(pce, queries?)?,
            None => groth16::check_vk_shape(pce, params.vk())?,
        }
        // The parsed input (a C1's vanilla proofs) is counted in shares, each partition's beside
        // its footprint: reserved and given back with it, so a request never holds memory while
        // its partitions wait for more.
        let share = statement.input_bytes().div_ceil(n.max(1) as u64);
        // Cancelled by the caller, or by the first partition that fails.
        let stop = cancel.child();
        let partition = |k: usize| -> Result<(Proof<Bls12>, Timings)> {
            let verify_against = if opts.verify { Some(statement.public_inputs(k)?) } else { None };
            self.prove_partition_holding(
                Partition {
                    pce,
                    params,
                    circuit: statement.instance(k)?,
                    verify_against,
                    backend: opts.backend,
                    randomness: opts.randomness.as_ref().map(|rs| rs[k]),
                    priority,
                    cancel: stop.clone(),
                    observer,
                },
                share,
            )
            .inspect_err(|_| stop.cancel())
        };
        // More partitions at once than the engine can move along would only wait for budget,
        // each holding a thread: a few threads take the partitions in turn.
        let next = AtomicUsize::new(0);
        let slots: Vec<Mutex<Option<Result<_>>>> = (0..n).map(|_| Mutex::new(None)).collect();
        let take = || loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= n {
                break;
            }
            let outcome = match stop.is_cancelled() {
                true => Err(Error::Cancelled),
                false => std::panic::catch_unwind(AssertUnwindSafe(|| partition(k))).unwrap_or_else(|p| {
                    stop.cancel();
                    Err(Error::Synthesis(format!("a partition panicked: {}", crate::error::panic_text(&*p))))
                }),
            };
            *slots[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
        };
        on_threads(n.min(self.partitions_at_once()), &|| thread::Builder::new().name("cuzk-partitions".into()), &take);
        let outcomes: Vec<Result<_>> = slots
            .into_iter()
            .map(|s| s.into_inner().unwrap_or_else(|e| e.into_inner()).unwrap_or(Err(Error::Cancelled)))
            .collect();
        // The first real failure, not the cancels it caused in its siblings.
        let failures = || outcomes.iter().filter_map(|r| r.as_ref().err());
        if let Some(e) = failures().find(|e| **e != Error::Cancelled).or_else(|| failures().next()) {
            return Err(e.clone());
        }
        let mut proofs = Vec::with_capacity(n);
        let mut sum = Timings::default();
        for (proof, t) in outcomes.into_iter().flatten() {
            proofs.push(proof);
            sum.add(&t);
        }
        sum.total = seconds_since(start);
        Ok((proofs, sum))
    }
}

/// Runs `job` on the calling thread and on `threads - 1` scoped threads beside it, made by
/// `builder`. A thread the OS refuses is done without: fewer partitions move at once, and the
/// calling thread still takes them all in turn.
fn on_threads(threads: usize, builder: &dyn Fn() -> thread::Builder, job: &(dyn Fn() + Sync)) {
    thread::scope(|s| {
        for _ in 1..threads {
            if let Err(e) = builder().spawn_scoped(s, job) {
                log::warn!("a request's partitions go on with fewer threads: {e}");
                break;
            }
        }
        job();
    });
}

/// A request's proof bytes: each partition's 192 bytes in partition order (for PoRep, what
/// `seal_commit_phase2` returns).
pub fn proof_bytes(proofs: &[Proof<Bls12>]) -> Vec<u8> {
    proofs.iter().flat_map(groth16::proof_bytes).collect()
}

/// Verifies a request's proof bytes with `vk`: every partition against its public inputs, as
/// filecoin-proofs verifies a seal. `MalformedProof` when the bytes do not decode,
/// `InvalidInput` when their length is not the statement's.
pub fn verify(vk: &VerifyingKey<Bls12>, statement: &Statement, bytes: &[u8]) -> Result<()> {
    let n = statement.partitions();
    if bytes.len() != n * PROOF_BYTES {
        return Err(Error::InvalidInput(format!(
            "this proof has {} bytes, the statement's {} ({n} partitions × {PROOF_BYTES})",
            bytes.len(),
            n * PROOF_BYTES
        )));
    }
    for (k, chunk) in bytes.chunks(PROOF_BYTES).enumerate() {
        let proof = Proof::<Bls12>::read(chunk)
            .map_err(|e| Error::MalformedProof(format!("partition {k}'s proof does not decode: {e}")))?;
        groth16::verify(vk, &proof, &statement.public_inputs(k)?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    use std::thread;

    use bellperson::groth16::generate_random_parameters;
    use blstrs::{Bls12, Scalar};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    use super::{Partitions, ProveOptions, Request};
    use crate::circuits::{Family, Synthetic};
    use crate::engine::{footprint, BudgetSpec, CancelToken, Engine, EngineConfig, Priority, Stage};
    use crate::groth16::Backend;
    use crate::params::Srs;
    use crate::Error;

    /// Three mimc-chain partitions whose parsed input holds 3,000 bytes.
    struct WithInput;

    impl Partitions for WithInput {
        type Instance = Synthetic;
        fn count(&self) -> usize {
            3
        }
        fn instance(&self, k: usize) -> crate::Result<Synthetic> {
            Ok(Synthetic::new(Family::MimcChain, 1000, k as u64))
        }
        fn public_inputs(&self, k: usize) -> crate::Result<Vec<Scalar>> {
            Ok(self.instance(k)?.public_inputs())
        }
        fn input_bytes(&self) -> u64 {
            3000
        }
    }

    /// Each partition reserves its share of the parsed input beside its footprint: on a budget
    /// of one footprint and one share, one at a time holds both; on a budget of one footprint,
    /// none fits.
    #[test]
    fn partitions_reserve_their_share_of_the_input() {
        let blank = Synthetic::new(Family::MimcChain, 1000, 0).blank();
        let pce = crate::pce::extract(blank.clone()).unwrap();
        let params = generate_random_parameters::<Bls12, _, _>(blank, &mut ChaCha20Rng::seed_from_u64(1)).unwrap();
        let params = Srs::in_memory(params);
        let fp = footprint(&pce, Backend::Cpu);
        let engine = |budget| {
            let cfg =
                EngineConfig { budget: BudgetSpec::Bytes(budget), critical_reserve: Some(0), ..Default::default() };
            Engine::with_stage(cfg, vec![Backend::Cpu], Box::new(crate::groth16::prove)).unwrap()
        };
        let e = engine(fp + 1000);
        let seen = Mutex::new(Vec::new());
        let observe = |s: Stage| {
            if s == Stage::Spmv {
                seen.lock().unwrap().push(e.budget().held());
            }
        };
        let request = || Request {
            pce: &pce,
            params: &params,
            statement: &WithInput,
            opts: ProveOptions { backend: Backend::Cpu, ..Default::default() },
            priority: Priority::default(),
            cancel: CancelToken::new(),
            observer: None,
        };
        let (proofs, _) = e.prove_partitions(Request { observer: Some(&observe), ..request() }).unwrap();
        assert_eq!((proofs.len(), seen.into_inner().unwrap()), (3, vec![fp + 1000; 3]));
        assert!(matches!(engine(fp).prove_partitions(request()), Err(Error::OverBudget(_))));
    }

    /// Threads the OS refuses (a stack larger than the address space) leave the work to the
    /// calling thread: it is all done, and nothing panics.
    #[test]
    fn refused_threads_leave_the_work_to_the_caller() {
        let runs = AtomicUsize::new(0);
        let job = || {
            runs.fetch_add(1, Ordering::SeqCst);
        };
        super::on_threads(4, &|| thread::Builder::new().stack_size(usize::MAX / 4), &job);
        assert_eq!(runs.load(Ordering::SeqCst), 1, "the caller alone");
        super::on_threads(4, &thread::Builder::new, &job);
        assert_eq!(runs.load(Ordering::SeqCst), 5, "the caller and three threads");
    }
}
