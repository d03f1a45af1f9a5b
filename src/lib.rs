//! cuzk: a Groth16 prover for Filecoin-scale circuits.
//!
//! The Pre-Compiled Constraint Evaluator (PCE) records a circuit's R1CS matrices
//! once ([`pce::extract`]); per proof only the witness is computed
//! ([`witness::Witness::generate`]) and `a = A·z`, `b = B·z`, `c = C·z` come from
//! sparse products ([`pce::evaluate`]). The Groth16 backends ([`groth16`]) turn
//! those into proofs byte-identical to `bellperson::groth16::create_proof`.

#![deny(unsafe_code)]

pub mod aggregate;
pub mod circuits;
pub mod engine;
pub mod error;
#[allow(unsafe_code)] // the C ABI: every entry dereferences checked caller pointers
pub mod ffi;
#[allow(unsafe_code)] // statvfs and kill(pid, 0): free space and a dead writer's temporary files
pub mod files;
#[allow(unsafe_code)] // calls into the CUDA code (cuda/*.cu)
pub mod gpu;
pub mod groth16;
mod instances;
pub mod log_sink;
#[allow(unsafe_code)] // glibc's malloc tuning and counters
pub mod mem;
#[cfg(feature = "oracles")]
pub mod oracles;
pub mod params;
pub mod pce;
pub mod progress;
pub mod witness;

pub use error::{Error, Result};

/// The scalar field of BLS12-381, as bellperson and blstrs use it.
pub use blstrs::Scalar;
