//! The CPU backend: H by NTTs, MSMs by blst's Pippenger, bases chosen by the
//! density bitmaps exactly as bellperson's prover chooses them. Each vector is dropped once its
//! last MSM is done, and scalars the proof made itself (H, the selections) become the MSMs'
//! canonical form in their own buffers: after the NTTs a proof holds one MSM's scalars at a time
//! beside its witness (`engine/footprint.rs`: `cpu_scalars`).

use bellperson::groth16::Parameters;
use blstrs::Bls12;

use super::msm::{msm_g1, msm_g1_canonical, msm_g2_canonical, Canonical};
use super::ntt;
use super::proof::{select, ProofParts};
use super::timings::{timed, ProveTimings};
use crate::pce::{check_satisfied, evaluate, Abc, Pce};
use crate::witness::Witness;
use crate::Result;

/// The MSM results of a proof: from `abc` when the caller evaluated them, else from a, b, c
/// evaluated (and checked to satisfy the circuit) here, on the current rayon pool.
pub fn proof_parts(
    pce: &Pce,
    w: &Witness,
    abc: Option<Abc>,
    params: &Parameters<Bls12>,
    t: &mut ProveTimings,
) -> Result<ProofParts> {
    let h_coeffs = timed(&mut t.h, || -> Result<_> {
        let abc = match abc {
            Some(abc) => abc,
            None => {
                let abc = evaluate(pce, w)?;
                check_satisfied(&abc)?;
                abc
            }
        };
        let Abc { a, b, c, hold } = abc;
        let h = ntt::compute_h(a, b, c);
        drop(hold); // a, b, c are gone (H lives in what was a's buffer)
        h
    })?;
    let h = timed(&mut t.msm_h, || msm_g1_canonical(&params.h, &Canonical::new(h_coeffs)));

    let l = timed(&mut t.msm_l, || msm_g1(&params.l, &w.aux));

    let d = &pce.density;
    let ni = pce.num_inputs;
    let a_sum = timed(&mut t.msm_a, || {
        msm_g1(&params.a[..ni], &w.inputs)
            + msm_g1_canonical(&params.a[ni..], &Canonical::new(select(&d.a_aux, &w.aux)))
    });

    // One canonical form of B's selections serves both groups.
    let b_inputs = Canonical::new(select(&d.b_input, &w.inputs));
    let b_aux = Canonical::new(select(&d.b_aux, &w.aux));
    let nbi = b_inputs.len();
    let b_g1 = timed(&mut t.msm_b_g1, || {
        msm_g1_canonical(&params.b_g1[..nbi], &b_inputs) + msm_g1_canonical(&params.b_g1[nbi..], &b_aux)
    });
    let b_g2 = timed(&mut t.msm_b_g2, || {
        msm_g2_canonical(&params.b_g2[..nbi], &b_inputs) + msm_g2_canonical(&params.b_g2[nbi..], &b_aux)
    });
    Ok(ProofParts { a: a_sum, b_g1, b_g2, h, l })
}
