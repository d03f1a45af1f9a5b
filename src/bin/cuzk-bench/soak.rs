//! `soak`: a long run through the C ABI, made as a careless proving node would make it. Many
//! threads prove a mix of circuits and sizes (every proof verified, with real parameters
//! made on the first run), some on the CPU and some in the latency class; random requests
//! are cancelled after a random delay; handles are unloaded, freed and loaded again while
//! other threads' calls use them; `cuzk_mem_trim` runs in the middle of proofs. Every
//! `--checkpoint` proofs the run stops with no call in flight, trims, and samples RSS, device
//! memory, threads and open file descriptors: the process is flat when the last sample
//! equals the first (threads, descriptors) or is within the tolerance of it (RSS, VRAM).
//! Any status other than OK, `CUZK_CANCELLED` (a cancel that won) or
//! `CUZK_INVALID_HANDLE` (a handle freed by the churn before the call took it) fails the run.

use std::ffi::{CStr, CString};
use std::path::PathBuf;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Barrier, Mutex, RwLock};
use std::time::{Duration, Instant};

use clap::Args;
use cuzk::ffi::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use crate::anyhow_like::Result;
use crate::parse_size;
use crate::report::write_json;

#[derive(Args)]
pub struct Opts {
    /// The mix: FAMILY:SIZE,... (synthetic families; each picked with equal odds).
    #[arg(long, default_value = "mimc-chain:2^10,sha256-chain:2^12,mimc-chain:2^14,sha256-chain:2^16")]
    pub circuits: String,
    /// Proofs to attempt (cancelled ones and lost races included).
    #[arg(short = 'n', long, default_value_t = 5000)]
    pub proofs: usize,
    /// Host threads calling `cuzk_prove` at once.
    #[arg(long, default_value_t = 8)]
    pub threads: usize,
    /// Backend-stage workers per device.
    #[arg(long, default_value_t = 2)]
    pub workers: u32,
    /// cpu | auto (every GPU, else the CPU)
    #[arg(long, default_value = "auto")]
    pub backend: String,
    /// With a GPU: every K-th proof runs on the CPU instead (0: none).
    #[arg(long, default_value_t = 10)]
    pub cpu_every: usize,
    /// Share of proofs whose cancel token is triggered, after 0..`--cancel-within-ms`.
    #[arg(long, default_value_t = 0.05)]
    pub cancel_share: f64,
    #[arg(long, default_value_t = 40)]
    pub cancel_within_ms: u64,
    /// Share of proofs sent as `CUZK_PRIORITY_CRITICAL`.
    #[arg(long, default_value_t = 0.05)]
    pub critical_share: f64,
    /// Every N-th proof first unloads one circuit's PCE and parameters, loads them again and
    /// frees the old handles (0: never).
    #[arg(long, default_value_t = 97)]
    pub unload_every: usize,
    /// Every N-th proof first calls `cuzk_mem_trim` while others prove (0: never).
    #[arg(long, default_value_t = 41)]
    pub trim_every: usize,
    /// Proofs between samples (taken with no call in flight, after a trim).
    #[arg(long, default_value_t = 100)]
    pub checkpoint: usize,
    /// RSS and VRAM may end this many MiB above their first sample (or 5 % of it, if more).
    #[arg(long, default_value_t = 64)]
    pub tolerance_mib: u64,
    /// Where the PCE and parameter files live (made on the first run, reused after).
    #[arg(long, default_value = "/tmp/cuzk-soak")]
    pub dir: PathBuf,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// One circuit of the mix: its descriptor's parts and files.
struct Spec {
    family: CString,
    size: u64,
    pce_path: CString,
    params_path: CString,
}

impl Spec {
    fn circuit(&self) -> cuzk_circuit {
        cuzk_circuit {
            kind: cuzk_circuit_kind::CUZK_CIRCUIT_SYNTHETIC as u32,
            name: self.family.as_ptr(),
            size: self.size,
        }
    }
}

/// A library handle as the token it is (the library looks it up; it is never dereferenced).
type Token = usize;

fn new_err() -> Box<cuzk_error> {
    Box::new(cuzk_error { status: cuzk_status::CUZK_OK, _reserved: 0, message: [0; CUZK_ERROR_MESSAGE_LEN] })
}

fn message(e: &cuzk_error) -> String {
    // SAFETY: the library NUL-terminates `message` inside its array on every call.
    unsafe { CStr::from_ptr(e.message.as_ptr()) }.to_string_lossy().into_owned()
}

fn check(what: &str, st: cuzk_status, e: &cuzk_error) -> Result<()> {
    match st {
        cuzk_status::CUZK_OK => Ok(()),
        _ => Err(format!("{what}: {st:?}: {}", message(e)).into()),
    }
}

/// Loads (or, on the first run, extracts and generates) `spec`'s PCE and parameters.
fn load(spec: &Spec) -> Result<(Token, Token)> {
    let (mut pce, mut params, mut e) = (null_mut(), null_mut(), new_err());
    let c = spec.circuit();
    // SAFETY: `c`'s name and the paths are NUL-terminated and outlive the calls; the out
    // pointers and `e` are live locals.
    unsafe {
        check("cuzk_pce_load", cuzk_pce_load(&c, spec.pce_path.as_ptr(), 0, &mut pce, &mut *e), &e)?;
        let st = if std::path::Path::new(spec.params_path.to_str()?).exists() {
            cuzk_params_load(spec.params_path.as_ptr(), 0, &mut params, &mut *e)
        } else {
            cuzk_params_generate(&c, spec.params_path.as_ptr(), 0, &mut params, &mut *e)
        };
        if let Err(err) = check("cuzk_params_load", st, &e) {
            cuzk_pce_free(pce);
            return Err(err);
        }
    }
    Ok((pce as Token, params as Token))
}

/// Drops the registries' references to a circuit's instances and frees the handles (calls
/// in flight keep what they took).
fn unload_and_free((pce, params): (Token, Token)) {
    let mut e = new_err();
    // SAFETY: the handles are tokens the library looks up; `e` is a live local.
    unsafe {
        cuzk_pce_unload(pce as *const _, &mut *e);
        cuzk_params_unload(params as *const _, &mut *e);
        cuzk_pce_free(pce as *mut _);
        cuzk_params_free(params as *mut _);
    }
}

/// The process at a quiet moment.
#[derive(Clone, Copy, Default)]
struct Sample {
    proofs: usize,
    rss: u64,
    peak_rss: u64,
    pce_bytes: u64,
    srs_bytes: u64,
    witness_bytes: u64,
    gpu_bytes: u64,
    vram_used: u64,
    threads: u64,
    fds: u64,
}

/// The column heads of [`Sample::row`].
const HEADS: &str = "proofs    RSS MiB   peak MiB   GPU MiB  VRAM MiB  threads   fds";

impl Sample {
    fn row(&self) -> String {
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        format!(
            "{:>6} {:>10.1} {:>10.1} {:>9.1} {:>9.1} {:>8} {:>5}",
            self.proofs,
            mib(self.rss),
            mib(self.peak_rss),
            mib(self.gpu_bytes),
            mib(self.vram_used),
            self.threads,
            self.fds
        )
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "proofs": self.proofs, "rss_bytes": self.rss, "peak_rss_bytes": self.peak_rss,
            "pce_bytes": self.pce_bytes, "srs_bytes": self.srs_bytes, "witness_bytes": self.witness_bytes,
            "gpu_bytes": self.gpu_bytes, "vram_used_bytes": self.vram_used, "threads": self.threads, "fds": self.fds,
        })
    }
}

fn threads_now() -> Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status.lines().find_map(|l| l.strip_prefix("Threads:")).ok_or("no Threads: in /proc/self/status")?;
    Ok(line.trim().parse()?)
}

fn sample(engine: Token, proofs: usize) -> Result<Sample> {
    let (mut m, mut e) = (cuzk_mem_stats::default(), new_err());
    let mut devs = [cuzk_device_stats::default(); 64];
    let mut n = 0usize;
    // SAFETY: `m`, `devs` (of the capacity given), `n` and `e` are live locals; the engine
    // handle is a token.
    unsafe {
        check("cuzk_mem_trim", cuzk_mem_trim(&mut *e), &e)?;
        check("cuzk_mem_stats", cuzk_mem_stats(&mut m, &mut *e), &e)?;
        let st = cuzk_engine_devices(engine as *const _, devs.as_mut_ptr(), devs.len(), &mut n, &mut *e);
        check("cuzk_engine_devices", st, &e)?;
    }
    let gpus = devs[..n].iter().filter(|d| d.backend == cuzk_backend::CUZK_BACKEND_CUDA as u32);
    Ok(Sample {
        proofs,
        rss: m.rss_bytes,
        peak_rss: m.peak_rss_bytes,
        pce_bytes: m.pce_bytes,
        srs_bytes: m.srs_bytes,
        witness_bytes: m.witness_bytes,
        gpu_bytes: m.gpu_bytes,
        vram_used: gpus.map(|d| d.vram_total - d.vram_free).sum(),
        threads: threads_now()?,
        fds: std::fs::read_dir("/proc/self/fd")?.count() as u64,
    })
}

/// What the callers saw.
#[derive(Default)]
struct Tally {
    ok: AtomicU64,
    cancelled: AtomicU64,
    lost_races: AtomicU64,
    critical: AtomicU64,
    cpu: AtomicU64,
    unloads: AtomicU64,
    trims: AtomicU64,
    errors: Mutex<Vec<String>>,
}

struct Soak<'a> {
    o: &'a Opts,
    specs: Vec<Spec>,
    /// Each circuit's live handles; the churn swaps them.
    handles: Mutex<Vec<(Token, Token)>>,
    /// The engine of every proof, and with GPUs a CPU-only one for the CPU's share (an
    /// engine proves only on its own devices).
    engine: Token,
    cpu_engine: Option<Token>,
    gpu: bool,
    next: AtomicUsize,
    /// Read by every call, written by a checkpoint: a checkpoint waits for the calls in flight.
    gate: RwLock<()>,
    samples: Mutex<Vec<Sample>>,
    /// Where the callers meet once they are done, for the last sample.
    done: Barrier,
    tally: Tally,
    cancels: Mutex<mpsc::Sender<(Instant, Token)>>,
}

impl Soak<'_> {
    fn worker(&self, id: usize) -> Result<()> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.o.seed * 7919 + id as u64);
        loop {
            let i = self.next.fetch_add(1, Ordering::SeqCst);
            if i >= self.o.proofs {
                // The last sample, with every caller idle but still alive (as at the others).
                if self.done.wait().is_leader() {
                    self.record(sample(self.engine, self.o.proofs)?)?;
                }
                self.done.wait();
                return Ok(());
            }
            if i > 0 && i.is_multiple_of(self.o.checkpoint) {
                let _quiet = self.gate.write().map_err(|_| "gate poisoned")?;
                self.record(sample(self.engine, i)?)?;
            }
            let _call = self.gate.read().map_err(|_| "gate poisoned")?;
            if self.o.unload_every > 0 && i % self.o.unload_every == self.o.unload_every - 1 {
                self.churn(rng.gen_range(0..self.specs.len()))?;
            }
            if self.o.trim_every > 0 && i % self.o.trim_every == self.o.trim_every - 1 {
                let mut e = new_err();
                // SAFETY: `e` is a live local.
                check("cuzk_mem_trim", unsafe { cuzk_mem_trim(&mut *e) }, &e)?;
                self.tally.trims.fetch_add(1, Ordering::Relaxed);
            }
            self.prove_one(i, &mut rng)?;
        }
    }

    /// Keeps a sample and prints it (a long run shows its progress).
    fn record(&self, s: Sample) -> Result<()> {
        println!("{}", s.row());
        self.samples.lock().map_err(|_| "poisoned")?.push(s);
        Ok(())
    }

    /// Unloads circuit `k`, loads it afresh and frees the old handles, which other threads
    /// may be using or about to use.
    fn churn(&self, k: usize) -> Result<()> {
        let mut handles = self.handles.lock().map_err(|_| "poisoned")?;
        let old = handles[k];
        let mut e = new_err();
        // SAFETY: tokens the library looks up; `e` is a live local.
        unsafe {
            cuzk_pce_unload(old.0 as *const _, &mut *e);
            cuzk_params_unload(old.1 as *const _, &mut *e);
        }
        handles[k] = load(&self.specs[k])?;
        drop(handles);
        unload_and_free(old);
        self.tally.unloads.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn prove_one(&self, i: usize, rng: &mut ChaCha8Rng) -> Result<()> {
        let k = rng.gen_range(0..self.specs.len());
        let (pce, params) = self.handles.lock().map_err(|_| "poisoned")?[k];
        let on_cpu = !self.gpu || (self.o.cpu_every > 0 && i.is_multiple_of(self.o.cpu_every));
        let critical = rng.gen_bool(self.o.critical_share);
        let request = cuzk_prove_request {
            circuit: self.specs[k].circuit(),
            seed: rng.gen(),
            input: null(),
            input_len: 0,
            backend: if on_cpu { cuzk_backend::CUZK_BACKEND_CPU } else { cuzk_backend::CUZK_BACKEND_AUTO } as u32,
            device: 0,
            skip_verify: 0,
            priority: if critical { CUZK_PRIORITY_CRITICAL } else { rng.gen_range(0..=255) },
            reserved: [0; 4],
        };
        let (mut cancel, mut e) = (null_mut(), new_err());
        // SAFETY: `cancel` and `e` are live locals.
        check("cuzk_cancel_new", unsafe { cuzk_cancel_new(&mut cancel, &mut *e) }, &e)?;
        if rng.gen_bool(self.o.cancel_share) {
            let at = Instant::now() + Duration::from_millis(rng.gen_range(0..=self.o.cancel_within_ms));
            self.cancels.lock().map_err(|_| "poisoned")?.send((at, cancel as Token))?;
        }
        let (mut proof, mut len) = ([0u8; CUZK_PROOF_BYTES], 0usize);
        // SAFETY: the request's name outlives the call; `proof` has the capacity given; the
        // handles are tokens; `len` and `e` are live locals. The cancel token is freed after
        // the call (the canceller may still trigger it: a freed token is refused, not used).
        let st = unsafe {
            let st = cuzk_prove(
                if on_cpu { self.cpu_engine.unwrap_or(self.engine) } else { self.engine } as *const _,
                pce as *const _,
                params as *const _,
                &request,
                cancel,
                proof.as_mut_ptr(),
                proof.len(),
                &mut len,
                null_mut(),
                &mut *e,
            );
            cuzk_cancel_free(cancel);
            st
        };
        let t = &self.tally;
        match st {
            cuzk_status::CUZK_OK => {
                t.ok.fetch_add(1, Ordering::Relaxed);
                t.critical.fetch_add(critical as u64, Ordering::Relaxed);
                t.cpu.fetch_add(on_cpu as u64, Ordering::Relaxed);
            }
            cuzk_status::CUZK_CANCELLED => _ = t.cancelled.fetch_add(1, Ordering::Relaxed),
            cuzk_status::CUZK_INVALID_HANDLE => _ = t.lost_races.fetch_add(1, Ordering::Relaxed),
            _ => t.errors.lock().map_err(|_| "poisoned")?.push(format!("proof {i}: {st:?}: {}", message(&e))),
        }
        Ok(())
    }
}

/// Triggers each token at its time (a token its call already freed is refused: fine).
fn canceller(rx: mpsc::Receiver<(Instant, Token)>) {
    for (at, token) in rx {
        std::thread::sleep(at.saturating_duration_since(Instant::now()));
        let mut e = new_err();
        // SAFETY: the token is looked up by the library; `e` is a live local.
        unsafe { cuzk_cancel_trigger(token as *const _, &mut *e) };
    }
}

fn parse_mix(o: &Opts) -> Result<Vec<Spec>> {
    std::fs::create_dir_all(&o.dir)?;
    o.circuits
        .split(',')
        .map(|item| {
            let (family, size) = item.split_once(':').ok_or_else(|| format!("{item}: want FAMILY:SIZE"))?;
            let size = parse_size(size)? as u64;
            let file = |ext: &str| CString::new(o.dir.join(format!("{family}-{size}.{ext}")).to_str().unwrap_or(""));
            Ok(Spec { family: CString::new(family)?, size, pce_path: file("pce")?, params_path: file("params")? })
        })
        .collect()
}

fn new_engine(o: &Opts, flags: u32) -> Result<Token> {
    let config = cuzk_engine_config {
        synthesis_threads: 0,
        workers_per_device: o.workers,
        devices: null(),
        num_devices: 0,
        budget_bytes: 0,
        budget_margin: 0,
        flags,
        _reserved0: 0,
        critical_reserve_bytes: 0,
        reserved: [0; 3],
    };
    let (mut engine, mut e) = (null_mut(), new_err());
    // SAFETY: `config` (its device list NULL), `engine` and `e` are live locals.
    check("cuzk_engine_new", unsafe { cuzk_engine_new(&config, &mut engine, &mut *e) }, &e)?;
    Ok(engine as Token)
}

/// The engine of every proof and, with GPUs and a CPU share, the CPU's; whether GPUs prove.
fn new_engines(o: &Opts) -> Result<(Token, Option<Token>, bool)> {
    let (mut gpus, mut e) = (0u32, new_err());
    // SAFETY: `gpus` and `e` are live locals.
    check("cuzk_cuda_device_count", unsafe { cuzk_cuda_device_count(&mut gpus, &mut *e) }, &e)?;
    match o.backend.as_str() {
        "cpu" => Ok((new_engine(o, CUZK_ENGINE_CPU_ONLY)?, None, false)),
        "auto" if gpus == 0 || o.cpu_every == 0 => Ok((new_engine(o, 0)?, None, gpus > 0)),
        "auto" => Ok((new_engine(o, 0)?, Some(new_engine(o, CUZK_ENGINE_CPU_ONLY)?), true)),
        b => Err(format!("--backend {b}: want cpu or auto").into()),
    }
}

pub fn run(o: Opts) -> Result<()> {
    if o.checkpoint == 0 || o.proofs < 2 * o.checkpoint {
        return Err("--proofs must cover at least two checkpoints".into());
    }
    let specs = parse_mix(&o)?;
    let (engine, cpu_engine, gpu) = new_engines(&o)?;
    let handles = specs.iter().map(load).collect::<Result<Vec<_>>>()?;
    let (tx, rx) = mpsc::channel();
    let soak = Soak {
        o: &o,
        specs,
        handles: Mutex::new(handles),
        engine,
        cpu_engine,
        gpu,
        next: AtomicUsize::new(0),
        gate: RwLock::new(()),
        samples: Mutex::new(Vec::new()),
        done: Barrier::new(o.threads),
        tally: Tally::default(),
        cancels: Mutex::new(tx),
    };
    println!(
        "soak: {} proofs of {} on {} threads ({}), samples every {}",
        o.proofs,
        o.circuits,
        o.threads,
        if gpu { "GPUs" } else { "CPU" },
        o.checkpoint
    );
    println!("{HEADS}");
    let start = Instant::now();
    let canceller = std::thread::spawn(move || canceller(rx));
    let results: Vec<Result<()>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..o.threads)
            .map(|id| {
                s.spawn({
                    let soak = &soak;
                    move || soak.worker(id)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or_else(|_| Err("a worker panicked".into()))).collect()
    });
    let wall = start.elapsed().as_secs_f64();
    results.into_iter().collect::<Result<Vec<()>>>()?;
    let samples = soak.samples.into_inner().map_err(|_| "poisoned")?;
    drop(soak.cancels);
    canceller.join().map_err(|_| "the canceller panicked")?;
    for h in soak.handles.into_inner().map_err(|_| "poisoned")? {
        unload_and_free(h);
    }
    for e in std::iter::once(engine).chain(cpu_engine) {
        // SAFETY: each engine token is freed once, after its last use.
        unsafe { cuzk_engine_free(e as *mut _) };
    }

    let t = &soak.tally;
    let errors = t.errors.lock().map_err(|_| "poisoned")?.clone();
    let (first, last) = (samples[0], samples[samples.len() - 1]);
    let within = |a: u64, b: u64| b <= a + (o.tolerance_mib << 20).max(a / 20);
    let flat = json!({
        "rss": within(first.rss, last.rss),
        "vram": within(first.vram_used, last.vram_used),
        "threads": last.threads == first.threads,
        "fds": last.fds == first.fds,
    });
    let all_flat = flat.as_object().is_some_and(|m| m.values().all(|v| v == true));
    let count = |a: &AtomicU64| a.load(Ordering::Relaxed);
    println!(
        "\n{} verified, {} cancelled, {} lost races with a free, {} errors; {} critical, {} on the CPU; \
         {} unloads, {} trims; {wall:.1} s ({:.1} proofs/s); flat: {flat}",
        count(&t.ok),
        count(&t.cancelled),
        count(&t.lost_races),
        errors.len(),
        count(&t.critical),
        count(&t.cpu),
        count(&t.unloads),
        count(&t.trims),
        count(&t.ok) as f64 / wall
    );
    for e in errors.iter().take(10) {
        println!("  {e}");
    }
    write_json(
        o.json.as_deref(),
        &json!({
            "circuits": o.circuits, "attempted": o.proofs, "threads": o.threads, "gpu": gpu,
            "verified": count(&t.ok), "cancelled": count(&t.cancelled), "lost_races": count(&t.lost_races),
            "errors": errors.len(), "critical": count(&t.critical), "cpu": count(&t.cpu),
            "unloads": count(&t.unloads), "trims": count(&t.trims), "wall_s": wall,
            "proofs_per_s": count(&t.ok) as f64 / wall,
            "first": first.json(), "last": last.json(), "flat": flat, "all_flat": all_flat,
            "samples": samples.iter().map(Sample::json).collect::<Vec<_>>(),
        }),
    )?;
    match (errors.is_empty(), all_flat) {
        (true, true) => Ok(()),
        (false, _) => Err(format!("{} calls failed; the first: {}", errors.len(), errors[0]).into()),
        (true, false) => Err(format!("not flat from the first sample to the last: {flat}").into()),
    }
}
