//! The sector sizes of the V1_1 seal proofs and what each implies (partitions, configuration).

use std::fmt;

use filecoin_proofs::PoRepConfig;
use filecoin_proofs_api::RegisteredSealProof;

use crate::{Error, Result};

/// The PoRep sector sizes of the V1_1 seal proofs that Filecoin mainnet uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PorepSize {
    KiB2,
    MiB8,
    MiB512,
    GiB32,
    GiB64,
}

impl PorepSize {
    /// Every supported size, smallest first.
    pub const ALL: [PorepSize; 5] =
        [PorepSize::KiB2, PorepSize::MiB8, PorepSize::MiB512, PorepSize::GiB32, PorepSize::GiB64];

    /// Sector size in bytes (padded).
    pub fn sector_bytes(self) -> u64 {
        match self {
            PorepSize::KiB2 => 2 << 10,
            PorepSize::MiB8 => 8 << 20,
            PorepSize::MiB512 => 512 << 20,
            PorepSize::GiB32 => 32 << 30,
            PorepSize::GiB64 => 64 << 30,
        }
    }

    /// Short name used in circuit ids and on command lines: `2k`, `8m`, `512m`, `32g`, `64g`.
    pub fn short_name(self) -> &'static str {
        match self {
            PorepSize::KiB2 => "2k",
            PorepSize::MiB8 => "8m",
            PorepSize::MiB512 => "512m",
            PorepSize::GiB32 => "32g",
            PorepSize::GiB64 => "64g",
        }
    }

    /// Parses `2k`/`2KiB`/`2kib`, `8m`/`8MiB`, `512m`, `32g`/`32GiB`, `64g` (case-insensitive),
    /// or a byte count (`2048`, `34359738368`).
    pub fn from_name(name: &str) -> Result<Self> {
        let found = match name.trim().to_ascii_lowercase().as_str() {
            "2k" | "2kib" | "2048" => Some(PorepSize::KiB2),
            "8m" | "8mib" | "8388608" => Some(PorepSize::MiB8),
            "512m" | "512mib" | "536870912" => Some(PorepSize::MiB512),
            "32g" | "32gib" | "34359738368" => Some(PorepSize::GiB32),
            "64g" | "64gib" | "68719476736" => Some(PorepSize::GiB64),
            _ => None,
        };
        found.ok_or_else(|| {
            Error::InvalidInput(format!("unknown PoRep sector size {name:?}: expected one of 2k, 8m, 512m, 32g, 64g"))
        })
    }

    /// The size for a sector size in bytes.
    pub fn from_sector_bytes(bytes: u64) -> Result<Self> {
        PorepSize::ALL
            .into_iter()
            .find(|s| s.sector_bytes() == bytes)
            .ok_or_else(|| Error::InvalidInput(format!("no V1_1 PoRep for a sector of {bytes} bytes")))
    }

    /// The registered V1_1 seal proof of this size (what a C1 for it must name).
    pub fn registered_proof(self) -> RegisteredSealProof {
        match self {
            PorepSize::KiB2 => RegisteredSealProof::StackedDrg2KiBV1_1,
            PorepSize::MiB8 => RegisteredSealProof::StackedDrg8MiBV1_1,
            PorepSize::MiB512 => RegisteredSealProof::StackedDrg512MiBV1_1,
            PorepSize::GiB32 => RegisteredSealProof::StackedDrg32GiBV1_1,
            PorepSize::GiB64 => RegisteredSealProof::StackedDrg64GiBV1_1,
        }
    }

    /// The size of a registered proof; only the V1_1 (interactive, non-synthetic) proofs are
    /// accepted, anything else is a clear error.
    pub fn from_registered_proof(rp: RegisteredSealProof) -> Result<Self> {
        PorepSize::ALL.into_iter().find(|s| s.registered_proof() == rp).ok_or_else(|| {
            Error::InvalidInput(format!(
                "unsupported registered seal proof {rp:?}: only the V1_1 proofs \
                     (StackedDrg{{2KiB,8MiB,512MiB,32GiB,64GiB}}V1_1) are supported"
            ))
        })
    }

    /// Number of partitions (= Groth16 proofs) of a seal of this size.
    pub fn partitions(self) -> usize {
        usize::from(self.registered_proof().partitions())
    }

    /// filecoin-proofs' PoRep configuration of this size.
    pub fn porep_config(self) -> PoRepConfig {
        self.registered_proof().as_v1_config()
    }

    /// Human-readable size (`2KiB`, ..., `64GiB`), as in registered proof names.
    pub fn label(self) -> &'static str {
        match self {
            PorepSize::KiB2 => "2KiB",
            PorepSize::MiB8 => "8MiB",
            PorepSize::MiB512 => "512MiB",
            PorepSize::GiB32 => "32GiB",
            PorepSize::GiB64 => "64GiB",
        }
    }
}

impl fmt::Display for PorepSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}
