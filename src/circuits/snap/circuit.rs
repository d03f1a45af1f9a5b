//! One partition's SnapDeals circuit, its id, and its blank form (the PCE's source).

use std::fmt;

use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use filecoin_proofs::constants::{SectorShapeBase, SectorShapeSub8, SectorShapeTop2};
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_update::{EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound, PublicParams};

use super::shape::Shape;
use crate::circuits::porep::PorepSize;
use crate::circuits::WitnessSource;
use crate::witness::{Witness, WitnessBuffer};
use crate::Result;

/// One partition's `EmptySectorUpdateCircuit`, its tree shape erased; synthesis is
/// filecoin-proofs' own.
pub struct SnapCircuit(pub(super) AnyShape);

pub(super) enum AnyShape {
    Base(EmptySectorUpdateCircuit<SectorShapeBase>),
    Sub8(EmptySectorUpdateCircuit<SectorShapeSub8>),
    Top2(EmptySectorUpdateCircuit<SectorShapeTop2>),
}

/// A tree shape whose circuits erase into [`SnapCircuit`].
pub(super) trait CircuitShape: Shape {
    fn wrap_circuit(c: EmptySectorUpdateCircuit<Self>) -> SnapCircuit;
}

erase_shapes!(CircuitShape::wrap_circuit(EmptySectorUpdateCircuit) -> SnapCircuit { AnyShape, SnapCircuit });

pub(super) fn public_params(size: PorepSize) -> PublicParams {
    PublicParams::from_sector_size(size.sector_bytes())
}

fn cache_id_typed<Tree: Shape>(size: PorepSize) -> String {
    <EmptySectorUpdateCompound<Tree> as CacheableParameters<EmptySectorUpdateCircuit<Tree>, _>>::cache_identifier(
        &public_params(size),
    )
}

fn blank_typed<Tree: CircuitShape>(size: PorepSize) -> SnapCircuit {
    Tree::wrap_circuit(<EmptySectorUpdateCompound<Tree> as CompoundProof<
        EmptySectorUpdate<Tree>,
        EmptySectorUpdateCircuit<Tree>,
    >>::blank_circuit(&public_params(size)))
}

/// filecoin-proofs' parameter cache identifier of `size`'s update circuit, e.g.
/// `empty-sector-update-merkletree-poseidon_hasher-8-8-0-3b7f44a9…` (not the PoRep one that
/// `RegisteredUpdateProof::circuit_identifier` names).
pub fn param_cache_identifier(size: PorepSize) -> Result<String> {
    Ok(with_shape!(size, cache_id_typed, size))
}

/// The circuit id of a SnapDeals PCE: `snap-<size>-<param cache identifier>`.
pub fn circuit_id(size: PorepSize) -> Result<String> {
    Ok(format!("snap-{}-{}", size.short_name(), param_cache_identifier(size)?))
}

/// The circuit parameter generation synthesizes: every partition's R1CS, no values.
pub fn blank_circuit(size: PorepSize) -> Result<SnapCircuit> {
    Ok(with_shape!(size, blank_typed, size))
}

impl Circuit<Scalar> for SnapCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> std::result::Result<(), SynthesisError> {
        by_shape!(AnyShape, self.0, c => c.synthesize(cs))
    }
}

impl WitnessSource for SnapCircuit {
    fn gadget_witness(self, into: WitnessBuffer) -> Result<Witness> {
        Witness::generate_sized(self, into)
    }
}

impl fmt::Debug for SnapCircuit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape = match &self.0 {
            AnyShape::Base(_) => "SectorShapeBase",
            AnyShape::Sub8(_) => "SectorShapeSub8",
            AnyShape::Top2(_) => "SectorShapeTop2",
        };
        write!(f, "SnapCircuit({shape})")
    }
}
