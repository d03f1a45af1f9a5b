//! The CUDA backend: a, b, c by sparse products on the device, H by sppark's NTTs and every
//! MSM over the aux variables and H (B in G2 included) on the GPU, against SRS queries kept resident on
//! the device across proofs (one upload per device and parameter set); the
//! public inputs' few terms on the host. When not every query fits beside a
//! proof's working set (an 80 GB card under a dense 2^27 SRS), those holding the most bytes
//! stay resident and the others' bases are copied up, a piece at a time, for
//! each MSM (and a warning is logged). Randomisation and assembly stay on the
//! host (constant time).

mod device_room;
#[cfg(feature = "cuda")]
mod pieces;
#[cfg(feature = "cuda")]
mod resident;
#[cfg(all(test, feature = "cuda"))]
mod tests;
#[cfg(feature = "cuda")]
mod working_set;

#[cfg(feature = "cuda")]
pub use resident::evict_unloaded;
#[cfg(feature = "cuda")]
pub use working_set::working_set;

#[cfg(feature = "cuda")]
use std::sync::Arc;

#[cfg(feature = "cuda")]
use bellperson::groth16::Parameters;
#[cfg(feature = "cuda")]
use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective};

#[cfg(feature = "cuda")]
use super::msm::{msm_g1, msm_g2};
#[cfg(feature = "cuda")]
use super::proof::{select, ProofParts};
#[cfg(feature = "cuda")]
use super::timings::{timed, ProveTimings};
#[cfg(feature = "cuda")]
use crate::gpu::{self, Csr, DeviceMatrices, DeviceScalars, ResidentG1, ResidentG2, Scalars, SharingPolicy, Urgency};
#[cfg(feature = "cuda")]
use crate::pce::{CsrMatrix, Pce};
#[cfg(feature = "cuda")]
use crate::witness::Witness;
#[cfg(feature = "cuda")]
use crate::{Error, Result};
#[cfg(feature = "cuda")]
use pieces::{in_pieces, piece_of, window_bits};
#[cfg(feature = "cuda")]
use resident::{placement, DeviceSrs};
#[cfg(feature = "cuda")]
use working_set::{proof_room, STREAM_PIECE};

/// Makes `device` ready for proofs of `pce` with `p` now, so that the first proof does not
/// pay for it: the queries of `p` uploaded (those that fit; the first proof would hold the
/// upload lock other proofs' placements wait on), the PCE's matrices uploaded, and the
/// device's pool grown by a proof's room ([`proof_room`]; within the room proofs reserve
/// from).
#[cfg(feature = "cuda")]
pub fn prepare(device: u32, pce: &Pce, p: &Parameters<Bls12>, policy: &SharingPolicy) -> Result<()> {
    let placed = placement(device, pce, p, policy)?;
    let room = proof_room(pce, placed.streams(), policy);
    device_matrices(device, pce)?;
    let _room = device_room::reserve(device as usize, room, Urgency::Throughput, policy.critical_room)?;
    Ok(gpu::warm_pool(device as usize, room)?)
}

/// `Σ scalars · bases[range]` on the device, the bases `resident` there or copied up from
/// `host` for this call; `range` is a piece of an MSM of `whole` points, whose window it takes.
#[cfg(feature = "cuda")]
fn device_msm_g1(
    policy: &SharingPolicy,
    device: u32,
    resident: Option<&ResidentG1>,
    host: &[G1Affine],
    range: std::ops::Range<usize>,
    s: Scalars,
    whole: usize,
) -> Result<G1Projective> {
    Ok(match resident {
        Some(bases) => bases.msm_with(range, s, whole, window_bits(whole, policy), policy.max_yield)?,
        None => {
            gpu::msm_g1_host(device as usize, &host[range], s, whole, window_bits(whole, policy), policy.max_yield)?
        }
    })
}

/// [`device_msm_g1`] for B in G2.
#[cfg(feature = "cuda")]
fn device_msm_g2(
    policy: &SharingPolicy,
    device: u32,
    resident: Option<&ResidentG2>,
    host: &[G2Affine],
    range: std::ops::Range<usize>,
    s: Scalars,
    whole: usize,
) -> Result<G2Projective> {
    Ok(match resident {
        Some(bases) => bases.msm_with(range, s, whole, window_bits(whole, policy), policy.max_yield)?,
        None => {
            gpu::msm_g2_host(device as usize, &host[range], s, whole, window_bits(whole, policy), policy.max_yield)?
        }
    })
}

/// A, B and C of `pce` on `device`: uploaded by its first proof there, kept with the PCE.
#[cfg(feature = "cuda")]
fn device_matrices(device: u32, pce: &Pce) -> Result<Arc<DeviceMatrices>> {
    pce.device_copies.get_or_make(device, || {
        fn csr(m: &CsrMatrix) -> Csr<'_> {
            Csr { row_ptr: &m.row_ptr, words: &m.words }
        }
        let cols = pce.num_inputs + pce.num_aux;
        Ok(DeviceMatrices::new(
            device as usize,
            [csr(&pce.a), csr(&pce.b), csr(&pce.c)],
            &pce.dict,
            pce.num_inputs,
            cols,
        )?)
    })
}

/// The MSM results of a proof on CUDA device `device`, byte-identical to the CPU backend's.
/// The proof waits for room for its working set on the device first ([`device_room`]); the
/// engine's `policy` says how it shares the device with critical stages and which windows its
/// MSMs take.
///
/// Everything large stays on the device: the witness goes up once, a, b, c are evaluated
/// there from the PCE's matrices (resident with the PCE) and checked to satisfy every
/// constraint, H goes from the NTTs straight into its MSM, and aux serves L and, selected by
/// the densities there, A and B. The inputs (a handful: a verifier pays for each one) are
/// selected and multiplied on the host, since a GPU MSM costs milliseconds whatever its size
/// (launches, then its final sums on the host) and three of them per proof held the device
/// for nothing. A throughput stage lets critical stages on the device go first before each
/// step ([`gpu::Turn`]: the witness upload and SpMV, the NTTs, each piece of each MSM:
/// [`piece_of`]). A critical stage's device work runs on the device's express lane.
#[cfg(feature = "cuda")]
pub fn proof_parts(
    device: u32,
    urgency: Urgency,
    policy: &SharingPolicy,
    pce: &Pce,
    w: &Witness,
    params: &Parameters<Bls12>,
    t: &mut ProveTimings,
) -> Result<ProofParts> {
    let turn = gpu::Turn::begin(device as usize, urgency, policy.max_yield);
    // A streamed query's MSM runs in pieces of at most STREAM_PIECE points whatever the lane.
    let piece = |n, resident: bool| {
        let turns = if urgency == Urgency::Throughput { piece_of(n, policy) } else { usize::MAX };
        if resident {
            turns
        } else {
            turns.min(STREAM_PIECE)
        }
    };
    turn.step();
    let placed = placement(device, pce, params, policy)?;
    let matrices = device_matrices(device, pce)?;
    let id = device as usize;
    let _room = device_room::reserve(id, proof_room(pce, placed.streams(), policy), urgency, policy.critical_room)?;
    let lg = pce.domain_size().trailing_zeros();
    let steps = &mut t.gpu;
    let (h_coeffs, aux) = timed(&mut t.h, || -> Result<_> {
        let (inputs, aux) = timed(&mut steps.witness_upload, || -> Result<_> {
            Ok((DeviceScalars::upload(id, urgency, &w.inputs)?, DeviceScalars::upload(id, urgency, &w.aux)?))
        })?;
        let (abc, unsatisfied) = timed(&mut steps.spmv, || matrices.eval(&inputs, &aux, lg))?;
        if let Some(constraint) = unsatisfied {
            return Err(Error::Unsatisfied { constraint });
        }
        turn.step();
        let z_inv = super::ntt::z_inv_on_coset(lg);
        let h = timed(&mut steps.h_ntt, || gpu::compute_h(id, abc, lg, z_inv))?;
        Ok((h, aux))
    })?;
    let m1 = h_coeffs.len();
    let g1 = |query: fn(&DeviceSrs) -> &Option<ResidentG1>,
              host: &[G1Affine],
              range: std::ops::Range<usize>,
              s: Scalars<'_>| {
        let resident = query(&placed).as_ref();
        in_pieces(&turn, policy, piece(range.len(), resident.is_some()), range, s, |r, s, whole| {
            device_msm_g1(policy, device, resident, host, r, s, whole)
        })
    };
    let h = timed(&mut t.msm_h, || g1(|d| &d.h, &params.h, 0..m1, (&h_coeffs).into()))?;
    drop(h_coeffs);

    let na = w.aux.len();
    let l = timed(&mut t.msm_l, || g1(|d| &d.l, &params.l, 0..na, (&aux).into()))?;

    let d = &pce.density;
    let ni = pce.num_inputs;
    let (mut select_a, mut select_b) = (0.0, 0.0);
    let a = timed(&mut t.msm_a, || -> Result<G1Projective> {
        turn.step();
        let a_aux = timed(&mut select_a, || aux.select(&d.a_aux.words))?;
        Ok(msm_g1(&params.a[..ni], &w.inputs) + g1(|d| &d.a, &params.a, ni..ni + a_aux.len(), (&a_aux).into())?)
    })?;
    let b_inputs = select(&d.b_input, &w.inputs);
    let nbi = b_inputs.len();
    let (b_aux, b_g1) = timed(&mut t.msm_b_g1, || -> Result<_> {
        turn.step();
        let b_aux = timed(&mut select_b, || aux.select(&d.b_aux.words))?;
        let nb = nbi + b_aux.len();
        let b_g1 = msm_g1(&params.b_g1[..nbi], &b_inputs) + g1(|d| &d.b_g1, &params.b_g1, nbi..nb, (&b_aux).into())?;
        Ok((b_aux, b_g1))
    })?;
    t.gpu.select = select_a + select_b;
    drop(aux);
    let nb = nbi + b_aux.len();
    let b_g2 = timed(&mut t.msm_b_g2, || -> Result<G2Projective> {
        let resident = placed.b_g2.as_ref();
        let device_part =
            in_pieces(&turn, policy, piece(nb - nbi, resident.is_some()), nbi..nb, (&b_aux).into(), |r, s, whole| {
                device_msm_g2(policy, device, resident, &params.b_g2, r, s, whole)
            })?;
        Ok(msm_g2(&params.b_g2[..nbi], &b_inputs) + device_part)
    })?;
    drop(b_aux);
    Ok(ProofParts { a, b_g1, b_g2, h, l })
}
