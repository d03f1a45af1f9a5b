//! The engine's multi-device paths on a machine without GPUs: a double stands
//! in for several CUDA devices (it proves on the CPU under their names) and can
//! make one of them fail, as a GPU that lost its context would.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use bellperson::groth16::{generate_random_parameters, Proof};
use blstrs::{Bls12, Scalar};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use super::pipeline::{BackendStage, Partition};
use super::request::Partitions;
use super::*;
use crate::circuits::{Family, Synthetic};
use crate::groth16::{Backend, Urgency};
use crate::params::Srs;
use crate::pce::{extract, Abc, Pce};
use crate::witness::Witness;
use crate::Error;

/// "GPUs" that prove on the CPU; `broken` ones fail with a device error. It
/// records, for each call, the budget in use before and after a, b, c die,
/// and where the witness's and a, b, c's buffers are.
#[derive(Default)]
struct FakeGpus {
    broken: Mutex<Vec<u32>>,
    budget: Mutex<Option<Arc<MemoryBudget>>>,
    used_around_abc: Mutex<Vec<(u64, u64)>>,
    calls: Mutex<Vec<Backend>>,
    /// Each call's first public input (names the request: the synthetic seed fixes it).
    first_inputs: Mutex<Vec<Scalar>>,
    buffers: Mutex<Vec<Vec<usize>>>,
    hold: AtomicBool,
    /// With `hold`: how many calls, the first ones, it holds (0: every one).
    holding: std::sync::atomic::AtomicUsize,
    /// Every call fails with the argument error a GPU stage returns for a domain it cannot do.
    bad_argument: AtomicBool,
    /// For each critical call: whether throughput MSMs were cutting short pieces during it.
    short_pieces_in_critical: Mutex<Vec<bool>>,
    /// Each call's sharing policy.
    policies: Mutex<Vec<crate::gpu::SharingPolicy>>,
}

/// The backend stage the engine gets: proves on the CPU under the device's name (a GPU's, or
/// the CPU's own for the a/b/c tests: a CPU lane gets host a, b, c).
fn stage(gpus: Arc<FakeGpus>) -> Box<BackendStage> {
    Box::new(move |backend, urgency, policy, pce, w, abc, params, (r, s)| {
        gpus.policies.lock().unwrap().push(*policy);
        if urgency == Urgency::Critical {
            let short = crate::gpu::Turn::begin(0, Urgency::Throughput, policy.max_yield).short_pieces();
            gpus.short_pieces_in_critical.lock().unwrap().push(short);
        }
        let call = {
            let mut calls = gpus.calls.lock().unwrap();
            calls.push(backend);
            gpus.first_inputs.lock().unwrap().push(w.inputs[1]);
            calls.len()
        };
        let holding = gpus.holding.load(Ordering::SeqCst);
        while gpus.hold.load(Ordering::SeqCst) && (holding == 0 || call <= holding) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        if gpus.bad_argument.load(Ordering::SeqCst) {
            return Err(Error::InvalidInput("lg_domain 29 outside 1..=28".into()));
        }
        if let Backend::Cuda(id) = backend {
            assert!(abc.is_none(), "a GPU gets no host a, b, c");
            if gpus.broken.lock().unwrap().contains(&id) {
                return Err(Error::Gpu(format!("device {id}: an illegal memory access was encountered")));
            }
        }
        let budget = gpus.budget.lock().unwrap().clone().unwrap();
        let mut at = vec![w.aux.as_ptr() as usize];
        // What the CPU backend does first: its NTTs end a, b, c (H takes a's place).
        let abc = abc.map(|abc| {
            let before = budget.held();
            at.extend([&abc.a, &abc.b, &abc.c].iter().map(|v| v.as_ptr() as usize));
            let copy = Abc::new(abc.a.clone(), abc.b.clone(), abc.c.clone());
            abc.release();
            gpus.used_around_abc.lock().unwrap().push((before, budget.held()));
            copy
        });
        at.sort();
        gpus.buffers.lock().unwrap().push(at);
        crate::groth16::prove(Backend::Cpu, Urgency::Throughput, policy, pce, w, abc, params, (r, s))
    })
}

/// Lets held backends go when dropped: a failed assertion then fails its
/// test instead of leaving the proof threads waiting forever.
struct Release<'a>(&'a AtomicBool);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

type Proved = crate::Result<(Proof<Bls12>, Timings)>;

/// Starts an `Auto` request per seed, each on its own scoped thread.
fn spawn_proofs<'s, 'e: 's>(
    s: &'s std::thread::Scope<'s, 'e>,
    e: &'e Engine,
    pce: &'e Pce,
    params: &'e Srs,
    seeds: std::ops::Range<u64>,
) -> Vec<std::thread::ScopedJoinHandle<'s, Proved>> {
    seeds.map(|seed| s.spawn(move || e.prove_partition(request(pce, params, seed, Backend::Auto)))).collect()
}

fn setup() -> (Pce, Srs) {
    let c = Synthetic::new(Family::MimcChain, 1000, 1);
    let pce = extract(c.blank()).unwrap();
    let params = generate_random_parameters::<Bls12, _, _>(c.blank(), &mut ChaCha20Rng::seed_from_u64(1)).unwrap();
    (pce, Srs::in_memory(params))
}

fn engine(gpus: &Arc<FakeGpus>, n: u32, budget: u64) -> Engine {
    engine_on(gpus, (0..n).map(Backend::Cuda).collect(), budget)
}

/// An engine on the CPU backend (host a, b, c), through the double.
fn cpu_engine(gpus: &Arc<FakeGpus>, budget: u64) -> Engine {
    engine_on(gpus, vec![Backend::Cpu], budget)
}

fn engine_on(gpus: &Arc<FakeGpus>, backends: Vec<Backend>, budget: u64) -> Engine {
    let cfg = EngineConfig {
        synthesis_threads: 2,
        workers_per_device: 1,
        budget: BudgetSpec::Bytes(budget),
        critical_reserve: Some(0),
        ..Default::default()
    };
    let e = Engine::with_stage(cfg, backends, stage(gpus.clone())).unwrap();
    *gpus.budget.lock().unwrap() = Some(e.budget().clone());
    e
}

fn request<'a>(pce: &'a Pce, params: &'a Srs, seed: u64, backend: Backend) -> Partition<'a, Synthetic> {
    let circuit = Synthetic::new(Family::MimcChain, 1000, seed);
    Partition {
        pce,
        params,
        verify_against: Some(circuit.public_inputs()),
        circuit,
        backend,
        randomness: None,
        priority: Priority::default(),
        cancel: CancelToken::new(),
        observer: None,
    }
}

#[test]
fn requests_are_routed_by_device_id_and_spread_when_auto() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    let e = engine(&gpus, 3, 1 << 30);
    e.prove_partition(request(&pce, &params, 1, Backend::Cuda(2))).unwrap();
    assert_eq!(*gpus.calls.lock().unwrap(), [Backend::Cuda(2)]);
    assert!(matches!(e.prove_partition(request(&pce, &params, 1, Backend::Cuda(7))), Err(Error::InvalidInput(_))));

    // Six Auto requests at once, every device held busy until all are queued:
    // each device takes some.
    gpus.calls.lock().unwrap().clear();
    gpus.hold.store(true, Ordering::SeqCst);
    std::thread::scope(|s| {
        let _release = Release(&gpus.hold);
        let hs = spawn_proofs(s, &e, &pce, &params, 10..16);
        let t0 = std::time::Instant::now();
        while gpus.calls.lock().unwrap().len() < 3 {
            assert!(t0.elapsed().as_secs() < 60, "{:?}", gpus.calls.lock().unwrap());
            std::thread::yield_now();
        }
        gpus.hold.store(false, Ordering::SeqCst);
        for h in hs {
            h.join().unwrap().expect("verified");
        }
    });
    let stats = e.device_stats();
    assert_eq!(stats.iter().map(|d| d.proofs).sum::<u64>(), 7);
    assert!(stats.iter().all(|d| d.proofs >= 1), "{stats:?}");
    assert!(stats.iter().all(|d| d.busy_seconds > 0.0 && d.in_use == 0 && d.healthy));
}

/// Throughput work holds every worker of every device, and more waits for them: a critical
/// request still goes through at once, on a device's express worker, and the rest still finish.
/// Requests waiting for a device take its workers in line: a later deadline request (a
/// WindowPoSt) before earlier throughput ones.
#[test]
fn device_workers_go_to_the_first_in_line() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    let e = engine(&gpus, 1, 1 << 30);
    gpus.holding.store(1, Ordering::SeqCst);
    gpus.hold.store(true, Ordering::SeqCst);
    std::thread::scope(|s| {
        let _release = Release(&gpus.hold);
        let throughput = spawn_proofs(s, &e, &pce, &params, 10..13);
        let t0 = std::time::Instant::now();
        while gpus.calls.lock().unwrap().is_empty() {
            assert!(t0.elapsed().as_secs() < 60, "the first proof never reached the device");
            std::thread::yield_now();
        }
        let deadline = s.spawn(|| {
            let mut r = request(&pce, &params, 50, Backend::Auto);
            r.priority = Priority::Deadline(0);
            e.prove_partition(r)
        });
        // Every request has its witness and waits for the one worker.
        std::thread::sleep(std::time::Duration::from_millis(500));
        gpus.hold.store(false, Ordering::SeqCst);
        deadline.join().unwrap().expect("verified");
        for h in throughput {
            h.join().unwrap().expect("verified");
        }
    });
    let firsts = gpus.first_inputs.lock().unwrap().clone();
    let of = |seed| Synthetic::new(Family::MimcChain, 1000, seed).public_inputs()[0];
    assert_eq!(firsts.len(), 4);
    assert_eq!(firsts[1], of(50), "the deadline request went right after the running proof");
}

#[test]
fn priorities_rise_to_their_class_and_never_fall() {
    use crate::circuits::ProofClass::*;
    assert_eq!(Priority::Throughput(7).in_class(Throughput), Priority::Throughput(7));
    assert_eq!(Priority::Throughput(7).in_class(Deadline), Priority::Deadline(7));
    assert_eq!(Priority::Throughput(7).in_class(Critical), Priority::Critical);
    assert_eq!(Priority::Critical.in_class(Throughput), Priority::Critical);
    assert!(Priority::Deadline(0) > Priority::Throughput(255) && Priority::Critical > Priority::Deadline(255));
}

#[test]
fn a_critical_request_does_not_wait_for_busy_workers() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    let e = engine(&gpus, 2, 1 << 30);
    gpus.holding.store(2, Ordering::SeqCst);
    gpus.hold.store(true, Ordering::SeqCst);
    std::thread::scope(|s| {
        let _release = Release(&gpus.hold);
        let background = spawn_proofs(s, &e, &pce, &params, 10..14);
        let t0 = std::time::Instant::now();
        while e.device_stats().iter().map(|d| d.in_use).sum::<usize>() < 2 {
            assert!(t0.elapsed().as_secs() < 60, "the background never filled the workers");
            std::thread::yield_now();
        }
        let critical = s.spawn(|| {
            let mut r = request(&pce, &params, 99, Backend::Auto);
            r.priority = Priority::Critical;
            e.prove_partition(r)
        });
        while !critical.is_finished() {
            assert!(t0.elapsed().as_secs() < 60, "the critical request waited for throughput work");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        critical.join().unwrap().expect("verified");
        let short = gpus.short_pieces_in_critical.lock().unwrap().clone();
        assert_eq!(short, [true], "the critical request is announced until its stage ends");
        assert!(gpus.hold.load(Ordering::SeqCst), "done while both devices are still held");
        assert_eq!(gpus.calls.lock().unwrap().len(), 3, "the queued throughput proofs still wait");
        gpus.hold.store(false, Ordering::SeqCst);
        for h in background {
            h.join().unwrap().expect("verified");
        }
    });
    let stats = e.device_stats();
    assert_eq!(stats.iter().map(|d| d.proofs).sum::<u64>(), 5);
    assert!(stats.iter().all(|d| d.in_use == 0));
    assert_eq!(e.budget().held(), 0);
}

#[test]
fn a_failing_device_does_not_poison_the_others() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    gpus.broken.lock().unwrap().push(1);
    let e = engine(&gpus, 2, 1 << 30);

    // Named: the error comes back as it is.
    for _ in 0..FAILURES {
        assert!(matches!(e.prove_partition(request(&pce, &params, 3, Backend::Cuda(1))), Err(Error::Gpu(_))));
    }
    let s = e.device_stats();
    assert!(!s[1].healthy && s[1].failures == FAILURES as u64, "{s:?}");
    assert!(s[0].healthy && s[0].failures == 0);

    // Auto: never routed to the sidelined device, every proof verifies.
    gpus.calls.lock().unwrap().clear();
    std::thread::scope(|s| {
        for i in 0..4 {
            let (e, pce, params) = (&e, &pce, &params);
            s.spawn(move || e.prove_partition(request(pce, params, 20 + i, Backend::Auto)).expect("verified"));
        }
    });
    assert!(gpus.calls.lock().unwrap().iter().all(|&b| b == Backend::Cuda(0)));
    assert_eq!(e.budget().held(), 0);
}

const FAILURES: usize = 3;

/// A single-GPU engine whose device failed three times refuses `Auto` requests only until the
/// cool-down has passed: then a probe goes there, and its success brings the device back.
#[test]
fn a_sidelined_device_is_probed_again_after_a_cool_down() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    let mut e = engine(&gpus, 1, 1 << 30);
    e.lanes.cool_down = std::time::Duration::from_millis(300);
    gpus.broken.lock().unwrap().push(0);
    for _ in 0..FAILURES {
        assert!(matches!(e.prove_partition(request(&pce, &params, 3, Backend::Auto)), Err(Error::Gpu(_))));
    }
    assert!(!e.device_stats()[0].healthy);
    let calls = gpus.calls.lock().unwrap().len();
    assert!(matches!(e.prove_partition(request(&pce, &params, 4, Backend::Auto)), Err(Error::Gpu(_))));
    assert_eq!(gpus.calls.lock().unwrap().len(), calls, "refused without reaching the device");
    // The cause goes away; after the cool-down a probe succeeds.
    gpus.broken.lock().unwrap().clear();
    std::thread::sleep(std::time::Duration::from_millis(400));
    assert!(e.device_stats()[0].healthy, "probed again after the cool-down");
    e.prove_partition(request(&pce, &params, 5, Backend::Auto)).expect("the probe proves");
    let s = &e.device_stats()[0];
    assert!(s.healthy && s.proofs == 1 && s.failures == FAILURES as u64, "{s:?}");
}

/// A bad argument is the request's error, not the device's: it never sidelines a device.
#[test]
fn argument_errors_do_not_sideline_a_device() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    let e = engine(&gpus, 1, 1 << 30);
    gpus.bad_argument.store(true, Ordering::SeqCst);
    for _ in 0..2 * FAILURES {
        assert!(matches!(e.prove_partition(request(&pce, &params, 3, Backend::Auto)), Err(Error::InvalidInput(_))));
    }
    let s = &e.device_stats()[0];
    assert!(s.healthy && s.failures == 2 * FAILURES as u64, "{s:?}");
}

/// A stats poller inside its device query (a slow or wedged cudaMemGetInfo, stood in for by
/// the query itself proving) holds nothing a proof needs: the proof takes a worker, proves,
/// is counted and gives the worker back meanwhile. The query reads the counters of before.
#[test]
fn a_device_query_in_the_stats_does_not_stall_proofs() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    // Leaked: a proof stalled by the poller must not hold the test's stack once it fails.
    let e: &'static Engine = Box::leak(Box::new(engine(&gpus, 2, 1 << 30)));
    let (pce, params): (&'static Pce, &'static Srs) = (Box::leak(Box::new(pce)), Box::leak(Box::new(params)));
    let stats = e.lanes.stats_with(|backend| {
        if backend == Backend::Cuda(0) {
            let (tx, rx) = std::sync::mpsc::channel();
            // The receiver is gone if the test failed first.
            std::thread::spawn(move || drop(tx.send(e.prove_partition(request(pce, params, 5, Backend::Auto)))));
            let proved = rx.recv_timeout(std::time::Duration::from_secs(60));
            proved.expect("a proof stalled behind the stats' device query").expect("verified");
        }
        (1 << 30, 1 << 34)
    });
    assert!(stats.iter().all(|d| d.proofs == 0 && (d.vram_free, d.vram_total) == (1 << 30, 1 << 34)), "{stats:?}");
    assert_eq!(e.device_stats().iter().map(|d| d.proofs).sum::<u64>(), 1);
}

#[test]
fn an_auto_request_is_retried_on_another_device() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    let e = engine(&gpus, 2, 1 << 30);
    // Device 0 breaks while it looks healthy: the first Auto request lands on
    // it (most free workers, first in order), fails, and is proved on 1.
    gpus.broken.lock().unwrap().push(0);
    let (_, t) = e.prove_partition(request(&pce, &params, 5, Backend::Auto)).expect("retried and verified");
    assert!(t.verify > 0.0);
    assert_eq!(*gpus.calls.lock().unwrap(), [Backend::Cuda(0), Backend::Cuda(1)]);
    let s = e.device_stats();
    assert_eq!((s[0].failures, s[1].proofs), (1, 1));
    assert_eq!(e.budget().held(), 0, "the retry's reservation was given back too");
}

#[test]
fn abc_memory_goes_back_to_the_budget_when_the_backend_frees_it() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    let e = cpu_engine(&gpus, 1 << 30);
    e.prove_partition(request(&pce, &params, 9, Backend::Cpu)).unwrap();
    let fp = footprint(&pce, Backend::Cpu);
    let abc = 96 * pce.domain_size() as u64;
    assert_eq!(*gpus.used_around_abc.lock().unwrap(), [(fp, fp - abc)]);
    assert_eq!(e.budget().held(), 0);
}

/// The CPU backend's scalars beside a, b, c are the largest of its twiddle tables (32·m) and
/// one MSM's scalars: with more aux than the domain has rows, L's copy of aux.
#[test]
fn a_cpu_proof_counts_its_largest_scalar_vector() {
    let (mut pce, _) = setup();
    let m = pce.domain_size() as u64;
    let d = &pce.density;
    let largest = m.max(pce.num_aux as u64).max((d.b_input.ones + d.b_aux.ones) as u64);
    let witness = |p: &Pce| 33 * (p.num_inputs + p.num_aux) as u64;
    assert_eq!(footprint(&pce, Backend::Cpu), witness(&pce) + 96 * m + 32 * largest);
    pce.num_aux = 3 * m as usize;
    assert_eq!(footprint(&pce, Backend::Cpu), witness(&pce) + 96 * m + 32 * 3 * m);
}

/// On a GPU, a proof holds only its witness on the host: the budget reserves that much, and
/// the backend gets no host a, b, c (the double asserts it).
#[test]
fn a_gpu_proof_holds_only_its_witness_on_the_host() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    let e = engine(&gpus, 1, 1 << 30);
    let witness = 33 * (pce.num_inputs + pce.num_aux) as u64;
    assert_eq!(footprint(&pce, Backend::Cuda(0)), witness);
    assert_eq!(e.predicted_peak(0, &pce, 5), 5 * witness);
    let (_, t) = e.prove_partition(request(&pce, &params, 9, Backend::Cuda(0))).unwrap();
    assert_eq!(t.spmv, 0.0, "no SpMV on the host");
    assert!(gpus.used_around_abc.lock().unwrap().is_empty());
    assert_eq!((e.budget().peak_used(), e.budget().held()), (witness, 0));
}

/// A finished proof's witness and a/b/c buffers stay, counted in the budget,
/// for the next proof: in a budget of one footprint, the second proof runs
/// in them (the peak stays one footprint). Kept buffers never block a
/// reservation: they are freed for its room.
#[test]
fn finished_proofs_leave_their_buffers_to_the_next() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    let fp = footprint(&pce, Backend::Cpu);
    let e = cpu_engine(&gpus, fp);
    // Counted by their values (a, b, c hold n; their capacity is the domain).
    let kept = 32 * pce.num_aux as u64 + 96 * pce.num_constraints() as u64;
    for seed in [1, 2] {
        e.prove_partition(request(&pce, &params, seed, Backend::Cpu)).unwrap();
        assert_eq!((e.budget().held(), e.budget().idle_bytes(), e.budget().used()), (0, kept, kept));
    }
    let at = gpus.buffers.lock().unwrap().clone();
    assert_eq!(at[0], at[1], "the second proof ran in the first one's buffers");
    assert_eq!(e.budget().peak_used(), fp);
    let all = e.budget().reserve(fp, Priority::default(), &CancelToken::new()).expect("kept buffers give way");
    assert_eq!((e.budget().idle_bytes(), e.budget().used()), (0, fp));
    drop(all);
    assert_eq!(e.budget().used(), 0);
    // What `cuzk_mem_trim` does for every engine.
    e.prove_partition(request(&pce, &params, 3, Backend::Cpu)).unwrap();
    assert_eq!(e.budget().idle_bytes(), kept);
    drop_idle_buffers();
    assert_eq!((e.budget().idle_bytes(), e.budget().used()), (0, 0));
    // Expiry frees only what has been idle longer than the keep time (the reaper thread runs
    // this every quarter of a minute with a minute's keep).
    e.prove_partition(request(&pce, &params, 4, Backend::Cpu)).unwrap();
    e.budget().expire_idle(std::time::Duration::from_secs(3600));
    assert_eq!(e.budget().idle_bytes(), kept);
    std::thread::sleep(std::time::Duration::from_millis(5));
    e.budget().expire_idle(std::time::Duration::ZERO);
    assert_eq!((e.budget().idle_bytes(), e.budget().used()), (0, 0));
    assert!(
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
            .any(|name| name.trim() == "cuzk-idle-reape"),
        "the reaper thread runs (comm holds 15 bytes)"
    );
}

/// A request waiting for its turn to hold a, b, c is cancelled: it returns
/// `Cancelled` and its witness's reservation is given back.
#[test]
fn cancel_frees_a_request_waiting_to_hold_abc() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    let e = cpu_engine(&gpus, 1 << 30);
    let fp = footprint(&pce, Backend::Cpu);
    let abc = 96 * pce.domain_size() as u64;
    gpus.hold.store(true, Ordering::SeqCst);
    let cancel = CancelToken::new();
    std::thread::scope(|s| {
        let _release = Release(&gpus.hold);
        let wait_for = |held: u64, waiting: usize| {
            let t0 = std::time::Instant::now();
            while (e.budget().held(), e.budget().waiting()) != (held, waiting) {
                assert!(t0.elapsed().as_secs() < 60, "held {}", e.budget().held());
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        };
        // The two holders hold a, b, c (one in the backend, one waiting for
        // it) before the third arrives, so the third is the one that waits.
        let holders = spawn_proofs(s, &e, &pce, &params, 40..42);
        wait_for(2 * fp, 0);
        let third = s.spawn(|| {
            e.prove_partition(Partition { cancel: cancel.clone(), ..request(&pce, &params, 42, Backend::Auto) })
        });
        wait_for(3 * (fp - abc) + 2 * abc, 1);
        cancel.cancel();
        assert!(matches!(third.join().unwrap(), Err(Error::Cancelled)));
        assert_eq!((e.budget().held(), e.budget().waiting()), (2 * fp, 0));
        gpus.hold.store(false, Ordering::SeqCst);
        for h in holders {
            h.join().unwrap().expect("verified");
        }
    });
    assert_eq!(e.budget().held(), 0);
}

/// Six proofs on one busy device: all six witnesses are made, but only two
/// proofs hold a, b, c (one in the backend, one ready for it); the other four
/// wait with their witness alone, and the budget says so, as the prediction does.
#[test]
fn at_most_two_proofs_per_device_hold_abc() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    let e = cpu_engine(&gpus, 1 << 30);
    let fp = footprint(&pce, Backend::Cpu);
    let abc = 96 * pce.domain_size() as u64;
    let expected = 6 * (fp - abc) + 2 * abc;
    assert_eq!(e.abc_holders(), ABC_HOLDERS_PER_DEVICE);
    assert_eq!(e.predicted_peak(0, &pce, 6), expected);
    assert_eq!(e.predicted_peak(0, &pce, 1), fp);
    gpus.hold.store(true, Ordering::SeqCst);
    std::thread::scope(|s| {
        let _release = Release(&gpus.hold);
        let hs = spawn_proofs(s, &e, &pce, &params, 30..36);
        let t0 = std::time::Instant::now();
        while e.budget().used() != expected || e.budget().waiting() != 4 {
            assert!(t0.elapsed().as_secs() < 60, "used {} of {expected}", e.budget().used());
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert_eq!((e.budget().used(), gpus.calls.lock().unwrap().len()), (expected, 1), "still two holders");
        gpus.hold.store(false, Ordering::SeqCst);
        for h in hs {
            h.join().unwrap().expect("verified");
        }
    });
    assert_eq!(e.budget().held(), 0);
    assert_eq!(e.budget().peak_used(), expected);
}

#[test]
fn a_device_listed_twice_is_refused() {
    let gpus = Arc::new(FakeGpus::default());
    let cfg = EngineConfig { budget: BudgetSpec::Bytes(1 << 20), ..Default::default() };
    let r = Engine::with_stage(cfg, vec![Backend::Cuda(0), Backend::Cuda(0)], stage(gpus));
    assert!(matches!(r, Err(Error::InvalidInput(_))));
}

/// A circuit that notes the name and nice value of the thread its witness
/// is made on.
#[cfg(target_os = "linux")]
struct NiceProbe(Synthetic, Arc<Mutex<Option<(String, i32)>>>);

#[cfg(target_os = "linux")]
impl crate::circuits::WitnessSource for NiceProbe {
    fn gadget_witness(self, into: crate::witness::WitnessBuffer) -> crate::Result<Witness> {
        self.0.gadget_witness(into)
    }

    fn witness(self, pce: &crate::pce::Pce, into: crate::witness::WitnessBuffer) -> crate::Result<Witness> {
        let name = std::thread::current().name().unwrap_or_default().to_string();
        *self.1.lock().unwrap() = Some((name, this_thread_nice()));
        self.0.witness(pce, into)
    }
}

#[cfg(target_os = "linux")]
fn this_thread_nice() -> i32 {
    // SAFETY: reads this thread's own priority; no memory is involved.
    unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
}

/// Witnesses are made on the witness pool (not the SpMV one), at nice
/// +SYNTHESIS_NICE over the thread that made the engine (the kernel caps
/// nice at 19), or at its priority with `synthesis_nice: 0`.
#[cfg(target_os = "linux")]
#[test]
fn synthesis_threads_yield_to_the_backend() {
    let (pce, params) = setup();
    let own = this_thread_nice();
    for (nice, want) in [(SYNTHESIS_NICE, (own + SYNTHESIS_NICE).min(19)), (0, own)] {
        let gpus = Arc::new(FakeGpus::default());
        let cfg = EngineConfig {
            synthesis_threads: 1,
            synthesis_nice: nice,
            budget: BudgetSpec::Bytes(1 << 30),
            ..Default::default()
        };
        let e = Engine::with_stage(cfg, vec![Backend::Cuda(0)], stage(gpus.clone())).unwrap();
        *gpus.budget.lock().unwrap() = Some(e.budget().clone());
        let seen = Arc::new(Mutex::new(None));
        let circuit = Synthetic::new(Family::MimcChain, 1000, 5);
        e.prove_partition(Partition {
            pce: &pce,
            params: &params,
            verify_against: Some(circuit.public_inputs()),
            circuit: NiceProbe(circuit, seen.clone()),
            backend: Backend::Auto,
            randomness: None,
            priority: Priority::default(),
            cancel: CancelToken::new(),
            observer: None,
        })
        .unwrap();
        assert_eq!(*seen.lock().unwrap(), Some(("cuzk-witness-0".to_string(), want)), "synthesis_nice {nice}");
    }
}

/// A statement of several mimc-chain partitions (seeds `first..`).
struct Several {
    seeds: std::ops::Range<u64>,
}

impl super::request::Partitions for Several {
    type Instance = Synthetic;
    fn count(&self) -> usize {
        self.seeds.clone().count()
    }
    fn instance(&self, k: usize) -> crate::Result<Synthetic> {
        Ok(Synthetic::new(Family::MimcChain, 1000, self.seeds.start + k as u64))
    }
    fn public_inputs(&self, k: usize) -> crate::Result<Vec<blstrs::Scalar>> {
        Ok(self.instance(k)?.public_inputs())
    }
}

fn several_request<'a>(
    pce: &'a Pce,
    params: &'a Srs,
    several: &'a Several,
    opts: ProveOptions,
    cancel: CancelToken,
) -> Request<'a, Several> {
    Request { pce, params, statement: several, opts, priority: Priority::default(), cancel, observer: None }
}

/// Every partition of a request runs at once (each with its own reservation), the proofs come
/// back in partition order with the fixed (r, s) of each, and the stage times are summed.
#[test]
fn partitions_are_proven_at_once_in_order() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    let e = engine(&gpus, 2, 1 << 30);
    let several = Several { seeds: 30..34 };
    let rs: Vec<_> = (0..4).map(|k| (Scalar::from(100 + k), Scalar::from(200 + k))).collect();
    let opts = ProveOptions { randomness: Some(rs.clone()), ..ProveOptions::default() };
    gpus.hold.store(true, Ordering::SeqCst);
    let (proofs, t) = std::thread::scope(|s| {
        let _release = Release(&gpus.hold);
        let h =
            s.spawn(|| e.prove_partitions(several_request(&pce, &params, &several, opts.clone(), CancelToken::new())));
        let t0 = std::time::Instant::now();
        // Both devices busy and the other two partitions admitted at the same time.
        while gpus.calls.lock().unwrap().len() < 2 || e.budget().held() < 4 * footprint(&pce, Backend::Cuda(0)) {
            assert!(t0.elapsed().as_secs() < 60, "held {}", e.budget().held());
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        gpus.hold.store(false, Ordering::SeqCst);
        h.join().unwrap().expect("every partition verifies")
    });
    assert_eq!(proofs.len(), 4);
    for (k, proof) in proofs.iter().enumerate() {
        let w = Witness::generate(several.instance(k).unwrap()).unwrap();
        let (alone, _) = crate::groth16::prove(
            Backend::Cpu,
            Urgency::Throughput,
            &crate::gpu::SharingPolicy::default(),
            &pce,
            &w,
            None,
            params.queries().unwrap(),
            (rs[k].0, rs[k].1),
        )
        .unwrap();
        assert_eq!(*proof, alone, "partition {k}");
    }
    assert!(t.verify > 0.0 && t.total > 0.0);
    assert_eq!(e.budget().held(), 0);
}

/// A request of many partitions moves only as many along at once as the engine can use (a/b/c
/// holders plus workers: 3 on one device), each on a thread, not one thread per partition;
/// the proofs still come back in order.
#[test]
fn many_partitions_take_a_few_threads_in_turn() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    let e = engine(&gpus, 1, 1 << 30);
    assert_eq!(e.partitions_at_once(), 3);
    let several = Several { seeds: 40..60 };
    let fp = footprint(&pce, Backend::Cuda(0));
    gpus.hold.store(true, Ordering::SeqCst);
    let proofs = std::thread::scope(|s| {
        let _release = Release(&gpus.hold);
        let h = s.spawn(|| {
            e.prove_partitions(several_request(&pce, &params, &several, ProveOptions::default(), CancelToken::new()))
        });
        let t0 = std::time::Instant::now();
        while gpus.calls.lock().unwrap().is_empty() {
            assert!(t0.elapsed().as_secs() < 60);
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // The rest have had time to be admitted, were there threads for them.
        std::thread::sleep(std::time::Duration::from_millis(300));
        let held = e.budget().held();
        assert!(held > 0 && held <= 3 * fp, "{held} held: more than 3 partitions in flight ({fp} each)");
        gpus.hold.store(false, Ordering::SeqCst);
        h.join().unwrap().expect("every partition verifies").0
    });
    assert_eq!(proofs.len(), 20);
    assert_eq!(e.budget().held(), 0);
}

/// The first partition that fails fails the request with its own error; the others are
/// cancelled and nothing stays reserved.
#[test]
fn a_failing_partition_cancels_the_rest() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    gpus.broken.lock().unwrap().push(0);
    // One device, one worker: the first partition fails there while the others queue.
    let e = engine(&gpus, 1, 1 << 30);
    let several = Several { seeds: 40..46 };
    let opts = ProveOptions { backend: Backend::Cuda(0), ..ProveOptions::default() };
    let res = e.prove_partitions(several_request(&pce, &params, &several, opts, CancelToken::new()));
    assert!(matches!(res, Err(Error::Gpu(_))), "{res:?}");
    assert!(gpus.calls.lock().unwrap().len() < 6, "siblings were cancelled, not all run");
    assert_eq!((e.budget().held(), e.budget().waiting()), (0, 0));
    // A caller's cancel ends the whole request.
    let cancel = CancelToken::new();
    cancel.cancel();
    let res = e.prove_partitions(several_request(&pce, &params, &several, ProveOptions::default(), cancel));
    assert_eq!(res.err(), Some(Error::Cancelled));
    // (r, s) for another number of partitions is refused before anything runs.
    let opts = ProveOptions { randomness: Some(vec![]), ..ProveOptions::default() };
    let res = e.prove_partitions(several_request(&pce, &params, &several, opts, CancelToken::new()));
    assert!(matches!(res, Err(Error::InvalidInput(_))));
}

/// Parameters that are not the circuit's are refused when the request comes, before any
/// partition makes its witness: by their verifying key while their queries are still decoding
/// (these never come), in full once they are decoded (another circuit's, whose key fits).
#[test]
fn parameters_of_another_circuit_are_refused_before_any_witness() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    let e = engine(&gpus, 1, 1 << 30);
    let several = Several { seeds: 1..4 };
    let witnesses = std::sync::atomic::AtomicUsize::new(0);
    let observer = |s: Stage| {
        if s == Stage::Witness {
            witnesses.fetch_add(1, Ordering::SeqCst);
        }
    };
    let refused = |params: &Srs| {
        let cancel = CancelToken::new();
        let req = several_request(&pce, params, &several, ProveOptions::default(), cancel.clone());
        std::thread::scope(|s| {
            let h = s.spawn(|| e.prove_partitions(Request { observer: Some(&observer), ..req }));
            let t0 = std::time::Instant::now();
            while !h.is_finished() && t0.elapsed().as_secs() < 10 {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            // What the request would still be waiting for, were it not refused at once.
            cancel.cancel();
            h.join().unwrap()
        })
    };
    let mut vk = params.vk().clone();
    vk.ic.pop();
    let (decoding, _never) = Srs::pending(vk);
    assert!(matches!(refused(&decoding), Err(Error::ParamsMismatch(_))));
    let other = Synthetic::new(Family::MimcChain, 500, 1);
    let other = generate_random_parameters::<Bls12, _, _>(other.blank(), &mut ChaCha20Rng::seed_from_u64(2)).unwrap();
    assert_eq!(other.vk.ic.len(), pce.num_inputs, "a key that fits");
    assert!(matches!(refused(&Srs::in_memory(other)), Err(Error::ParamsMismatch(_))));
    assert_eq!(witnesses.load(Ordering::SeqCst), 0, "a witness was made for parameters that cannot prove it");
    assert!(gpus.calls.lock().unwrap().is_empty());
    assert_eq!((e.budget().held(), e.budget().waiting()), (0, 0));
}

/// A NonInteractivePoRep-sized request (126 partitions) in a budget of three partitions'
/// footprints on two devices: it never holds more than its budget, both devices prove its
/// partitions, its proofs come back whole and in order; cancelled while both devices hold one
/// of its partitions, it ends with `Cancelled`, the partitions not yet started never start, and
/// nothing stays reserved or waiting.
#[test]
fn a_126_partition_request_stays_in_its_budget_spreads_and_cancels() {
    let (pce, params) = setup();
    let gpus = Arc::new(FakeGpus::default());
    let fp = footprint(&pce, Backend::Cuda(0));
    let e = engine(&gpus, 2, 3 * fp);
    let several = Several { seeds: 1000..1126 };
    let prove = |cancel: &CancelToken| {
        e.prove_partitions(several_request(&pce, &params, &several, ProveOptions::default(), cancel.clone()))
    };
    let (res, most) = std::thread::scope(|s| {
        let h = s.spawn(|| prove(&CancelToken::new()));
        let mut most = 0;
        while !h.is_finished() {
            most = most.max(e.budget().held());
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        (h.join().unwrap(), most)
    });
    let (proofs, _) = res.expect("every partition verifies");
    assert_eq!(proofs.len(), 126);
    assert!(most <= 3 * fp, "{most} held, over the budget of {}", 3 * fp);
    let calls = std::mem::take(&mut *gpus.calls.lock().unwrap());
    assert_eq!(calls.len(), 126);
    for d in [0, 1] {
        assert!(calls.contains(&Backend::Cuda(d)), "device {d} proved none of the partitions");
    }
    for k in [0, 125] {
        crate::groth16::verify(params.vk(), &proofs[k], &several.public_inputs(k).unwrap())
            .expect("partition k's proof is in slot k");
    }

    let cancel = CancelToken::new();
    gpus.hold.store(true, Ordering::SeqCst);
    let res = std::thread::scope(|s| {
        let _release = Release(&gpus.hold);
        let h = s.spawn(|| prove(&cancel));
        let t0 = std::time::Instant::now();
        while gpus.calls.lock().unwrap().len() < 2 {
            assert!(t0.elapsed().as_secs() < 60, "both devices never got a partition");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        cancel.cancel();
        gpus.hold.store(false, Ordering::SeqCst);
        h.join().unwrap()
    });
    assert_eq!(res.err(), Some(Error::Cancelled));
    let started = gpus.calls.lock().unwrap().len();
    assert!(started <= e.partitions_at_once(), "{started} partitions started after the cancel");
    assert_eq!((e.budget().held(), e.budget().waiting()), (0, 0));
}

/// A partition whose parameters are still being decoded makes its witness, then waits for
/// them (holding no device worker); it proves once they come, and a cancel ends its wait with
/// nothing left reserved.
#[test]
fn a_partition_waits_for_parameters_still_decoding() {
    let (pce, ready) = setup();
    let params = ready.queries().unwrap();
    let gpus = Arc::new(FakeGpus::default());
    let e = engine(&gpus, 1, 1 << 30);
    let (pending, decoded) = Srs::pending(params.vk.clone());
    std::thread::scope(|s| {
        let h = s.spawn(|| e.prove_partition(request(&pce, &pending, 7, Backend::Auto)));
        std::thread::sleep(std::time::Duration::from_millis(400));
        assert!(!h.is_finished(), "waits for the points");
        assert!(e.device_stats().iter().all(|d| d.in_use == 0), "without a device worker");
        decoded(Ok(params.clone()));
        h.join().unwrap().expect("proves and verifies once they come");
    });

    let (never, _decoded) = Srs::pending(params.vk.clone());
    let r = request(&pce, &never, 8, Backend::Auto);
    let cancel = r.cancel.clone();
    std::thread::scope(|s| {
        let h = s.spawn(|| e.prove_partition(r));
        std::thread::sleep(std::time::Duration::from_millis(400));
        cancel.cancel();
        assert!(matches!(h.join().unwrap(), Err(Error::Cancelled)));
    });
    assert_eq!(e.budget().held(), 0);

    let (failed, decoded) = Srs::pending(params.vk.clone());
    decoded(Err(Error::BadParamsFile("p.params: h[3] is not a valid curve point".into())));
    assert!(matches!(e.prove_partition(request(&pce, &failed, 9, Backend::Auto)), Err(Error::BadParamsFile(_))));
    assert_eq!(e.budget().held(), 0);
}

/// Every backend stage gets the engine's sharing policy, and a policy out of range is refused
/// when the engine is made.
#[test]
fn the_engine_passes_its_sharing_policy_to_every_stage() {
    use crate::gpu::SharingPolicy;
    let gpus = Arc::new(FakeGpus::default());
    let policy =
        SharingPolicy { window_bits: Some(16), piece_max_lg: 24, critical_room: 3 << 29, ..Default::default() };
    let cfg = |sharing| EngineConfig {
        synthesis_threads: 2,
        budget: BudgetSpec::Bytes(1 << 30),
        sharing,
        ..Default::default()
    };
    let e = Engine::with_stage(cfg(policy), vec![Backend::Cuda(0), Backend::Cuda(1)], stage(gpus.clone())).unwrap();
    *gpus.budget.lock().unwrap() = Some(e.budget().clone());
    let (pce, params) = setup();
    for seed in 0..3 {
        e.prove_partition(request(&pce, &params, seed, Backend::Auto)).unwrap();
    }
    assert_eq!(*gpus.policies.lock().unwrap(), vec![policy; 3]);
    let bad = SharingPolicy { piece_ahead_lg: 22, ..Default::default() };
    assert!(matches!(Engine::with_stage(cfg(bad), vec![Backend::Cuda(0)], stage(gpus)), Err(Error::InvalidInput(_))));
}

/// With `witness_program` off, witnesses are the gadgets': the PCE's program is never recorded
/// nor judged; with it on, the first witness records and checks it.
#[test]
fn witness_program_off_makes_every_witness_by_the_gadgets() {
    let gpus = Arc::new(FakeGpus::default());
    let c = Synthetic::new(Family::Sha256Chain, 1 << 14, 1);
    let params = generate_random_parameters::<Bls12, _, _>(c.blank(), &mut ChaCha20Rng::seed_from_u64(2)).unwrap();
    let params = Srs::in_memory(params);
    for on in [false, true] {
        let pce = extract(c.blank()).unwrap();
        let cfg = EngineConfig { synthesis_threads: 2, witness_program: on, ..Default::default() };
        let e = Engine::with_stage(cfg, vec![Backend::Cpu], stage(gpus.clone())).unwrap();
        *gpus.budget.lock().unwrap() = Some(e.budget().clone());
        let circuit = Synthetic::new(Family::Sha256Chain, 1 << 14, 7);
        let verify_against = Some(circuit.public_inputs());
        e.prove_partition(Partition { verify_against, circuit, ..request(&pce, &params, 0, Backend::Cpu) }).unwrap();
        assert_eq!(pce.program.trusted(), on.then_some(true), "witness_program {on}");
    }
}
