//! `pce-pipeline`: N proofs through J concurrent pipelines, with RSS after
//! every stage, the true peak (VmHWM, reset per phase where the kernel allows),
//! the per-owner accounting, and the engine's predicted peak beside it.
//! `--compare-old` first runs bellperson's own prover the same way. `--max-miss` makes it a bar:
//! the run fails when VmHWM and the prediction differ by more than the tolerance.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bellperson::groth16::Parameters;
use blstrs::Bls12;
use clap::Args;
use cuzk::circuits::{Circuit, Statement};
use cuzk::engine::{
    footprint, BudgetSpec, CancelToken, Engine, EngineConfig, MemoryBudget, Priority, ProveOptions, Request,
    SYNTHESIS_NICE,
};
use cuzk::groth16::Backend;
use cuzk::groth16::ProveTimings;
use cuzk::mem;
use cuzk::params::{dummy_params, Srs};
use cuzk::pce::{Access, Pce};
use serde_json::json;

use crate::report::{gib, steps_json, steps_line, table, write_json};
use crate::sharing::SharingArgs;
use crate::{anyhow_like::Result, CircuitArgs};

#[derive(Args)]
pub struct Opts {
    #[command(flatten)]
    pub c: CircuitArgs,
    /// Proofs.
    #[arg(short = 'n', default_value_t = 4)]
    pub n: usize,
    /// Pipelines at once (proofs in flight, over all devices).
    #[arg(short = 'j', default_value_t = 2)]
    pub j: usize,
    /// Backend-stage workers per device (0: one per pipeline).
    #[arg(long, default_value_t = 0)]
    pub workers: usize,
    /// Witness threads, and as many SpMV threads (0: one per core each).
    #[arg(long, default_value_t = 0)]
    pub synthesis_threads: usize,
    /// Leave the synthesis threads at this thread's priority (default: nice +10).
    #[arg(long)]
    pub synthesis_full_priority: bool,
    /// Run bellperson's prover the same way first.
    #[arg(long)]
    pub compare_old: bool,
    /// cpu | cuda | cuda:ID | auto (auto: every GPU, each proof to the least busy one)
    #[arg(long, default_value = "cpu")]
    pub backend: String,
    /// Parameters file; generated (real, from the PCE) if absent.
    #[arg(long, required_unless_present = "dummy_params")]
    pub params: Option<PathBuf>,
    /// Dummy parameters made in memory instead (timing only: proofs are not verified).
    #[arg(long, conflicts_with_all = ["params", "compare_old"])]
    pub dummy_params: bool,
    /// Plot RSS over time with stage markers (SVG).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// PoRep and PoSt circuits: the request input every proof proves (`cuzk-bench fixture`
    /// writes one); without it a sector is sealed here.
    #[arg(long, alias = "c1")]
    pub input: Option<PathBuf>,
    /// Load the PCE from this .pce file (as `prove --pce`: extracted with its witness program
    /// and saved there when missing) instead of extracting it.
    #[arg(long)]
    pub pce: Option<PathBuf>,
    /// With --params: decode the file alone, no `.cuzk-srs` cache read or written beside it.
    #[arg(long, requires = "params")]
    pub no_cache: bool,
    /// Fail (exit non-zero) when the peak RSS (VmHWM) and the predicted peak differ by more than
    /// this, in percent of the measured peak (`2%` or `2`).
    #[arg(long, value_parser = parse_percent)]
    pub max_miss: Option<f64>,
    #[command(flatten)]
    pub sharing: SharingArgs,
}

/// `2%` or `2`: a non-negative percentage.
fn parse_percent(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s.trim_end_matches('%').parse().map_err(|e| format!("{s}: {e}"))?;
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("{s}: not a percentage"))
    }
}

/// RSS samples (with the bytes the engine has reserved for proofs in
/// flight) and stage markers on one clock.
struct Timeline {
    start: Instant,
    samples: Mutex<Vec<Sample>>,
    /// The budget of the engine being measured, once there is one.
    budget: Mutex<Option<Arc<MemoryBudget>>>,
    stages: Mutex<Vec<(String, f64, u64)>>,
}

struct Sample {
    t: f64,
    rss: u64,
    /// Bytes reserved from the engine's budget (footprints of proofs in flight).
    reserved: u64,
}

impl Timeline {
    fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Over the samples in `[from, to]`: the most bytes reserved, and the
    /// most RSS above `baseline` beyond the reservations of that moment
    /// (memory the footprint does not cover).
    fn inflight(&self, from: f64, to: f64, baseline: u64) -> (u64, u64) {
        let samples = self.samples.lock().unwrap();
        let window = samples.iter().filter(|s| s.t >= from && s.t <= to);
        let reserved = window.clone().map(|s| s.reserved).max().unwrap_or(0);
        let beyond = window.map(|s| s.rss.saturating_sub(baseline).saturating_sub(s.reserved)).max().unwrap_or(0);
        (reserved, beyond)
    }

    fn mark(&self, label: impl Into<String>) -> u64 {
        let rss = mem::stats().rss_bytes;
        self.stages.lock().unwrap().push((label.into(), self.start.elapsed().as_secs_f64(), rss));
        rss
    }
}

/// Resets the peak where allowed; says whether it did.
fn reset_peak() -> bool {
    mem::reset_peak().is_ok()
}

/// Phase results.
struct Phase {
    name: &'static str,
    baseline: u64,
    peak: u64,
    after_trim: u64,
    predicted: Option<u64>,
    /// Proofs that verified (with dummy parameters: that were made).
    done: usize,
    wall_s: f64,
    /// Fraction of the wall time some proof was in its backend stage.
    backend_busy: Option<f64>,
    /// Proofs per minute between the 10th and the 90th percentile backend
    /// completions: the rate once every pipeline is running, without the
    /// ramp-up (all witnesses at once) and the drain.
    steady_per_min: Option<f64>,
    /// Most bytes reserved for proofs in flight, and most RSS growth beyond
    /// the reservations (from the 5 ms samples).
    inflight: Option<(u64, u64)>,
    /// Per device of the engine: what it did during the run.
    devices: Vec<DeviceRun>,
    /// Seconds per proof of witness generation and of SpMV: median, 90th percentile.
    synthesis: Option<[(f64, f64); 2]>,
}

/// One engine device over the measured run.
struct DeviceRun {
    name: String,
    proofs: u64,
    failures: u64,
    busy_fraction: f64,
    vram_free_before: u64,
    vram_free_after: u64,
    /// The backend steps of its proofs, summed (see `steps_line`).
    steps: ProveTimings,
}

/// Length of the union of intervals.
fn union_len(mut v: Vec<(f64, f64)>) -> f64 {
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut total, mut end) = (0.0, f64::MIN);
    for (s, e) in v {
        if s > end {
            total += e - s;
            end = e;
        } else if e > end {
            total += e - end;
            end = e;
        }
    }
    total
}

fn load_or_generate(path: &std::path::Path, circuit: &Circuit, no_cache: bool) -> Result<Parameters<Bls12>> {
    if path.exists() && no_cache {
        return Ok(cuzk::params::decode_params(path, false)?);
    }
    if path.exists() {
        return Ok(cuzk::params::read_params(path, false)?);
    }
    eprintln!("generating parameters into {}", path.display());
    let device = crate::params::setup_device("auto")?;
    Ok(cuzk::params::generate_params(&circuit.extract_pce()?, path, 1, device)?)
}

/// The circuit the proofs prove, and a PoRep circuit's C1 output.
struct Subject {
    circuit: Circuit,
    seed: u64,
    input: Vec<u8>,
}

impl Subject {
    /// What proof `i` proves: a synthetic circuit's seed, or the C1 output.
    fn statement(&self, i: u64) -> Result<Statement> {
        crate::prove::statement_of(&self.circuit, self.seed, &self.input, i)
    }
}

pub fn run(o: Opts) -> Result<()> {
    let backend = Backend::parse(&o.backend)?;
    let circuit = o.c.circuit()?;
    let input = crate::prove::request_input(&circuit, o.input.as_deref(), o.c.seed)?;
    let subject = Subject { circuit, seed: o.c.seed, input };
    let circuit = &subject.circuit;
    let tl = Timeline {
        start: Instant::now(),
        samples: Mutex::default(),
        budget: Mutex::default(),
        stages: Mutex::default(),
    };
    let stop = AtomicBool::new(false);
    // Device memory in use on all GPUs (every process's), at its highest.
    let vram_peak = AtomicU64::new(0);
    let mut phases = Vec::new();
    let mut pce_stats = None;
    std::thread::scope(|s| -> Result<()> {
        s.spawn(|| {
            for k in 0u64.. {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let reserved = tl.budget.lock().unwrap().as_ref().map_or(0, |b| b.used());
                let rss = mem::stats().rss_bytes;
                tl.samples.lock().unwrap().push(Sample { t: tl.now(), rss, reserved });
                if k % 4 == 0 {
                    let used: u64 = (0..cuzk::gpu::device_count() as u32)
                        .filter_map(|d| cuzk::gpu::device_memory(d).ok())
                        .map(|(free, total)| total - free)
                        .sum();
                    vram_peak.fetch_max(used, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let res = (|| -> Result<()> {
            mem::trim();
            tl.mark("start");
            let pce = || -> Result<Arc<Pce>> {
                Ok(match &o.pce {
                    Some(path) => circuit.load_pce(path, true, Access::Read)?,
                    None => Arc::new(circuit.extract_pce()?),
                })
            };
            let (params, pce) = match &o.params {
                Some(path) => {
                    let params = load_or_generate(path, circuit, o.no_cache)?;
                    tl.mark("params loaded");
                    if o.compare_old {
                        phases.push(old_phase(&o, &tl, &params)?);
                    }
                    (params, pce()?)
                }
                None => {
                    let pce = pce()?;
                    let params = dummy_params(&pce, 1);
                    tl.mark("dummy params made");
                    (params, pce)
                }
            };
            mem::trim();
            let static_rss = tl.mark("PCE loaded");
            pce_stats = Some((pce.num_constraints(), footprint(&pce, backend.resolve()?)));
            if backend == Backend::Auto {
                println!("GPUs: {}", cuzk::gpu::device_count());
            }
            phases.push(new_phase(&o, &tl, &Srs::in_memory(params), pce, static_rss, backend, &subject)?);
            Ok(())
        })();
        stop.store(true, Ordering::Relaxed);
        res
    })?;

    for p in &phases {
        let mut rows = vec![
            ("proofs / pipelines", format!("{} / {}", o.n, o.j)),
            ("RSS before the first proof", gib(p.baseline)),
            ("peak RSS (VmHWM)", gib(p.peak)),
            ("peak VRAM in use (all GPUs, whole run)", gib(vram_peak.load(Ordering::Relaxed))),
            (
                "RSS after drop + trim",
                format!(
                    "{} ({:+.2}% vs before)",
                    gib(p.after_trim),
                    100.0 * (p.after_trim as f64 / p.baseline as f64 - 1.0)
                ),
            ),
            (
                if o.dummy_params { "proofs done (dummy params: not verified)" } else { "proofs verified" },
                format!("{}/{}", p.done, o.n),
            ),
            ("wall", format!("{:.2} s ({:.2} proofs/min)", p.wall_s, 60.0 * o.n as f64 / p.wall_s)),
        ];
        if let Some([(w50, w90), (s50, s90)]) = p.synthesis {
            rows.push((
                "synthesis per proof",
                format!("witness {w50:.3} s (p90 {w90:.3}), SpMV {s50:.3} s (p90 {s90:.3})"),
            ));
        }
        if let Some(rate) = p.steady_per_min {
            rows.push(("steady rate", format!("{rate:.2} proofs/min (10th to 90th percentile completions)")));
        }
        if let Some(busy) = p.backend_busy {
            rows.push(("backend (GPU/MSM) busy", format!("{:.1}% of wall", 100.0 * busy)));
        }
        for d in &p.devices {
            rows.push((
                "device",
                format!(
                    "{}: {} proofs, {} failures, busy {:.1}%, VRAM free {} → {} MiB",
                    d.name,
                    d.proofs,
                    d.failures,
                    100.0 * d.busy_fraction,
                    d.vram_free_before >> 20,
                    d.vram_free_after >> 20
                ),
            ));
            rows.push(("  per proof", steps_line(&d.steps, d.proofs)));
        }
        if let Some((reserved, beyond)) = p.inflight {
            rows.push((
                "reserved for proofs in flight",
                format!("{} at most; RSS growth beyond the reservations {} at most", gib(reserved), gib(beyond)),
            ));
        }
        if let Some(pred) = p.predicted {
            rows.push((
                "predicted peak",
                format!("{} ({:+.2}% vs measured)", gib(pred), 100.0 * (pred as f64 / p.peak as f64 - 1.0)),
            ));
        }
        table(&format!("pce-pipeline: {}", p.name), &rows);
    }
    let stages = tl.stages.lock().unwrap().clone();
    println!("\nRSS per stage:");
    for (label, t, rss) in &stages {
        println!("  {t:8.2} s  {:>12}  {label}", gib(*rss));
    }
    if let Some(path) = &o.plot {
        let rss: Vec<(f64, u64)> = tl.samples.lock().unwrap().iter().map(|s| (s.t, s.rss)).collect();
        crate::plot::rss_svg(path, &rss, &stages)?;
        println!("plot: {}", path.display());
    }
    let new = phases.last().expect("the PCE phase ran");
    // With dummy parameters nothing is verified: `proofs_done` counts the proofs made.
    let verified = |p: &Phase| (!o.dummy_params).then_some(p.done);
    let phase_json = |p: &Phase| {
        json!({
            "baseline_rss_bytes": p.baseline, "peak_rss_bytes": p.peak, "final_rss_bytes": p.after_trim,
            "predicted_peak_bytes": p.predicted, "proofs_done": p.done, "proofs_verified": verified(p),
            "wall_s": p.wall_s,
            "backend_busy_fraction": p.backend_busy,
        })
    };
    let (constraints, fp) = pce_stats.unwrap_or_default();
    write_json(
        o.c.json.as_deref(),
        &json!({
            "circuit": o.c.circuit,
            "constraints": constraints,
            "proofs": o.n,
            "parallel": o.j,
            "footprint_bytes": fp,
            "stages": stages.iter().map(|(l, t, r)| json!({"label": l, "t_s": t, "rss_bytes": r})).collect::<Vec<_>>(),
            "peak_rss_bytes": new.peak,
            "baseline_rss_bytes": new.baseline,
            "final_rss_bytes": new.after_trim,
            "predicted_peak_bytes": new.predicted,
            "proofs_done": new.done, "proofs_verified": verified(new), "dummy_params": o.dummy_params,
            "vram_peak_bytes": vram_peak.load(Ordering::Relaxed),
            "backend_busy_fraction": new.backend_busy,
            "steady_proofs_per_min": new.steady_per_min,
            "synthesis_s": new.synthesis.map(|[w, s]| json!({"witness_p50": w.0, "witness_p90": w.1, "spmv_p50": s.0, "spmv_p90": s.1})),
            "reserved_max_bytes": new.inflight.map(|x| x.0),
            "rss_beyond_reserved_max_bytes": new.inflight.map(|x| x.1),
            "devices": new.devices.iter().map(|d| json!({
                "device": d.name, "proofs": d.proofs, "failures": d.failures, "busy_fraction": d.busy_fraction,
                "vram_free_before_bytes": d.vram_free_before, "vram_free_after_bytes": d.vram_free_after,
                "per_proof_s": steps_json(&d.steps, d.proofs),
            })).collect::<Vec<_>>(),
            "peak_reset_supported": mem::peak_reset_supported(),
            "old": phases.iter().find(|p| p.name == "old").map(phase_json),
            "engine_options": o.sharing.json(),
        }),
    )?;
    if new.done != o.n {
        let what = if o.dummy_params { "made" } else { "verified" };
        return Err(format!("only {}/{} proofs {what}", new.done, o.n).into());
    }
    match (o.max_miss, new.predicted) {
        (Some(tolerance), Some(predicted)) => bar(tolerance, new.peak, predicted),
        _ => Ok(()),
    }
}

/// The bench bar: `Err` when `peak` and `predicted` differ by more than `tolerance` percent of
/// `peak`, or when VmHWM could not be reset before the proofs (it would count the loading).
fn bar(tolerance: f64, peak: u64, predicted: u64) -> Result<()> {
    if !mem::peak_reset_supported() {
        return Err("--max-miss: VmHWM cannot be reset here, so the peak is not the proofs' alone".into());
    }
    let miss = 100.0 * (predicted as f64 / peak as f64 - 1.0);
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64);
    if miss.abs() > tolerance {
        let side = if miss < 0.0 { "under" } else { "over" };
        return Err(format!(
            "the prediction missed: predicted {} against VmHWM {} ({miss:+.2}%, {side} by more than --max-miss {tolerance}%)",
            mib(predicted),
            mib(peak)
        )
        .into());
    }
    println!("bench bar: predicted peak within {tolerance}% of VmHWM ({miss:+.2}%)");
    Ok(())
}

/// Runs `o.n` jobs on `o.j` threads; `job(i)` returns whether proof i verified (with dummy
/// parameters: was made).
fn run_jobs(o: &Opts, job: impl Fn(usize) -> Result<bool> + Sync) -> Result<(usize, f64)> {
    let next = AtomicUsize::new(0);
    let verified = AtomicUsize::new(0);
    let start = Instant::now();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..o.j.max(1))
            .map(|_| {
                s.spawn(|| -> Result<()> {
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        if i >= o.n {
                            return Ok(());
                        }
                        if job(i)? {
                            verified.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().try_for_each(|h| h.join().map_err(|_| "a pipeline panicked")?)
    })?;
    Ok((verified.load(Ordering::SeqCst), start.elapsed().as_secs_f64()))
}

/// bellperson's own prover (synthesis + proof), J at once.
fn old_phase(o: &Opts, tl: &Timeline, params: &Parameters<Bls12>) -> Result<Phase> {
    let warm = o.c.instance(u64::MAX / 2)?;
    bellperson::groth16::create_random_proof(warm, params, &mut rand::rngs::OsRng)?;
    mem::trim();
    reset_peak();
    let baseline = tl.mark("old: before first proof");
    let pvk = bellperson::groth16::prepare_verifying_key(&params.vk);
    let (done, wall_s) = run_jobs(o, |i| {
        let c = o.c.instance(i as u64)?;
        let inputs = c.public_inputs();
        let proof = bellperson::groth16::create_random_proof(c, params, &mut rand::rngs::OsRng)?;
        tl.mark(format!("old: proof {i} done"));
        Ok(bellperson::groth16::verify_proof(&pvk, &proof, &inputs)?)
    })?;
    let peak = mem::stats().peak_rss_bytes;
    tl.mark("old: after drop");
    mem::trim();
    let after_trim = tl.mark("old: after trim");
    Ok(Phase {
        name: "old",
        baseline,
        peak,
        after_trim,
        predicted: None,
        done,
        wall_s,
        backend_busy: None,
        steady_per_min: None,
        inflight: None,
        devices: vec![],
        synthesis: None,
    })
}

/// The PCE path through the engine, J pipelines.
fn new_phase(
    o: &Opts,
    tl: &Timeline,
    params: &Srs,
    pce: Arc<Pce>,
    static_rss: u64,
    backend: Backend,
    subject: &Subject,
) -> Result<Phase> {
    // `auto` spreads the J pipelines over every GPU (or the CPU without one).
    let devices = match backend {
        Backend::Cuda(id) => Some(vec![id]),
        Backend::Auto => None,
        Backend::Cpu => Some(vec![]),
    };
    // Each partition also reserves its share of the request's parsed input (a C1's proofs).
    let sample = subject.statement(u64::MAX / 2)?;
    let share = sample.input_bytes().div_ceil(sample.partitions().max(1) as u64);
    let engine = Engine::new(o.sharing.apply(EngineConfig {
        synthesis_threads: o.synthesis_threads,
        synthesis_nice: if o.synthesis_full_priority { 0 } else { SYNTHESIS_NICE },
        devices,
        workers_per_device: if o.workers == 0 { o.j } else { o.workers },
        budget: BudgetSpec::Bytes(o.j as u64 * (footprint(&pce, backend.resolve()?) + share)),
        // Exactly J throughput footprints: no critical requests here.
        critical_reserve: Some(0),
        ..EngineConfig::default()
    })?)?;
    // A warm-up proof per device: the runtime (thread pools, GPU contexts, the
    // SRS uploads) belongs to the static part, not to the proofs measured.
    for device in engine.backends() {
        let warm = subject.statement(u64::MAX / 2)?;
        engine.prove(Request {
            pce: &pce,
            params,
            statement: &warm,
            opts: ProveOptions { backend: device, verify: !o.dummy_params, randomness: None },
            priority: Priority::default(),
            cancel: CancelToken::new(),
            observer: None,
        })?;
    }
    // The warm-up's kept buffers belong to the proofs' part, not the static one.
    engine.budget().drop_idle();
    mem::trim();
    reset_peak();
    let baseline = tl.mark("PCE: before first proof (warm)");
    *tl.budget.lock().unwrap() = Some(engine.budget().clone());
    let from = tl.now();
    let predicted = engine.predicted_peak(static_rss.max(baseline), &pce, o.j);
    let intervals = Mutex::new(Vec::new());
    let steps = Mutex::new(Vec::new());
    let before = engine.device_stats();
    let t0 = Instant::now();
    let (done, wall_s) = run_jobs(o, |i| {
        let began = Mutex::new(0.0);
        let statement = subject.statement(i as u64)?;
        let observe = |st: cuzk::engine::Stage| {
            let now = t0.elapsed().as_secs_f64();
            match st {
                cuzk::engine::Stage::Backend => *began.lock().unwrap() = now,
                cuzk::engine::Stage::Prove => intervals.lock().unwrap().push((*began.lock().unwrap(), now)),
                _ => {}
            }
            tl.mark(format!("PCE: proof {i} after {}", st.name()));
        };
        let res = engine.prove(Request {
            pce: &pce,
            params,
            statement: &statement,
            opts: ProveOptions { backend, verify: !o.dummy_params, randomness: None },
            priority: Priority::default(),
            cancel: CancelToken::new(),
            observer: Some(&observe),
        });
        if let Ok((_, t)) = &res {
            steps.lock().unwrap().push(*t);
        }
        Ok(res.is_ok())
    })?;
    let peak = mem::stats().peak_rss_bytes;
    let inflight = Some(tl.inflight(from, tl.now(), baseline));
    *tl.budget.lock().unwrap() = None;
    let steps = steps.into_inner().unwrap();
    let spread = |f: fn(&cuzk::engine::Timings) -> f64| {
        let mut v: Vec<f64> = steps.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        let at = |q: f64| v.get(((v.len() as f64 * q) as usize).min(v.len().saturating_sub(1))).copied().unwrap_or(0.0);
        (at(0.5), at(0.9))
    };
    let synthesis = Some([spread(|t| t.witness), spread(|t| t.spmv)]);
    let devices = before
        .iter()
        .zip(engine.device_stats())
        .map(|(b, a)| DeviceRun {
            name: format!("{:?}", a.backend),
            proofs: a.proofs - b.proofs,
            failures: a.failures - b.failures,
            busy_fraction: (a.busy_seconds - b.busy_seconds) / wall_s,
            vram_free_before: b.vram_free,
            vram_free_after: a.vram_free,
            steps: steps.iter().filter(|t| t.backend == Some(a.backend)).fold(ProveTimings::default(), |mut sum, t| {
                sum.add(&t.prove);
                sum
            }),
        })
        .collect();
    drop(engine);
    drop(pce);
    tl.mark("PCE: after drop");
    mem::trim();
    let after_trim = tl.mark("PCE: after trim");
    let intervals = intervals.into_inner().unwrap();
    let mut ends: Vec<f64> = intervals.iter().map(|iv| iv.1).collect();
    ends.sort_by(f64::total_cmp);
    let (lo, hi) = (ends.len() / 10, ends.len().saturating_sub(ends.len() / 10 + 1));
    let steady_per_min = (hi > lo).then(|| 60.0 * (hi - lo) as f64 / (ends[hi] - ends[lo]));
    let backend_busy = Some(union_len(intervals) / wall_s);
    Ok(Phase {
        name: "PCE",
        baseline,
        peak,
        after_trim,
        predicted: Some(predicted),
        done,
        wall_s,
        backend_busy,
        steady_per_min,
        inflight,
        devices,
        synthesis,
    })
}
