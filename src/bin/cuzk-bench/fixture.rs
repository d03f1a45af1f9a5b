//! `fixture` and `c1`: a real request input made here and written to a file — for a PoRep
//! circuit a C1 output (add_piece → PC1 → PC2 → C1 with filecoin-proofs, in a scratch
//! directory; 2 KiB in well under a second), for a PoSt circuit the vanilla proofs of one
//! partition's sectors from such a sector (`circuits::post::PostInput`). It is what
//! `cuzk_prove` takes in `request.input`.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
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
    /// The seal proof a PoRep C1 is made with.
    #[arg(long, value_enum, default_value_t = Seal::Interactive)]
    pub seal: Seal,
    #[arg(long)]
    pub out: PathBuf,
}

/// filecoin-proofs-api's seal proof families (`V1_1`, `V1_1_Feat_SyntheticPoRep`,
/// `V1_2_Feat_NonInteractivePoRep`).
#[derive(Clone, Copy, ValueEnum)]
pub enum Seal {
    Interactive,
    Synthetic,
    NonInteractive,
}

#[cfg(feature = "porep")]
impl From<Seal> for cuzk::circuits::porep::SealVariant {
    fn from(s: Seal) -> Self {
        use cuzk::circuits::porep::SealVariant;
        match s {
            Seal::Interactive => SealVariant::Interactive,
            Seal::Synthetic => SealVariant::Synthetic,
            Seal::NonInteractive => SealVariant::NonInteractive,
        }
    }
}

/// `c1 --sector S`: `fixture --circuit porep-S`.
#[derive(Args)]
pub struct C1Opts {
    /// Sector size: 2KiB, 8MiB or 512MiB.
    #[arg(long, default_value = "2KiB")]
    pub sector: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The seal proof the C1 is made with.
    #[arg(long, value_enum, default_value_t = Seal::Interactive)]
    pub seal: Seal,
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(o: Opts) -> Result<()> {
    write(&Circuit::parse(&o.circuit, 0)?, o.seal, o.seed, &o.out)
}

pub fn run_c1(o: C1Opts) -> Result<()> {
    write(&Circuit::parse(&format!("porep-{}", o.sector), 0)?, o.seal, o.seed, &o.out)
}

fn write(circuit: &Circuit, seal: Seal, seed: u64, out: &Path) -> Result<()> {
    let (input, secs) =
        stage("sealing a sector and making the input", || crate::prove::made_input(circuit, seal, seed));
    let input = input?;
    cuzk::files::write_atomically(out, input.len() as u64, |f| std::io::Write::write_all(f, &input))?;
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
