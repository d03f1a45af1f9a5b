//! Filecoin PoRep C2: the production `StackedDrg` seal circuit of filecoin-proofs 19.1.
//!
//! A request is a C1 output (filecoin-proofs-api's `SealCommitPhase1Output`, as JSON bytes,
//! exactly what `seal_commit_phase1` returns and Lotus/Curio hand to C2). From it [`PorepC1`]
//! builds, per partition `k`:
//! - the circuit, `StackedCompound::circuit(&pub_in, (), &vanilla[k], &vp, Some(k))` with the
//!   **un-partitioned** public inputs (`k: None`), as `circuit_proofs` in filecoin-proofs does;
//! - the verifier's public inputs, `StackedCompound::generate_public_inputs(&pub_in, &vp, Some(k))`.
//!
//! The R1CS does not depend on the witness, so the PCE is recorded from [`blank_circuit`], with no
//! C1 at all. Every V1_1 seal proof is supported (2 KiB, 8 MiB, 512 MiB: `SectorShapeBase`;
//! 32 GiB: `SectorShapeSub8`; 64 GiB: `SectorShapeTop2`); the tree shape is a type parameter in
//! filecoin-proofs, and [`PorepCircuit`] erases it so one concrete `bellperson::Circuit` type
//! serves every size. Proving is the engine's job (`engine::Engine::prove` proves every partition
//! of a C1 and returns `seal_commit_phase2`'s bytes).
//!
//! - `sizes`: the sector sizes and their registered proofs;
//! - `circuit`: the partition circuit, its id and its blank form;
//! - `c1`: parsing and validating a C1 output, partition circuits and public inputs;
//! - `params`: the file names and verifying keys of filecoin-proofs' parameter cache;
//! - `witness`: the partition's witness, its challenges synthesized in parallel;
//! - `shape`: the tree shapes and filecoin-proofs' seal types at a shape, which the others share;
//! - `proving`: one C1 partition's circuit data (commitments and challenges);
//! - `free`: the free values of a partition's witness program, taken from that data.
//!
//! This file only names the modules and re-exports the public API.
//!
//! Thread-safety: everything here is plain data; [`PorepC1`] is `Send + Sync` and may be shared
//! across threads to synthesise partitions concurrently. Only the oracles' `make_c1` touches process state
//! (the `FIL_PROOFS_PARENT_CACHE` environment variable, see its docs).

mod c1;
mod c1_head;
mod circuit;
mod free;
mod params;
mod proving;
mod shape;
mod sizes;
mod witness;

pub use c1::PorepC1;
pub use circuit::{blank_circuit, circuit_id, extract_pce, param_cache_identifier, program_layout, PorepCircuit};
pub use params::{params_file_name, read_verifying_key};
pub use sizes::{PorepSize, SealVariant};
