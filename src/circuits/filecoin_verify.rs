//! filecoin-proofs-api's own verifiers, as filecoin-ffi calls them: a host verifies seals,
//! aggregates, PoSts and SnapDeals updates (cuzk's or anyone's) with the verdict Filecoin's
//! chain gives. Nothing here is cuzk's own arithmetic.
//!
//! The verifiers read each circuit's verifying key (`v28-<cache identifier>.vk`) and, for
//! aggregates, the SRS (`v28-fil-inner-product-v1.srs`) from filecoin-proofs' parameter cache:
//! `FIL_PROOFS_PARAMETER_CACHE`, read once per process (default
//! `/var/tmp/filecoin-proof-parameters`), as filecoin-ffi does. A missing `.vk` is derived by
//! filecoin-proofs from the `.params` file beside it (read whole once, the `.vk` then written
//! there); with neither the call fails. Nothing is generated: the verifiers ask for keys
//! without a random source.

use crate::aggregate::Version;
use crate::Result;

/// One sector's seal, as its verifier takes it.
#[derive(Clone, Copy, Debug)]
pub struct SealedSector {
    pub comm_r: [u8; 32],
    pub comm_d: [u8; 32],
    pub sector_id: u64,
    pub ticket: [u8; 32],
    pub seed: [u8; 32],
}

/// What to verify. `proof_name` is the registered proof as filecoin-proofs-api spells it (e.g.
/// `StackedDrg32GiBV1_1`, `StackedDrgWindow32GiBV1_2`).
#[derive(Debug)]
pub enum Verification<'a> {
    /// `seal::verify_seal` of one sector's C2 output.
    Seal { proof_name: &'a str, prover_id: [u8; 32], sector: SealedSector, proof: &'a [u8] },
    /// `seal::verify_aggregate_seal_commit_proofs` of a SnarkPack aggregate of `sectors`' seals.
    AggregateSeals {
        proof_name: &'a str,
        version: Version,
        prover_id: [u8; 32],
        sectors: Vec<SealedSector>,
        aggregate: &'a [u8],
    },
    /// `post::verify_winning_post` or `post::verify_window_post` (by `proof_name`'s kind) of
    /// a PoSt over `sectors` (id, comm_r).
    PoSt {
        proof_name: &'a str,
        randomness: [u8; 32],
        prover_id: [u8; 32],
        sectors: Vec<(u64, [u8; 32])>,
        proof: &'a [u8],
    },
    /// `update::verify_empty_sector_update_proof`.
    Update { proof_name: &'a str, comm_r_old: [u8; 32], comm_r_new: [u8; 32], comm_d_new: [u8; 32], proof: &'a [u8] },
}

impl Verification<'_> {
    /// filecoin-proofs' verdict; its errors (a malformed proof or input, a missing key) and
    /// panics are `InvalidInput`.
    #[cfg(feature = "porep")]
    pub fn verdict(&self) -> Result<bool> {
        api::verdict(self)
    }

    /// Without the `porep` feature: `Unsupported`.
    #[cfg(not(feature = "porep"))]
    pub fn verdict(&self) -> Result<bool> {
        Err(crate::Error::Unsupported("Filecoin verification needs the `porep` feature".into()))
    }
}

#[cfg(feature = "porep")]
mod api {
    use std::collections::BTreeMap;

    use filecoin_proofs_api::{post, seal, update, PublicReplicaInfo, RegisteredAggregationProof, SectorId};
    use filecoin_proofs_api::{RegisteredPoStProof, RegisteredUpdateProof};

    use super::{Verification, Version};
    use crate::aggregate::seal::registered_proof;
    use crate::circuits::filecoin::guarded;
    use crate::circuits::post::{PostKind, PostType};
    use crate::{Error, Result};

    fn named<T: serde::de::DeserializeOwned>(name: &str, kind: &str) -> Result<T> {
        serde_json::from_value(serde_json::Value::String(name.into()))
            .map_err(|_| Error::InvalidInput(format!("{name:?} is not a registered {kind} proof")))
    }

    pub(super) fn verdict(v: &Verification<'_>) -> Result<bool> {
        match v {
            Verification::Seal { proof_name, prover_id, sector: s, proof } => {
                let rp = registered_proof(proof_name)?;
                guarded("verify_seal", Error::InvalidInput, || {
                    seal::verify_seal(rp, s.comm_r, s.comm_d, *prover_id, s.sector_id.into(), s.ticket, s.seed, proof)
                })
            }
            Verification::AggregateSeals { proof_name, version, prover_id, sectors, aggregate } => {
                let rp = registered_proof(proof_name)?;
                if sectors.is_empty() {
                    return Err(Error::InvalidInput("no seal verify infos".into()));
                }
                let aggregation = match version {
                    Version::V1 => RegisteredAggregationProof::SnarkPackV1,
                    Version::V2 => RegisteredAggregationProof::SnarkPackV2,
                };
                guarded("verify_aggregate_seal_commit_proofs", Error::InvalidInput, || {
                    let mut inputs = Vec::new();
                    for s in sectors {
                        let id = s.sector_id.into();
                        inputs.extend(seal::get_seal_inputs(rp, s.comm_r, s.comm_d, *prover_id, id, s.ticket, s.seed)?);
                    }
                    let comm_rs: Vec<_> = sectors.iter().map(|s| s.comm_r).collect();
                    let seeds: Vec<_> = sectors.iter().map(|s| s.seed).collect();
                    let proof = aggregate.to_vec();
                    seal::verify_aggregate_seal_commit_proofs(rp, aggregation, proof, &comm_rs, &seeds, inputs)
                })
            }
            Verification::PoSt { proof_name, randomness, prover_id, sectors, proof } => {
                let rp: RegisteredPoStProof = named(proof_name, "PoSt")?;
                let replicas: BTreeMap<_, _> = sectors
                    .iter()
                    .map(|&(id, comm_r)| (SectorId::from(id), PublicReplicaInfo::new(rp, comm_r)))
                    .collect();
                match PostType::of_registered_proof(rp).kind {
                    PostKind::Winning => guarded("verify_winning_post", Error::InvalidInput, || {
                        post::verify_winning_post(randomness, proof, &replicas, *prover_id)
                    }),
                    PostKind::Window => guarded("verify_window_post", Error::InvalidInput, || {
                        post::verify_window_post(randomness, &[(rp, proof)], &replicas, *prover_id)
                    }),
                }
            }
            Verification::Update { proof_name, comm_r_old, comm_r_new, comm_d_new, proof } => {
                let rp: RegisteredUpdateProof = named(proof_name, "update")?;
                guarded("verify_empty_sector_update_proof", Error::InvalidInput, || {
                    update::verify_empty_sector_update_proof(rp, proof, *comm_r_old, *comm_r_new, *comm_d_new)
                })
            }
        }
    }
}
