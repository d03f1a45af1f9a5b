//! Filecoin SnapDeals: the `EmptySectorUpdate` proof of filecoin-proofs 19.1 (every sector
//! size), proven from the vanilla partition proofs a node already has — what the API's
//! `generate_empty_sector_update_proof_with_vanilla` takes.
//!
//! A request's input is a [`SnapInput`] (`input.rs`: the registered update proof, comm_r_old,
//! comm_r_new, comm_d_new and each partition's vanilla proof as filecoin-proofs-api returns
//! it). [`SnapRequest`] (`request.rs`) decodes, checks and verifies them as filecoin-proofs
//! does, and gives each partition's circuit and public inputs. The PCE is recorded from the
//! blank circuit (`circuit.rs`). The proof is the API's bytes: 192 per partition, in order
//! (1 at 2 KiB, 4 at 8 MiB, 16 from 512 MiB up).

use filecoin_proofs_api::RegisteredUpdateProof;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_update::constants::TreeRHasher;

use super::porep::PorepSize;
use crate::Result;

mod circuit;
mod input;
mod request;

pub use circuit::{blank_circuit, circuit_id, param_cache_identifier, SnapCircuit};
pub use input::SnapInput;
pub use request::SnapRequest;

/// The tree shapes SnapDeals uses, with the glue that erases them.
trait Shape: MerkleTreeTrait<Hasher = TreeRHasher> + Sized + 'static {
    fn wrap_circuit(c: storage_proofs_update::EmptySectorUpdateCircuit<Self>) -> SnapCircuit;
    fn wrap_request(r: request::Shaped<Self>) -> request::AnyShape;
}

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

fn size_of(rp: RegisteredUpdateProof) -> Result<PorepSize> {
    PorepSize::from_sector_bytes(u64::from(rp.sector_size()))
}
