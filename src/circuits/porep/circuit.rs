//! One partition's PoRep circuit, its id, and its blank form (the PCE's source).

use std::fmt;
use std::marker::PhantomData;

use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use filecoin_proofs::constants::{SectorShapeBase, SectorShapeSub8, SectorShapeTop2};
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_porep::stacked::{StackedCircuit, StackedDrg};

use super::proving::Proving;
use super::shape::{vanilla_params, Compound, Shape, G};
use super::sizes::PorepSize;
use super::{free, witness};
use crate::circuits::filecoin::guarded;
use crate::circuits::WitnessSource;
use crate::pce::program::{Layout, Program};
use crate::pce::Pce;
use crate::witness::{digest_of, Witness, WitnessBuffer};
use crate::{Error, Result};

fn cache_id_typed<Tree: Shape>(size: PorepSize) -> Result<String> {
    let vp = vanilla_params::<Tree>(size.registered_proof())?;
    Ok(<Compound<Tree> as CacheableParameters<StackedCircuit<Tree, G>, _>>::cache_identifier(&vp))
}

fn blank_typed<Tree: CircuitShape>(size: PorepSize) -> Result<PorepCircuit> {
    let vp = vanilla_params::<Tree>(size.registered_proof())?;
    let c = guarded("building the blank PoRep circuit", Error::Synthesis, || {
        Ok(<Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, G>, _>>::blank_circuit(&vp))
    })?;
    Ok(Tree::wrap_circuit(ShapedCircuit::Blank(c)))
}

/// What `StackedCircuit` allocates before its challenges, from no values: the blank circuit's
/// prefix.
struct BlankPrefix<Tree>(PhantomData<Tree>);

impl<Tree: Shape> Circuit<Scalar> for BlankPrefix<Tree> {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> std::result::Result<(), SynthesisError> {
        StackedCircuit::<Tree, G>::synthesize(cs, None, None, None, None, None, Vec::new())
    }
}

fn program_layout_typed<Tree: Shape>(size: PorepSize) -> Result<Layout> {
    let vp = vanilla_params::<Tree>(size.registered_proof())?;
    let prefix = crate::pce::extract(BlankPrefix::<Tree>(PhantomData))?;
    let parts = vp.challenges.num_challenges_per_partition();
    Ok(Layout { prefix_inputs: prefix.num_inputs, prefix_aux: prefix.num_aux, parts })
}

/// The layout of `size`'s witness program, from no C1: the blank circuit's prefix, then one
/// part per challenge — what a C1's partition finds by synthesizing its own prefix
/// (`witness::layout`), so that the program is recorded, split, when the PCE is extracted.
pub fn program_layout(size: PorepSize) -> Result<Layout> {
    with_shape!(size, program_layout_typed, size)
}

/// filecoin-proofs' parameter cache identifier of `size`'s circuit, e.g.
/// `stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-032d3138…`.
/// The `.params`/`.vk` files are `v28-<this>.params` / `.vk` in the parameter cache.
pub fn param_cache_identifier(size: PorepSize) -> Result<String> {
    with_shape!(size, cache_id_typed, size)
}

/// The circuit id of a PoRep PCE: `porep-<size>-v1_1-<param cache identifier>`, e.g.
/// `porep-2k-v1_1-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-032d…`.
/// It names the registered proof and the exact parameter set, so a PCE file recorded for another
/// size, version or circuit revision does not match.
pub fn circuit_id(size: PorepSize) -> Result<String> {
    Ok(format!("porep-{}-v1_1-{}", size.short_name(), param_cache_identifier(size)?))
}

/// The circuit that parameter generation synthesises: same R1CS as every real partition, no
/// witness values. Use it to record the PCE (`pce::extract(blank_circuit(size)?)`).
pub fn blank_circuit(size: PorepSize) -> Result<PorepCircuit> {
    with_shape!(size, blank_typed, size)
}

/// One partition's PoRep circuit (filecoin-proofs `StackedCircuit`), with its tree shape erased.
/// Implements `bellperson::Circuit<Scalar>` by delegating to filecoin-proofs' synthesis, so it
/// works with `pce::extract`, `Witness::generate`, the reference CS and
/// `bellperson::groth16::create_proof`; as a [`WitnessSource`] it synthesizes its challenges in
/// parallel.
pub struct PorepCircuit(pub(super) AnyShape);

pub(super) enum AnyShape {
    Base(ShapedCircuit<SectorShapeBase>),
    Sub8(ShapedCircuit<SectorShapeSub8>),
    Top2(ShapedCircuit<SectorShapeTop2>),
}

/// A tree shape whose circuits erase into [`PorepCircuit`].
pub(super) trait CircuitShape: Shape {
    fn wrap_circuit(c: ShapedCircuit<Self>) -> PorepCircuit;
}

erase_shapes!(CircuitShape::wrap_circuit(ShapedCircuit) -> PorepCircuit { AnyShape, PorepCircuit });

pub(super) enum ShapedCircuit<Tree: Shape> {
    /// No witness values: filecoin-proofs' blank circuit (parameters, PCE extraction).
    Blank(StackedCircuit<Tree, G>),
    /// A C1's partition, its challenges kept apart so they can be synthesized one by one.
    Proving(Proving<Tree>),
}

impl<Tree: Shape> ShapedCircuit<Tree> {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> std::result::Result<(), SynthesisError> {
        match self {
            ShapedCircuit::Blank(c) => c.synthesize(cs),
            ShapedCircuit::Proving(mut p) => {
                let all = std::mem::take(&mut p.challenges);
                p.synthesize_with(cs, all)
            }
        }
    }

    /// By the gadgets, challenges in parallel.
    fn gadget_witness(self, into: WitnessBuffer) -> Result<Witness> {
        match self {
            ShapedCircuit::Blank(c) => Witness::generate_sized(c, into),
            ShapedCircuit::Proving(p) => crate::witness::catching(|| witness::in_parallel(&p, into)),
        }
    }

    /// Replayed from the PCE's witness program with the free values taken from the vanilla
    /// proofs (once the program is trusted: `Pce::vouch`); by the gadgets when there is no
    /// program, or it expects other values (never for this circuit's PCE).
    fn witness(self, pce: &Pce, into: WitnessBuffer) -> Result<Witness> {
        match self {
            ShapedCircuit::Blank(_) => self.gadget_witness(into),
            ShapedCircuit::Proving(ref p) => {
                if let Some(program) = self.program(pce) {
                    let values = free::values(p)?;
                    if values.len() == program.free().len() {
                        let replayed = program.run(pce, values, into)?;
                        let gadgets = || digest_of(|cs| p.synthesize_with(cs, p.challenges.clone()));
                        if let Some(w) = pce.vouch(replayed, gadgets)? {
                            return Ok(w);
                        }
                        return self.gadget_witness(WitnessBuffer::new(pce.num_inputs, pce.num_aux));
                    }
                    log::warn!(
                        "the PoRep witness program expects {} free values, the C1 gives {}: using the gadgets",
                        program.free().len(),
                        values.len()
                    );
                }
                self.gadget_witness(into)
            }
        }
    }
}

impl<Tree: Shape> ShapedCircuit<Tree> {
    /// `pce`'s witness program, split by challenge (their columns follow the prefix's, the
    /// same count each, and each is computed from the prefix and itself).
    fn program<'p>(&self, pce: &'p Pce) -> Option<&'p Program> {
        match self {
            ShapedCircuit::Blank(_) => None,
            ShapedCircuit::Proving(p) => pce.program(|| witness::layout(p).ok()),
        }
    }
}

impl Circuit<Scalar> for PorepCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> std::result::Result<(), SynthesisError> {
        by_shape!(AnyShape, self.0, c => c.synthesize(cs))
    }
}

impl WitnessSource for PorepCircuit {
    fn gadget_witness(self, into: WitnessBuffer) -> Result<Witness> {
        by_shape!(AnyShape, self.0, c => c.gadget_witness(into))
    }

    fn witness(self, pce: &Pce, into: WitnessBuffer) -> Result<Witness> {
        by_shape!(AnyShape, self.0, c => c.witness(pce, into))
    }

    fn program<'p>(&self, pce: &'p Pce) -> Option<&'p Program> {
        by_shape!(AnyShape, &self.0, c => c.program(pce))
    }
}

impl fmt::Debug for PorepCircuit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape = match self.0 {
            AnyShape::Base(_) => "SectorShapeBase",
            AnyShape::Sub8(_) => "SectorShapeSub8",
            AnyShape::Top2(_) => "SectorShapeTop2",
        };
        write!(f, "PorepCircuit({shape})")
    }
}

/// Records the PCE of `size`'s PoRep circuit from the blank circuit (no C1 needed).
pub fn extract_pce(size: PorepSize) -> Result<crate::pce::Pce> {
    crate::pce::extract(blank_circuit(size)?)
}
