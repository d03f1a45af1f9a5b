//! Trusting a witness program: loaded with its PCE's file or recorded on first use, and used
//! only once a witness it made agreed with the circuit's gadgets' — once per file (the verdict
//! kept beside it: `<file>.vouched`), or, for a program recorded in the process, once per process.

use std::sync::OnceLock;

use super::vouched::Sidecar;
use super::Program;
use crate::mem::{Owner, Tracked};
use crate::witness::Witness;
use crate::Result;

/// A program and its memory, accounted as the PCE's (its arrays in anonymous memory, or in the
/// file's mapping).
struct Held {
    program: Program,
    _bytes: [Tracked; 2],
}

impl Held {
    fn new(program: Program) -> Held {
        let bytes =
            [Tracked::new(Owner::Pce, program.heap_bytes()), Tracked::new(Owner::PceMapped, program.mapped_bytes())];
        Held { program, _bytes: bytes }
    }
}

/// A PCE's witness program: loaded with its file, or recorded the first time a witness asks
/// for it (a circuit whose free values are known natively); and whether a witness it made
/// agreed with the gadgets'.
#[derive(Default)]
pub struct ProgramSlot {
    held: OnceLock<Option<Held>>,
    trusted: OnceLock<bool>,
    /// Where the verdict on a program loaded from a file is kept.
    sidecar: Option<Sidecar>,
}

impl std::fmt::Debug for ProgramSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.held.get() {
            Some(Some(Held { program: p, .. })) => {
                write!(f, "Program({} steps, {} free, trusted {:?})", p.steps(), p.free().len(), self.trusted.get())
            }
            Some(None) => write!(f, "Program(none)"),
            None => write!(f, "Program(not recorded)"),
        }
    }
}

impl ProgramSlot {
    /// A program loaded from the PCE's file, whose verdict `sidecar` keeps, when the file has a
    /// path (and may hold already: trusted at once, or, if it disagreed, dropped for the
    /// gadgets); without one, the first witness decides for this process.
    pub(crate) fn loaded(program: Program, sidecar: Option<Sidecar>) -> ProgramSlot {
        let verdict = sidecar.as_ref().and_then(Sidecar::read);
        if verdict == Some(false) {
            log::warn!("a witness program disagreed with its circuit's gadgets (its file's verdict): the gadgets make its witnesses");
        }
        ProgramSlot {
            held: OnceLock::from((verdict != Some(false)).then(|| Held::new(program))),
            trusted: verdict.map(OnceLock::from).unwrap_or_default(),
            sidecar: sidecar.filter(|_| verdict.is_none()),
        }
    }

    /// The program, recorded by `record` on first use (if none was loaded) and accounted as the
    /// PCE's memory; `None` when there is none or a witness it made disagreed with the gadgets'.
    pub(crate) fn get_or_record(&self, record: impl FnOnce() -> Option<Program>) -> Option<&Program> {
        if self.trusted.get() == Some(&false) {
            return None;
        }
        self.held.get_or_init(|| record().map(Held::new)).as_ref().map(|h| &h.program)
    }

    /// The program a saved file carries: the one loaded or recorded, unless it disagreed.
    pub(crate) fn to_save(&self) -> Option<&Program> {
        match self.trusted.get() {
            Some(false) => None,
            _ => self.held.get()?.as_ref().map(|h| &h.program),
        }
    }

    /// `replayed`, if the program that made it is trusted. Unless a verdict is known (its file's
    /// sidecar, or an earlier witness of this process), this witness decides, once: `gadgets`
    /// gives the digest of the same instance's witness by the circuit's gadgets (hashed as it is
    /// synthesized: no second witness in memory), and a loaded program's verdict is written to
    /// its sidecar. A program that disagrees is dropped (logged): `None`, and the gadgets make
    /// this witness and every later one.
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
                let mut decided = false;
                let trusted = *self.trusted.get_or_init(|| {
                    decided = true;
                    agree
                });
                if let (true, Some(sidecar)) = (decided, &self.sidecar) {
                    if let Err(e) = sidecar.write(agree) {
                        log::warn!("could not record the witness program's verdict: {e}");
                    }
                }
                trusted
            }
        };
        Ok(trusted.then_some(replayed))
    }

    /// Whether a witness it made agreed (`None`: not judged yet).
    pub fn trusted(&self) -> Option<bool> {
        self.trusted.get().copied()
    }
}
