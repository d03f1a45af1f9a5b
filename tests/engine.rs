//! The engine: admission control inside a memory budget, cancellation,
//! priorities and many concurrent callers (CPU backend).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bellperson::groth16::generate_random_parameters;
use blstrs::Bls12;
use cuzk::circuits::{Family, Statement, Synthetic};
use cuzk::engine::{
    footprint, BudgetSpec, CancelToken, Engine, EngineConfig, MemoryBudget, Priority, ProveOptions, Request,
};
use cuzk::groth16::Backend;
use cuzk::params::Srs;
use cuzk::pce::extract;
use cuzk::Error;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn setup() -> (Synthetic, cuzk::pce::Pce, bellperson::groth16::Parameters<Bls12>) {
    let c = Synthetic::new(Family::MimcChain, 2000, 1);
    let pce = extract(c.blank()).unwrap();
    let params = generate_random_parameters::<Bls12, _, _>(c.blank(), &mut ChaCha20Rng::seed_from_u64(1)).unwrap();
    (c, pce, params)
}

fn engine(budget: u64, workers: usize) -> Engine {
    Engine::new(EngineConfig {
        synthesis_threads: 2,
        devices: None,
        workers_per_device: workers,
        budget: BudgetSpec::Bytes(budget),
        critical_reserve: Some(0),
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn many_callers_stay_inside_the_budget_and_verify() {
    let (c, pce, params) = setup();
    const K: u64 = 3;
    let e = engine(K * footprint(&pce, Backend::Cpu), 2);
    let done = AtomicU64::new(0);
    std::thread::scope(|s| {
        for i in 0..4 * K {
            let (e, pce, params, done) = (&e, &pce, &params, &done);
            let circuit = Synthetic::new(Family::MimcChain, 2000, 100 + i);
            s.spawn(move || {
                let (_proof, t) = e
                    .prove(Request {
                        pce,
                        params: &Srs::in_memory(params.clone()),
                        statement: &Statement::Synthetic(circuit),
                        opts: ProveOptions { backend: Backend::Cpu, ..Default::default() },
                        priority: Priority::Throughput((i % 3) as u8),
                        cancel: CancelToken::new(),
                        observer: None,
                    })
                    .expect("proof verifies");
                assert!(t.verify > 0.0);
                done.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    assert_eq!(done.load(Ordering::SeqCst), 4 * K);
    let b = e.budget();
    assert!(b.peak_used() <= b.total(), "{} > {}", b.peak_used(), b.total());
    assert!(b.peak_used() >= 2 * footprint(&pce, Backend::Cpu), "requests really overlapped");
    assert_eq!(b.held(), 0, "every reservation released");
    let _ = c;
}

#[test]
fn a_request_larger_than_the_budget_fails_fast() {
    let (c, pce, params) = setup();
    let e = engine(footprint(&pce, Backend::Cpu) - 1, 1);
    let start = Instant::now();
    let res = e.prove(Request {
        pce: &pce,
        params: &Srs::in_memory(params.clone()),
        statement: &Statement::Synthetic(c),
        opts: ProveOptions::default(),
        priority: Priority::default(),
        cancel: CancelToken::new(),
        observer: None,
    });
    assert!(matches!(res, Err(Error::OverBudget(_))), "{res:?}");
    assert!(start.elapsed() < Duration::from_secs(1));
}

#[test]
fn cancel_frees_a_queued_reservation() {
    let (c, pce, params) = setup();
    let e = engine(footprint(&pce, Backend::Cpu), 1);
    // Hold the whole budget so the request queues.
    let held = e.budget().reserve(footprint(&pce, Backend::Cpu), Priority::default(), &CancelToken::new()).unwrap();
    let cancel = CancelToken::new();
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            e.prove(Request {
                pce: &pce,
                params: &Srs::in_memory(params.clone()),
                statement: &Statement::Synthetic(c),
                opts: ProveOptions::default(),
                priority: Priority::default(),
                cancel: cancel.clone(),
                observer: None,
            })
        });
        std::thread::sleep(Duration::from_millis(100));
        cancel.cancel();
        assert!(matches!(h.join().unwrap(), Err(Error::Cancelled)));
    });
    assert_eq!(e.budget().used(), footprint(&pce, Backend::Cpu), "only the held reservation remains");
    drop(held);
    assert_eq!(e.budget().used(), 0);
}

#[test]
fn higher_priority_overtakes_queued_requests() {
    let budget = MemoryBudget::new(10);
    let held = budget.reserve(10, Priority::default(), &CancelToken::new()).unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    std::thread::scope(|s| {
        for (name, prio, delay) in [("low", Priority::Throughput(0), 0u64), ("high", Priority::Throughput(9), 50)] {
            let (budget, order) = (&budget, order.clone());
            s.spawn(move || {
                std::thread::sleep(Duration::from_millis(delay));
                let r = budget.reserve(10, prio, &CancelToken::new()).unwrap();
                order.lock().unwrap().push(name);
                std::thread::sleep(Duration::from_millis(20));
                drop(r);
            });
        }
        std::thread::sleep(Duration::from_millis(150));
        drop(held);
    });
    assert_eq!(*order.lock().unwrap(), vec!["high", "low"]);
}

/// A critical request takes the reserve throughput work cannot, overtakes queued throughput
/// requests, and needs no a/b/c holder slot; throughput work is refused at once when it could
/// only ever fit by taking the reserve.
#[test]
fn critical_requests_have_a_reserve_and_no_slot_to_wait_for() {
    let budget = MemoryBudget::with_limits(100, 1, 30);
    let none = CancelToken::new();
    let throughput = Priority::Throughput(255);
    assert!(matches!(budget.admit(50, 30, throughput, &none, []), Err(Error::OverBudget(_))));
    let (held, []) = budget.admit(40, 30, throughput, &none, []).unwrap();
    let (held_abc, []) = budget.reserve_stage(30, throughput, &none, []).unwrap();
    assert_eq!(budget.held(), 70);
    std::thread::scope(|s| {
        // Throughput work waits: no room outside the reserve, and no holder slot.
        let waiting = CancelToken::new();
        let queued = {
            let (budget, waiting) = (&budget, waiting.clone());
            s.spawn(move || budget.admit(1, 0, Priority::Throughput(0), &waiting, []).map(|_| ()))
        };
        while budget.waiting() == 0 {
            std::thread::yield_now();
        }
        // A critical request goes past it into the reserve, and to its peak stage without a slot.
        let (w, []) = budget.admit(20, 10, Priority::Critical, &none, []).unwrap();
        let (abc, []) = budget.reserve_stage(10, Priority::Critical, &none, []).unwrap();
        assert_eq!(budget.held(), 100);
        drop((abc, w));
        waiting.cancel();
        assert!(matches!(queued.join().unwrap(), Err(Error::Cancelled)));
    });
    // A critical request may use the whole budget.
    drop((held_abc, held));
    let (all, []) = budget.admit(60, 40, Priority::Critical, &none, []).unwrap();
    drop(all);
    assert_eq!(budget.used(), 0);
}

/// Requests in two stages (admitted with a witness, then a peak stage that
/// at most two throughput requests may hold), random sizes, random classes,
/// random cancels at either stage: no deadlock, never over budget, never more
/// than two throughput peak holders, throughput never in the critical reserve.
#[test]
fn random_cancels_never_deadlock() {
    let budget = MemoryBudget::with_limits(100, 2, 30);
    let holders = std::sync::atomic::AtomicUsize::new(0);
    let throughput_bytes = AtomicU64::new(0);
    let start = Instant::now();
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    use rand::Rng;
    let plans: Vec<(u64, u64, u64, bool, u8)> = (0..200)
        .map(|_| {
            (rng.gen_range(1..=40), rng.gen_range(0..=30), rng.gen_range(0..5), rng.gen_bool(0.4), rng.gen_range(0..4))
        })
        .collect();
    std::thread::scope(|s| {
        for (now, later, hold_ms, cancel_it, level) in plans {
            let (budget, holders, throughput_bytes) = (&budget, &holders, &throughput_bytes);
            let prio = if level == 3 { Priority::Critical } else { Priority::Throughput(level) };
            // What this request holds while it runs, if it is throughput work.
            let count = move |bytes: u64| {
                if !prio.is_critical() {
                    let was = throughput_bytes.fetch_add(bytes, Ordering::SeqCst);
                    assert!(was + bytes <= 70, "throughput work took the critical reserve");
                }
            };
            let uncount = move |bytes: u64| {
                if !prio.is_critical() {
                    throughput_bytes.fetch_sub(bytes, Ordering::SeqCst);
                }
            };
            s.spawn(move || {
                let token = CancelToken::new();
                if cancel_it {
                    let t = token.clone();
                    std::thread::spawn(move || {
                        std::thread::sleep(Duration::from_millis(hold_ms * 3));
                        t.cancel();
                    });
                }
                let run = || -> cuzk::Result<()> {
                    let witness = budget.admit(now, later, prio, &token, [])?;
                    count(now);
                    assert!(budget.used() <= budget.total());
                    std::thread::sleep(Duration::from_millis(hold_ms));
                    let abc = budget.reserve_stage(later, prio, &token, []);
                    let abc = abc.inspect_err(|_| uncount(now))?;
                    count(later);
                    if !prio.is_critical() {
                        assert!(holders.fetch_add(1, Ordering::SeqCst) < 2, "at most two throughput peak holders");
                    }
                    assert!(budget.used() <= budget.total());
                    std::thread::sleep(Duration::from_millis(hold_ms));
                    if !prio.is_critical() {
                        holders.fetch_sub(1, Ordering::SeqCst);
                    }
                    uncount(now + later);
                    drop((abc, witness));
                    Ok(())
                };
                match run() {
                    Ok(()) | Err(Error::Cancelled) => {}
                    Err(e) => panic!("{e}"),
                }
            });
        }
    });
    assert_eq!(budget.used(), 0);
    assert!(budget.peak_used() <= 100);
    assert!(start.elapsed() < Duration::from_secs(60), "bounded in time");
}

#[test]
fn absurd_thread_counts_are_refused_at_once() {
    let most = cuzk::engine::max_threads();
    for (threads, workers) in [(most + 1, 1), (100_000, 1), (1, most + 1)] {
        let start = Instant::now();
        let r = Engine::new(EngineConfig {
            synthesis_threads: threads,
            devices: Some(vec![]),
            workers_per_device: workers,
            budget: BudgetSpec::Bytes(1 << 30),
            ..Default::default()
        });
        assert!(matches!(r, Err(Error::InvalidInput(_))), "{threads} threads, {workers} workers");
        assert!(start.elapsed() < Duration::from_secs(1));
    }
    let (_, pce, _) = setup();
    let e = engine(1 << 30, most);
    assert_eq!(e.predicted_peak(u64::MAX / 2, &pce, usize::MAX), u64::MAX, "saturates, does not wrap");
}
