//! SnarkPack: Groth16 proofs of one circuit aggregated into one proof of logarithmic size, the
//! bytes bellperson's `aggregate_proofs` writes for the same proofs, SRS and transcript input
//! (versions 1 and 2), which filecoin-proofs' `verify_aggregate_seal_commit_proofs` checks.
//!
//! With `A`, `B`, `C` the proofs' points, `v = (h^αⁱ, h^βⁱ)` and `w = (g^α^(n+i), g^β^(n+i))`
//! the commitment keys and `r` a challenge:
//!   1. commit: `com_ab = (∏ e(Aᵢ, v₁ᵢ)·e(w₁ᵢ, Bᵢ), ∏ e(Aᵢ, v₂ᵢ)·e(w₂ᵢ, Bᵢ))`, `com_c` likewise
//!      over `C` with `v` alone;
//!   2. `r` from them and the caller's transcript input; `ip_ab = ∏ e(Aᵢ, Bᵢ^(rⁱ))`,
//!      `agg_c = Σ rⁱ·Cᵢ`;
//!   3. GIPA (TIPP for `A`, `B`; MIPP for `C`): halve the vectors and keys log₂ n times, each
//!      round committing to the cross terms and folding by a fresh challenge;
//!   4. KZG openings showing the final keys are the folded SRS keys, at a challenge `z`.

#[allow(unsafe_code)] // blst's multi-Miller loop over blstrs' points (the same layout)
mod ops;
#[cfg(feature = "porep")]
pub mod seal;
pub mod srs;
mod transcript;

use bellperson::groth16::Proof;
use blstrs::{Bls12, Compress, G1Affine, G1Projective, G2Affine, Gt, Scalar};
use ff::Field;
use group::{Curve, GroupEncoding};

use crate::groth16::msm::{msm_g1, msm_g2};
use crate::{Error, Result};
use ops::{fold, fold_scalars, pairing_product, powers, quotient, scale};
pub use srs::AggregationSrs;
use transcript::Transcript;

/// SnarkPack's transcript versions (filecoin-proofs' `SnarkPackV1`, `SnarkPackV2`). Version 2
/// binds the first GIPA round and the final opening challenge to more of the proof.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

/// A pair of commitments in `Gt` (under `v₁` and `v₂`).
type Com = (Gt, Gt);

/// The bytes an aggregate of `n` proofs takes (`n` a power of two ≥ 2).
pub fn aggregate_len(n: usize) -> usize {
    const GT: usize = 288;
    let rounds = n.trailing_zeros() as usize;
    // com_ab, com_c, ip_ab, agg_c; nproofs; per round comms_ab, comms_c (4 Gt each), z_ab (2 Gt),
    // z_c (2 G1); final A, B, C, v, w; the two openings.
    5 * GT + 48 + 4 + rounds * (10 * GT + 96) + (48 + 96 + 48 + 192 + 96) + (192 + 96)
}

/// Aggregates `proofs` (a power of two, at least 2, at most the SRS's `max_proofs`) with
/// `include` written into the transcript (filecoin-proofs: the hash of the sectors' seeds and
/// comm_rs). Returns the aggregate's bytes.
pub fn aggregate(srs: &AggregationSrs, include: &[u8], proofs: &[Proof<Bls12>], version: Version) -> Result<Vec<u8>> {
    let n = proofs.len();
    if n < 2 || !n.is_power_of_two() {
        return Err(Error::InvalidInput(format!("{n} proofs: SnarkPack aggregates a power of two, at least 2")));
    }
    if n > srs.max_proofs() {
        return Err(Error::InvalidInput(format!("{n} proofs: the SRS was loaded for at most {}", srs.max_proofs())));
    }
    let a: Vec<G1Affine> = proofs.iter().map(|p| p.a).collect();
    let b: Vec<G2Affine> = proofs.iter().map(|p| p.b).collect();
    let c: Vec<G1Affine> = proofs.iter().map(|p| p.c).collect();
    let v = (&srs.h_alpha[..n], &srs.h_beta[..n]);
    let w = (&srs.g_alpha[n..2 * n], &srs.g_beta[n..2 * n]);

    // 1. Commitments to A, B and to C.
    let (com_ab, com_c) = rayon::join(|| commit_ab(v, w, &a, &b), || commit_c(v, &c));
    let hcom = Transcript::new("hcom").write(&com_ab).write(&com_c).challenge();

    // 2. The random linear combination.
    let r = Transcript::new("random-r").write(&hcom).write(include).challenge();
    let r_pow = powers(&r, n);
    let r_inv = powers(&r.invert().unwrap(), n);
    // B^(rⁱ) and their product with A; the sum of C; the w key rescaled by r⁻ⁱ, so that
    // com_ab commits to B^(rⁱ) under it.
    let ((b_r, ip_ab), (agg_c, w_r)) = rayon::join(
        || {
            let b_r = scale(&b, &r_pow);
            let ip_ab = pairing_product(&[(&a, &b_r)]);
            (b_r, ip_ab)
        },
        || rayon::join(|| msm_g1(&c, &r_pow), || rayon::join(|| scale(w.0, &r_inv), || scale(w.1, &r_inv))),
    );
    drop(b);

    // 3. GIPA.
    let g =
        gipa(Folds { a, b: b_r, c, r: r_pow, v: (v.0.to_vec(), v.1.to_vec()), w: w_r }, &hcom, &ip_ab, &agg_c, version);

    // 4. KZG openings of the final keys at z.
    let z = match version {
        Version::V1 => Transcript::new("random-z").write(g.challenges.last().unwrap()),
        Version::V2 => Transcript::new("random-z").write(&g.extra),
    }
    .write(&g.v.0)
    .write(&g.v.1)
    .write(&g.w.0)
    .write(&g.w.1);
    let z = match version {
        Version::V1 => z,
        Version::V2 => z.write(&g.a).write(&g.b).write(&g.c),
    }
    .challenge();
    let (v_open, w_open) =
        rayon::join(|| open_v(srs, n, &g.challenges_inv, &z), || open_w(srs, n, &g.challenges, &r, &z));

    let mut out = Vec::with_capacity(aggregate_len(n));
    for gt in [com_ab.0, com_ab.1, com_c.0, com_c.1, ip_ab] {
        write_gt(&mut out, gt);
    }
    out.extend_from_slice(agg_c.to_affine().to_bytes().as_ref());
    out.extend_from_slice(&(n as u32).to_le_bytes());
    for (l, r) in g.rounds.iter().map(|x| &x.ab).chain(g.rounds.iter().map(|x| &x.c)) {
        for gt in [l.0, l.1, r.0, r.1] {
            write_gt(&mut out, gt);
        }
    }
    for x in &g.rounds {
        write_gt(&mut out, x.z_ab.0);
        write_gt(&mut out, x.z_ab.1);
    }
    for x in &g.rounds {
        out.extend_from_slice(x.z_c.0.to_affine().to_bytes().as_ref());
        out.extend_from_slice(x.z_c.1.to_affine().to_bytes().as_ref());
    }
    for p in [g.a.to_bytes().as_ref(), g.b.to_bytes().as_ref(), g.c.to_bytes().as_ref()] {
        out.extend_from_slice(p);
    }
    for p in [g.v.0, g.v.1] {
        out.extend_from_slice(p.to_bytes().as_ref());
    }
    for p in [g.w.0, g.w.1] {
        out.extend_from_slice(p.to_bytes().as_ref());
    }
    for p in [v_open.0, v_open.1] {
        out.extend_from_slice(p.to_bytes().as_ref());
    }
    for p in [w_open.0, w_open.1] {
        out.extend_from_slice(p.to_bytes().as_ref());
    }
    debug_assert_eq!(out.len(), aggregate_len(n));
    Ok(out)
}

fn write_gt(out: &mut Vec<u8>, gt: Gt) {
    // Writing into a Vec cannot fail.
    gt.write_compressed(out).expect("Gt into a Vec");
}

/// `(∏ e(aᵢ, v₁ᵢ)·e(w₁ᵢ, bᵢ), ∏ e(aᵢ, v₂ᵢ)·e(w₂ᵢ, bᵢ))`.
fn commit_ab(v: (&[G2Affine], &[G2Affine]), w: (&[G1Affine], &[G1Affine]), a: &[G1Affine], b: &[G2Affine]) -> Com {
    rayon::join(|| pairing_product(&[(a, v.0), (w.0, b)]), || pairing_product(&[(a, v.1), (w.1, b)]))
}

/// `(∏ e(cᵢ, v₁ᵢ), ∏ e(cᵢ, v₂ᵢ))`.
fn commit_c(v: (&[G2Affine], &[G2Affine]), c: &[G1Affine]) -> Com {
    rayon::join(|| pairing_product(&[(c, v.0)]), || pairing_product(&[(c, v.1)]))
}

/// What GIPA folds, all of one length.
struct Folds {
    a: Vec<G1Affine>,
    b: Vec<G2Affine>,
    c: Vec<G1Affine>,
    r: Vec<Scalar>,
    v: (Vec<G2Affine>, Vec<G2Affine>),
    w: (Vec<G1Affine>, Vec<G1Affine>),
}

impl Folds {
    /// Each vector and key folded in half: A, C and w by `x`, B, v and the powers of r by
    /// `x⁻¹` (all at once: the later rounds are too short to fill the pool one at a time).
    fn fold(&self, x: &Scalar, x_inv: &Scalar) -> Folds {
        let (((a, c), (b, r)), (v, w)) = rayon::join(
            || {
                rayon::join(
                    || rayon::join(|| fold(&self.a, x), || fold(&self.c, x)),
                    || rayon::join(|| fold(&self.b, x_inv), || fold_scalars(&self.r, x_inv)),
                )
            },
            || {
                rayon::join(
                    || rayon::join(|| fold(&self.v.0, x_inv), || fold(&self.v.1, x_inv)),
                    || rayon::join(|| fold(&self.w.0, x), || fold(&self.w.1, x)),
                )
            },
        );
        Folds { a, b, c, r, v, w }
    }
}

/// One GIPA round's cross commitments (left, right).
struct Round {
    ab: (Com, Com),
    c: (Com, Com),
    z_ab: (Gt, Gt),
    z_c: (G1Projective, G1Projective),
}

impl Round {
    /// The round's terms into a transcript, as bellperson writes them (a tuple is its elements
    /// one after the other): z_ab, z_c, then the left and right commitments to A, B and to C.
    fn write_to(&self, t: Transcript) -> Transcript {
        t.write(&self.z_ab).write(&self.z_c).write(&self.ab).write(&self.c)
    }
}

/// GIPA's transcript and end: its rounds, challenges, the final (length-one) vectors and keys,
/// and the challenge linking them to the openings (version 2).
struct Gipa {
    rounds: Vec<Round>,
    challenges: Vec<Scalar>,
    challenges_inv: Vec<Scalar>,
    a: G1Affine,
    b: G2Affine,
    c: G1Affine,
    v: (G2Affine, G2Affine),
    w: (G1Affine, G1Affine),
    extra: Scalar,
}

fn gipa(mut f: Folds, hcom: &Scalar, ip_ab: &Gt, agg_c: &G1Projective, version: Version) -> Gipa {
    let mut c_inv = Transcript::new("gipa-0").write(hcom).write(ip_ab).write(agg_c).write(&f.r[1]).challenge();
    let (mut rounds, mut challenges, mut challenges_inv) = (Vec::new(), Vec::new(), Vec::new());
    while f.a.len() > 1 {
        let h = f.a.len() / 2;
        let (a_l, a_r) = f.a.split_at(h);
        let (b_l, b_r) = f.b.split_at(h);
        let (c_l, c_r) = f.c.split_at(h);
        let (r_l, r_r) = f.r.split_at(h);
        let v_l = (&f.v.0[..h], &f.v.1[..h]);
        let v_r = (&f.v.0[h..], &f.v.1[h..]);
        let w_l = (&f.w.0[..h], &f.w.1[..h]);
        let w_r = (&f.w.0[h..], &f.w.1[h..]);
        let ((ab, z_ab), (c, z_c)) = rayon::join(
            || {
                rayon::join(
                    || rayon::join(|| commit_ab(v_l, w_r, a_r, b_l), || commit_ab(v_r, w_l, a_l, b_r)),
                    || rayon::join(|| pairing_product(&[(a_r, b_l)]), || pairing_product(&[(a_l, b_r)])),
                )
            },
            || {
                rayon::join(
                    || rayon::join(|| commit_c(v_l, c_r), || commit_c(v_r, c_l)),
                    || rayon::join(|| msm_g1(c_r, r_l), || msm_g1(c_l, r_r)),
                )
            },
        );
        let round = Round { ab, c, z_ab, z_c };
        if !rounds.is_empty() || version == Version::V2 {
            c_inv = round.write_to(Transcript::new(&format!("gipa-{}", rounds.len())).write(&c_inv)).challenge();
        }
        let x = c_inv.invert().unwrap();
        f = f.fold(&x, &c_inv);
        rounds.push(round);
        challenges.push(x);
        challenges_inv.push(c_inv);
    }
    let last = rounds.last().expect("at least one round for two proofs");
    let extra = Transcript::new("gipa-extra-link").write(challenges.last().unwrap());
    let extra = last.write_to(extra.write(&f.a[0]).write(&f.b[0]).write(&f.c[0])).challenge();
    Gipa {
        a: f.a[0],
        b: f.b[0],
        c: f.c[0],
        v: (f.v.0[0], f.v.1[0]),
        w: (f.w.0[0], f.w.1[0]),
        rounds,
        challenges,
        challenges_inv,
        extra,
    }
}

/// `∏ₖ (1 + xₖ·X^(2ᵏ)·shift^(2ᵏ))` for the challenges `xs` of the last round first: the
/// polynomial whose coefficients fold a key the way GIPA folded it, as coefficients (lowest
/// first).
fn fold_poly(xs_last_first: &[Scalar], shift: &Scalar) -> Vec<Scalar> {
    let mut coeffs = vec![Scalar::ONE];
    let mut s = *shift;
    for (k, x) in xs_last_first.iter().enumerate() {
        if k > 0 {
            s = s.square();
        }
        let step = *x * s;
        let high: Vec<Scalar> = coeffs.iter().map(|c| *c * step).collect();
        coeffs.extend(high);
    }
    coeffs
}

/// The opening of the final v key at `z`: the quotient of its folding polynomial (by the
/// inverse challenges) by `X − z`, committed under `h^αⁱ` and `h^βⁱ`.
fn open_v(srs: &AggregationSrs, n: usize, challenges_inv: &[Scalar], z: &Scalar) -> (G2Affine, G2Affine) {
    let xs: Vec<Scalar> = challenges_inv.iter().rev().copied().collect();
    let f = fold_poly(&xs, &Scalar::ONE);
    debug_assert_eq!(f.len(), n);
    let q = quotient(&f, z);
    let (al, be) = rayon::join(|| msm_g2(&srs.h_alpha[..q.len()], &q), || msm_g2(&srs.h_beta[..q.len()], &q));
    (al.to_affine(), be.to_affine())
}

/// The opening of the final w key at `z`: its folding polynomial (by the challenges, shifted by
/// `r⁻¹`) times `Xⁿ` (w starts at the SRS's n-th power), divided by `X − z`, committed under
/// `g^αⁱ` and `g^βⁱ`.
fn open_w(srs: &AggregationSrs, n: usize, challenges: &[Scalar], r: &Scalar, z: &Scalar) -> (G1Affine, G1Affine) {
    let xs: Vec<Scalar> = challenges.iter().rev().copied().collect();
    let mut f = vec![Scalar::ZERO; n];
    f.extend(fold_poly(&xs, &r.invert().unwrap()));
    let q = quotient(&f, z);
    let (al, be) = rayon::join(|| msm_g1(&srs.g_alpha[..q.len()], &q), || msm_g1(&srs.g_beta[..q.len()], &q));
    (al.to_affine(), be.to_affine())
}

#[cfg(test)]
mod tests;
