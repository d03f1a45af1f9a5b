//! `params`: writes a bellperson `.params` file for a built-in circuit —
//! real (bellperson's generator, slow) or `--dummy` (valid points of the right
//! shape, unsound, seconds): dummy files let GPU provers be timed at sizes whose
//! real parameters would take hours to generate; their proofs do not verify.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use cuzk::groth16::dummy_params;
use cuzk::groth16::params::generate_params;

use crate::extract::blank_pce;
use crate::report::{stage, table};
use crate::{anyhow_like::Result, CircuitArgs};

#[derive(Args)]
pub struct Opts {
    #[command(flatten)]
    pub c: CircuitArgs,
    #[arg(long)]
    pub out: PathBuf,
    /// Unsound parameters of the right shape (fast).
    #[arg(long)]
    pub dummy: bool,
}

/// Real parameters for the named circuit (PoRep: its partition circuit).
fn generate(c: &CircuitArgs, out: &Path) -> Result<()> {
    generate_params(c.circuit()?.blank()?, out, 1)?;
    Ok(())
}

pub fn run(o: Opts) -> Result<()> {
    let mut id = String::new();
    let (res, secs) = stage("parameters", || -> Result<()> {
        if o.dummy {
            let (circuit_id, pce) = blank_pce(&o.c)?;
            id = circuit_id;
            let p = dummy_params(&pce, 1);
            let mut f = std::io::BufWriter::with_capacity(1 << 22, std::fs::File::create(&o.out)?);
            p.write(&mut f)?;
            f.flush()?;
        } else {
            generate(&o.c, &o.out)?;
            id = o.c.circuit.clone();
        }
        Ok(())
    });
    res?;
    table(
        "params",
        &[
            ("circuit", id),
            ("kind", if o.dummy { "dummy (unsound)".into() } else { "real (bellperson generator)".to_string() }),
            ("file", format!("{} ({} bytes)", o.out.display(), std::fs::metadata(&o.out)?.len())),
            ("time", format!("{secs:.1} s")),
        ],
    );
    Ok(())
}
