//! Groth16 proving from a PCE evaluation, byte-identical to
//! `bellperson::groth16::create_proof` for the same r and s.
//!
//! Notation follows the paper: with `Σa = Σ zᵢ·Aᵢ(τ)` (inputs full, aux by the
//! A density), likewise `Σb` in G1 and G2, `h` the H-query MSM and `l` the
//! L-query MSM over aux:
//!   A = α + Σa + r·δ,   B = β + Σb + s·δ,
//!   C = s·(Σa) + r·(Σb₁) + r·s·δ + s·α + r·β + h + l.

mod backend;
pub mod cpu;
pub mod cuda;
#[allow(unsafe_code)] // blstrs points read as blst's, the same layout
pub mod msm;
pub mod ntt;
mod proof;
mod timings;

pub use crate::gpu::Urgency;
pub use backend::{check_shape, check_vk_shape, prepare, prove, Backend};
pub use proof::{assemble, proof_bytes, verify, ProofParts, PROOF_BYTES};
pub use timings::{GpuSteps, ProveTimings};
