//! The Pre-Compiled Constraint Evaluator: a circuit's A, B, C recorded once in
//! compact form, evaluated per proof against a fresh witness.

#[allow(unsafe_code)] // the aligned read buffer's `Pod` line
mod bytes;
mod copies;
pub mod eval;
#[allow(unsafe_code)] // the opt-in map of a file validated before use
pub mod file;
mod header;
pub mod matrix;
pub mod program;
pub mod record;
pub mod registry;
mod system;
mod validate;

pub use copies::DeviceCopies;
pub use eval::{check_satisfied, evaluate, evaluate_into, Abc, AbcLease};
pub use file::Access;
pub use matrix::CsrMatrix;
pub use record::{extract, extract_logged, RecordingCs};
pub use system::{Bitmap, Densities, Pce};
