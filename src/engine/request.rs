//! A request: every partition of a statement proven through the engine, as many at once as the
//! engine moves along, each reserving its own footprint, the first failure cancelling the rest;
//! and its proof bytes verified.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

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
        // Cancelled by the caller, or by the first partition that fails.
        let stop = cancel.child();
        let partition = |k: usize| -> Result<(Proof<Bls12>, Timings)> {
            let verify_against = if opts.verify { Some(statement.public_inputs(k)?) } else { None };
            self.prove_partition(Partition {
                pce,
                params,
                circuit: statement.instance(k)?,
                verify_against,
                backend: opts.backend,
                randomness: opts.randomness.as_ref().map(|rs| rs[k]),
                priority,
                cancel: stop.clone(),
                observer,
            })
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
        match n.min(self.partitions_at_once()) {
            1 => take(),
            threads => std::thread::scope(|s| (0..threads).for_each(|_| drop(s.spawn(take)))),
        }
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
