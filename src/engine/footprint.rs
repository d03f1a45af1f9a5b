//! What one in-flight proof costs in host memory, from its PCE's dimensions alone: what the
//! budget reserves, and what the sizing formula (`predicted_peak`) adds up.

use crate::groth16::Backend;
use crate::pce::Pce;

/// Host bytes one in-flight proof holds at its peak, from the PCE's exact
/// dimensions. Both backends hold the witness (`32·(inputs + aux)`, allocated
/// once at its final size), and while it is made from a witness program, its
/// byte view (`inputs + aux`; the gadgets' smaller transient allocations fit
/// in that byte where a circuit has no program). The CPU backend also holds a, b, c, padded to the
/// domain in place for its NTTs (`abc_part`), and its other scalars (`cpu_scalars`). The
/// CUDA backend holds nothing more on the host: a, b, c, H, the aux and the
/// density selections live on the device, and the pinned staging the witness
/// goes up through is per device, not per proof.
pub fn footprint(pce: &Pce, backend: Backend) -> u64 {
    let witness = 33 * (pce.num_inputs + pce.num_aux) as u64;
    witness + abc_part(pce, backend) + if backend.takes_host_abc() { cpu_scalars(pce) } else { 0 }
}

/// The CPU backend's scalars beside its witness other than a, b, c, at their largest: the
/// domain's twiddle tables during the NTTs (`32·m`), then one MSM's scalars at a time (each
/// in the form blst reads, made in place where the proof made them: `groth16/cpu.rs`): H's
/// `m − 1` coefficients, L's copy of aux, A's selection of aux, B's two selections (held for
/// both groups).
pub(super) fn cpu_scalars(pce: &Pce) -> u64 {
    let d = &pce.density;
    let b = d.b_input.ones + d.b_aux.ones;
    32 * pce.domain_size().max(pce.num_aux).max(b) as u64
}

/// The part of [`footprint`] that is a, b and c on the host (the CPU backend's; none on a
/// GPU): the proof's peak stage, reserved from the budget just before SpMV and given back the
/// moment the backend frees them (after the NTTs); the rest covers the witness and the
/// backend's other scalars ([`cpu_scalars`]).
pub(super) fn abc_part(pce: &Pce, backend: Backend) -> u64 {
    if backend.takes_host_abc() {
        96 * pce.domain_size() as u64
    } else {
        0
    }
}

/// Proofs per device that may hold a, b, c at once on the host (the CPU backend): one in the
/// NTTs and one ready for the next free worker; SpMV is short beside the backend stage, so two
/// keep every worker fed. On a GPU, as many partitions per device make their witness ahead of
/// its workers (see `Engine::partitions_at_once`).
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
