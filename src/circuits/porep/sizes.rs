//! The sector sizes of the seal proofs, their variants, and what each implies (partitions,
//! configuration).

use std::fmt;

use filecoin_proofs_api::RegisteredSealProof;

use crate::{Error, Result};

/// The PoRep sector sizes of the seal proofs Filecoin registers (each with its three
/// [`SealVariant`]s).
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

    /// The registered V1_1 seal proof of this size: the interactive one, whose configuration
    /// the partition circuit (its id, blank form and parameters) is named after.
    pub fn registered_proof(self) -> RegisteredSealProof {
        self.registered_proof_of(SealVariant::Interactive)
    }

    /// The registered seal proof of this size and variant.
    pub fn registered_proof_of(self, variant: SealVariant) -> RegisteredSealProof {
        use RegisteredSealProof::*;
        use SealVariant::*;
        match (self, variant) {
            (PorepSize::KiB2, Interactive) => StackedDrg2KiBV1_1,
            (PorepSize::MiB8, Interactive) => StackedDrg8MiBV1_1,
            (PorepSize::MiB512, Interactive) => StackedDrg512MiBV1_1,
            (PorepSize::GiB32, Interactive) => StackedDrg32GiBV1_1,
            (PorepSize::GiB64, Interactive) => StackedDrg64GiBV1_1,
            (PorepSize::KiB2, Synthetic) => StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
            (PorepSize::MiB8, Synthetic) => StackedDrg8MiBV1_1_Feat_SyntheticPoRep,
            (PorepSize::MiB512, Synthetic) => StackedDrg512MiBV1_1_Feat_SyntheticPoRep,
            (PorepSize::GiB32, Synthetic) => StackedDrg32GiBV1_1_Feat_SyntheticPoRep,
            (PorepSize::GiB64, Synthetic) => StackedDrg64GiBV1_1_Feat_SyntheticPoRep,
            (PorepSize::KiB2, NonInteractive) => StackedDrg2KiBV1_2_Feat_NonInteractivePoRep,
            (PorepSize::MiB8, NonInteractive) => StackedDrg8MiBV1_2_Feat_NonInteractivePoRep,
            (PorepSize::MiB512, NonInteractive) => StackedDrg512MiBV1_2_Feat_NonInteractivePoRep,
            (PorepSize::GiB32, NonInteractive) => StackedDrg32GiBV1_2_Feat_NonInteractivePoRep,
            (PorepSize::GiB64, NonInteractive) => StackedDrg64GiBV1_2_Feat_NonInteractivePoRep,
        }
    }

    /// The size and variant of a registered seal proof; the V1 proofs (before V1_1) are a clear
    /// error.
    pub fn from_registered_proof(rp: RegisteredSealProof) -> Result<(Self, SealVariant)> {
        PorepSize::ALL
            .into_iter()
            .flat_map(|s| SealVariant::ALL.map(|v| (s, v)))
            .find(|(s, v)| s.registered_proof_of(*v) == rp)
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "unsupported registered seal proof {rp:?}: the V1_1, V1_1_Feat_SyntheticPoRep and \
                     V1_2_Feat_NonInteractivePoRep proofs are supported"
                ))
            })
    }

    /// Number of partitions (= Groth16 proofs) of an interactive or synthetic seal of this size
    /// (a non-interactive one has more: [`SealVariant::partitions`]).
    pub fn partitions(self) -> usize {
        SealVariant::Interactive.partitions(self)
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

/// The seal proofs filecoin-proofs-api 19.1 registers for every size. They prove the same
/// partition circuit (one circuit id, one PCE, one parameter file per size: filecoin-proofs'
/// parameter id depends only on the graph, the layers and the challenges per partition); they
/// differ in the graph's porep id, in how challenges are derived, and in the partition count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SealVariant {
    /// `V1_1`: challenges from the interactive seed.
    Interactive,
    /// `V1_1_Feat_SyntheticPoRep`: challenges drawn by the seed from the synthetic set made at
    /// pre-commit.
    Synthetic,
    /// `V1_2_Feat_NonInteractivePoRep`: challenges from comm_r alone, many more partitions
    /// (13 at the test sizes, 126 at 32 and 64 GiB).
    NonInteractive,
}

impl SealVariant {
    pub const ALL: [SealVariant; 3] = [SealVariant::Interactive, SealVariant::Synthetic, SealVariant::NonInteractive];

    /// Number of partitions (= Groth16 proofs) of a seal of `size` with this variant.
    pub fn partitions(self, size: PorepSize) -> usize {
        usize::from(size.registered_proof_of(self).partitions())
    }
}
