//! Filecoin PoSt: WinningPoSt and WindowPoSt, the `FallbackPoSt` circuits of filecoin-proofs
//! 19.1, proven from the vanilla proofs a node already has (what the API's
//! `generate_winning_post_with_vanilla`, `generate_window_post_with_vanilla` and
//! `generate_single_window_post_with_vanilla` take).
//!
//! A request's input is a [`PostInput`] (`input.rs`: one versioned binary encoding of the
//! registered proof, randomness, prover id, partition index and the vanilla proofs' bytes as
//! filecoin-proofs-api returns them). [`PostRequest`] (`request.rs`) checks it and partitions
//! the vanilla proofs as filecoin-proofs does (verifying them on the way), and gives each
//! partition's circuit (`FallbackPoStCompound::circuit`) and the verifier's public inputs. The
//! PCE is recorded from the blank circuit (`circuit.rs`), no sector needed. Proofs are the
//! API's bytes: 192 per partition, in partition order.
//!
//! - `input`: the request encoding;
//! - `circuit`: the partition circuit (tree shape erased), its id, its blank form;
//! - `request`: a parsed request's partitions and public inputs;
//! - `verifier`: a partition's public inputs from its own sectors and index;
//! - `post_type`: the circuit's kind and sector size, its registered proof and parameters;
//! - `params`: the file name of its parameters in filecoin-proofs' parameter cache;
//! - `shape`: the tree shapes PoSt uses.
//!
//! This file only names the modules and re-exports the public API.

mod circuit;
mod input;
mod params;
mod post_type;
mod request;
mod shape;
mod verifier;

pub use circuit::{blank_circuit, circuit_id, param_cache_identifier, PostCircuit};
pub use input::{PostInput, INPUT_MAGIC, INPUT_VERSION};
pub use params::params_file_name;
pub use post_type::{PostKind, PostType};
pub(crate) use request::proof_len_of;
pub use request::PostRequest;
