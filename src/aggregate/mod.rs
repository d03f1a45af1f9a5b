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
use rayon::prelude::*;

use crate::groth16::msm::{msm_g1, msm_g2};
use crate::{Error, Result};
use ops::{fold, fold_scalars, pairing_products, powers, quotient, scale, Pairs};
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
    let mut f = Folds {
        a: proofs.iter().map(|p| p.a).collect(),
        ar: Vec::new(),
        b: proofs.iter().map(|p| p.b).collect(),
        c: proofs.iter().map(|p| p.c).collect(),
        r: Vec::new(),
        v: (srs.h_alpha[..n].to_vec(), srs.h_beta[..n].to_vec()),
        w: (srs.g_alpha[n..2 * n].to_vec(), srs.g_beta[n..2 * n].to_vec()),
    };

    // 1. Commitments to A, B and to C, with the first GIPA round's pairings that do not depend
    //    on r (its v and w parts, over the same keys and points).
    let mut first = pairing_products(&[commit_pairs(&f), vw_pairs(&f)].concat(), FIRST_SLOTS);
    let com_ab = (first[COM_AB_T], first[COM_AB_U]);
    let com_c = (first[COM_C_T], first[COM_C_U]);
    let hcom = Transcript::new("hcom").write(&com_ab).write(&com_c).challenge();

    // 2. The random linear combination: ip_ab = ∏ e(Aᵢ, Bᵢ^(rⁱ)) = ∏ e(Aᵢ^(rⁱ), Bᵢ), the sum
    //    of C, and the first round's z terms.
    let r = Transcript::new("random-r").write(&hcom).write(include).challenge();
    f.r = powers(&r, n);
    f.ar = scale(&f.a, &f.r);
    let (z_pairings, (agg_c, z_c)) = rayon::join(
        || pairing_products(&[z_pairs(&f), ip_pairs(&f)].concat(), FIRST_SLOTS),
        || rayon::join(|| msm_g1(&f.c, &f.r), || z_c(&f)),
    );
    for (k, z) in z_pairings.into_iter().enumerate() {
        first[k] += z;
    }
    let ip_ab = first[IP_AB];
    let first = Round::new(&first, n / 2, &r, z_c);

    // 3. GIPA.
    let g = gipa(f, first, &hcom, &ip_ab, &agg_c, &r, version);

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

/// What GIPA folds, all of one length. bellperson folds `B^(rⁱ)` and `w^(r⁻ⁱ)`; here `B` and
/// `w` stay unscaled (folded by challenges times a power of r, so that `rⁱ·bᵢ` and `r⁻ⁱ·wᵢ`
/// remain bellperson's vectors, equal to them at the end where i = 0), and `A^(rⁱ)` is folded
/// beside `A`: a product `∏ e(r⁻ⁱ·wᵢ, rʲ·bⱼ)` over one half against the other is then
/// `(∏ e(wᵢ, bⱼ))^(r^(∓h))`, one exponentiation in `Gt` instead of a G2 scaling per point.
struct Folds {
    a: Vec<G1Affine>,
    /// `rⁱ·aᵢ`
    ar: Vec<G1Affine>,
    b: Vec<G2Affine>,
    c: Vec<G1Affine>,
    /// The powers of r, folded as bellperson folds them.
    r: Vec<Scalar>,
    v: (Vec<G2Affine>, Vec<G2Affine>),
    w: (Vec<G1Affine>, Vec<G1Affine>),
}

impl Folds {
    /// Each vector and key folded in half by the challenge `x` (bellperson: A, C and w by `x`;
    /// B, v and the powers of r by `x⁻¹`), with `up = r^h` for the half `h` (all at once: the
    /// later rounds are too short to fill the pool one at a time).
    fn fold(&self, x: &Scalar, x_inv: &Scalar, up: &Scalar) -> Folds {
        let x_down = *x * up.invert().unwrap();
        let x_inv_up = *x_inv * up;
        let (((a, ar), (c, b)), ((r, v), w)) = rayon::join(
            || {
                rayon::join(
                    || rayon::join(|| fold(&self.a, x), || fold(&self.ar, &x_down)),
                    || rayon::join(|| fold(&self.c, x), || fold(&self.b, &x_inv_up)),
                )
            },
            || {
                rayon::join(
                    || {
                        rayon::join(
                            || fold_scalars(&self.r, x_inv),
                            || rayon::join(|| fold(&self.v.0, x_inv), || fold(&self.v.1, x_inv)),
                        )
                    },
                    || rayon::join(|| fold(&self.w.0, &x_down), || fold(&self.w.1, &x_down)),
                )
            },
        );
        Folds { a, ar, b, c, r, v, w }
    }

    fn half(&self) -> usize {
        self.a.len() / 2
    }
}

// The pairing products of a round, by slot: the cross commitments' v parts (left t, u, right
// t, u), C's (likewise), their w parts before r's powers, and the z_ab terms; then, in the first
// round only, the commitments and ip_ab.
const AB_L: [usize; 2] = [0, 1];
const AB_R: [usize; 2] = [2, 3];
const C_L: [usize; 2] = [4, 5];
const C_R: [usize; 2] = [6, 7];
const W_L: [usize; 2] = [8, 9];
const W_R: [usize; 2] = [10, 11];
const Z_L: usize = 12;
const Z_R: usize = 13;
const ROUND_SLOTS: usize = 14;
const COM_AB_T: usize = 14;
const COM_AB_U: usize = 15;
const COM_C_T: usize = 16;
const COM_C_U: usize = 17;
const IP_AB: usize = 18;
const FIRST_SLOTS: usize = 19;

/// The commitments `com_ab = (∏ e(aᵢ, v₁ᵢ)·e(w₁ᵢ, bᵢ), ∏ e(aᵢ, v₂ᵢ)·e(w₂ᵢ, bᵢ))` and `com_c`
/// likewise over `c` with `v` alone, over the halves the first round pairs (sharing their lines).
fn commit_pairs(f: &Folds) -> Vec<Pairs<'_>> {
    let h = f.half();
    let mut pairs = Vec::new();
    for (lo, hi) in [(0, h), (h, 2 * h)] {
        let (a, b, c) = (&f.a[lo..hi], &f.b[lo..hi], &f.c[lo..hi]);
        for (v, w, ab, cc) in [(&f.v.0, &f.w.0, COM_AB_T, COM_C_T), (&f.v.1, &f.w.1, COM_AB_U, COM_C_U)] {
            pairs.extend([(a, &v[lo..hi], ab), (&w[lo..hi], b, ab), (c, &v[lo..hi], cc)]);
        }
    }
    pairs
}

/// A round's cross commitments without r: `∏ e(a_r, v_l)` (left) and `∏ e(a_l, v_r)` (right)
/// under each v key, C's likewise, and the w parts `∏ e(w_r, b_l)`, `∏ e(w_l, b_r)`.
fn vw_pairs(f: &Folds) -> Vec<Pairs<'_>> {
    let h = f.half();
    let (a_l, a_r) = f.a.split_at(h);
    let (b_l, b_r) = f.b.split_at(h);
    let (c_l, c_r) = f.c.split_at(h);
    let mut pairs = Vec::new();
    for (k, v, w) in [(0, &f.v.0, &f.w.0), (1, &f.v.1, &f.w.1)] {
        let (v_l, v_r) = v.split_at(h);
        let (w_l, w_r) = w.split_at(h);
        pairs.extend([
            (a_r, v_l, AB_L[k]),
            (a_l, v_r, AB_R[k]),
            (c_r, v_l, C_L[k]),
            (c_l, v_r, C_R[k]),
            (w_r, b_l, W_L[k]),
            (w_l, b_r, W_R[k]),
        ]);
    }
    pairs
}

/// A round's z_ab terms without r: `∏ e(rⁱ·a_r, b_l)` and `∏ e(rⁱ·a_l, b_r)`.
fn z_pairs(f: &Folds) -> Vec<Pairs<'_>> {
    let h = f.half();
    vec![(&f.ar[h..], &f.b[..h], Z_L), (&f.ar[..h], &f.b[h..], Z_R)]
}

/// `ip_ab = ∏ e(rⁱ·aᵢ, bᵢ)`, over the halves the first round pairs.
fn ip_pairs(f: &Folds) -> Vec<Pairs<'_>> {
    let h = f.half();
    vec![(&f.ar[..h], &f.b[..h], IP_AB), (&f.ar[h..], &f.b[h..], IP_AB)]
}

/// A round's MIPP terms for C: `Σ rᵢ·c_r` and `Σ rᵢ·c_l` with the left and right powers.
fn z_c(f: &Folds) -> (G1Projective, G1Projective) {
    let h = f.half();
    rayon::join(|| msm_g1(&f.c[h..], &f.r[..h]), || msm_g1(&f.c[..h], &f.r[h..]))
}

/// One GIPA round's cross commitments (left, right).
struct Round {
    ab: (Com, Com),
    c: (Com, Com),
    z_ab: (Gt, Gt),
    z_c: (G1Projective, G1Projective),
}

impl Round {
    /// The round over halves of `h` from its pairing products by slot: the w parts and z terms
    /// raised to `r^(−h)` (left) and `r^h` (right), as bellperson's scaled vectors give them.
    fn new(p: &[Gt], h: usize, r: &Scalar, z_c: (G1Projective, G1Projective)) -> Round {
        let up = r.pow_vartime([h as u64]);
        let down = up.invert().unwrap();
        let raised: Vec<Gt> = [(W_L[0], down), (W_L[1], down), (W_R[0], up), (W_R[1], up), (Z_L, down), (Z_R, up)]
            .par_iter()
            .map(|(k, e)| p[*k] * e)
            .collect();
        Round {
            ab: ((p[AB_L[0]] + raised[0], p[AB_L[1]] + raised[1]), (p[AB_R[0]] + raised[2], p[AB_R[1]] + raised[3])),
            c: ((p[C_L[0]], p[C_L[1]]), (p[C_R[0]], p[C_R[1]])),
            z_ab: (raised[4], raised[5]),
            z_c,
        }
    }

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

/// GIPA from its first round (computed with the commitments).
fn gipa(
    mut f: Folds,
    first: Round,
    hcom: &Scalar,
    ip_ab: &Gt,
    agg_c: &G1Projective,
    r: &Scalar,
    version: Version,
) -> Gipa {
    let mut c_inv = Transcript::new("gipa-0").write(hcom).write(ip_ab).write(agg_c).write(&f.r[1]).challenge();
    let (mut rounds, mut challenges, mut challenges_inv) = (Vec::new(), Vec::new(), Vec::new());
    let mut round = first;
    loop {
        if !rounds.is_empty() || version == Version::V2 {
            c_inv = round.write_to(Transcript::new(&format!("gipa-{}", rounds.len())).write(&c_inv)).challenge();
        }
        let x = c_inv.invert().unwrap();
        f = f.fold(&x, &c_inv, &r.pow_vartime([f.half() as u64]));
        rounds.push(round);
        challenges.push(x);
        challenges_inv.push(c_inv);
        if f.a.len() == 1 {
            break;
        }
        let (p, z_c) = rayon::join(|| pairing_products(&[vw_pairs(&f), z_pairs(&f)].concat(), ROUND_SLOTS), || z_c(&f));
        round = Round::new(&p, f.half(), r, z_c);
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
