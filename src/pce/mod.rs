//! The Pre-Compiled Constraint Evaluator: a circuit's A, B, C recorded once in
//! compact form, evaluated per proof against a fresh witness.

pub mod eval;
#[allow(unsafe_code)] // the map of a file that is validated before use
pub mod file;
pub mod matrix;
pub mod record;
pub mod registry;

pub use eval::{check_satisfied, evaluate, evaluate_into, Abc, AbcLease};
pub use matrix::{Bitmap, CsrMatrix, Densities, Pce};
pub use record::{extract, RecordingCs};
