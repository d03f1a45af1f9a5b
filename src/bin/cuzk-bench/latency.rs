//! `latency`: how long a critical proof (a WinningPoSt) takes while throughput proofs keep
//! every device busy. J background pipelines prove `--background` without pause; first alone
//! (their throughput and the devices' busy fraction without critical work), then while a
//! critical proof of `--circuit` arrives every `--interval` seconds, `-n` times. The same
//! critical proof on the idle engine first gives `idle_s`. `--as-throughput` also sends the
//! critical proofs once as priority-255 throughput requests, for the figures without the class.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use cuzk::circuits::Circuit;
use cuzk::engine::{CancelToken, Engine, EngineConfig, Priority, ProveOptions, Request, Timings};
use cuzk::groth16::Backend;
use cuzk::params::{dummy_params, Srs};
use cuzk::pce::Pce;
use serde_json::json;

use crate::report::{stage, table, write_json};
use crate::sharing::SharingArgs;
use crate::{anyhow_like::Result, parse_size, CircuitArgs};

#[derive(Args)]
pub struct Opts {
    /// The critical circuit (`--size` ~2^19: a 32 GiB WinningPoSt has 370,590 constraints).
    #[command(flatten)]
    pub c: CircuitArgs,
    /// The background (throughput) circuit.
    #[arg(long, default_value = "mimc-chain")]
    pub background: String,
    #[arg(long, default_value = "2^24", value_parser = parse_size)]
    pub background_size: usize,
    /// Background pipelines (throughput requests in flight).
    #[arg(short = 'j', default_value_t = 8)]
    pub j: usize,
    /// Critical proofs under load.
    #[arg(short = 'n', default_value_t = 20)]
    pub n: usize,
    /// Seconds between critical arrivals.
    #[arg(long, default_value_t = 3.0)]
    pub interval: f64,
    /// Backend-stage workers per device (each device also has its express worker).
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// cpu | cuda:ID | auto (auto: every GPU)
    #[arg(long, default_value = "auto")]
    pub backend: String,
    /// Also send the critical proofs as priority-255 throughput requests (the figures without
    /// the latency class), in a window of their own.
    #[arg(long)]
    pub as_throughput: bool,
    #[command(flatten)]
    pub sharing: SharingArgs,
}

/// A circuit made ready to prove: its PCE and dummy parameters of its shape (the figures are
/// the prover's; verification is off, as dummy parameters cannot verify).
struct Ready {
    circuit: Circuit,
    pce: Pce,
    params: Srs,
}

impl Ready {
    fn new(circuit: Circuit) -> Result<Ready> {
        let (pce, secs) = stage(&format!("extracting {}", circuit.label()), || circuit.extract_pce());
        let pce = pce?;
        let (params, psecs) = stage("dummy parameters", || Srs::in_memory(dummy_params(&pce, 7)));
        println!(
            "{}: {} constraints, PCE {secs:.1} s, parameters {psecs:.1} s",
            circuit.label(),
            pce.num_constraints()
        );
        Ok(Ready { circuit, pce, params })
    }

    fn prove(&self, e: &Engine, seed: u64, priority: Priority, backend: Backend) -> Result<Timings> {
        let statement = self.circuit.statement(seed, &[])?;
        let (_, t) = e.prove(Request {
            pce: &self.pce,
            params: &self.params,
            statement: &statement,
            opts: ProveOptions { backend, verify: false, randomness: None },
            priority,
            cancel: CancelToken::new(),
            observer: None,
        })?;
        Ok(t)
    }
}

/// One window of the background load: its proofs per minute, the devices' busy fraction, and
/// the critical proofs sent in it.
struct Window {
    background_per_min: f64,
    busy_fraction: f64,
    critical: Vec<Timings>,
}

/// Nearest-rank quantile of `v` (sorted in place).
fn quantile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len().max(1));
    v.get(rank - 1).copied().unwrap_or(f64::NAN)
}

fn busy_seconds(e: &Engine) -> f64 {
    e.device_stats().iter().map(|d| d.busy_seconds).sum()
}

/// Runs `critical` (none: the background alone for `seconds`) over the running background and
/// measures the window.
fn window(
    e: &Engine,
    done: &AtomicU64,
    seconds: f64,
    critical: Option<(&Ready, Priority, Backend, &Opts)>,
) -> Result<Window> {
    let (count0, busy0, t0) = (done.load(Ordering::SeqCst), busy_seconds(e), Instant::now());
    let mut times = Vec::new();
    match critical {
        None => std::thread::sleep(Duration::from_secs_f64(seconds)),
        Some((ready, priority, backend, o)) => {
            for i in 0..o.n {
                let at = Duration::from_secs_f64(o.interval * i as f64);
                std::thread::sleep(at.saturating_sub(t0.elapsed()));
                times.push(ready.prove(e, 1000 + i as u64, priority, backend)?);
            }
            std::thread::sleep(Duration::from_secs_f64(seconds).saturating_sub(t0.elapsed()));
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    let devices = e.backends().len() as f64;
    Ok(Window {
        background_per_min: (done.load(Ordering::SeqCst) - count0) as f64 * 60.0 / wall,
        busy_fraction: (busy_seconds(e) - busy0) / (wall * devices),
        critical: times,
    })
}

/// One of a proof's timed stages.
type Stage = fn(&Timings) -> f64;

/// The stages `cuzk-bench latency` reports of a proof, by JSON name.
const STAGES: [(&str, Stage); 15] = [
    ("total_s", |t| t.total),
    ("queued_s", |t| t.queued),
    ("witness_s", |t| t.witness),
    ("spmv_s", |t| t.spmv),
    ("backend_s", |t| t.prove.total()),
    ("h_s", |t| t.prove.h),
    ("msm_h_s", |t| t.prove.msm_h),
    ("msm_l_s", |t| t.prove.msm_l),
    ("msm_a_s", |t| t.prove.msm_a),
    ("msm_b_g1_s", |t| t.prove.msm_b_g1),
    ("msm_b_g2_s", |t| t.prove.msm_b_g2),
    ("assembly_s", |t| t.prove.assembly),
    ("gpu_witness_upload_s", |t| t.prove.gpu.witness_upload),
    ("gpu_spmv_s", |t| t.prove.gpu.spmv),
    ("gpu_h_ntt_s", |t| t.prove.gpu.h_ntt),
];

/// The medians of the stages of proofs timed `t`.
fn stage_medians(t: &[Timings]) -> serde_json::Value {
    let median = |f: Stage| quantile(&mut t.iter().map(f).collect::<Vec<_>>(), 0.5);
    STAGES.iter().map(|&(name, f)| (name.to_string(), json!(median(f)))).collect()
}

/// Each proof's stages: a wait that falls on a different stage in each proof shows here and
/// in no stage's median.
fn stage_samples(t: &[Timings]) -> serde_json::Value {
    let stages = |t: &Timings| STAGES.iter().map(|&(name, f)| (name.to_string(), json!(f(t)))).collect();
    t.iter().map(|t| serde_json::Value::Object(stages(t))).collect()
}

fn latency_json(w: &Window, idle_s: f64) -> serde_json::Value {
    let mut total: Vec<f64> = w.critical.iter().map(|t| t.total).collect();
    let mut queued: Vec<f64> = w.critical.iter().map(|t| t.queued).collect();
    let stages = stage_medians(&w.critical);
    let p99 = quantile(&mut total, 0.99);
    json!({
        "critical_p50_s": quantile(&mut total, 0.5),
        "critical_p99_s": p99,
        "critical_max_s": quantile(&mut total, 1.0),
        "critical_queued_p50_s": quantile(&mut queued, 0.5),
        "critical_queued_max_s": quantile(&mut queued, 1.0),
        "critical_stage_medians": stages,
        "critical_samples": stage_samples(&w.critical),
        "p99_over_idle": p99 / idle_s,
        "background_proofs_per_min": w.background_per_min,
        "backend_busy_fraction": w.busy_fraction,
    })
}

pub fn run(o: Opts) -> Result<()> {
    let backend = Backend::parse(&o.backend)?;
    let devices = match backend {
        Backend::Auto => None,
        Backend::Cpu => Some(vec![]),
        Backend::Cuda(id) => Some(vec![id]),
    };
    let e = Engine::new(o.sharing.apply(EngineConfig {
        devices,
        workers_per_device: o.workers,
        ..EngineConfig::default()
    })?)?;
    let critical = Ready::new(o.c.circuit()?)?;
    let background = Ready::new(Circuit::parse(&o.background, o.background_size as u64)?)?;

    // Warm: thread pools, GPU contexts, both parameter sets on every device.
    for device in e.backends() {
        let t = critical.prove(&e, 0, Priority::Critical, device)?.total;
        println!("warm: first critical proof on {device:?} in {t:.2} s");
        let t = background.prove(&e, 0, Priority::default(), device)?.total;
        println!("warm: first background proof on {device:?} in {t:.2} s");
    }
    let idle: Vec<Timings> = (0..o.n.clamp(3, 10))
        .map(|i| critical.prove(&e, 500 + i as u64, Priority::Critical, backend))
        .collect::<Result<_>>()?;
    let idle_s = quantile(&mut idle.iter().map(|t| t.total).collect::<Vec<_>>(), 0.5);
    println!("critical proof on the idle engine: {idle_s:.3} s (median of {})", idle.len());

    let stop = AtomicBool::new(false);
    let done = AtomicU64::new(0);
    let seconds = o.interval * o.n as f64;
    let windows = std::thread::scope(|s| -> Result<_> {
        let pipelines: Vec<_> = (0..o.j)
            .map(|k| {
                let (stop, done, background, e) = (&stop, &done, &background, &e);
                s.spawn(move || -> Result<()> {
                    let mut seed = 10_000 * (k as u64 + 1);
                    while !stop.load(Ordering::SeqCst) {
                        background.prove(e, seed, Priority::default(), backend)?;
                        done.fetch_add(1, Ordering::SeqCst);
                        seed += 1;
                    }
                    Ok(())
                })
            })
            .collect();
        let measured = (|| -> Result<_> {
            // Steady state: every pipeline has finished a proof.
            let t0 = Instant::now();
            while done.load(Ordering::SeqCst) < o.j as u64 && t0.elapsed().as_secs() < 600 {
                std::thread::sleep(Duration::from_millis(50));
            }
            println!("background steady after {:.1} s; measuring {seconds:.0} s windows", t0.elapsed().as_secs_f64());
            let alone = window(&e, &done, seconds, None)?;
            let with = window(&e, &done, seconds, Some((&critical, Priority::Critical, backend, &o)))?;
            let old = match o.as_throughput {
                true => Some(window(&e, &done, seconds, Some((&critical, Priority::Throughput(255), backend, &o)))?),
                false => None,
            };
            Ok((alone, with, old))
        })();
        stop.store(true, Ordering::SeqCst);
        for p in pipelines {
            p.join().map_err(|_| "a background pipeline panicked")??;
        }
        measured
    })?;
    let (alone, with, old) = windows;

    let with_json = latency_json(&with, idle_s);
    let cost = 1.0 - with.background_per_min / alone.background_per_min;
    let f = |k: &str| with_json[k].as_f64().unwrap_or(f64::NAN);
    let mut rows = vec![
        ("critical", format!("{} ({} constraints)", critical.circuit.label(), critical.pce.num_constraints())),
        ("background", format!("{} × {}", o.j, background.circuit.label())),
        ("devices", format!("{:?}", e.backends())),
        ("idle", format!("{idle_s:.3} s")),
        (
            "critical p50 / p99 / max",
            format!("{:.3} / {:.3} / {:.3} s", f("critical_p50_s"), f("critical_p99_s"), f("critical_max_s")),
        ),
        (
            "critical queued p50 / max",
            format!("{:.3} / {:.3} s", f("critical_queued_p50_s"), f("critical_queued_max_s")),
        ),
        (
            "background proofs/min",
            format!(
                "{:.2} alone, {:.2} with critical ({:+.1}%)",
                alone.background_per_min,
                with.background_per_min,
                -100.0 * cost
            ),
        ),
        (
            "backend busy",
            format!("{:.1}% alone, {:.1}% with critical", 100.0 * alone.busy_fraction, 100.0 * with.busy_fraction),
        ),
    ];
    let old_json = old.as_ref().map(|w| latency_json(w, idle_s));
    if let Some(j) = &old_json {
        let g = |k: &str| j[k].as_f64().unwrap_or(f64::NAN);
        rows.push((
            "as throughput p50 / p99 / max",
            format!("{:.3} / {:.3} / {:.3} s", g("critical_p50_s"), g("critical_p99_s"), g("critical_max_s")),
        ));
    }
    table("latency", &rows);
    let mut out = with_json;
    out["idle_s"] = json!(idle_s);
    out["idle_stage_medians"] = stage_medians(&idle);
    out["critical_circuit"] = json!(critical.circuit.label());
    out["critical_constraints"] = json!(critical.pce.num_constraints());
    out["background_circuit"] = json!(background.circuit.label());
    out["background_constraints"] = json!(background.pce.num_constraints());
    out["j"] = json!(o.j);
    out["n"] = json!(o.n);
    out["interval_s"] = json!(o.interval);
    out["devices"] = json!(e.backends().iter().map(|b| format!("{b:?}")).collect::<Vec<_>>());
    out["background_proofs_per_min_alone"] = json!(alone.background_per_min);
    out["backend_busy_fraction_alone"] = json!(alone.busy_fraction);
    out["background_throughput_cost"] = json!(cost);
    out["as_throughput"] = old_json.unwrap_or(serde_json::Value::Null);
    out["engine_options"] = o.sharing.json();
    write_json(o.c.json.as_deref(), &out)
}
