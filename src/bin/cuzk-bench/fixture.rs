//! `fixture` and `c1`: a real request input made here and written to a file — for a PoRep
//! circuit a C1 output (add_piece → PC1 → PC2 → C1 with filecoin-proofs, in a scratch
//! directory; 2 KiB in well under a second), for a PoSt circuit the vanilla proofs of one
//! partition's sectors from such a sector (`circuits::post::PostInput`). It is what
//! `cuzk_prove` takes in `request.input`.

use std::path::{Path, PathBuf};

use clap::Args;
use cuzk::circuits::Circuit;

use crate::anyhow_like::Result;
use crate::report::{stage, table};

#[derive(Args)]
pub struct Opts {
    /// porep-<size>, winning-post-<size> or window-post-<size> (2KiB or 8MiB; PoRep also 512MiB).
    #[arg(long)]
    pub circuit: String,
    /// Seed of the sector's data, tickets and randomness.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long)]
    pub out: PathBuf,
}

/// `c1 --sector S`: `fixture --circuit porep-S`.
#[derive(Args)]
pub struct C1Opts {
    /// Sector size: 2KiB, 8MiB or 512MiB.
    #[arg(long, default_value = "2KiB")]
    pub sector: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(o: Opts) -> Result<()> {
    write(&Circuit::parse(&o.circuit, 0)?, o.seed, &o.out)
}

pub fn run_c1(o: C1Opts) -> Result<()> {
    write(&Circuit::parse(&format!("porep-{}", o.sector), 0)?, o.seed, &o.out)
}

fn write(circuit: &Circuit, seed: u64, out: &Path) -> Result<()> {
    let (input, secs) = stage("sealing a sector and making the input", || crate::prove::made_input(circuit, seed));
    let input = input?;
    let tmp = out.with_extension("tmp");
    std::fs::write(&tmp, &input)?;
    std::fs::rename(&tmp, out)?;
    table(
        "fixture",
        &[
            ("circuit", circuit.label()),
            ("file", format!("{} ({} bytes)", out.display(), input.len())),
            ("time", format!("{secs:.2} s")),
        ],
    );
    Ok(())
}
