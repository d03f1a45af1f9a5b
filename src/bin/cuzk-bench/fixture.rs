//! `fixture` and `c1`: a real request input made here and written to a file — for a PoRep
//! circuit a C1 output (add_piece → PC1 → PC2 → C1 with filecoin-proofs, in a scratch
//! directory; 2 KiB in well under a second), for a PoSt circuit the vanilla proofs of one
//! partition's sectors from such a sector (`circuits::post::PostInput`), for SnapDeals its
//! partition proofs. With `--sparse`, of sparse sectors at any size, 32 and 64 GiB included,
//! nothing sealed (`cuzk::oracles::sparse`). It is what `cuzk_prove` takes in `request.input`.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use cuzk::circuits::Circuit;

use crate::anyhow_like::Result;
use crate::report::{stage, table};

#[derive(Args)]
pub struct Opts {
    /// porep-<size>, winning-post-<size>, window-post-<size> or snap-<size> (2KiB or 8MiB; PoRep
    /// also 512MiB; with --sparse any size).
    #[arg(long)]
    pub circuit: String,
    /// Seed of the sector's data, tickets and randomness.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The seal proof a PoRep C1 is made with.
    #[arg(long, value_enum, default_value_t = Seal::Interactive)]
    pub seal: Seal,
    /// Sparse sectors, nothing sealed, at any size (32GiB and 64GiB included): a PoRep C1
    /// (interactive seal only), a PoSt or a SnapDeals request.
    #[arg(long)]
    pub sparse: bool,
    /// With --sparse, a WindowPoSt's sectors (default: a full partition, 2,349 at 32 GiB).
    #[arg(long)]
    pub sectors: Option<u64>,
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
    /// Sector size: 2KiB, 8MiB or 512MiB; with --sparse also 32GiB and 64GiB.
    #[arg(long, default_value = "2KiB")]
    pub sector: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The seal proof the C1 is made with.
    #[arg(long, value_enum, default_value_t = Seal::Interactive)]
    pub seal: Seal,
    /// A sparse sector's C1: all-zero data, only the opened nodes present (interactive seal
    /// only; seconds at 32 GiB), which filecoin-proofs' vanilla verification accepts.
    #[arg(long)]
    pub sparse: bool,
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(o: Opts) -> Result<()> {
    let sparse = o.sparse.then_some(Sparse { sectors: o.sectors });
    write(&Circuit::parse(&o.circuit, 0)?, o.seal, o.seed, sparse, &o.out)
}

pub fn run_c1(o: C1Opts) -> Result<()> {
    let sparse = o.sparse.then_some(Sparse { sectors: None });
    write(&Circuit::parse(&format!("porep-{}", o.sector), 0)?, o.seal, o.seed, sparse, &o.out)
}

/// `--sparse` and what it takes.
struct Sparse {
    sectors: Option<u64>,
}

fn write(circuit: &Circuit, seal: Seal, seed: u64, sparse: Option<Sparse>, out: &Path) -> Result<()> {
    let (made, secs) = match sparse {
        Some(s) => stage("making sparse sectors' input", || sparse_input(circuit, seal, seed, s)),
        None => stage("sealing a sector and making the input", || {
            crate::prove::made_input(circuit, seal, seed).map(|i| (i, None))
        }),
    };
    let (input, sector) = made?;
    cuzk::files::write_atomically(out, input.len() as u64, |f| std::io::Write::write_all(f, &input))?;
    let mut rows = vec![
        ("circuit", circuit.label()),
        ("file", format!("{} ({} bytes)", out.display(), input.len())),
        ("time", format!("{secs:.2} s")),
    ];
    rows.extend(sector.map(|s| ("sector", s)));
    table("fixture", &rows);
    Ok(())
}

/// An input, and for a sparse C1 the sector it seals (what `verify_seal` takes beside it).
type Made = (Vec<u8>, Option<String>);

#[cfg(feature = "porep")]
fn sparse_input(circuit: &Circuit, seal: Seal, seed: u64, sparse: Sparse) -> Result<Made> {
    use cuzk::circuits::post::PostKind;
    use cuzk::oracles::sparse;
    if sparse.sectors.is_some() && !matches!(circuit, Circuit::Post(t) if t.kind == PostKind::Window) {
        return Err(format!("{}: --sectors is a WindowPoSt's", circuit.label()).into());
    }
    match circuit {
        Circuit::Porep(size) => {
            let c1 = sparse::make_sparse_c1(*size, seal.into(), seed)?;
            let prover = c1.prover_id.iter().map(|b| format!("{b:02x}")).collect::<String>();
            Ok((c1.bytes, Some(format!("id {} of miner f01000 (prover id {prover})", u64::from(c1.sector_id)))))
        }
        Circuit::Post(t) => {
            let default = match t.kind {
                PostKind::Winning => 1,
                PostKind::Window => t.sectors_per_partition() as u64,
            };
            Ok((sparse::make_sparse_post(*t, sparse.sectors.unwrap_or(default), seed)?.encode(), None))
        }
        Circuit::Snap(size) => Ok((sparse::make_sparse_snap(*size, seed)?.encode(), None)),
        Circuit::Synthetic { .. } => Err(format!("{} takes no input", circuit.label()).into()),
    }
}

#[cfg(not(feature = "porep"))]
fn sparse_input(_: &Circuit, _: Seal, _: u64, _: Sparse) -> Result<Made> {
    Err("Filecoin circuits need the `porep` feature".into())
}
