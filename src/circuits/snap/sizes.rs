//! What a sector size implies for SnapDeals: its registered update proof and its partition
//! count, below the circuit and the request that use them.

use filecoin_proofs_api::RegisteredUpdateProof;

use crate::circuits::porep::PorepSize;
use crate::Result;

/// The registered update proof of a sector size.
pub fn registered_proof(size: PorepSize) -> RegisteredUpdateProof {
    use RegisteredUpdateProof::*;
    match size {
        PorepSize::KiB2 => StackedDrg2KiBV1,
        PorepSize::MiB8 => StackedDrg8MiBV1,
        PorepSize::MiB512 => StackedDrg512MiBV1,
        PorepSize::GiB32 => StackedDrg32GiBV1,
        PorepSize::GiB64 => StackedDrg64GiBV1,
    }
}

/// Partitions (= Groth16 proofs) of a sector size's update proof.
pub fn partitions(size: PorepSize) -> usize {
    storage_proofs_update::constants::partition_count((size.sector_bytes() / 32) as usize)
}

pub(super) fn size_of(rp: RegisteredUpdateProof) -> Result<PorepSize> {
    PorepSize::from_sector_bytes(u64::from(rp.sector_size()))
}
