//! The tree shapes SnapDeals uses, below the circuit and the request that are generic over
//! them. The glue that erases them is beside each shape-erased type (`circuit::CircuitShape`,
//! `request::RequestShape`).

use filecoin_proofs::constants::{SectorShapeBase, SectorShapeSub8, SectorShapeTop2};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_update::constants::TreeRHasher;

/// A tree shape of an updated sector (its replica tree).
pub(super) trait Shape: MerkleTreeTrait<Hasher = TreeRHasher> + Sized + 'static {}

impl Shape for SectorShapeBase {}
impl Shape for SectorShapeSub8 {}
impl Shape for SectorShapeTop2 {}
