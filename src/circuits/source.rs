//! The [`WitnessSource`] trait every circuit kind implements, in its own file so that the
//! kinds' modules can implement it without importing the dispatch in `circuits/mod.rs`,
//! which imports them.

use crate::pce::program::Program;
use crate::pce::Pce;
use crate::witness::{Witness, WitnessBuffer};
use crate::Result;

/// A circuit whose witness the engine can make: replayed from its PCE's witness program when
/// the circuit knows its free values natively (sha256-chain, PoRep), else by its gadgets.
pub trait WitnessSource: Send + Sized {
    /// The witness by the circuit's gadgets, written into `into`: the reference.
    fn gadget_witness(self, into: WitnessBuffer) -> Result<Witness>;

    /// The witness the engine uses, written into `into`; `pce` is this circuit's.
    fn witness(self, _pce: &Pce, into: WitnessBuffer) -> Result<Witness> {
        self.gadget_witness(into)
    }

    /// `pce`'s witness program, recorded for this circuit (with its layout) if it is the first
    /// to ask, when this instance's witness is made by one.
    fn program<'p>(&self, _pce: &'p Pce) -> Option<&'p Program> {
        None
    }
}
