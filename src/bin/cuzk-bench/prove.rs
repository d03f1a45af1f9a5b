//! `prove`: end-to-end proofs of any circuit (every partition) through the engine with
//! per-stage timings; `--compare-bellperson` also runs `bellperson::groth16::create_proof` on
//! each partition with the same parameters and (r, s), checks the bytes are equal, and times
//! the reference synthesis against the synthesis time bellperson logs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bellperson::groth16::VerifyingKey;
use blstrs::{Bls12, Scalar};
use clap::Args;
use cuzk::circuits::{Circuit, Kind, Statement};
use cuzk::engine::{proof_bytes, CancelToken, Engine, EngineConfig, Priority, ProveOptions, Request, Timings};
use cuzk::groth16::Backend;
use cuzk::oracles::reference::ReferenceCs;
use cuzk::params::{dummy_params, srs, LoadOptions, Srs};
use cuzk::pce::{Access, Pce};
use serde_json::json;

use crate::report::{stage, table, write_json};
use crate::sharing::SharingArgs;
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
    /// Make the engine's devices ready first (`Engine::prepare`: the parameters uploaded to
    /// each GPU), so the first proof does not pay for it.
    #[arg(long)]
    pub prepare: bool,
    /// With --params: load them in the background (`LoadOptions::background`): the points are
    /// decoded (or read from their cache) while the first proof's witness is made.
    #[arg(long, requires = "params")]
    pub background_load: bool,
    /// With --params: decode the file alone, no `.cuzk-srs` cache read or written beside it
    /// (for files as large as the free disk).
    #[arg(long, requires = "params")]
    pub no_cache: bool,
    /// PoRep and PoSt circuits: the request input to prove (a C1 output JSON, a PoSt input:
    /// `cuzk-bench fixture` writes them); without it a sector is sealed here.
    #[arg(long, alias = "c1")]
    pub input: Option<PathBuf>,
    /// Load the PCE from this .pce file, as `cuzk_pce_load` does (read into memory, checksums
    /// checked; when missing, extracted with its witness program and saved there), instead of
    /// extracting it: a run after one that made the file is a restart.
    #[arg(long)]
    pub pce: Option<PathBuf>,
    /// PoRep with --params: the number of the sector the C1 seals (`cuzk-bench c1` prints it);
    /// filecoin-proofs' `verify_seal` then checks the last proof, and refuses it for the next
    /// sector number.
    #[arg(long, requires = "params")]
    pub sector_id: Option<u64>,
    /// With --sector-id: the miner (actor id) whose prover id sealed the sector.
    #[arg(long, default_value_t = 1000)]
    pub miner: u64,
    #[command(flatten)]
    pub sharing: SharingArgs,
}

fn stage_json(t: &Timings) -> serde_json::Value {
    json!({
        "witness_s": t.witness, "spmv_s": t.spmv, "h_s": t.prove.h,
        "msm_h_s": t.prove.msm_h, "msm_l_s": t.prove.msm_l, "msm_a_s": t.prove.msm_a,
        "msm_b_g1_s": t.prove.msm_b_g1, "msm_b_g2_s": t.prove.msm_b_g2,
        "assembly_s": t.prove.assembly, "verify_s": t.verify, "total_s": t.total,
        "gpu": {
            "witness_upload_s": t.prove.gpu.witness_upload, "spmv_s": t.prove.gpu.spmv,
            "h_ntt_s": t.prove.gpu.h_ntt, "select_s": t.prove.gpu.select,
        },
    })
}

/// What proof `i` proves: a synthetic circuit's instance of seed `seed + i`, or a Filecoin
/// circuit's request `input` (the same for every proof).
pub fn statement_of(circuit: &Circuit, seed: u64, input: &[u8], i: u64) -> Result<Statement> {
    Ok(match circuit.kind() {
        Kind::Synthetic => circuit.statement(seed + i, &[])?,
        _ => circuit.statement(0, input)?,
    })
}

/// The request input of a Filecoin circuit: the file at `path`, or one made here
/// ([`made_input`]); none for a synthetic circuit.
pub fn request_input(circuit: &Circuit, path: Option<&Path>, seed: u64) -> Result<Vec<u8>> {
    match (circuit.kind(), path) {
        (Kind::Synthetic, _) => Ok(Vec::new()),
        (_, Some(p)) => Ok(std::fs::read(p)?),
        (_, None) => made_input(circuit, crate::fixture::Seal::Interactive, seed),
    }
}

/// A real request input for `circuit`, from a sector sealed here from random data (`seed`):
/// PoRep's C1 output; a PoSt input over one partition's sectors (WindowPoSt: the sealed
/// replica under as many sector ids as a partition holds; WinningPoSt: its one sector); a
/// SnapDeals input (new data encoded into the sector, every partition's proof).
#[cfg(feature = "porep")]
pub fn made_input(circuit: &Circuit, seal: crate::fixture::Seal, seed: u64) -> Result<Vec<u8>> {
    use cuzk::circuits::post::PostKind;
    use cuzk::oracles::post::PostFixture;
    let scratch = std::env::temp_dir().join(format!("cuzk-input-{}", std::process::id()));
    let made = match circuit {
        Circuit::Porep(size) => cuzk::oracles::porep::make_c1(*size, seal.into(), &scratch, seed).map(|c1| c1.bytes),
        Circuit::Post(t) => PostFixture::new(*t, &scratch, seed).and_then(|f| {
            let sectors: Vec<u64> = match t.kind {
                PostKind::Winning => vec![1],
                PostKind::Window => (1..=t.sectors_per_partition() as u64).collect(),
            };
            f.input(*t, &sectors, None, seed).map(|i| i.encode())
        }),
        Circuit::Snap(size) => cuzk::oracles::snap::make_snap_input(*size, &scratch, seed).map(|i| i.encode()),
        Circuit::Synthetic { .. } => Err(cuzk::Error::InvalidInput(format!("{} takes no input", circuit.label()))),
    };
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(made?)
}

#[cfg(not(feature = "porep"))]
pub fn made_input(_: &Circuit, _: crate::fixture::Seal, _: u64) -> Result<Vec<u8>> {
    Err("Filecoin circuits need the `porep` feature".into())
}

/// An engine on the devices `backend` names (one worker each), with `sharing`'s options.
pub fn engine_for(backend: Backend, sharing: &SharingArgs) -> Result<Engine> {
    let devices = match backend {
        Backend::Auto => None,
        Backend::Cpu => Some(vec![]),
        Backend::Cuda(id) => Some(vec![id]),
    };
    Ok(Engine::new(sharing.apply(EngineConfig { devices, ..EngineConfig::default() })?)?)
}

pub fn run(o: Opts) -> Result<()> {
    let backend = Backend::parse(&o.backend)?.resolve()?;
    let circuit = o.c.circuit()?;
    let vk_dir = filecoin_vk_dir(&circuit, o.sector_id.is_some());
    let (pce, extract_s) = match &o.pce {
        Some(path) => stage("loading the PCE", || circuit.load_pce(path, true, Access::Read)),
        None => stage("extracting the PCE", || circuit.extract_pce().map(Arc::new)),
    };
    let pce = pce?;
    let (params, params_s, real_params) = load_params(&o, &pce)?;
    if let (Some(dir), true) = (&vk_dir, real_params) {
        write_vk(&circuit, dir, params.vk())?;
    }
    let engine = engine_for(backend, &o.sharing)?;
    let prepare = || -> cuzk::Result<f64> {
        let (r, secs) = stage("preparing the devices", || engine.prepare(&pce, &params));
        r?;
        println!("prepared in {secs:.3} s");
        Ok(secs)
    };
    // After a load in the background the devices are prepared beside the first witness, as a
    // host would (preparing waits for the points, then uploads them); otherwise before it.
    let beside = o.prepare && o.background_load;
    let prepare_s = if o.prepare && !beside { Some(prepare()?) } else { None };
    let input = request_input(&circuit, o.input.as_deref(), o.c.seed)?;
    let partitions = circuit.proof_len_for(&input)? / cuzk::groth16::PROOF_BYTES;
    // (r, s) of partition k, fixed when the bytes are compared with bellperson's.
    let fixed = |k: u64| (Scalar::from(11 + k), Scalar::from(13 + k));
    let randomness = o.compare_bellperson.then(|| (0..partitions as u64).map(fixed).collect());
    let opts = ProveOptions { backend, verify: real_params, randomness };
    let mut all = Vec::new();
    let mut last = None;
    let mut last_bytes = Vec::new();
    let preparing = std::thread::scope(|s| -> Result<Option<f64>> {
        let preparing = beside.then(|| s.spawn(prepare));
        for i in 0..o.n.max(1) as u64 {
            let statement = statement_of(&circuit, o.c.seed, &input, i)?;
            let (res, _) = stage(&format!("proof {}/{}", i + 1, o.n), || {
                engine.prove(Request {
                    pce: &pce,
                    params: &params,
                    statement: &statement,
                    opts: opts.clone(),
                    priority: Priority::default(),
                    cancel: CancelToken::new(),
                    observer: None,
                })
            });
            let (proofs, t) = res?;
            last_bytes = proof_bytes(&proofs);
            last = Some((statement, proofs));
            all.push(t);
        }
        Ok(match preparing {
            Some(h) => Some(h.join().map_err(|_| "preparing the devices panicked")??),
            None => None,
        })
    })?;
    let prepare_s = prepare_s.or(preparing);
    let t = median(&all);
    let mut rows = summary(
        &circuit.circuit_id()?,
        backend,
        pce.num_constraints(),
        (extract_s, params_s),
        &t,
        all.len(),
        real_params,
    );
    rows.insert(1, ("partitions", partitions.to_string()));
    let mut compare = serde_json::Value::Null;
    if let (true, Some((statement, ours))) = (o.compare_bellperson, last) {
        let (reference, old_s) = stage("old path: reference synthesis", || {
            (0..statement.partitions()).try_for_each(|k| ReferenceCs::synthesize(statement.instance(k)?).map(drop))
        });
        reference?;
        logcap::take_synthesis_times();
        let (theirs, bp_s) = stage("bellperson create_proof", || -> Result<Vec<u8>> {
            let mut bytes = Vec::new();
            for k in 0..statement.partitions() {
                let (r, s) = fixed(k as u64);
                let p = bellperson::groth16::create_proof(statement.instance(k)?, params.queries()?, r, s)?;
                bytes.extend_from_slice(&cuzk::groth16::proof_bytes(&p));
            }
            Ok(bytes)
        });
        let logged: Option<f64> = {
            let times = logcap::take_synthesis_times();
            (!times.is_empty()).then(|| times.iter().map(|d| d.as_secs_f64()).sum())
        };
        let identical = proof_bytes(&ours) == theirs? && o.n == 1;
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
    let each =
        |f: fn(&Timings) -> f64| all.iter().map(|t| format!("{:.3}", f(t))).collect::<Vec<_>>().join(" / ") + " s";
    rows.push(("each proof", each(|t| t.total)));
    rows.push(("each proof's witness", each(|t| t.witness)));
    let program = match pce.program.trusted() {
        Some(true) => "trusted (a witness it made matched the gadgets')",
        Some(false) => "DISTRUSTED (it disagreed with the gadgets: they made the witnesses)",
        None => "not judged (gadgets only, or no witness made)",
    };
    rows.push(("witness program", program.to_string()));
    table("prove", &rows);
    let filecoin_verified = match (&vk_dir, real_params) {
        (Some(_), true) => filecoin_verify(&circuit, &input, &last_bytes, o.sector_id.map(|id| (o.miner, id)))?,
        _ => None,
    };
    if let Some(v) = filecoin_verified {
        println!("filecoin-proofs' own verifier: {}", if v { "verified" } else { "REJECTED" });
    }
    let mut out = report(&o, backend, pce.num_constraints(), &t, &all, real_params, compare);
    out["prepare_s"] = json!(prepare_s);
    out["filecoin_verified"] = json!(filecoin_verified);
    out["witness_program_trusted"] = json!(pce.program.trusted());
    write_json(o.c.json.as_deref(), &out)
}

/// For a PoSt or SnapDeals circuit, or a PoRep one whose sector is named, the directory
/// filecoin-proofs will read verifying keys from, set before its first call (it reads its
/// settings once): the parameters' key is written there, so its own verifier can check our
/// proofs.
fn filecoin_vk_dir(circuit: &Circuit, sector_named: bool) -> Option<PathBuf> {
    if !matches!(circuit.kind(), Kind::WinningPost | Kind::WindowPost | Kind::SnapDeals) && !sector_named {
        return None;
    }
    let dir = std::env::temp_dir().join(format!("cuzk-vk-{}", std::process::id()));
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &dir);
    Some(dir)
}

#[cfg(feature = "porep")]
fn write_vk(circuit: &Circuit, dir: &Path, vk: &VerifyingKey<Bls12>) -> Result<()> {
    let name = circuit.params_file_name()?.replace(".params", ".vk");
    std::fs::create_dir_all(dir)?;
    vk.write(std::fs::File::create(dir.join(name))?)?;
    Ok(())
}

/// filecoin-proofs-api's verdict on a PoSt, SnapDeals or (with `sector`: miner and sector
/// number) PoRep proof; `None` where it cannot give one. A PoRep proof it accepts must be
/// refused for the next sector number.
#[cfg(feature = "porep")]
fn filecoin_verify(circuit: &Circuit, input: &[u8], proof: &[u8], sector: Option<(u64, u64)>) -> Result<Option<bool>> {
    use cuzk::oracles::porep::{prover_id_from_miner, SealedC1};
    match (circuit, sector) {
        (Circuit::Post(_), _) => Ok(cuzk::oracles::post::filecoin_verify(input, proof)?),
        (Circuit::Snap(_), _) => Ok(Some(cuzk::oracles::snap::filecoin_verify(input, proof)?)),
        (Circuit::Porep(_), Some((miner, id))) => {
            let c1 = |id: u64| SealedC1 {
                bytes: input.to_vec(),
                prover_id: prover_id_from_miner(miner),
                sector_id: id.into(),
            };
            let verified = c1(id).filecoin_verify(proof)?;
            if verified && matches!(c1(id + 1).filecoin_verify(proof), Ok(true)) {
                return Err(format!("verify_seal accepted the proof for sector {} too", id + 1).into());
            }
            Ok(Some(verified))
        }
        _ => Ok(None),
    }
}

#[cfg(not(feature = "porep"))]
fn write_vk(_: &Circuit, _: &Path, _: &VerifyingKey<Bls12>) -> Result<()> {
    Ok(())
}

#[cfg(not(feature = "porep"))]
fn filecoin_verify(_: &Circuit, _: &[u8], _: &[u8], _: Option<(u64, u64)>) -> Result<Option<bool>> {
    Ok(None)
}

/// `--params`, or dummy parameters of the PCE's shape; whether proofs can verify.
fn load_params(o: &Opts, pce: &Pce) -> Result<(Arc<Srs>, f64, bool)> {
    let (params, secs) = stage("parameters", || match &o.params {
        Some(p) => srs::load(p, LoadOptions { checked: false, cache: !o.no_cache, background: o.background_load }),
        None => Ok(Arc::new(Srs::in_memory(dummy_params(pce, 7)))),
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
) -> Vec<(&'static str, String)> {
    vec![
        ("circuit", id.to_string()),
        ("backend", format!("{backend:?}")),
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
    ]
}

fn report(
    o: &Opts,
    backend: Backend,
    constraints: usize,
    t: &Timings,
    each: &[Timings],
    verified: bool,
    compare: serde_json::Value,
) -> serde_json::Value {
    json!({
            "backend": format!("{backend:?}"),
            "circuit": o.c.circuit,
            "constraints": constraints,
            "proofs": each.len(),
            "stages": stage_json(t),
            "total_s": t.total,
            "each_total_s": each.iter().map(|t| t.total).collect::<Vec<_>>(),
            "each_stages": each.iter().map(stage_json).collect::<Vec<_>>(),
            "verified": verified,
            "bellperson": compare,
            "engine_options": o.sharing.json(),
    })
}
