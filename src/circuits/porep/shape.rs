//! The tree shapes of V1_1 seals and filecoin-proofs' seal types at a shape: what the circuit,
//! the C1 parser, the challenges' data and their free values share, in one file below them all.

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

pub(super) type G = DefaultPieceHasher;
pub(super) type PubIn = stacked::PublicInputs<DefaultTreeDomain, DefaultPieceDomain>;
pub(super) type VanillaProof<Tree> = stacked::Proof<Tree, G>;
pub(super) type Compound<Tree> = StackedCompound<Tree, G>;

/// The tree shapes filecoin-proofs uses for V1_1 seals. The glue that erases them is beside
/// each shape-erased type (`circuit::CircuitShape`, `c1::ProofsShape`).
pub(super) trait Shape: MerkleTreeTrait<Hasher = DefaultTreeHasher> + Sized + 'static {}

impl Shape for SectorShapeBase {}
impl Shape for SectorShapeSub8 {}
impl Shape for SectorShapeTop2 {}

/// filecoin-proofs' public parameters of a seal proof: its graph (from its porep id) and
/// challenges (the variant's derivation). Every variant of a size has the same circuit.
pub(super) fn vanilla_params<Tree: Shape>(rp: RegisteredSealProof) -> Result<stacked::PublicParams<Tree>> {
    guarded("building PoRep public parameters", Error::InvalidInput, || public_params::<Tree>(&rp.as_v1_config()))
}
