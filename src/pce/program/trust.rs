//! Trusting a witness program: recorded once per PCE on first use, and used only once its
//! first witness agreed with the circuit's gadgets'.

use std::sync::OnceLock;

use super::Program;
use crate::mem::{Owner, Tracked};
use crate::witness::Witness;
use crate::Result;

/// A PCE's witness program, recorded the first time a witness asks for it
/// (a circuit whose free values are known natively) and accounted as the
/// PCE's memory; and whether its first witness agreed with the gadgets'.
#[derive(Default)]
pub struct ProgramSlot {
    recorded: OnceLock<Option<(Program, Tracked)>>,
    trusted: OnceLock<bool>,
}

impl std::fmt::Debug for ProgramSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.recorded.get() {
            Some(Some((p, _))) => {
                write!(f, "Program({} steps, {} free, trusted {:?})", p.steps(), p.free().len(), self.trusted.get())
            }
            Some(None) => write!(f, "Program(none)"),
            None => write!(f, "Program(not recorded)"),
        }
    }
}

impl ProgramSlot {
    /// The program, recorded by `record` on first use and accounted as the PCE's memory;
    /// `None` when there is none or its first witness disagreed with the gadgets'.
    pub(crate) fn get_or_record(&self, record: impl FnOnce() -> Option<Program>) -> Option<&Program> {
        if self.trusted.get() == Some(&false) {
            return None;
        }
        let slot = self.recorded.get_or_init(|| {
            record().map(|p| {
                let bytes = Tracked::new(Owner::Pce, p.heap_bytes());
                (p, bytes)
            })
        });
        slot.as_ref().map(|(p, _)| p)
    }

    /// `replayed`, if the program that made it is trusted. The first witness decides, once:
    /// `gadgets` gives the digest of the same instance's witness by the circuit's gadgets
    /// (hashed as it is synthesized: no second witness in memory). A program that disagrees
    /// is dropped (logged): `None`, and the gadgets make this witness and every later one.
    pub(crate) fn vouch(
        &self,
        replayed: Witness,
        gadgets: impl FnOnce() -> Result<[u8; 32]>,
    ) -> Result<Option<Witness>> {
        let trusted = match self.trusted.get() {
            Some(&t) => t,
            None => {
                let agree = gadgets()? == replayed.digest();
                if !agree {
                    log::error!(
                        "a witness program disagrees with its circuit's gadgets: the gadgets make its witnesses"
                    );
                }
                *self.trusted.get_or_init(|| agree)
            }
        };
        Ok(trusted.then_some(replayed))
    }

    /// Whether the first witness agreed (`None`: no witness judged yet).
    pub fn trusted(&self) -> Option<bool> {
        self.trusted.get().copied()
    }
}
