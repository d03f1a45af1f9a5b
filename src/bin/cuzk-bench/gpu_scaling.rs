//! `gpu-scaling`: the backend stage alone (one witness, proved over and over;
//! no synthesis), on the first device by itself, then on every listed device
//! at once, then on the first by itself again (the two single-device runs
//! bracket the shared one, so drift shows), for each listed number of workers
//! per device. Per device: proofs per second and where each proof's time
//! went. Tells contention between devices apart from contention with
//! synthesis, which `pce-pipeline` mixes; with one device, the backend stage's
//! throughput (device seconds per proof) against its latency.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use blstrs::Scalar;
use clap::Args;
use cuzk::circuits::WitnessSource;
use cuzk::gpu;
use cuzk::groth16::Backend;
use cuzk::groth16::{ProveTimings, Urgency};
use cuzk::params::dummy_params;
use cuzk::pce::extract;
use cuzk::witness::WitnessBuffer;
use serde_json::json;

use crate::anyhow_like::Result;
use crate::report::{steps_json, steps_line, table, write_json};
use crate::CircuitArgs;

#[derive(Args)]
pub struct Opts {
    #[command(flatten)]
    pub c: CircuitArgs,
    /// Devices proving together (the first is also measured alone, before and after).
    #[arg(long, value_delimiter = ',', default_value = "0,1")]
    pub devices: Vec<u32>,
    /// Backend-stage workers (threads) per device; a list runs each in turn.
    #[arg(long, value_delimiter = ',', default_value = "2")]
    pub workers: Vec<usize>,
    /// Proofs per device in each run.
    #[arg(short = 'n', default_value_t = 40)]
    pub n: usize,
}

/// One device over one run.
struct DeviceRun {
    device: u32,
    proofs_per_s: f64,
    /// Stage times summed over the run's proofs.
    sum: ProveTimings,
    /// The most bytes the run's proofs held in device buffers at once (the pool's high-water
    /// mark: the SRS and the PCE's matrices are not in it).
    buffers_peak: u64,
}

/// `o.n` proofs on each of `devices` at once, `workers` threads per device.
fn run_devices(
    o: &Opts,
    workers: usize,
    devices: &[u32],
    prove: &(dyn Fn(u32) -> Result<ProveTimings> + Sync),
) -> Result<Vec<DeviceRun>> {
    std::thread::scope(|s| {
        let runs: Vec<_> = devices
            .iter()
            .map(|&device| {
                s.spawn(move || -> Result<DeviceRun> {
                    gpu::pool_peak(device as usize, true)?;
                    let next = AtomicUsize::new(0);
                    let sum = Mutex::new(ProveTimings::default());
                    let start = Instant::now();
                    std::thread::scope(|w| -> Result<()> {
                        let workers: Vec<_> = (0..workers.max(1))
                            .map(|_| {
                                w.spawn(|| -> Result<()> {
                                    while next.fetch_add(1, Ordering::SeqCst) < o.n {
                                        let t = prove(device)?;
                                        sum.lock().unwrap().add(&t);
                                    }
                                    Ok(())
                                })
                            })
                            .collect();
                        workers.into_iter().try_for_each(|h| h.join().map_err(|_| "a worker panicked")?)
                    })?;
                    let wall = start.elapsed().as_secs_f64();
                    Ok(DeviceRun {
                        device,
                        proofs_per_s: o.n as f64 / wall,
                        sum: sum.into_inner().unwrap(),
                        buffers_peak: gpu::pool_peak(device as usize, false)?,
                    })
                })
            })
            .collect();
        runs.into_iter().map(|h| h.join().map_err(|_| "a device thread panicked")?).collect()
    })
}

pub fn run(o: Opts) -> Result<()> {
    if gpu::device_count() == 0 {
        return Err("no CUDA device (or built without --features cuda)".into());
    }
    let first = *o.devices.first().ok_or("--devices is empty")?;
    let circuit = o.c.instance(0)?;
    let pce = extract(circuit.blank())?;
    let params = dummy_params(&pce, 5);
    let w = circuit.witness(&pce, WitnessBuffer::new(pce.num_inputs, pce.num_aux))?;
    let (r, s) = (Scalar::from(3u64), Scalar::from(7u64));
    let prove = |device: u32| -> Result<ProveTimings> {
        Ok(cuzk::groth16::prove(
            Backend::Cuda(device),
            Urgency::Throughput,
            &Default::default(),
            &pce,
            &w,
            None,
            &params,
            (r, s),
        )?
        .1)
    };
    // Warm every device (context, SRS upload, pools) before measuring.
    for &d in &o.devices {
        prove(d)?;
    }
    #[cfg(feature = "cuda")]
    println!(
        "a proof's device working set, as the engine reserves it: {:.2} GB",
        cuzk::groth16::cuda::working_set(&pce, &Default::default()) as f64 / 1e9
    );
    let (mut out, mut scalings) = (Vec::new(), Vec::new());
    for &workers in &o.workers {
        let mut totals = Vec::new();
        for (name, devices) in [("alone", vec![first]), ("together", o.devices.clone()), ("alone again", vec![first])] {
            let runs = run_devices(&o, workers, &devices, &prove)?;
            let total: f64 = runs.iter().map(|r| r.proofs_per_s).sum();
            let labels: Vec<String> = runs.iter().map(|r| format!("GPU {}", r.device)).collect();
            let mut rows: Vec<(&str, String)> = runs
                .iter()
                .zip(&labels)
                .map(|(r, label)| {
                    (
                        label.as_str(),
                        format!(
                            "{:.2} proofs/s; device buffers at most {:.2} GB; per proof: {}",
                            r.proofs_per_s,
                            r.buffers_peak as f64 / 1e9,
                            steps_line(&r.sum, o.n as u64)
                        ),
                    )
                })
                .collect();
            rows.push(("all devices", format!("{total:.2} proofs/s")));
            table(&format!("gpu-scaling: {name} ({workers} workers per device, {} proofs each)", o.n), &rows);
            out.push(json!({
                "run": name,
                "workers": workers,
                "proofs_per_s": total,
                "devices": runs.iter().map(|r| json!({
                    "device": r.device, "proofs_per_s": r.proofs_per_s, "buffers_peak_bytes": r.buffers_peak,
                    "per_proof_s": steps_json(&r.sum, o.n as u64),
                })).collect::<Vec<_>>(),
            }));
            totals.push(total);
        }
        let scaling = totals[1] / ((totals[0] + totals[2]) / 2.0);
        println!(
            "\n{} devices vs one, {workers} workers (mean of the two single runs): {scaling:.3}x",
            o.devices.len()
        );
        scalings.push(json!({ "workers": workers, "scaling": scaling }));
    }
    write_json(
        o.c.json.as_deref(),
        &json!({ "circuit": o.c.circuit, "constraints": pce.num_constraints(), "runs": out, "scaling": scalings }),
    )
}
