//! `extract`: records a circuit's PCE (from its blank instance), saves it to a
//! `.pce` file and loads it back mapped, with the time, peak RSS and size of
//! each step — the one-off cost a node pays per circuit.

use std::path::PathBuf;

use clap::Args;
use cuzk::mem;
use cuzk::pce::{file, Access, Pce};
use serde_json::json;

use crate::report::{gib, stage, table, write_json};
use crate::{anyhow_like::Result, CircuitArgs};

#[derive(Args)]
pub struct Opts {
    #[command(flatten)]
    pub c: CircuitArgs,
    /// The .pce file to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Save no witness program (a file as older builds wrote it: each process records the
    /// program on first use).
    #[arg(long)]
    pub no_program: bool,
}

/// (circuit id, PCE) of the named circuit's blank instance.
pub fn blank_pce(c: &CircuitArgs) -> Result<(String, Pce)> {
    let circuit = c.circuit()?;
    Ok((circuit.circuit_id()?, circuit.extract_pce()?))
}

pub fn run(o: Opts) -> Result<()> {
    let _ = mem::reset_peak();
    let (res, extract_s) = stage("extracting the PCE from the blank circuit", || blank_pce(&o.c));
    let (id, pce) = res?;
    let extract_peak = mem::stats().peak_rss_bytes;
    let (recorded, program_s) = match o.no_program {
        true => (Ok(()), 0.0),
        false => stage("recording the witness program", || -> Result<()> { Ok(o.c.circuit()?.record_program(&pce)?) }),
    };
    recorded?;
    let (saved, save_s) = stage("saving", || file::save(&pce, &id, &o.out));
    saved?;
    let fingerprint = file::fingerprint(&pce);
    let (nnz, rows, bpn, inputs) = (pce.nnz(), pce.num_constraints(), pce.bytes_per_nnz(), pce.num_inputs);
    drop(pce);
    mem::trim();
    let (loaded, load_s) =
        stage("loading (mapped, checksums verified)", || file::load(&o.out, Some(&id), true, Access::Map));
    let loaded = loaded?;
    let (fast, load_fast_s) =
        stage("loading (mapped, checksums skipped)", || file::load(&o.out, Some(&id), false, Access::Map));
    drop(fast?);
    let same = loaded.fingerprint == fingerprint;
    let file_bytes = std::fs::metadata(&o.out)?.len();
    table(
        "extract",
        &[
            ("circuit id", id.clone()),
            ("constraints / inputs / nnz", format!("{rows} / {inputs} / {nnz}")),
            ("extraction", format!("{extract_s:.1} s, peak RSS {}", gib(extract_peak))),
            ("witness program", format!("{program_s:.2} s")),
            ("save", format!("{save_s:.2} s")),
            (
                "file",
                format!(
                    "{} ({} bytes, {:.3} B/nnz on disk, {bpn:.3} in memory)",
                    o.out.display(),
                    file_bytes,
                    file_bytes as f64 / nnz as f64
                ),
            ),
            ("load, checksums verified / skipped", format!("{load_s:.3} s / {load_fast_s:.3} s")),
            ("reloaded == extracted (fingerprint)", same.to_string()),
        ],
    );
    write_json(
        o.c.json.as_deref(),
        &json!({"circuit_id": id, "constraints": rows, "inputs": inputs, "nnz": nnz, "extract_s": extract_s,
            "extract_peak_rss_bytes": extract_peak, "program_s": program_s, "save_s": save_s, "file_bytes": file_bytes,
            "load_verified_s": load_s, "load_unverified_s": load_fast_s, "fingerprint_equal": same}),
    )?;
    if !same {
        return Err("the reloaded PCE's fingerprint differs from the extracted one".into());
    }
    Ok(())
}
