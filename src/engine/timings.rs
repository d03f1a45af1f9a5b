//! Where a proof's time went, stage by stage, summed over a request's partitions.

use crate::groth16::{Backend, ProveTimings};

/// Seconds per stage of one proof (for a request of several partitions, summed over them).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timings {
    /// Waiting for the memory budget, for parameters still being decoded, to hold a, b, c, and
    /// for a device worker.
    pub queued: f64,
    pub witness: f64,
    pub spmv: f64,
    pub prove: ProveTimings,
    pub verify: f64,
    /// Wall time of the whole request.
    pub total: f64,
    /// Where the backend stage ran (the last partition's, for several).
    pub backend: Option<Backend>,
}

impl Timings {
    /// Adds `o`'s seconds stage by stage; `total` is left to the caller, the backend is `o`'s.
    pub fn add(&mut self, o: &Timings) {
        self.queued += o.queued;
        self.witness += o.witness;
        self.spmv += o.spmv;
        self.prove.add(&o.prove);
        self.verify += o.verify;
        self.backend = o.backend;
    }
}
