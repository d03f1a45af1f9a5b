//! `c1`: makes a real PoRep C1 output (add_piece → PC1 → PC2 → C1 with
//! filecoin-proofs, in a scratch directory) and writes its JSON: the fixture
//! `cuzk_prove` takes for a PoRep request. 2KiB in well under a second.

use std::path::PathBuf;

use clap::Args;

use crate::anyhow_like::Result;

#[derive(Args)]
pub struct Opts {
    /// Sector size: 2KiB, 8MiB or 512MiB.
    #[arg(long, default_value = "2KiB")]
    pub sector: String,
    /// Seed of the sector's data and tickets.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long)]
    pub out: PathBuf,
}

#[cfg(feature = "porep")]
pub fn run(o: Opts) -> Result<()> {
    use crate::report::{stage, table};
    use cuzk::circuits::porep::{make_c1, PorepSize};
    let size = PorepSize::from_name(&o.sector)?;
    let scratch = std::env::temp_dir().join(format!("cuzk-c1-{}", std::process::id()));
    let (c1, secs) = stage("sealing a sector up to C1", || make_c1(size, &scratch, o.seed));
    let _ = std::fs::remove_dir_all(&scratch);
    let c1 = c1?;
    let tmp = o.out.with_extension("json.tmp");
    std::fs::write(&tmp, &c1)?;
    std::fs::rename(&tmp, &o.out)?;
    table(
        "c1",
        &[
            ("sector", size.to_string()),
            ("file", format!("{} ({} bytes)", o.out.display(), c1.len())),
            ("time", format!("{secs:.2} s")),
        ],
    );
    Ok(())
}

#[cfg(not(feature = "porep"))]
pub fn run(_: Opts) -> Result<()> {
    Err("c1 needs the `porep` feature".into())
}
