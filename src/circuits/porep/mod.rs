//! Filecoin PoRep C2: the production `StackedDrg` seal circuit of filecoin-proofs 19.1.
//!
//! A request is a C1 output (filecoin-proofs-api's `SealCommitPhase1Output`, as JSON bytes,
//! exactly what `seal_commit_phase1` returns and Lotus/Curio hand to C2). From it [`PorepC1`]
//! builds, per partition `k`:
//! - the circuit, `StackedCompound::circuit(&pub_in, (), &vanilla[k], &vp, Some(k))` with the
//!   **un-partitioned** public inputs (`k: None`), as `circuit_proofs` in filecoin-proofs does;
//! - the verifier's public inputs, `StackedCompound::generate_public_inputs(&pub_in, &vp, Some(k))`.
//!
//! The R1CS does not depend on the witness, so the PCE is recorded from [`blank_circuit`], with no
//! C1 at all. Every V1_1 seal proof is supported (2 KiB, 8 MiB, 512 MiB: `SectorShapeBase`;
//! 32 GiB: `SectorShapeSub8`; 64 GiB: `SectorShapeTop2`); the tree shape is a type parameter in
//! filecoin-proofs, and [`PorepCircuit`] erases it so one concrete `bellperson::Circuit` type
//! serves every size. Proving is the engine's job (`engine::Engine::prove` proves every partition
//! of a C1 and returns `seal_commit_phase2`'s bytes).
//!
//! - `sizes`: the sector sizes and their registered proofs;
//! - `circuit`: the partition circuit, its id and its blank form;
//! - `c1`: parsing and validating a C1 output, partition circuits and public inputs;
//! - `params`: the file names and verifying keys of filecoin-proofs' parameter cache;
//! - `witness`: the partition's witness, its challenges synthesized in parallel;
//!
//! This file holds the glue the others share: the tree shapes and the dispatch over them.
//!
//! Thread-safety: everything here is plain data; [`PorepC1`] is `Send + Sync` and may be shared
//! across threads to synthesise partitions concurrently. Only the oracles' `make_c1` touches process state
//! (the `FIL_PROOFS_PARENT_CACHE` environment variable, see its docs).

use filecoin_proofs::constants::{
    DefaultPieceDomain, DefaultPieceHasher, DefaultTreeDomain, DefaultTreeHasher, SectorShapeBase, SectorShapeSub8,
    SectorShapeTop2,
};
use filecoin_proofs::parameters::public_params;
use filecoin_proofs_api::RegisteredSealProof;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_porep::stacked::{self, StackedCompound};

use crate::circuits::filecoin::guarded;
use crate::{Error, Result};

mod c1;
mod circuit;
mod free;
mod params;
mod sizes;
mod witness;

pub use c1::PorepC1;
use c1::{ShapedProofs, VanillaProofs};
pub use circuit::{blank_circuit, circuit_id, extract_pce, param_cache_identifier, PorepCircuit};
use circuit::{AnyShape, ShapedCircuit};
pub use params::{params_file_name, read_verifying_key};
pub use sizes::{PorepSize, SealVariant};

type G = DefaultPieceHasher;
type PubIn = stacked::PublicInputs<DefaultTreeDomain, DefaultPieceDomain>;
type VanillaProof<Tree> = stacked::Proof<Tree, G>;
type Compound<Tree> = StackedCompound<Tree, G>;

/// The tree shapes filecoin-proofs uses for V1_1 seals, with the glue that erases them.
trait Shape: MerkleTreeTrait<Hasher = DefaultTreeHasher> + Sized + 'static {
    fn wrap_circuit(c: ShapedCircuit<Self>) -> PorepCircuit;
    fn wrap_proofs(t: ShapedProofs<Self>) -> VanillaProofs;
}

impl Shape for SectorShapeBase {
    fn wrap_circuit(c: ShapedCircuit<Self>) -> PorepCircuit {
        PorepCircuit(AnyShape::Base(c))
    }
    fn wrap_proofs(t: ShapedProofs<Self>) -> VanillaProofs {
        VanillaProofs::Base(t)
    }
}
impl Shape for SectorShapeSub8 {
    fn wrap_circuit(c: ShapedCircuit<Self>) -> PorepCircuit {
        PorepCircuit(AnyShape::Sub8(c))
    }
    fn wrap_proofs(t: ShapedProofs<Self>) -> VanillaProofs {
        VanillaProofs::Sub8(t)
    }
}
impl Shape for SectorShapeTop2 {
    fn wrap_circuit(c: ShapedCircuit<Self>) -> PorepCircuit {
        PorepCircuit(AnyShape::Top2(c))
    }
    fn wrap_proofs(t: ShapedProofs<Self>) -> VanillaProofs {
        VanillaProofs::Top2(t)
    }
}

/// filecoin-proofs' public parameters of a seal proof: its graph (from its porep id) and
/// challenges (the variant's derivation). Every variant of a size has the same circuit.
fn vanilla_params<Tree: Shape>(rp: RegisteredSealProof) -> Result<stacked::PublicParams<Tree>> {
    guarded("building PoRep public parameters", Error::InvalidInput, || public_params::<Tree>(&rp.as_v1_config()))
}
