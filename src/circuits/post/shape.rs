//! The tree shapes PoSt uses, below the circuit and the request that are generic over them.
//! The glue that erases them is beside each shape-erased type (`circuit::CircuitShape`,
//! `request::RequestShape`).

use filecoin_proofs::constants::{DefaultTreeHasher, SectorShapeBase, SectorShapeSub8, SectorShapeTop2};
use storage_proofs_core::merkle::MerkleTreeTrait;

/// A tree shape of a PoSt sector.
pub(super) trait Shape: MerkleTreeTrait<Hasher = DefaultTreeHasher> + Sized + 'static {}

impl Shape for SectorShapeBase {}
impl Shape for SectorShapeSub8 {}
impl Shape for SectorShapeTop2 {}
