//! filecoin-proofs' `aggregate_seal_commit_proofs`: the C2 outputs of sectors sealed with one
//! registered seal proof, every partition's Groth16 proof of each, aggregated into one SnarkPack
//! proof (padded to a power of two by repeating the last proof), with the transcript bound to
//! the sectors' comm_r (and, but for NonInteractivePoRep, their seeds).

use bellperson::groth16::Proof;
use blstrs::{Bls12, G1Affine, G2Affine};
use filecoin_proofs_api::RegisteredSealProof;
use group::prime::PrimeCurveAffine;
use group::GroupEncoding;
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::srs::{decode_point, MAX_PROOFS};
use super::{aggregate, AggregationSrs, Version};
use crate::circuits::porep::{PorepSize, SealVariant};
use crate::groth16::PROOF_BYTES;
use crate::{Error, Result};

/// The most NonInteractivePoRep seal proofs one aggregate may hold (FIP-0092).
pub const MAX_NI_POREP_SEALS: usize = 65;

/// One sector's part of an aggregate: its C2 output (every partition's proof) and the
/// commitments its verifier checks it against.
#[derive(Debug, Clone, Copy)]
pub struct SealProof<'a> {
    pub comm_r: [u8; 32],
    pub seed: [u8; 32],
    pub proof: &'a [u8],
}

/// The registered seal proof spelled as filecoin-proofs-api's JSON spells it (e.g.
/// `StackedDrg32GiBV1_2_Feat_NonInteractivePoRep`, as in a C1 output).
pub fn registered_proof(name: &str) -> Result<RegisteredSealProof> {
    serde_json::from_value(serde_json::Value::String(name.to_string()))
        .map_err(|_| Error::InvalidInput(format!("{name:?} is not a registered seal proof")))
}

/// How many Groth16 proofs an aggregate of `seals` C2 outputs of `rp` holds once padded; the
/// one check of how many seals an aggregate may hold: at least one, at most
/// [`MAX_NI_POREP_SEALS`] of NonInteractivePoRep (FIP-0092), and no more proofs than
/// [`MAX_PROOFS`]. `rp` must be a seal proof this build proves.
pub fn padded_count(rp: RegisteredSealProof, seals: usize) -> Result<usize> {
    let (_, variant) = PorepSize::from_registered_proof(rp)?;
    let partitions = usize::from(rp.partitions());
    let most = match variant {
        SealVariant::NonInteractive => MAX_NI_POREP_SEALS.min(MAX_PROOFS / partitions),
        _ => MAX_PROOFS / partitions,
    };
    if seals == 0 || seals > most {
        return Err(Error::InvalidInput(format!("{seals} seals of {rp:?}: an aggregate holds 1 to {most}")));
    }
    Ok((partitions * seals).max(2).next_power_of_two())
}

/// The aggregate of `seals`' proofs, as `aggregate_seal_commit_proofs(rp, version, comm_rs,
/// seeds, outputs)` makes it; `srs` must hold [`padded_count`] proofs.
pub fn aggregate_seals(
    srs: &AggregationSrs,
    rp: RegisteredSealProof,
    seals: &[SealProof<'_>],
    version: Version,
) -> Result<Vec<u8>> {
    let n = padded_count(rp, seals.len())?;
    let (_, variant) = PorepSize::from_registered_proof(rp)?;
    let partitions = usize::from(rp.partitions());
    for (i, s) in seals.iter().enumerate() {
        if s.proof.len() != partitions * PROOF_BYTES {
            return Err(Error::InvalidInput(format!(
                "seal proof {i}: {} bytes, where {rp:?} has {partitions} partitions of {PROOF_BYTES}",
                s.proof.len()
            )));
        }
    }
    // Every partition's points decoded and checked on every core.
    let mut proofs = seals
        .par_iter()
        .enumerate()
        .flat_map(|(i, s)| s.proof.par_chunks(PROOF_BYTES).enumerate().map(move |(k, p)| (i, k, p)))
        .map(|(i, k, p)| decode(p).map_err(|e| Error::MalformedProof(format!("seal proof {i}, partition {k}: {e}"))))
        .collect::<Result<Vec<_>>>()?;
    let last = proofs.last().expect("at least one partition").clone();
    proofs.resize(n, last);
    let mut h = Sha256::new();
    for s in seals {
        if variant != SealVariant::NonInteractive {
            h.update(s.seed);
        }
        h.update(s.comm_r);
    }
    aggregate(srs, &h.finalize(), &proofs, version)
}

/// A 192-byte Groth16 proof: compressed A, B, C, each on its curve, in its subgroup and not
/// the identity (as bellperson's `Proof::read` requires).
fn decode(bytes: &[u8]) -> std::result::Result<Proof<Bls12>, &'static str> {
    fn point<A: GroupEncoding + PrimeCurveAffine>(bytes: &[u8]) -> std::result::Result<A, &'static str>
    where
        A::Repr: Default + AsMut<[u8]>,
    {
        let p: A = decode_point(bytes).ok_or("not a point of its group")?;
        match bool::from(p.is_identity()) {
            true => Err("a point at infinity"),
            false => Ok(p),
        }
    }
    Ok(Proof {
        a: point::<G1Affine>(&bytes[..48])?,
        b: point::<G2Affine>(&bytes[48..144])?,
        c: point::<G1Affine>(&bytes[144..])?,
    })
}
