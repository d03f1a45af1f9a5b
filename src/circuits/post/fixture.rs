//! PoSt requests made on the spot, as a node makes them: a sector sealed here, its challenges
//! drawn and its vanilla proofs generated through filecoin-proofs-api. Tests and benchmarks use
//! these instead of committed fixtures.

use std::collections::BTreeMap;
use std::path::Path;

use filecoin_proofs_api::post;
use filecoin_proofs_api::{PrivateReplicaInfo, PublicReplicaInfo, SectorId};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{PostInput, PostKind, PostType};
use crate::circuits::porep::SealedSector;
use crate::{Error, Result};

fn fil(step: &'static str) -> impl FnOnce(anyhow::Error) -> Error {
    move |e| Error::InvalidInput(format!("{step} failed: {e:#}"))
}

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
