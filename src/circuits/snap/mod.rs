//! Filecoin SnapDeals: the `EmptySectorUpdate` proof of filecoin-proofs 19.1 (every sector
//! size), proven from the vanilla partition proofs a node already has — what the API's
//! `generate_empty_sector_update_proof_with_vanilla` takes.
//!
//! A request's input is a [`SnapInput`] (`input.rs`: the registered update proof, comm_r_old,
//! comm_r_new, comm_d_new and each partition's vanilla proof as filecoin-proofs-api returns
//! it). [`SnapRequest`] (`request.rs`) decodes, checks and verifies them as filecoin-proofs
//! does, and gives each partition's circuit and public inputs. The PCE is recorded from the
//! blank circuit (`circuit.rs`). The proof is the API's bytes: 192 per partition, in order
//! (1 at 2 KiB, 4 at 8 MiB, 16 from 512 MiB up).
//!
//! - `input`: the request encoding;
//! - `circuit`: the partition circuit (tree shape erased), its id, its blank form;
//! - `request`: a parsed request's partitions and public inputs;
//! - `sizes`: a sector size's registered update proof and partition count;
//! - `params`: the file name of its parameters in filecoin-proofs' parameter cache;
//! - `shape`: the tree shapes SnapDeals uses.
//!
//! This file only names the modules and re-exports the public API.

mod circuit;
mod input;
mod params;
mod request;
mod shape;
mod sizes;

pub use circuit::{blank_circuit, circuit_id, param_cache_identifier, SnapCircuit};
pub use input::SnapInput;
pub use params::params_file_name;
pub use request::SnapRequest;
pub use sizes::{partitions, registered_proof};
