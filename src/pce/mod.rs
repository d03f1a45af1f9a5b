//! The Pre-Compiled Constraint Evaluator: a circuit's A, B, C recorded once in
//! compact form, evaluated per proof against a fresh witness.

mod copies;
pub mod eval;
#[allow(unsafe_code)] // the opt-in map of a file validated before use; the aligned read buffer's `Pod`
pub mod file;
mod header;
pub mod matrix;
pub mod program;
pub mod record;
pub mod registry;
mod validate;

pub use copies::DeviceCopies;
pub use eval::{check_satisfied, evaluate, evaluate_into, Abc, AbcLease};
pub use file::Access;
pub use matrix::{Bitmap, CsrMatrix, Densities, Pce};
pub use record::{extract, RecordingCs};

/// A `.pce` file, or a PCE, that breaks the format's rules.
fn bad_file(msg: impl Into<String>) -> crate::Error {
    crate::Error::BadPceFile(msg.into())
}
