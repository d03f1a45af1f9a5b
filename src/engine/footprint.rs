//! What one in-flight proof costs in host memory, from its PCE's dimensions alone: what the
//! budget reserves, and what the sizing formula (`predicted_peak`) adds up.

use crate::groth16::Backend;
use crate::pce::Pce;

/// Host bytes one in-flight proof holds at its peak, from the PCE's exact
/// dimensions. Both backends hold the witness (`32·(inputs + aux)`, allocated
/// once at its final size) and a, b, c. The CPU backend pads a, b, c to the
/// domain in place for its NTTs and holds the domain's twiddle tables
/// (`3·32·m + 32·m`, the peak; the later MSM scalar copies are smaller). The
/// CUDA backend keeps them at `n` rows until they are on the device (`3·32·n`);
/// H, the aux upload and the density selections live on the device, and the
/// pinned staging the uploads go through is per device, not per proof.
pub fn footprint(pce: &Pce, backend: Backend) -> u64 {
    let witness = 32 * (pce.num_inputs + pce.num_aux) as u64;
    let (n, m) = (pce.num_constraints() as u64, pce.domain_size() as u64);
    match backend {
        Backend::Cuda(_) => witness + 96 * n,
        Backend::Cpu | Backend::Auto => witness + 128 * m,
    }
}

/// The part of [`footprint`] that is a, b and c: the proof's peak stage,
/// reserved from the budget just before SpMV and given back the moment the
/// backend frees them (after the upload on a GPU, after the NTTs on the CPU);
/// the rest covers the witness (and on the CPU H's coefficients).
pub(super) fn abc_part(pce: &Pce, backend: Backend) -> u64 {
    match backend {
        Backend::Cuda(_) => 96 * pce.num_constraints() as u64,
        Backend::Cpu | Backend::Auto => 96 * pce.domain_size() as u64,
    }
}

/// Proofs per device that may hold a, b, c at once: one uploading (or in the
/// CPU's NTTs) and one ready for the next free worker. More would only queue
/// for the device holding memory; SpMV is short beside the backend stage, so
/// two keep every worker fed.
pub const ABC_HOLDERS_PER_DEVICE: usize = 2;

/// Predicted peak RSS for `j` proofs of `pce` in flight on `backend`: what is resident once the
/// engine is warm (`static_bytes`: runtime, GPU driver, PCE, SRS — measured after a first proof,
/// or summed from the accounting), plus `j` witnesses (the footprint without a, b, c), plus
/// a, b, c for as many proofs as may hold them at once (`abc_holders`).
pub fn predicted_peak(static_bytes: u64, pce: &Pce, backend: Backend, j: usize, abc_holders: usize) -> u64 {
    let abc = abc_part(pce, backend);
    let rest = footprint(pce, backend) - abc;
    // Saturating: `j` comes from the caller, unchecked.
    static_bytes
        .saturating_add((j as u64).saturating_mul(rest))
        .saturating_add((j.min(abc_holders) as u64).saturating_mul(abc))
}
