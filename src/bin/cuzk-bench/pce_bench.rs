//! `pce-bench`: the old path (reference synthesis, as bellperson's prover does
//! it) against the PCE path (witness + SpMV) on the same circuit. The old
//! path's results are spilled to a scratch file and dropped before the PCE path
//! runs, so neither path's memory figures include the other's vectors.
//!
//! `pce-file`: the `.pce` file's costs: save, load with and without checksums,
//! the structural validation and the fingerprint alone, and bytes per non-zero.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use blstrs::Scalar;
use clap::Args;
use cuzk::circuits::Kind;
use cuzk::circuits::WitnessSource;
use cuzk::oracles::reference::ReferenceCs;
use cuzk::pce::{evaluate, extract, file, Access, Pce};
use cuzk::witness::{Witness, WitnessBuffer};
use serde_json::json;

use crate::report::{gib, memory_bandwidth, stage, table, write_json};
use crate::sharing::WitnessArgs;
use crate::{anyhow_like::Result, CircuitArgs};

#[derive(Args)]
pub struct Opts {
    #[command(flatten)]
    pub c: CircuitArgs,
    /// Skip the memory-bandwidth measurement.
    #[arg(long)]
    pub no_membw: bool,
    /// Save the extracted PCE here, reload it (mapped) and use the reloaded one.
    #[arg(long, conflicts_with = "load_pce")]
    pub save_pce: Option<PathBuf>,
    /// Use this .pce file instead of extracting (a bad file is an error).
    #[arg(long)]
    pub load_pce: Option<PathBuf>,
    #[command(flatten)]
    pub witness: WitnessArgs,
}

/// The vectors compared, in spill order.
const SECTIONS: [&str; 8] = ["a", "b", "c", "inputs", "aux", "a_aux_density", "b_input_density", "b_aux_density"];

enum Vector<'a> {
    Scalars(&'a [Scalar]),
    Bits(&'a [bool]),
}

impl Vector<'_> {
    fn len(&self) -> usize {
        match self {
            Vector::Scalars(v) => v.len(),
            Vector::Bits(v) => v.len(),
        }
    }
    fn width(&self) -> usize {
        match self {
            Vector::Scalars(_) => 32,
            Vector::Bits(_) => 1,
        }
    }
    fn bytes(&self, i: usize, out: &mut [u8]) {
        match self {
            Vector::Scalars(v) => out.copy_from_slice(&v[i].to_bytes_le()),
            Vector::Bits(v) => out[0] = v[i] as u8,
        }
    }
}

fn spill(path: &PathBuf, vectors: &[Vector]) -> std::io::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut buf = [0u8; 32];
    for v in vectors {
        w.write_all(&(v.len() as u64).to_le_bytes())?;
        for i in 0..v.len() {
            v.bytes(i, &mut buf[..v.width()]);
            w.write_all(&buf[..v.width()])?;
        }
    }
    w.flush()
}

/// (section, mismatches, first mismatch index) for every section that differs.
fn compare(path: &PathBuf, vectors: &[Vector]) -> std::io::Result<Vec<(&'static str, u64, usize)>> {
    let mut r = BufReader::with_capacity(1 << 20, File::open(path)?);
    let (mut old, mut new) = ([0u8; 32], [0u8; 32]);
    let mut diffs = Vec::new();
    for (name, v) in SECTIONS.iter().zip(vectors) {
        let mut len = [0u8; 8];
        r.read_exact(&mut len)?;
        let old_len = u64::from_le_bytes(len) as usize;
        if old_len != v.len() {
            diffs.push((*name, old_len.abs_diff(v.len()) as u64, old_len.min(v.len())));
        }
        let (mut count, mut first) = (0u64, usize::MAX);
        for i in 0..old_len {
            let w = v.width();
            r.read_exact(&mut old[..w])?;
            if i < v.len() {
                v.bytes(i, &mut new[..w]);
                if old[..w] != new[..w] {
                    count += 1;
                    first = first.min(i);
                }
            }
        }
        if count > 0 {
            diffs.push((*name, count, first));
        }
    }
    Ok(diffs)
}

fn vectors<'a>(abc: &'a cuzk::pce::Abc, w: &'a Witness, densities: &'a [Vec<bool>; 3]) -> Vec<Vector<'a>> {
    vec![
        Vector::Scalars(&abc.a),
        Vector::Scalars(&abc.b),
        Vector::Scalars(&abc.c),
        Vector::Scalars(&w.inputs),
        Vector::Scalars(&w.aux),
        Vector::Bits(&densities[0]),
        Vector::Bits(&densities[1]),
        Vector::Bits(&densities[2]),
    ]
}

/// Bytes an SpMV pass moves: matrix words and row pointers, one 32-byte witness
/// read per non-zero, one 32-byte write per row and matrix.
pub fn spmv_bytes(pce: &Pce) -> u64 {
    let m = [&pce.a, &pce.b, &pce.c];
    m.iter().map(|m| (m.words.len() + m.row_ptr.len()) as u64 * 4).sum::<u64>()
        + 32 * pce.nnz()
        + 96 * pce.num_constraints() as u64
}

pub fn run(o: Opts) -> Result<()> {
    let circuit = o.c.circuit()?;
    let (input, input_s) = stage("making a real request input (a sector sealed here)", || {
        crate::prove::request_input(&circuit, None, o.c.seed)
    });
    let statement = crate::prove::statement_of(&circuit, o.c.seed, &input?, 0)?;
    if circuit.kind() != Kind::Synthetic {
        println!("input made in {input_s:.2} s ({} partitions; partition 0 is measured)", statement.partitions());
    }
    run_with(&o, &circuit.circuit_id()?, || Ok(statement.instance(0)?), || Ok(circuit.blank()?))
}

/// The measurement on any circuit: `make` builds a fresh instance each time.
fn run_with<C: bellperson::Circuit<Scalar> + WitnessSource>(
    o: &Opts,
    circuit_id: &str,
    make: impl Fn() -> Result<C>,
    blank: impl FnOnce() -> Result<C>,
) -> Result<()> {
    let spill_path = std::env::temp_dir().join(format!("cuzk-pce-bench-{}.bin", std::process::id()));

    // Old path, then spill and drop its results.
    let (reference, old_synth_s) =
        stage("old path: reference synthesis", || -> Result<ReferenceCs> { Ok(ReferenceCs::synthesize(make()?)?) });
    let reference = reference?;
    let old_densities =
        [reference.a_aux_density.clone(), reference.b_input_density.clone(), reference.b_aux_density.clone()];
    spill(&spill_path, &vectors(&reference.abc, &reference.witness, &old_densities))?;
    drop(reference);
    drop(old_densities);

    let (pce, extract_s) = stage("extracting (or loading) the PCE", || -> Result<Pce> {
        if let Some(path) = &o.load_pce {
            return Ok(file::load(path, Some(circuit_id), true, Access::Map)?.pce);
        }
        let pce = extract(blank()?)?;
        match &o.save_pce {
            Some(path) => {
                file::save(&pce, circuit_id, path)?;
                drop(pce);
                Ok(file::load(path, Some(circuit_id), true, Access::Map)?.pce)
            }
            None => Ok(pce),
        }
    });
    let pce: Pce = pce?;
    let (w, witness_s) = stage("PCE path: witness", || -> Result<Witness> {
        let buf = WitnessBuffer::new(pce.num_inputs, pce.num_aux);
        Ok(match o.witness.program() {
            true => make()?.witness(&pce, buf)?,
            false => make()?.gadget_witness(buf)?,
        })
    });
    let w: Witness = w?;
    let (abc, spmv_s) = stage("PCE path: SpMV", || evaluate(&pce, &w));
    let abc = abc?;
    let pce_synth_s = witness_s + spmv_s;
    // Whether the witness was replayed from a program (recorded by then: asking is cheap).
    let program = o.witness.program() && make()?.program(&pce).is_some();

    let densities = [pce.density.a_aux.to_bits(), pce.density.b_input.to_bits(), pce.density.b_aux.to_bits()];
    let diffs = compare(&spill_path, &vectors(&abc, &w, &densities));
    let _ = std::fs::remove_file(&spill_path);
    let diffs = diffs?;
    let mismatches: u64 = diffs.iter().map(|d| d.1).sum();
    let validated = diffs.is_empty();

    let moved = spmv_bytes(&pce);
    let spmv_gbs = moved as f64 / spmv_s / 1e9;
    let membw = if o.no_membw { None } else { Some(stage("memory bandwidth", memory_bandwidth).0 / 1e9) };
    let speedup = old_synth_s / pce_synth_s;

    let mut rows = vec![
        ("circuit", format!("{} ({circuit_id})", o.c.circuit)),
        ("constraints", pce.num_constraints().to_string()),
        ("inputs / aux", format!("{} / {}", pce.num_inputs, pce.num_aux)),
        ("non-zeros", pce.nnz().to_string()),
        ("dictionary entries", pce.dict.len().to_string()),
        ("PCE size", format!("{} ({:.2} B/nnz)", gib(pce.byte_len() as u64), pce.bytes_per_nnz())),
        ("extraction", format!("{extract_s:.3} s")),
        ("old path synthesis", format!("{old_synth_s:.3} s")),
        ("PCE witness", format!("{witness_s:.3} s ({})", if program { "witness program" } else { "gadgets" })),
        ("PCE SpMV", format!("{spmv_s:.3} s ({spmv_gbs:.2} GB/s moved)")),
        ("PCE synthesis total", format!("{pce_synth_s:.3} s")),
        ("speedup", format!("{speedup:.2}x")),
        ("validated bit for bit", if validated { "yes".into() } else { format!("NO: {diffs:?}") }),
    ];
    if let Some(bw) = membw {
        rows.push(("machine copy bandwidth", format!("{bw:.2} GB/s (SpMV reaches {:.0}%)", 100.0 * spmv_gbs / bw)));
    }
    table("pce-bench", &rows);
    write_json(
        o.c.json.as_deref(),
        &json!({
            "circuit": o.c.circuit,
            "circuit_id": circuit_id,
            "constraints": pce.num_constraints(),
            "nnz": pce.nnz(),
            "pce_bytes": pce.byte_len(),
            "bytes_per_nnz": pce.bytes_per_nnz(),
            "extract_s": extract_s,
            "old_synth_s": old_synth_s,
            "pce_synth_s": pce_synth_s,
            "witness_s": witness_s,
            "witness_program": program,
            "spmv_s": spmv_s,
            "spmv_gb_per_s": spmv_gbs,
            "memory_bandwidth_gb_per_s": membw,
            "speedup": speedup,
            "validated": validated,
            "mismatches": mismatches,
            "first_mismatch": diffs.first().map(|d| json!({"vector": d.0, "count": d.1, "index": d.2})),
        }),
    )?;
    if !validated {
        return Err(format!("PCE path differs from the old path: {diffs:?}").into());
    }
    Ok(())
}

#[derive(Args)]
pub struct FileOpts {
    #[command(flatten)]
    pub c: CircuitArgs,
    /// Directory of the .pce file written.
    #[arg(long, default_value = "/tmp")]
    pub dir: PathBuf,
    /// Loads timed per mode; the best is reported.
    #[arg(long, default_value_t = 3)]
    pub reps: usize,
    /// Keep the file instead of removing it.
    #[arg(long)]
    pub keep: bool,
}

/// Timings and sizes of one save/load round of a PCE (see [`file_bench`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FileBench {
    pub file_bytes: u64,
    pub nnz: u64,
    /// File bytes per non-zero, all in.
    pub bytes_per_nnz: f64,
    pub save_s: f64,
    /// Load with checksums skipped (map + structural validation), page cache hot.
    pub load_s: f64,
    /// Load with every section's checksum verified, page cache hot.
    pub load_verified_s: f64,
    /// The structural validation alone, on the loaded PCE.
    pub validate_s: f64,
    /// [`file::fingerprint`] of the in-memory PCE.
    pub fingerprint_s: f64,
}

/// Saves `pce` to `path`, loads it back both ways (best of `reps` each, after a
/// warm-up load so the page cache is hot), and times the validation alone.
pub fn file_bench(pce: &Pce, circuit_id: &str, path: &Path, reps: usize) -> Result<FileBench> {
    let t = Instant::now();
    file::save(pce, circuit_id, path)?;
    let save_s = t.elapsed().as_secs_f64();
    let file_bytes = std::fs::metadata(path)?.len();
    let t = Instant::now();
    let fp = file::fingerprint(pce);
    let fingerprint_s = t.elapsed().as_secs_f64();
    drop(file::load(path, Some(circuit_id), false, Access::Map)?); // warm the page cache
    let best = |verify: bool| -> Result<f64> {
        let mut best = f64::INFINITY;
        for _ in 0..reps.max(1) {
            let t = Instant::now();
            let l = file::load(path, Some(circuit_id), verify, Access::Map)?;
            best = best.min(t.elapsed().as_secs_f64());
            if l.fingerprint != fp {
                return Err("fingerprint changed across save and load".into());
            }
        }
        Ok(best)
    };
    let load_s = best(false)?;
    let load_verified_s = best(true)?;
    let l = file::load(path, Some(circuit_id), false, Access::Map)?;
    let t = Instant::now();
    file::validate(&l.pce)?;
    let validate_s = t.elapsed().as_secs_f64();
    Ok(FileBench {
        file_bytes,
        nnz: pce.nnz(),
        bytes_per_nnz: file_bytes as f64 / pce.nnz().max(1) as f64,
        save_s,
        load_s,
        load_verified_s,
        validate_s,
        fingerprint_s,
    })
}

pub fn run_file(o: FileOpts) -> Result<()> {
    let (res, extract_s) = stage("extracting the PCE from the blank circuit", || crate::extract::blank_pce(&o.c));
    let (id, pce) = res?;
    let path = o.dir.join(format!("{id}.pce"));
    let (b, _) = stage("saving and loading", || file_bench(&pce, &id, &path, o.reps));
    let b = b?;
    let in_memory_bpn = pce.bytes_per_nnz();
    drop(pce);
    if !o.keep {
        std::fs::remove_file(&path)?;
    }
    let gb = b.file_bytes as f64 / 1e9;
    table(
        "pce-file",
        &[
            ("circuit id", id.clone()),
            ("extraction", format!("{extract_s:.2} s")),
            ("file", format!("{} bytes, {:.3} B/nnz ({in_memory_bpn:.3} in memory)", b.file_bytes, b.bytes_per_nnz)),
            ("save (validate, checksums, write, fsync, rename)", format!("{:.3} s", b.save_s)),
            ("load, checksums skipped (map + validation)", format!("{:.3} s", b.load_s)),
            ("load, checksums verified", format!("{:.3} s ({:.2} GB/s)", b.load_verified_s, gb / b.load_verified_s)),
            ("structural validation alone", format!("{:.3} s ({:.2} GB/s)", b.validate_s, gb / b.validate_s)),
            (
                "fingerprint of the in-memory PCE",
                format!("{:.3} s ({:.2} GB/s)", b.fingerprint_s, gb / b.fingerprint_s),
            ),
            ("threads", rayon::current_num_threads().to_string()),
        ],
    );
    write_json(
        o.c.json.as_deref(),
        &json!({
            "circuit_id": id,
            "nnz": b.nnz,
            "file_bytes": b.file_bytes,
            "bytes_per_nnz": b.bytes_per_nnz,
            "save_s": b.save_s,
            "load_s": b.load_s,
            "load_verified_s": b.load_verified_s,
            "validate_s": b.validate_s,
            "fingerprint_s": b.fingerprint_s,
            "threads": rayon::current_num_threads(),
        }),
    )
}
