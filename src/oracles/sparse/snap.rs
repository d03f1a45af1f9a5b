//! SnapDeals requests over a sparse sector. Its challenges derive from comm_r_new, so no leaf can
//! be placed where they fall before the trees are hashed: instead every tree is piecewise
//! constant. The old replica holds one value everywhere, the new data another (so tree_d_new is
//! uniform), and the new replica, old + data · rho(high bits), one value per run of nodes
//! sharing their high bits: every node, wherever the challenges fall, is encoded as
//! `EmptySectorUpdate` encodes it.

use ff::Field;
use filecoin_hashers::{HashFunction, Hasher};
use filecoin_proofs::constants::{
    DefaultPieceDomain, DefaultPieceHasher, DefaultTreeDomain, DefaultTreeHasher, SectorShapeBase, SectorShapeSub8,
    SectorShapeTop2,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use storage_proofs_core::merkle::{MerkleProof, MerkleTreeTrait};
use storage_proofs_update::constants::h_default;
use storage_proofs_update::{phi, rho, ChallengeProof, Challenges, PartitionProof, PublicParams};

use super::tree::{shape_arities, SparseTree};
use crate::circuits::porep::PorepSize;
use crate::circuits::snap::{registered_proof, SnapInput};
use crate::{Error, Result};

/// A SnapDeals request (every partition) for a sparse `size` sector: the old replica's value,
/// the new data's and comm_c drawn from `seed`. Partitions are made on all cores.
pub fn make_sparse_snap(size: PorepSize, seed: u64) -> Result<SnapInput> {
    let made = match size {
        PorepSize::KiB2 | PorepSize::MiB8 | PorepSize::MiB512 => typed::<SectorShapeBase>(size, seed),
        PorepSize::GiB32 => typed::<SectorShapeSub8>(size, seed),
        PorepSize::GiB64 => typed::<SectorShapeTop2>(size, seed),
    };
    made.map_err(|e| Error::InvalidInput(format!("encoding a partition proof: {e}")))
}

fn typed<Tree>(size: PorepSize, seed: u64) -> bincode::Result<SnapInput>
where
    Tree: MerkleTreeTrait<Hasher = DefaultTreeHasher> + 'static,
{
    let pp = PublicParams::from_sector_size(size.sector_bytes());
    let nodes = pp.sector_nodes;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x736e_6170_7370);
    let old = blstrs::Scalar::random(&mut rng);
    let data = blstrs::Scalar::random(&mut rng);
    let comm_c = DefaultTreeDomain::from(blstrs::Scalar::random(&mut rng));

    let d = SparseTree::<DefaultPieceHasher>::new(
        vec![2; pp.challenge_bit_len],
        DefaultPieceDomain::from(data),
        Default::default(),
    );
    let arities = shape_arities::<Tree>(nodes);
    let r_old = SparseTree::<DefaultTreeHasher>::new(arities.clone(), old.into(), Default::default());
    let hash2 = <DefaultTreeHasher as Hasher>::Function::hash2;
    let comm_r_old = hash2(&comm_c, &r_old.root());
    let phi = phi(&d.root(), &comm_r_old);
    // A challenge's high bits are those above `challenge_bit_len - h`: one run of nodes each.
    let run_bits = (pp.challenge_bit_len - h_default(nodes)) as u32;
    let r_new = SparseTree::<DefaultTreeHasher>::piecewise(arities, run_bits, |high| {
        (old + data * rho(&phi, high as u32)).into()
    });
    let comm_r_new = hash2(&comm_c, &r_new.root());

    let apex_height = pp.challenge_bit_len - pp.partition_bit_len - pp.apex_leaf_bit_len;
    let partitions = (0..pp.partition_count)
        .into_par_iter()
        .map(|k| {
            let first = (k * pp.apex_leaf_count) as u64;
            let proof = PartitionProof::<Tree> {
                comm_c,
                apex_leafs: (first..first + pp.apex_leaf_count as u64).map(|i| d.node(apex_height, i)).collect(),
                challenge_proofs: Challenges::new(nodes, comm_r_new, k)
                    .map(|c| {
                        let c = u64::from(c);
                        ChallengeProof {
                            proof_r_old: MerkleProof::from_parts(r_old.leaf(c), r_old.root(), r_old.path(c)),
                            proof_d_new: MerkleProof::from_parts(d.leaf(c), d.root(), d.path(c)),
                            proof_r_new: MerkleProof::from_parts(r_new.leaf(c), r_new.root(), r_new.path(c)),
                        }
                    })
                    .collect(),
            };
            bincode::serialize(&proof)
        })
        .collect::<bincode::Result<Vec<_>>>()?;
    Ok(SnapInput {
        proof: registered_proof(size),
        comm_r_old: comm_r_old.into(),
        comm_r_new: comm_r_new.into(),
        comm_d_new: d.root().into(),
        partitions,
    })
}
