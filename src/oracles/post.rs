//! PoSt requests made on the spot, as a node makes them: a sector sealed here, its challenges
//! drawn and its vanilla proofs generated through filecoin-proofs-api. Tests and benchmarks use
//! these instead of committed fixtures.

use std::collections::BTreeMap;
use std::path::Path;

use filecoin_proofs_api::post;
use filecoin_proofs_api::{PrivateReplicaInfo, PublicReplicaInfo, SectorId};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::porep::{fil, SealedSector};
use crate::circuits::post::{PostInput, PostKind, PostType};
use crate::{Error, Result};

/// One sealed sector (2 KiB or 8 MiB) that PoSt requests prove, kept until dropped.
pub struct PostFixture {
    sector: SealedSector,
}

impl PostFixture {
    /// Seals a sector of `typ`'s size in `scratch_dir` (see `porep::make_c1` for the
    /// process state this touches).
    pub fn new(typ: PostType, scratch_dir: &Path, seed: u64) -> Result<PostFixture> {
        Ok(PostFixture { sector: SealedSector::new(typ.size, scratch_dir, seed)? })
    }

    /// The sealed replica, listed under `sectors` ids (the verifier ties an id to its comm_r
    /// only through the challenges, so one replica stands for many sectors), as the API's
    /// verifiers take them.
    pub fn replicas(&self, typ: PostType, sectors: &[u64]) -> BTreeMap<SectorId, PublicReplicaInfo> {
        let public = PublicReplicaInfo::new(typ.registered_proof(), self.sector.pc2.comm_r);
        sectors.iter().map(|&id| (SectorId::from(id), public.clone())).collect()
    }

    /// A request for `typ` over `sectors` (ids; WinningPoSt: exactly one), every partition or
    /// WindowPoSt partition `partition` alone, with randomness from `seed` (its top bits
    /// cleared, as Lotus does, so it is a canonical scalar).
    pub fn input(&self, typ: PostType, sectors: &[u64], partition: Option<u64>, seed: u64) -> Result<PostInput> {
        let proof = typ.registered_proof();
        let mut randomness = [0u8; 32];
        ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut randomness);
        randomness[31] &= 0x3f;
        let s = &self.sector;
        let ids: Vec<SectorId> = sectors.iter().map(|&id| SectorId::from(id)).collect();
        if typ.kind == PostKind::Winning && ids.len() != 1 {
            return Err(Error::InvalidInput("a WinningPoSt proves one sector".into()));
        }
        let challenges = post::generate_fallback_sector_challenges(proof, &randomness, &ids, s.prover_id)
            .map_err(fil("generate_fallback_sector_challenges"))?;
        let replica = PrivateReplicaInfo::new(proof, s.pc2.comm_r, s.cache.clone(), s.sealed.clone());
        let vanilla = ids
            .iter()
            .map(|id| {
                let c = challenges.get(id).ok_or_else(|| Error::InvalidInput(format!("no challenges for {id:?}")))?;
                post::generate_single_vanilla_proof(proof, *id, &replica, c)
                    .map_err(fil("generate_single_vanilla_proof"))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(PostInput { proof, randomness, prover_id: s.prover_id, partition, vanilla })
    }
}

/// filecoin-proofs-api's own verdict on `proof` for the request `input`: `verify_winning_post`,
/// or `verify_window_post` for a WindowPoSt of every partition (`None` for one partition
/// alone, which the API verifies only among all of them). The verifying key must be where
/// filecoin-proofs looks (`v28-<param cache identifier>.vk` in `FIL_PROOFS_PARAMETER_CACHE`).
pub fn filecoin_verify(input: &[u8], proof: &[u8]) -> Result<Option<bool>> {
    let i = PostInput::decode(input)?;
    let typ = PostType::of_registered_proof(i.proof);
    let mut replicas = BTreeMap::new();
    for v in &i.vanilla {
        // A FallbackPoStSectorProof's encoding starts with its sector id and comm_r.
        let (id, comm_r) =
            v.get(..8).zip(v.get(8..40)).ok_or_else(|| Error::InvalidInput("short vanilla proof".into()))?;
        let id = SectorId::from(u64::from_le_bytes(id.try_into().unwrap_or_default()));
        replicas.insert(id, PublicReplicaInfo::new(i.proof, comm_r.try_into().unwrap_or_default()));
    }
    let verdict = match (typ.kind, i.partition) {
        (PostKind::Winning, _) => post::verify_winning_post(&i.randomness, proof, &replicas, i.prover_id),
        (PostKind::Window, None) => {
            post::verify_window_post(&i.randomness, &[(i.proof, proof)], &replicas, i.prover_id)
        }
        (PostKind::Window, Some(_)) => return Ok(None),
    };
    verdict.map(Some).map_err(fil("filecoin-proofs verification"))
}
