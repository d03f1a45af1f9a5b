//! `synth-only`: the witness and SpMV alone, repeated, min/median (a PoRep circuit's first
//! partition). The witness is the one the engine makes (the circuit's witness program when it
//! has one; the gadgets' with `--no-witness-program`); its CPU time is read from getrusage.
//! `--compare-gadgets` also makes the gadgets' witness of the same instance in the same run and
//! checks the two bit for bit.

use clap::Args;
use cuzk::circuits::WitnessSource;
use cuzk::pce::evaluate;
use cuzk::witness::WitnessBuffer;
use serde_json::json;

use crate::pce_bench::spmv_bytes;
use crate::prove::{request_input, statement_of};
use crate::report::{stage, table, write_json};
use crate::sharing::WitnessArgs;
use crate::{anyhow_like::Result, CircuitArgs};

#[derive(Args)]
pub struct Opts {
    #[command(flatten)]
    pub c: CircuitArgs,
    /// Iterations.
    #[arg(short = 'i', long = "iter", default_value_t = 5)]
    pub iter: usize,
    /// Also make the gadgets' witness, compare, and report the speedup.
    #[arg(long)]
    pub compare_gadgets: bool,
    /// PoRep and PoSt circuits: the request input whose first partition is made
    /// (`cuzk-bench fixture` writes one); without it a sector is sealed here.
    #[arg(long, alias = "c1")]
    pub input: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub witness: WitnessArgs,
}

fn min_median(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    (v[0], v[v.len() / 2])
}

/// CPU-seconds (user + system) of the whole process so far.
fn cpu_seconds() -> f64 {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a `rusage` into the pointer it is given.
    let u = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr());
        u.assume_init()
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

/// `f`'s result, wall seconds and CPU-seconds.
fn timed<T>(label: &str, f: impl FnOnce() -> T) -> (T, f64, f64) {
    let cpu = cpu_seconds();
    let (v, wall) = stage(label, f);
    (v, wall, cpu_seconds() - cpu)
}

pub fn run(o: Opts) -> Result<()> {
    let circuit = o.c.circuit()?;
    let input = request_input(&circuit, o.input.as_deref(), o.c.seed)?;
    let statement = statement_of(&circuit, o.c.seed, &input, 0)?;
    let (pce, extract_s) = stage("extracting the PCE", || circuit.extract_pce());
    let pce = pce?;
    let first = statement.instance(0)?;
    let (program, program_s) = match o.witness.program() {
        true => stage("recording the witness program", || first.program(&pce).map(|p| p.free().len())),
        false => (None, 0.0),
    };
    // A program's first witness is checked against the gadgets' (once per PCE): not timed below.
    let (checked, check_s) = stage("its first witness, checked against the gadgets'", || match program {
        Some(_) => first.witness(&pce, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).map(drop),
        None => Ok(()),
    });
    checked?;
    let n = o.iter.max(1);
    let (mut wall, mut cpu, mut spmv, mut gadget_wall, mut gadget_cpu) = (vec![], vec![], vec![], vec![], vec![]);
    let mut validated = true;
    for i in 0..n {
        let buf = WitnessBuffer::new(pce.num_inputs, pce.num_aux);
        let instance = statement.instance(0)?;
        let (w, ws, wc) = timed(&format!("witness {}/{n}", i + 1), || match o.witness.program() {
            true => instance.witness(&pce, buf),
            false => instance.gadget_witness(buf),
        });
        let w = w?;
        let (abc, ss) = stage(&format!("SpMV {}/{n}", i + 1), || evaluate(&pce, &w));
        drop(abc?);
        if o.compare_gadgets {
            let (instance, buf) = (statement.instance(0)?, WitnessBuffer::new(pce.num_inputs, pce.num_aux));
            let (g, gs, gc) = timed(&format!("gadgets' witness {}/{n}", i + 1), || instance.gadget_witness(buf));
            validated &= g? == w;
            gadget_wall.push(gs);
            gadget_cpu.push(gc);
        }
        wall.push(ws);
        cpu.push(wc);
        spmv.push(ss);
    }
    let (wmin, wmed) = min_median(&mut wall);
    let (cmin, _) = min_median(&mut cpu);
    let (smin, smed) = min_median(&mut spmv);
    let gbs = spmv_bytes(&pce) as f64 / smin / 1e9;
    let per_constraint = cmin * 1e6 / pce.num_constraints() as f64;
    let mut rows = vec![
        ("circuit", circuit.circuit_id()?),
        ("constraints / nnz", format!("{} / {}", pce.num_constraints(), pce.nnz())),
        ("extraction", format!("{extract_s:.3} s")),
        (
            "witness program",
            program.map_or("none".into(), |f| {
                format!("{f} free values, recorded in {program_s:.3} s, first witness checked in {check_s:.3} s")
            }),
        ),
        ("witness min / median", format!("{wmin:.3} / {wmed:.3} s")),
        ("witness CPU (min)", format!("{cmin:.3} s, {per_constraint:.4} µs per constraint")),
        ("SpMV min / median", format!("{smin:.3} / {smed:.3} s")),
        ("SpMV throughput (min)", format!("{gbs:.2} GB/s")),
    ];
    let mut out = json!({
        "circuit": o.c.circuit,
        "constraints": pce.num_constraints(),
        "nnz": pce.nnz(),
        "iterations": n,
        "witness_program": program.is_some(),
        "program_record_s": program_s,
        "program_check_s": check_s,
        "witness_min_s": wmin, "witness_median_s": wmed,
        "witness_cpu_s": cmin,
        "witness_cpu_us_per_constraint": per_constraint,
        "spmv_min_s": smin, "spmv_median_s": smed,
        "spmv_gb_per_s": gbs,
    });
    if o.compare_gadgets {
        let (gmin, _) = min_median(&mut gadget_wall);
        let (gcmin, _) = min_median(&mut gadget_cpu);
        let speedup = gcmin / cmin;
        rows.push(("gadgets' witness min", format!("{gmin:.3} s, CPU {gcmin:.3} s")));
        rows.push(("witness speedup (CPU)", format!("{speedup:.2}×, bit-identical: {validated}")));
        out["gadget_witness_min_s"] = json!(gmin);
        out["gadget_witness_cpu_s"] = json!(gcmin);
        out["witness_speedup"] = json!(speedup);
        out["validated"] = json!(validated);
    }
    table("synth-only", &rows);
    write_json(o.c.json.as_deref(), &out)?;
    if !validated {
        return Err("the witness differs from the gadgets' witness".into());
    }
    Ok(())
}
