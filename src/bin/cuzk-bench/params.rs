//! `params`: writes a bellperson `.params` file for a built-in circuit —
//! real (generated from the circuit's PCE: what bellperson's generator makes with
//! seed 1) or `--dummy` (valid points of the right shape, unsound, fast at any
//! size: GPU provers timed without generating real parameters; their proofs do not
//! verify).
//! `--load FILE` times loading one instead: ours against bellperson's
//! `Parameters::read` of the same file, from the page cache, checked equal.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use bellperson::groth16::Parameters;
use blstrs::Bls12;
use clap::Args;
use cuzk::groth16::Backend;
use cuzk::params::generate_params;
use cuzk::params::{decode_params, dummy_params, read_params, srs, write_params, LoadOptions};
use cuzk::pce::Access;
use serde_json::json;

use crate::extract::blank_pce;
use crate::report::{stage, table, write_json};
use crate::{anyhow_like::Result, CircuitArgs};

#[derive(Args)]
pub struct Opts {
    #[command(flatten)]
    pub c: CircuitArgs,
    /// Write the parameters of `--circuit` here.
    #[arg(long, required_unless_present = "load", conflicts_with = "load")]
    pub out: Option<PathBuf>,
    /// Unsound parameters of the right shape (fast).
    #[arg(long)]
    pub dummy: bool,
    /// Time loading this .params file instead (ours and bellperson's).
    #[arg(long)]
    pub load: Option<PathBuf>,
    /// With --load: check that every point is in its subgroup.
    #[arg(long)]
    pub checked: bool,
    /// With --load: only decode (no cache written or read; for files as large as the free disk).
    #[arg(long)]
    pub no_cache: bool,
    /// With --load: skip bellperson's read (it holds a second copy and takes minutes at 30 GiB).
    #[arg(long)]
    pub no_bellperson: bool,
    /// Where real parameters' fixed-base products run: cpu | cuda:ID | auto (a GPU if any).
    #[arg(long, default_value = "auto")]
    pub backend: String,
    /// Real parameters: the circuit's PCE from this .pce file (as `prove --pce`: extracted and
    /// saved there when missing), not extracted again.
    #[arg(long, conflicts_with = "dummy")]
    pub pce: Option<PathBuf>,
}

/// The device of `backend` (`cpu`, `cuda:ID`, `auto`) for `groth16::setup`'s products.
pub fn setup_device(backend: &str) -> Result<Option<usize>> {
    Ok(match Backend::parse(backend)?.resolve()? {
        Backend::Cuda(id) => Some(id as usize),
        _ => None,
    })
}

/// Real parameters for the named circuit (PoRep: its partition circuit), seed 1.
fn generate(o: &Opts, out: &Path) -> Result<()> {
    let device = setup_device(&o.backend)?;
    let circuit = o.c.circuit()?;
    let pce = match &o.pce {
        Some(path) => circuit.load_pce(path, true, Access::Read)?,
        None => Arc::new(circuit.extract_pce()?),
    };
    generate_params(&pce, out, 1, device)?;
    Ok(())
}

pub fn run(o: Opts) -> Result<()> {
    let out = match (&o.load, &o.out) {
        (Some(file), _) => return load(&o, file),
        (None, Some(out)) => out.clone(),
        (None, None) => return Err("give --out FILE or --load FILE".into()),
    };
    let mut id = String::new();
    let (res, secs) = stage("parameters", || -> Result<()> {
        if o.dummy {
            let (circuit_id, pce) = blank_pce(&o.c)?;
            id = circuit_id;
            write_params(&dummy_params(&pce, 1), &out)?;
        } else {
            generate(&o, &out)?;
            id = o.c.circuit.clone();
        }
        Ok(())
    });
    res?;
    table(
        "params",
        &[
            ("circuit", id),
            ("kind", if o.dummy { "dummy (unsound)".into() } else { "real (generated from the PCE)".to_string() }),
            ("file", format!("{} ({} bytes)", out.display(), std::fs::metadata(&out)?.len())),
            ("time", format!("{secs:.1} s")),
        ],
    );
    Ok(())
}

/// `--load`: the file read once to warm the page cache, then each reader timed alone (nothing
/// else loaded): bellperson's, ours decoding, ours on a first load (decoding and writing the
/// cache beside the file), ours on a restart (from the cache), and ours on a first load in the
/// background (until it returns, and until its points are decoded). Each of ours is then
/// checked equal to bellperson's, read again untimed.
fn load(o: &Opts, file: &Path) -> Result<()> {
    let bytes = std::fs::metadata(file)?.len();
    std::io::copy(&mut std::fs::File::open(file)?, &mut std::io::sink())?;
    let bellperson = || -> Result<Parameters<Bls12>> {
        let f = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(file)?);
        Ok(Parameters::read(f, o.checked)?)
    };
    let bellperson_s = if o.no_bellperson {
        None
    } else {
        let (theirs, s) = stage("bellperson Parameters::read", bellperson);
        drop(theirs?);
        Some(s)
    };
    let mut ours = Vec::new();
    let mut timed = |what: &str, f: &dyn Fn() -> cuzk::Result<Parameters<Bls12>>| -> Result<f64> {
        let (p, s) = stage(what, f);
        let p = p?;
        if bellperson_s.is_some() {
            ours.push(blake3::hash(&encoded(&p)));
        }
        Ok(s)
    };
    let decode_s = timed("cuzk: decoding (no cache)", &|| decode_params(file, o.checked))?;
    let cache = cuzk::params::cache_path(file);
    let (first_s, cache_write_s, load_s) = if o.no_cache {
        (None, None, None)
    } else {
        let _ = std::fs::remove_file(&cache);
        let first = timed("cuzk: first load (decoding; the cache written in the background)", &|| {
            read_params(file, o.checked)
        })?;
        let t = Instant::now();
        cuzk::params::wait_for_cache_writes();
        let write = t.elapsed().as_secs_f64();
        (Some(first), Some(write), Some(timed("cuzk: load from the cache", &|| read_params(file, o.checked))?))
    };
    // A first load in the background (no cache yet unless --no-cache keeps it out of play):
    // the time the load takes to return, and until its points are decoded.
    if !o.no_cache {
        let _ = std::fs::remove_file(&cache);
    }
    let t = Instant::now();
    let srs = srs::load(file, LoadOptions { checked: o.checked, cache: !o.no_cache, background: true })?;
    let background_load_s = t.elapsed().as_secs_f64();
    let p = srs.queries()?;
    let background_ready_s = t.elapsed().as_secs_f64();
    println!("cuzk: a first load in the background returned in {background_load_s:.3} s, its points ready at {background_ready_s:.3} s");
    if bellperson_s.is_some() {
        ours.push(blake3::hash(&encoded(p)));
    }
    // Its cache is written while the parameters are held (unloading them stops the writer).
    cuzk::params::wait_for_cache_writes();
    drop(srs);
    srs::unload(file);
    let identical = match bellperson_s {
        Some(_) => {
            let theirs = blake3::hash(&encoded(&bellperson()?));
            Some(ours.iter().all(|h| *h == theirs))
        }
        None => None,
    };
    let cached = std::fs::metadata(&cache).map(|m| m.len()).unwrap_or(0);
    let gb = bytes as f64 / 1e9;
    let threads = rayon::current_num_threads();
    let ratio = |ours: Option<f64>| bellperson_s.zip(ours).map(|(b, o)| b / o);
    let secs = |s: Option<f64>| s.map_or("-".into(), |s| format!("{s:.3} s ({:.2} GB/s)", gb / s));
    // Against bellperson's read where it ran (not with --no-bellperson).
    let against = |ours: Option<f64>| ratio(ours).map_or(String::new(), |r| format!("; {r:.1}x"));
    table(
        "params --load",
        &[
            ("file", format!("{} ({bytes} bytes)", file.display())),
            ("checked (subgroups)", o.checked.to_string()),
            ("bellperson Parameters::read", secs(bellperson_s)),
            ("cuzk decode", format!("{} on {threads} threads{}", secs(Some(decode_s)), against(Some(decode_s)))),
            ("cuzk first load", secs(first_s)),
            (
                "cuzk first load in the background",
                format!("returned in {background_load_s:.3} s, points ready at {background_ready_s:.3} s"),
            ),
            ("cuzk cache written (after the first load)", secs(cache_write_s)),
            ("cuzk load from cache", format!("{}{}", secs(load_s), against(load_s))),
            ("cache", format!("{} ({cached} bytes)", cache.display())),
            ("identical to bellperson's", identical.map_or("not compared".into(), |i| i.to_string())),
        ],
    );
    write_json(
        o.c.json.as_deref(),
        &json!({"file": file.display().to_string(), "bytes": bytes, "checked": o.checked, "threads": threads,
            "load_s": load_s, "gb_per_s": load_s.map(|s| gb / s), "decode_s": decode_s, "decode_gb_per_s": gb / decode_s,
            "first_load_s": first_s, "cache_write_s": cache_write_s,
            "background_load_s": background_load_s, "background_ready_s": background_ready_s,
            "background_speedup": bellperson_s.map(|b| b / background_load_s), "cache_bytes": cached, "bellperson_read_s": bellperson_s,
            "speedup": ratio(load_s), "decode_speedup": ratio(Some(decode_s)),
            "identical": identical}),
    )?;
    if identical == Some(false) {
        return Err("cuzk's parameters differ from bellperson's".into());
    }
    Ok(())
}

/// The parameters in bellperson's file encoding (what "identical" compares).
fn encoded(p: &Parameters<Bls12>) -> Vec<u8> {
    let mut b = Vec::new();
    p.write(&mut b).expect("writing to a Vec");
    b
}
