//! The synthetic benchmark families, at any size: instances with a witness from a seed, and
//! their public inputs computed natively.

use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;

use super::WitnessSource;
use super::{MimcChain, Sha256Chain};
use crate::pce::program::Program;
use crate::pce::Pce;
use crate::witness::{Witness, WitnessBuffer};
use crate::{Error, Result};

/// A synthetic circuit family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Boolean-heavy (bellperson's SHA-256 gadgets), like PoRep.
    Sha256Chain,
    /// Arithmetic-heavy, many distinct constants.
    MimcChain,
}

impl Family {
    pub const ALL: [Family; 2] = [Family::Sha256Chain, Family::MimcChain];

    pub fn name(self) -> &'static str {
        match self {
            Family::Sha256Chain => "sha256-chain",
            Family::MimcChain => "mimc-chain",
        }
    }

    pub fn parse(name: &str) -> Result<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name).ok_or_else(|| {
            let known: Vec<_> = Family::ALL.iter().map(|f| f.name()).collect();
            Error::UnknownCircuit(format!("unknown synthetic circuit {name:?} (built in: {})", known.join(", ")))
        })
    }
}

/// One instance of a synthetic family at a target size, with its witness seed.
#[derive(Clone)]
pub enum Synthetic {
    Sha256(Sha256Chain),
    Mimc(MimcChain),
}

impl Synthetic {
    /// The largest instance whose rows fit in `constraints`, with a witness from `seed`.
    pub fn new(family: Family, constraints: usize, seed: u64) -> Synthetic {
        match family {
            Family::Sha256Chain => Synthetic::Sha256(Sha256Chain::random(Sha256Chain::k_for(constraints), seed)),
            Family::MimcChain => Synthetic::Mimc(MimcChain::random(MimcChain::rounds_for(constraints), seed)),
        }
    }

    /// The same circuit without a witness, for PCE extraction.
    pub fn blank(&self) -> Synthetic {
        match self {
            Synthetic::Sha256(c) => Synthetic::Sha256(Sha256Chain::blank(c.k)),
            Synthetic::Mimc(c) => Synthetic::Mimc(MimcChain::blank(c.rounds)),
        }
    }

    /// Names the R1CS (not the witness): equal ids mean equal matrices.
    pub fn circuit_id(&self) -> String {
        match self {
            Synthetic::Sha256(c) => format!("sha256-chain-k{}-v1", c.k),
            Synthetic::Mimc(c) => format!("mimc-chain-r{}-v1", c.rounds),
        }
    }

    /// Rows bellperson's prover will have (input rows included).
    pub fn rows(&self) -> usize {
        match self {
            Synthetic::Sha256(c) => Sha256Chain::rows(c.k),
            Synthetic::Mimc(c) => MimcChain::rows(c.rounds),
        }
    }

    /// The verifier's public inputs (without the ONE), computed natively.
    pub fn public_inputs(&self) -> Vec<Scalar> {
        match self {
            Synthetic::Sha256(c) => c.public_inputs(),
            Synthetic::Mimc(c) => c.public_inputs(),
        }
    }
}

impl Circuit<Scalar> for Synthetic {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> std::result::Result<(), SynthesisError> {
        match self {
            Synthetic::Sha256(c) => c.synthesize(cs),
            Synthetic::Mimc(c) => c.synthesize(cs),
        }
    }
}

impl WitnessSource for Synthetic {
    fn gadget_witness(self, into: WitnessBuffer) -> Result<Witness> {
        Witness::generate_sized(self, into)
    }

    fn witness(self, pce: &Pce, into: WitnessBuffer) -> Result<Witness> {
        match self {
            Synthetic::Sha256(c) => c.witness(pce, into),
            Synthetic::Mimc(_) => self.gadget_witness(into),
        }
    }

    fn program<'p>(&self, pce: &'p Pce) -> Option<&'p Program> {
        match self {
            Synthetic::Sha256(c) => c.program(pce),
            Synthetic::Mimc(_) => None,
        }
    }
}
