//! The engine: every request's partitions proven at once inside a host memory budget, on every
//! device.
//!
//! A request ([`Request`]) is a circuit's statement: one Groth16 proof per partition. Each
//! partition goes through the stages witness → SpMV → backend → verify: it reserves its exact
//! footprint from the budget before it allocates (its witness when admitted, its a, b, c when
//! SpMV starts, by at most [`ABC_HOLDERS_PER_DEVICE`] proofs per device at once); witnesses and
//! SpMVs run on two CPU pools; the backend stage takes a worker of a device, so the next
//! proof's synthesis overlaps the current one's GPU (or CPU MSM) work. The first partition that
//! fails cancels its siblings.
//!
//! - `request`: a request, its fan-out over partitions, and verifying its proof bytes;
//! - `pipeline`: the [`Engine`] and one partition's way through the stages;
//! - `budget`: the memory budget (admission by priority, the a/b/c stage, kept buffers);
//! - `ceiling`: what every engine's budget together may hold (the process's memory);
//! - `footprint`: what one proof reserves, from the PCE's dimensions;
//! - `lanes`: the devices' backend-stage workers and their counters;
//! - `config`: how an engine is made; `cancel`: the cancel token.

mod budget;
mod cancel;
mod ceiling;
#[allow(unsafe_code)] // setpriority on the synthesis threads
mod config;
mod footprint;
mod lanes;
mod pipeline;
mod request;
#[cfg(test)]
#[allow(unsafe_code)] // getpriority, to check the synthesis threads' nice
mod tests;
mod timings;

pub use budget::{drop_idle_buffers, MemoryBudget, Priority, Reservation};
pub use cancel::CancelToken;
pub use ceiling::Ceiling;
pub use config::{BudgetSpec, EngineConfig, SYNTHESIS_NICE};
pub use footprint::{footprint, ABC_HOLDERS_PER_DEVICE};
pub use lanes::DeviceStats;
pub use pipeline::{max_threads, Engine, Stage};
pub use request::{proof_bytes, verify, ProveOptions, Request};
pub use timings::Timings;
