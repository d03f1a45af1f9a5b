//! The process's ceiling: what every engine's budget together may hold. Each engine's own
//! budget caps that engine; the ceiling keeps their sum inside the memory the process could
//! take when its first engine was made, so that two engines (the default one beside an
//! explicit one) never both count on the whole machine.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// Bytes the budgets drawing from one ceiling hold together. Updated only under the lock of
/// the budget whose bytes change (a budget's lock is always taken before this one).
#[derive(Default)]
pub(super) struct Usage {
    /// Every budget's reservations and kept buffers.
    pub used: u64,
    /// The kept buffers among them: bytes any budget gives up when another needs the room.
    pub idle: u64,
}

pub struct Ceiling {
    total: u64,
    usage: Mutex<Usage>,
}

impl Ceiling {
    /// The one every engine of the process draws from: what the process could take when it was
    /// first needed (`mem::available_bytes`: `MemAvailable`, or less under a memory cgroup);
    /// no ceiling where that cannot be read (engines then have explicit budgets).
    pub(super) fn process() -> Arc<Ceiling> {
        static PROCESS: OnceLock<Arc<Ceiling>> = OnceLock::new();
        PROCESS.get_or_init(|| Ceiling::new(crate::mem::available_bytes().unwrap_or(u64::MAX))).clone()
    }

    /// A ceiling of `total` bytes of its own (tests: engines sharing a small machine).
    pub(crate) fn new(total: u64) -> Arc<Ceiling> {
        Arc::new(Ceiling { total, usage: Mutex::default() })
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Usage> {
        // The counters are updated in one step each: a panic cannot leave them half-updated.
        self.usage.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use bellperson::groth16::generate_random_parameters;
    use blstrs::Bls12;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    use super::*;
    use crate::circuits::{Family, Statement, Synthetic};
    use crate::engine::{
        footprint, BudgetSpec, CancelToken, Engine, EngineConfig, MemoryBudget, Priority, ProveOptions, Request, Stage,
    };
    use crate::groth16::Backend;
    use crate::params::Srs;
    use crate::Error;

    /// The ceiling's (used, idle) now.
    fn usage(c: &Ceiling) -> (u64, u64) {
        let u = c.lock();
        (u.used, u.idle)
    }

    fn wait_until(what: &str, done: impl Fn() -> bool) {
        let start = std::time::Instant::now();
        while !done() {
            assert!(start.elapsed() < Duration::from_secs(60), "never: {what}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Two budgets of 100 bytes each on a machine of 150: the second waits for what the first
    /// holds instead of both counting on the whole, takes what is left at once, and a request
    /// the machine could never hold is refused at once though its own budget has room.
    #[test]
    fn budgets_wait_for_each_other_under_the_ceiling() {
        let ceiling = Ceiling::new(150);
        let a = MemoryBudget::within(ceiling.clone(), 100, usize::MAX, 0);
        let b = MemoryBudget::within(ceiling.clone(), 100, usize::MAX, 0);
        let none = CancelToken::new();
        let held = a.reserve(100, Priority::default(), &none).unwrap();
        let rest = b.reserve(50, Priority::default(), &none).unwrap();
        std::thread::scope(|s| {
            let waiting = s.spawn(|| b.reserve(50, Priority::default(), &none));
            wait_until("b waits", || b.waiting() == 1);
            std::thread::sleep(Duration::from_millis(50));
            assert_eq!((b.used(), usage(&ceiling).0), (50, 150), "waiting, b holds only what fitted");
            drop(held);
            let second = waiting.join().unwrap().unwrap();
            assert_eq!((a.used(), b.used(), usage(&ceiling).0), (0, 100, 100));
            drop(second);
        });
        drop(rest);
        let big = MemoryBudget::within(ceiling.clone(), 1000, usize::MAX, 0);
        match big.reserve(151, Priority::Critical, &none) {
            Err(Error::OverBudget(m)) => assert!(m.contains("together"), "{m}"),
            other => panic!("{:?}", other.map(|r| r.bytes())),
        }
        assert_eq!(usage(&ceiling), (0, 0));
    }

    /// Buffers one budget keeps for reuse give way to another budget's reservation at once.
    #[test]
    fn kept_buffers_give_way_to_other_budgets() {
        let ceiling = Ceiling::new(150);
        let a = MemoryBudget::within(ceiling.clone(), 100, usize::MAX, 0);
        let b = MemoryBudget::within(ceiling.clone(), 100, usize::MAX, 0);
        let none = CancelToken::new();
        let mut r = a.reserve(100, Priority::default(), &none).unwrap();
        a.give_idle(vec![blstrs::Scalar::from(1); 3], &mut r, crate::mem::Owner::Witness);
        drop(r);
        assert_eq!((a.idle_bytes(), usage(&ceiling)), (96, (96, 96)));
        let start = std::time::Instant::now();
        let taken = b.reserve(100, Priority::default(), &none).unwrap();
        // Without giving way it would wait a minute, until the kept buffer expired.
        assert!(start.elapsed() < Duration::from_secs(5), "no wait for the kept buffer");
        assert_eq!((a.used(), usage(&ceiling)), (0, (100, 0)));
        drop(taken);
    }

    /// Two engines, each with a budget of two proofs, on a machine of one and a half: while the
    /// first holds a proof, the second's waits (holding nothing) instead of both reserving as
    /// if alone; once the first is done (its buffers kept for reuse give way) the second goes
    /// through. A proof the machine could never hold is `OverBudget` at once.
    #[test]
    fn a_second_engine_waits_for_the_first() {
        let c = Synthetic::new(Family::MimcChain, 1000, 1);
        let pce = crate::pce::extract(c.blank()).unwrap();
        let params = generate_random_parameters::<Bls12, _, _>(c.blank(), &mut ChaCha20Rng::seed_from_u64(1)).unwrap();
        let params = Srs::in_memory(params);
        let fp = footprint(&pce, Backend::Cpu);
        let ceiling = Ceiling::new(fp + fp / 2);
        let cfg = EngineConfig {
            synthesis_threads: 1,
            budget: BudgetSpec::Bytes(2 * fp),
            critical_reserve: Some(0),
            ..Default::default()
        };
        let engine = |ceiling: &Arc<Ceiling>| {
            Engine::under(ceiling.clone(), cfg.clone(), vec![Backend::Cpu], Box::new(crate::groth16::prove)).unwrap()
        };
        let (a, b) = (engine(&ceiling), engine(&ceiling));
        let statements = [1, 2].map(|seed| Statement::Synthetic(Synthetic::new(Family::MimcChain, 1000, seed)));
        fn request<'a>(
            pce: &'a crate::pce::Pce,
            params: &'a Srs,
            statement: &'a Statement,
            observer: Option<&'a (dyn Fn(Stage) + Sync)>,
        ) -> Request<'a> {
            Request {
                pce,
                params,
                statement,
                opts: ProveOptions { backend: Backend::Cpu, ..Default::default() },
                priority: Priority::default(),
                cancel: CancelToken::new(),
                observer,
            }
        }
        let go = AtomicBool::new(false);
        let hold = |s: Stage| {
            while s == Stage::Spmv && !go.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
        };
        /// Lets the first proof go when dropped, so a failed assertion does not leave it held.
        struct Go<'a>(&'a AtomicBool);
        impl Drop for Go<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        std::thread::scope(|s| {
            let _go = Go(&go);
            let first = s.spawn(|| a.prove(request(&pce, &params, &statements[0], Some(&hold))));
            wait_until("the first proof holds its footprint", || a.budget().used() == fp);
            let second = s.spawn(|| b.prove(request(&pce, &params, &statements[1], None)));
            wait_until("the second proof waits", || b.budget().waiting() == 1);
            std::thread::sleep(Duration::from_millis(50));
            assert_eq!(b.budget().used(), 0, "the second engine holds nothing while it waits");
            go.store(true, Ordering::SeqCst);
            first.join().unwrap().expect("the first proof");
            second.join().unwrap().expect("the second proof");
        });
        let small = engine(&Ceiling::new(fp - 1));
        match small.prove(request(&pce, &params, &statements[0], None)) {
            Err(Error::OverBudget(m)) => assert!(m.contains("together"), "{m}"),
            other => panic!("{:?}", other.map(|(p, _)| p.len())),
        }
    }
}
