//! Where a proof's backend stage spends its time, stage by stage.

use std::time::Instant;

/// Seconds spent in each proving stage.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProveTimings {
    pub h: f64,
    pub msm_h: f64,
    pub msm_l: f64,
    pub msm_a: f64,
    pub msm_b_g1: f64,
    pub msm_b_g2: f64,
    pub assembly: f64,
    /// Where the CUDA backend's time went inside the stages above (already
    /// counted in them, not in `total`); zero on the CPU backend.
    pub gpu: GpuSteps,
}

/// Sub-steps of the CUDA backend's stages, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GpuSteps {
    /// The witness (inputs and aux) host → device through the pinned staging
    /// (part of `h`).
    pub witness_upload: f64,
    /// a, b, c evaluated on the device from the PCE's matrices, and every
    /// constraint checked (part of `h`).
    pub spmv: f64,
    /// The NTTs, until H is ready (part of `h`).
    pub h_ntt: f64,
    /// Density selection of the aux scalars for A and B, on the device (part
    /// of `msm_a` and `msm_b_g1`).
    pub select: f64,
}

impl ProveTimings {
    /// Seconds of the whole backend stage.
    pub fn total(&self) -> f64 {
        self.h + self.msm_h + self.msm_l + self.msm_a + self.msm_b_g1 + self.msm_b_g2 + self.assembly
    }

    /// Adds `o`'s seconds stage by stage (several partitions of one request).
    pub fn add(&mut self, o: &ProveTimings) {
        self.h += o.h;
        self.msm_h += o.msm_h;
        self.msm_l += o.msm_l;
        self.msm_a += o.msm_a;
        self.msm_b_g1 += o.msm_b_g1;
        self.msm_b_g2 += o.msm_b_g2;
        self.assembly += o.assembly;
        self.gpu.witness_upload += o.gpu.witness_upload;
        self.gpu.spmv += o.gpu.spmv;
        self.gpu.h_ntt += o.gpu.h_ntt;
        self.gpu.select += o.gpu.select;
    }
}

/// Runs `f`, storing its duration in seconds into `slot`.
pub(super) fn timed<T>(slot: &mut f64, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    *slot = start.elapsed().as_secs_f64();
    out
}
