//! One C1 partition's circuit data: what `StackedCompound::circuit` puts into its
//! `StackedCircuit` (whose fields are private), kept apart so that the circuit, the C1 parser
//! and the free values all read it, and challenges can be synthesized one by one.

use bellperson::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use filecoin_proofs::constants::{DefaultPieceDomain, DefaultTreeDomain};
use storage_proofs_porep::stacked::StackedCircuit;

use super::shape::{Shape, VanillaProof, G};
use super::witness;

/// The public inputs and commitments of one partition, and its challenges' vanilla proofs.
pub(super) struct Proving<Tree: Shape> {
    pub(super) replica_id: DefaultTreeDomain,
    pub(super) comm_d: Option<DefaultPieceDomain>,
    pub(super) comm_r: Option<DefaultTreeDomain>,
    pub(super) comm_r_last: DefaultTreeDomain,
    pub(super) comm_c: DefaultTreeDomain,
    /// One vanilla proof per challenge.
    pub(super) challenges: Vec<VanillaProof<Tree>>,
}

impl<Tree: Shape> Proving<Tree> {
    /// filecoin-proofs' own synthesis of the prefix and the given challenges.
    pub(super) fn synthesize_with<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        challenges: Vec<VanillaProof<Tree>>,
    ) -> std::result::Result<(), SynthesisError> {
        StackedCircuit::<Tree, G>::synthesize(
            cs,
            Some(self.replica_id),
            self.comm_d,
            self.comm_r,
            Some(self.comm_r_last),
            Some(self.comm_c),
            challenges.into_iter().map(Into::into).collect(),
        )
    }
}

impl<Tree: Shape> witness::Challenges for Proving<Tree> {
    fn count(&self) -> usize {
        self.challenges.len()
    }

    fn synthesize<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        i: Option<usize>,
    ) -> std::result::Result<(), SynthesisError> {
        self.synthesize_with(cs, i.map(|i| self.challenges[i].clone()).into_iter().collect())
    }
}
