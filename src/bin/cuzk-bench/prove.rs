//! `prove`: end-to-end proofs through the engine with per-stage timings;
//! `--compare-bellperson` also runs `bellperson::groth16::create_proof` on the
//! same circuit, parameters and (r, s), checks the bytes are equal, and times
//! the reference synthesis against the synthesis time bellperson logs.

use std::path::PathBuf;

use bellperson::groth16::Parameters;
use blstrs::{Bls12, Scalar};
use clap::Args;
use cuzk::engine::{prove_one, Backend, ProveOptions, Timings};
use cuzk::groth16::{dummy_params, proof_bytes, read_params};
use cuzk::pce::{extract, Pce};
use cuzk::reference::ReferenceCs;
use serde_json::json;

use crate::report::{stage, table, write_json};
use crate::{anyhow_like::Result, logcap, CircuitArgs};

#[derive(Args)]
pub struct Opts {
    #[command(flatten)]
    pub c: CircuitArgs,
    /// cpu | cuda | cuda:ID | auto
    #[arg(long, default_value = "cpu")]
    pub backend: String,
    /// Number of proofs.
    #[arg(short = 'n', default_value_t = 1)]
    pub n: usize,
    /// A bellperson .params file for the circuit; without it, structurally valid
    /// dummy parameters are made (proofs then cannot verify, only compare).
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// Also prove with bellperson and compare bytes and times.
    #[arg(long)]
    pub compare_bellperson: bool,
    /// Do not verify (for --params files made with `params --dummy`).
    #[arg(long)]
    pub no_verify: bool,
    /// PoRep circuits (`--circuit porep-2KiB`): the C1 output JSON to prove
    /// (`cuzk-bench c1` writes one); without it a sector is sealed here.
    #[arg(long)]
    pub c1: Option<PathBuf>,
}

fn stage_json(t: &Timings) -> serde_json::Value {
    json!({
        "witness_s": t.witness, "spmv_s": t.spmv, "h_s": t.prove.h,
        "msm_h_s": t.prove.msm_h, "msm_l_s": t.prove.msm_l, "msm_a_s": t.prove.msm_a,
        "msm_b_g1_s": t.prove.msm_b_g1, "msm_b_g2_s": t.prove.msm_b_g2,
        "assembly_s": t.prove.assembly, "verify_s": t.verify, "total_s": t.total,
        "gpu": {
            "h_upload_s": t.prove.gpu.h_upload, "h_ntt_s": t.prove.gpu.h_ntt,
            "aux_upload_s": t.prove.gpu.aux_upload, "select_s": t.prove.gpu.select,
        },
    })
}

pub fn run(o: Opts) -> Result<()> {
    #[cfg(feature = "porep")]
    if let Some(size) = o.c.circuit.strip_prefix("porep-") {
        return run_porep(&o, size);
    }
    let backend = Backend::parse(&o.backend)?;
    let circuit = o.c.instance(0)?;
    let (pce, extract_s) = stage("extracting the PCE", || extract(circuit.blank()));
    let pce = pce?;
    let (params, params_s, real_params) = load_params(&o, &pce)?;
    let fixed = (Scalar::from(11u64), Scalar::from(13u64));
    let opts = ProveOptions { backend, verify: real_params, randomness: o.compare_bellperson.then_some(fixed) };
    let mut all = Vec::new();
    let mut last_proof = None;
    for i in 0..o.n.max(1) {
        let c = o.c.instance(i as u64)?;
        let inputs = c.public_inputs();
        let (res, _) = stage(&format!("proof {}/{}", i + 1, o.n), || prove_one(&pce, &params, c, Some(&inputs), &opts));
        let (proof, t) = res?;
        last_proof = Some(proof);
        all.push(t);
    }
    let t = median(&all);
    let mut rows = summary(
        &circuit.circuit_id(),
        backend,
        pce.num_constraints(),
        (extract_s, params_s),
        &t,
        all.len(),
        real_params,
    )?;
    let mut compare = serde_json::Value::Null;
    if o.compare_bellperson {
        logcap::install();
        let (reference, old_s) = stage("old path: reference synthesis", || ReferenceCs::synthesize(circuit.clone()));
        drop(reference?);
        logcap::take_synthesis_times();
        let (theirs, bp_s) = stage("bellperson create_proof", || {
            bellperson::groth16::create_proof(circuit.clone(), &params, fixed.0, fixed.1)
        });
        let theirs = theirs?;
        let logged = logcap::take_synthesis_times().first().map(|d| d.as_secs_f64());
        let identical = last_proof.map(|p| proof_bytes(&p)) == Some(proof_bytes(&theirs)) && o.n == 1;
        rows.push(("bellperson create_proof", format!("{bp_s:.3} s (ours {:.3} s: {:.2}x)", t.total, bp_s / t.total)));
        rows.push(("bellperson logged synthesis", format!("{:.3} s", logged.unwrap_or(f64::NAN))));
        rows.push((
            "old path (reference) synthesis",
            format!("{old_s:.3} s ({:+.1}% vs logged)", 100.0 * (old_s / logged.unwrap_or(f64::NAN) - 1.0)),
        ));
        rows.push(("byte-identical to bellperson", identical.to_string()));
        compare = json!({
            "bellperson_total_s": bp_s, "bellperson_synthesis_s": logged,
            "reference_synthesis_s": old_s, "speedup": bp_s / t.total, "identical": identical,
        });
        if !identical {
            return Err("proof differs from bellperson's (use -n 1)".into());
        }
    }
    table("prove", &rows);
    report(&o, backend, pce.num_constraints(), &t, all.len(), real_params, compare)
}

/// `--params`, or dummy parameters of the PCE's shape; whether proofs can verify.
fn load_params(o: &Opts, pce: &Pce) -> Result<(Parameters<Bls12>, f64, bool)> {
    let (params, secs) = stage("parameters", || match &o.params {
        Some(p) => read_params(p, false),
        None => Ok(dummy_params(pce, 7)),
    });
    Ok((params?, secs, o.params.is_some() && !o.no_verify))
}

/// The median proof by total time.
fn median(all: &[Timings]) -> Timings {
    let mut v = all.to_vec();
    v.sort_by(|a, b| a.total.total_cmp(&b.total));
    v[v.len() / 2]
}

/// The table rows every circuit kind shares.
fn summary(
    id: &str,
    backend: Backend,
    constraints: usize,
    (extract_s, params_s): (f64, f64),
    t: &Timings,
    proofs: usize,
    verified: bool,
) -> Result<Vec<(&'static str, String)>> {
    Ok(vec![
        ("circuit", id.to_string()),
        ("backend", format!("{:?}", cuzk::engine::resolve(backend)?)),
        ("constraints", constraints.to_string()),
        ("extraction / params", format!("{extract_s:.3} s / {params_s:.3} s")),
        ("witness", format!("{:.3} s", t.witness)),
        ("SpMV", format!("{:.3} s", t.spmv)),
        ("H (NTTs)", format!("{:.3} s", t.prove.h)),
        ("MSM H / L / A", format!("{:.3} / {:.3} / {:.3} s", t.prove.msm_h, t.prove.msm_l, t.prove.msm_a)),
        ("MSM B G1 / B G2", format!("{:.3} / {:.3} s", t.prove.msm_b_g1, t.prove.msm_b_g2)),
        ("assembly / verify", format!("{:.4} / {:.3} s", t.prove.assembly, t.verify)),
        ("total (median of n)", format!("{:.3} s", t.total)),
        ("verified", if verified { format!("{proofs}/{proofs}") } else { "no (dummy parameters)".into() }),
    ])
}

fn report(
    o: &Opts,
    backend: Backend,
    constraints: usize,
    t: &Timings,
    proofs: usize,
    verified: bool,
    compare: serde_json::Value,
) -> Result<()> {
    write_json(
        o.c.json.as_deref(),
        &json!({
            "backend": format!("{:?}", cuzk::engine::resolve(backend)?),
            "circuit": o.c.circuit,
            "constraints": constraints,
            "proofs": proofs,
            "stages": stage_json(t),
            "total_s": t.total,
            "verified": verified,
            "bellperson": compare,
        }),
    )
}

/// A PoRep C2: every partition of a real C1 (from `--c1`, or sealed here),
/// timings summed over the partitions, each partition verified with real
/// parameters.
#[cfg(feature = "porep")]
fn run_porep(o: &Opts, size: &str) -> Result<()> {
    use cuzk::circuits::porep::{circuit_id, extract_pce, make_c1, PorepC1, PorepSize};
    let size = PorepSize::from_name(size)?;
    let backend = Backend::parse(&o.backend)?;
    let c1 = match &o.c1 {
        Some(path) => std::fs::read(path)?,
        None => {
            let scratch = std::env::temp_dir().join(format!("cuzk-prove-{}", std::process::id()));
            let c1 = make_c1(size, &scratch, o.c.seed);
            let _ = std::fs::remove_dir_all(&scratch);
            c1?
        }
    };
    let c1 = PorepC1::parse_for(&c1, size)?;
    let (pce, extract_s) = stage("extracting the PoRep PCE", || extract_pce(size));
    let pce = pce?;
    let (params, params_s, real_params) = load_params(o, &pce)?;
    let opts = ProveOptions { backend, verify: real_params, randomness: None };
    let mut all = Vec::new();
    for i in 0..o.n.max(1) {
        let (res, wall) = stage(&format!("seal proof {}/{}", i + 1, o.n), || -> Result<Timings> {
            let mut sum = Timings::default();
            for k in 0..c1.num_partitions() {
                let (_, t) = prove_one(&pce, &params, c1.circuit(k)?, Some(&c1.public_inputs(k)?), &opts)?;
                sum.add(&t);
            }
            Ok(sum)
        });
        let mut t = res?;
        t.total = wall;
        all.push(t);
    }
    let t = median(&all);
    let id = circuit_id(size)?;
    let mut rows = summary(&id, backend, pce.num_constraints(), (extract_s, params_s), &t, all.len(), real_params)?;
    rows.insert(1, ("partitions", c1.num_partitions().to_string()));
    table("prove (PoRep C2, times summed over partitions)", &rows);
    report(o, backend, pce.num_constraints(), &t, all.len(), real_params, serde_json::Value::Null)
}
