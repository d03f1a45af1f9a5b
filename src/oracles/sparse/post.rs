//! PoSt requests over sparse sectors: each sector's tree_r_last holds only the leaves its
//! challenges open, drawn from the seed, every other leaf 0. A PoSt challenge derives from the
//! randomness, the prover and the sector id, never from comm_r, so the leaves are placed before
//! the tree is hashed; comm_c is drawn too and comm_r = H(comm_c, comm_r_last).

use std::collections::BTreeMap;

use filecoin_hashers::{Domain, HashFunction, Hasher};
use filecoin_proofs::constants::{
    DefaultTreeDomain, DefaultTreeHasher, SectorShapeBase, SectorShapeSub8, SectorShapeTop2,
};
use filecoin_proofs::FallbackPoStSectorProof;
use filecoin_proofs_api::{post, SectorId};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use storage_proofs_core::merkle::{MerkleProof, MerkleTreeTrait};
use storage_proofs_post::fallback;

use super::tree::{shape_arities, SparseTree};
use crate::circuits::porep::PorepSize;
use crate::circuits::post::{PostInput, PostKind, PostType};
use crate::oracles::porep::{fil, prover_id_from_miner};
use crate::{Error, Result};

/// A request for `typ` over sparse sectors 1..=`sectors` (WinningPoSt: exactly one; WindowPoSt:
/// any number, a full partition is `typ.sectors_per_partition()`), every partition; its
/// randomness, as `oracles::post::PostFixture::input` draws it, and every leaf and comm_c from
/// `seed`. The miner is f01000. Sectors are made on all cores.
pub fn make_sparse_post(typ: PostType, sectors: u64, seed: u64) -> Result<PostInput> {
    if sectors == 0 || (typ.kind == PostKind::Winning && sectors != 1) {
        return Err(Error::InvalidInput(format!("{}: {sectors} sectors (a WinningPoSt proves one)", typ.label())));
    }
    let proof = typ.registered_proof();
    let mut randomness = [0u8; 32];
    ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut randomness);
    randomness[31] &= 0x3f;
    let prover_id = prover_id_from_miner(1000);
    let ids: Vec<SectorId> = (1..=sectors).map(SectorId::from).collect();
    let challenges = post::generate_fallback_sector_challenges(proof, &randomness, &ids, prover_id)
        .map_err(fil("generate_fallback_sector_challenges"))?;
    let nodes = (typ.size.sector_bytes() / 32) as usize;
    let vanilla = ids
        .par_iter()
        .map(|id| {
            let c = challenges.get(id).ok_or_else(|| Error::InvalidInput(format!("no challenges for {id:?}")))?;
            let made = match typ.size {
                PorepSize::KiB2 | PorepSize::MiB8 | PorepSize::MiB512 => {
                    sector_proof::<SectorShapeBase>(*id, c, nodes, seed)
                }
                PorepSize::GiB32 => sector_proof::<SectorShapeSub8>(*id, c, nodes, seed),
                PorepSize::GiB64 => sector_proof::<SectorShapeTop2>(*id, c, nodes, seed),
            };
            made.map_err(|e| Error::InvalidInput(format!("encoding a vanilla proof: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(PostInput { proof, randomness, prover_id, partition: None, vanilla })
}

/// Sector `id`'s vanilla proof of `challenges`, as `generate_single_vanilla_proof` returns it
/// (bincode of `FallbackPoStSectorProof`).
fn sector_proof<Tree>(id: SectorId, challenges: &[u64], nodes: usize, seed: u64) -> bincode::Result<Vec<u8>>
where
    Tree: MerkleTreeTrait<Hasher = DefaultTreeHasher> + 'static,
{
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x706f_7374);
    rng.set_stream(u64::from(id));
    let comm_c = DefaultTreeDomain::random(&mut rng);
    let leaves: BTreeMap<u64, DefaultTreeDomain> =
        challenges.iter().map(|&c| (c, DefaultTreeDomain::random(&mut rng))).collect();
    let tree = SparseTree::<DefaultTreeHasher>::new(shape_arities::<Tree>(nodes), Default::default(), leaves);
    let comm_r_last = tree.root();
    let inclusion_proofs =
        challenges.iter().map(|&c| MerkleProof::from_parts(tree.leaf(c), comm_r_last, tree.path(c))).collect();
    let proof = FallbackPoStSectorProof::<Tree> {
        sector_id: id,
        comm_r: <DefaultTreeHasher as Hasher>::Function::hash2(&comm_c, &comm_r_last),
        vanilla_proof: fallback::Proof {
            sectors: vec![fallback::SectorProof { inclusion_proofs, comm_c, comm_r_last }],
        },
    };
    bincode::serialize(&proof)
}
