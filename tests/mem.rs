//! `cuzk::mem` against the kernel's own figures, and the SRS cache's accounting.

use std::sync::{Arc, Mutex};

use cuzk::mem::{self, parse_status_field, Owner, Tracked};
use cuzk::params::{dummy_params, srs, LoadOptions, Srs};
use cuzk::pce::extract;

/// RSS measurements must not overlap other allocating tests of this binary.
static LOCK: Mutex<()> = Mutex::new(());

const MIB: u64 = 1 << 20;

#[test]
fn status_parsing_is_robust() {
    let s = "Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t1024 kB\nRssAnon:\t 12 kB\nRssFile: junk kB\nOdd: 5 parsecs\n";
    assert_eq!(parse_status_field(s, "VmRSS"), 1024 * 1024);
    assert_eq!(parse_status_field(s, "VmHWM"), 2048 * 1024);
    assert_eq!(parse_status_field(s, "RssAnon"), 12 * 1024);
    assert_eq!(parse_status_field(s, "RssFile"), 0, "malformed value");
    assert_eq!(parse_status_field(s, "RssShmem"), 0, "missing field");
    assert_eq!(parse_status_field(s, "Odd"), 0, "unknown unit");
    assert_eq!(parse_status_field(s, "Vm"), 0, "a prefix is not a key");
    assert_eq!(parse_status_field("", "VmRSS"), 0);
}

#[test]
fn tracked_guards_count_and_uncount() {
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let before = mem::owner_bytes(Owner::Witness);
    let mut t = Tracked::new(Owner::Witness, 1000usize);
    assert_eq!(mem::owner_bytes(Owner::Witness), before + 1000);
    t.set(250u64);
    assert_eq!(mem::owner_bytes(Owner::Witness), before + 250);
    t.set(5000u32);
    assert_eq!((t.bytes(), t.owner()), (5000, Owner::Witness));
    assert_eq!(mem::stats().witness_bytes, before + 5000);
    drop(t);
    assert_eq!(mem::owner_bytes(Owner::Witness), before);
}

/// A 512 MiB buffer, touched page by page, accounted through `Tracked`: VmRSS,
/// RssAnon, VmHWM and the owner counter all move by its size, and RSS comes
/// back when it is freed.
///
/// Tolerance 16 MiB (3% of the buffer): this test holds `LOCK`, so the only
/// other activity in the process is the test harness and a concurrently
/// running non-allocating test; the kernel counts RSS per page and in per-CPU
/// batches of up to 64 pages per thread (a few hundred KiB), and malloc adds
/// one header page. Anything beyond 16 MiB would be a real accounting error.
#[test]
fn mem_stats_match_reality() {
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    const N: u64 = 512 * MIB;
    const TOL: i64 = 16 * MIB as i64;
    // The tests before this one leave freed memory in glibc's arenas (up to
    // ~20 MiB after the engine's); the trim at the end would return it too,
    // so both ends are measured after a trim.
    mem::trim();
    let s0 = mem::stats();
    assert!(s0.rss_bytes > 0 && s0.peak_rss_bytes >= s0.rss_bytes, "{s0:?}");
    assert!(s0.rss_anon_bytes > 0 && s0.rss_file_bytes > 0, "{s0:?}");
    let reset = mem::reset_peak();
    let s0 = mem::stats();
    match &reset {
        Ok(()) => {
            assert!(s0.peak_reset_supported);
            assert!(s0.peak_rss_bytes < s0.rss_bytes + 8 * MIB, "peak reset to about RSS: {s0:?}");
        }
        Err(e) => {
            assert!(!s0.peak_reset_supported);
            assert!(e.to_string().contains("clear_refs"), "{e}");
        }
    }
    let abc0 = mem::owner_bytes(Owner::Abc);
    let mut buf: Vec<u8> = Vec::with_capacity(N as usize);
    let t = Tracked::new(Owner::Abc, buf.capacity());
    // Untouched capacity is not resident.
    let s_reserved = mem::stats();
    assert!((s_reserved.rss_bytes as i64 - s0.rss_bytes as i64) < TOL, "{s_reserved:?}");
    buf.resize(N as usize, 1); // touches every page
                               // Keep the optimizer from eliding the buffer (it is otherwise write-only).
    let buf = std::hint::black_box(buf);
    let s1 = mem::stats();
    let d = |a: u64, b: u64| a as i64 - b as i64;
    eprintln!(
        "VmRSS {} -> {} MiB, RssAnon {} -> {} MiB, VmHWM {} -> {} MiB, reset: {:?}",
        s0.rss_bytes / MIB,
        s1.rss_bytes / MIB,
        s0.rss_anon_bytes / MIB,
        s1.rss_anon_bytes / MIB,
        s0.peak_rss_bytes / MIB,
        s1.peak_rss_bytes / MIB,
        reset
    );
    assert!((d(s1.rss_bytes, s0.rss_bytes) - N as i64).abs() < TOL, "VmRSS moved {}", d(s1.rss_bytes, s0.rss_bytes));
    assert!((d(s1.rss_anon_bytes, s0.rss_anon_bytes) - N as i64).abs() < TOL);
    assert!(s1.peak_rss_bytes >= s1.rss_bytes);
    if reset.is_ok() {
        assert!((d(s1.peak_rss_bytes, s0.peak_rss_bytes) - N as i64).abs() < TOL, "VmHWM moved");
    }
    assert_eq!(s1.abc_bytes - abc0, N);
    assert_eq!(buf[N as usize / 2], 1);
    drop(buf);
    drop(t);
    mem::trim();
    let s2 = mem::stats();
    assert_eq!(s2.abc_bytes, abc0);
    assert!(d(s2.rss_bytes, s0.rss_bytes).abs() < TOL, "RSS back: {} -> {}", s0.rss_bytes, s2.rss_bytes);
    // The peak remembers the buffer (the kernel's RSS counters are per-CPU
    // approximations, hence the tolerance rather than >=).
    assert!(s2.peak_rss_bytes as i64 > s1.rss_bytes as i64 - TOL, "peak {} vs {}", s2.peak_rss_bytes, s1.rss_bytes);
    if mem::reset_peak().is_ok() {
        let s3 = mem::stats();
        assert!(s3.peak_rss_bytes < s1.rss_bytes - N / 2, "peak reset after free: {s3:?}");
    }

    // Many small allocations freed: trim hands the heap back.
    let small: Vec<Vec<u8>> = std::hint::black_box((0..64 * 1024).map(|i| vec![i as u8 | 1; 2000]).collect());
    let s4 = mem::stats();
    drop(small);
    mem::trim();
    let s5 = mem::stats();
    eprintln!("128 MiB of small blocks: RSS {} -> {} MiB after free + trim", s4.rss_bytes / MIB, s5.rss_bytes / MIB);
    assert!(s4.rss_bytes - s5.rss_bytes > 100 * MIB, "trim returned the freed heap");
}

#[test]
fn srs_is_loaded_once_and_accounted() {
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let dir = std::env::temp_dir().join(format!("cuzk-srs-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = cuzk::circuits::Synthetic::new(cuzk::circuits::Family::MimcChain, 2000, 1);
    let pce = extract(c.blank()).unwrap();
    let params = dummy_params(&pce, 5);
    let path = dir.join("t.params");
    params.write(std::fs::File::create(&path).unwrap()).unwrap();
    let srs0 = mem::owner_bytes(Owner::Srs);
    // Accounted from the start, in the background too (from the file's counts).
    for background in [false, true] {
        let o = |checked| LoadOptions { checked, cache: true, background };
        let p1 = srs::load(&path, o(true)).unwrap();
        // Another spelling of the same file shares the instance.
        let p2 = srs::load(&dir.join(".").join("t.params"), o(false)).unwrap();
        assert!(Arc::ptr_eq(&p1, &p2));
        let bytes = srs::params_bytes(&params);
        assert_eq!(mem::owner_bytes(Owner::Srs) - srs0, bytes, "background {background}");
        assert!(*p1.queries().unwrap() == params);
        assert!(bytes >= (params.h.len() + params.l.len()) as u64 * 96);
        assert!(srs::unload(&path));
        assert!(!srs::unload(&path));
        assert_eq!(mem::owner_bytes(Owner::Srs) - srs0, bytes, "still held");
        drop((p1, p2));
        assert_eq!(mem::owner_bytes(Owner::Srs), srs0);
    }
    assert!(matches!(srs::load(&dir.join("missing.params"), LoadOptions::default()), Err(cuzk::Error::Io(_))));
    // Unloading by instance: a file renamed after the load (its path no longer resolves, so
    // unloading by path finds nothing) still unloads what was loaded, once.
    let p3 = srs::load(&path, LoadOptions::default()).unwrap();
    std::fs::rename(&path, dir.join("moved.params")).unwrap();
    assert!(!srs::unload(&path));
    assert!(srs::unload_instance(&p3));
    assert!(!srs::unload_instance(&p3), "once");
    cuzk::params::wait_for_cache_writes();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Proofs through an engine give their memory back when they end: after a
/// warm-up, rounds of concurrent proofs (witness, a/b/c, the CPU backend's
/// vectors: 8–16 MiB each at 2^18 rows) leave RSS where it was, without a
/// `trim`. glibc's default adjusting mmap threshold made such buffers land in
/// per-thread arenas that keep them after `free`, one more per thread.
#[test]
fn engine_proofs_give_memory_back() {
    use cuzk::circuits::{Family, Statement, Synthetic};
    use cuzk::engine::{footprint, BudgetSpec, CancelToken, Engine, EngineConfig, Priority, ProveOptions, Request};
    use cuzk::groth16::Backend;
    let _g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let circuit = |seed| Synthetic::new(Family::Sha256Chain, 1 << 18, seed);
    let pce = extract(circuit(0).blank()).unwrap();
    let params = dummy_params(&pce, 3);
    let fp = footprint(&pce, Backend::Cpu);
    let e = Engine::new(EngineConfig {
        synthesis_threads: 2,
        devices: Some(vec![]),
        workers_per_device: 2,
        budget: BudgetSpec::Bytes(2 * fp),
        ..Default::default()
    })
    .unwrap();
    let prove = |seed| {
        let opts = ProveOptions { backend: Backend::Cpu, verify: false, randomness: None };
        e.prove(Request {
            pce: &pce,
            params: &Srs::in_memory(params.clone()),
            statement: &Statement::Synthetic(circuit(seed)),
            opts,
            priority: Priority::default(),
            cancel: CancelToken::new(),
            observer: None,
        })
        .unwrap();
    };
    let round = |r: u64| {
        std::thread::scope(|s| {
            (0..2).for_each(|i| {
                s.spawn(move || prove(10 * r + i));
            })
        })
    };
    round(0);
    let before = mem::stats().rss_bytes;
    let mut rss = Vec::new();
    for r in 1..=6 {
        round(r);
        rss.push(mem::stats().rss_bytes as i64 - before as i64);
    }
    eprintln!(
        "footprint {} MiB; RSS after each round vs after the first, MiB: {:?}",
        fp >> 20,
        rss.iter().map(|b| b >> 20).collect::<Vec<_>>()
    );
    assert!(
        rss.iter().all(|&d| d < fp as i64 / 2),
        "RSS kept growing after the proofs ended: {rss:?} bytes (footprint {fp})"
    );
}
