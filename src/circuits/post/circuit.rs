//! One partition's PoSt circuit, its id, and its blank form (the PCE's source).

use std::fmt;

use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use filecoin_proofs::constants::{SectorShapeBase, SectorShapeSub8, SectorShapeTop2};
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_post::fallback::{FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound};

use super::post_type::{public_params_for, PostKind, PostType};
use super::shape::Shape;
use crate::circuits::WitnessSource;
use crate::witness::{Witness, WitnessBuffer};
use crate::Result;

/// One partition's `FallbackPoStCircuit`, its tree shape erased. Synthesis is
/// filecoin-proofs' own; in a constraint system that can be extended (the witness, the PCE
/// recorder, bellperson's prover) it synthesizes its sectors in parallel.
pub struct PostCircuit(pub(super) AnyShape);

pub(super) enum AnyShape {
    Base(FallbackPoStCircuit<SectorShapeBase>),
    Sub8(FallbackPoStCircuit<SectorShapeSub8>),
    Top2(FallbackPoStCircuit<SectorShapeTop2>),
}

/// A tree shape whose circuits erase into [`PostCircuit`].
pub(super) trait CircuitShape: Shape {
    fn wrap_circuit(c: FallbackPoStCircuit<Self>) -> PostCircuit;
}

erase_shapes!(CircuitShape::wrap_circuit(FallbackPoStCircuit) -> PostCircuit { AnyShape, PostCircuit });

fn cache_id_typed<Tree: Shape>(t: PostType) -> Result<String> {
    let pp = public_params_for::<Tree>(t.registered_proof())?;
    Ok(<FallbackPoStCompound<Tree> as CacheableParameters<FallbackPoStCircuit<Tree>, _>>::cache_identifier(&pp))
}

fn blank_typed<Tree: CircuitShape>(t: PostType) -> Result<PostCircuit> {
    let pp = public_params_for::<Tree>(t.registered_proof())?;
    Ok(Tree::wrap_circuit(<FallbackPoStCompound<Tree> as CompoundProof<
        FallbackPoSt<'_, Tree>,
        FallbackPoStCircuit<Tree>,
    >>::blank_circuit(&pp)))
}

/// filecoin-proofs' parameter cache identifier of `t`'s circuit, e.g.
/// `proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-3ea05428…` (the parameter
/// files are `v28-<this>.params` / `.vk`).
pub fn param_cache_identifier(t: PostType) -> Result<String> {
    with_shape!(t.size, cache_id_typed, t)
}

/// The circuit id of a PoSt PCE: `winning-post-<size>-<param cache identifier>` or
/// `window-post-<size>-…` (WindowPoSt V1 and V1_2 share it, as they share parameters).
pub fn circuit_id(t: PostType) -> Result<String> {
    let kind = match t.kind {
        PostKind::Winning => "winning",
        PostKind::Window => "window",
    };
    Ok(format!("{kind}-post-{}-{}", t.size.short_name(), param_cache_identifier(t)?))
}

/// The circuit parameter generation synthesizes: the R1CS of every partition, no values.
pub fn blank_circuit(t: PostType) -> Result<PostCircuit> {
    with_shape!(t.size, blank_typed, t)
}

impl Circuit<Scalar> for PostCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> std::result::Result<(), SynthesisError> {
        by_shape!(AnyShape, self.0, c => c.synthesize(cs))
    }
}

impl WitnessSource for PostCircuit {
    fn gadget_witness(self, into: WitnessBuffer) -> Result<Witness> {
        Witness::generate_sized(self, into)
    }
}

impl fmt::Debug for PostCircuit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (shape, sectors) = match &self.0 {
            AnyShape::Base(c) => ("SectorShapeBase", c.sectors.len()),
            AnyShape::Sub8(c) => ("SectorShapeSub8", c.sectors.len()),
            AnyShape::Top2(c) => ("SectorShapeTop2", c.sectors.len()),
        };
        write!(f, "PostCircuit({shape}, {sectors} sectors)")
    }
}
