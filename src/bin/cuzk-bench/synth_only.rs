//! `synth-only`: witness generation and SpMV alone, repeated, min/median.

use clap::Args;
use cuzk::pce::{evaluate, extract};
use cuzk::witness::Witness;
use serde_json::json;

use crate::pce_bench::spmv_bytes;
use crate::report::{stage, table, write_json};
use crate::{anyhow_like::Result, CircuitArgs};

#[derive(Args)]
pub struct Opts {
    #[command(flatten)]
    pub c: CircuitArgs,
    /// Iterations.
    #[arg(short = 'i', long = "iter", default_value_t = 5)]
    pub iter: usize,
}

fn min_median(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    (v[0], v[v.len() / 2])
}

pub fn run(o: Opts) -> Result<()> {
    let circuit = o.c.instance(0)?;
    let (pce, extract_s) = stage("extracting the PCE", || extract(circuit.blank()));
    let pce = pce?;
    let (mut wit, mut spmv) = (Vec::new(), Vec::new());
    for i in 0..o.iter.max(1) {
        let (w, ws) = stage(&format!("witness {}/{}", i + 1, o.iter), || Witness::generate(circuit.clone()));
        let w = w?;
        let (abc, ss) = stage(&format!("SpMV {}/{}", i + 1, o.iter), || evaluate(&pce, &w));
        drop(abc?);
        wit.push(ws);
        spmv.push(ss);
    }
    let (wmin, wmed) = min_median(&mut wit);
    let (smin, smed) = min_median(&mut spmv);
    let gbs = spmv_bytes(&pce) as f64 / smin / 1e9;
    table(
        "synth-only",
        &[
            ("circuit", circuit.circuit_id()),
            ("constraints / nnz", format!("{} / {}", pce.num_constraints(), pce.nnz())),
            ("extraction", format!("{extract_s:.3} s")),
            ("witness min / median", format!("{wmin:.3} / {wmed:.3} s")),
            ("SpMV min / median", format!("{smin:.3} / {smed:.3} s")),
            ("SpMV throughput (min)", format!("{gbs:.2} GB/s")),
        ],
    );
    write_json(
        o.c.json.as_deref(),
        &json!({
            "circuit": o.c.circuit,
            "constraints": pce.num_constraints(),
            "nnz": pce.nnz(),
            "iterations": o.iter,
            "witness_min_s": wmin, "witness_median_s": wmed,
            "spmv_min_s": smin, "spmv_median_s": smed,
            "spmv_gb_per_s": gbs,
        }),
    )
}
