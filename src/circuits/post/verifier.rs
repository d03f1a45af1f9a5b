//! A PoSt partition's public inputs as filecoin-proofs' verifier computes them
//! (`FallbackPoStCompound::generate_public_inputs`), from that partition's sectors and its index
//! alone. The verifier's own function takes every partition's sectors and picks the partition's
//! among them: a WindowPoSt request for one partition near the end of a deadline would need
//! thousands of placeholder sectors before its own (280 MB at 32 GiB, index 2,999).

use blstrs::Scalar;
use filecoin_hashers::Hasher;
use sha2::{Digest, Sha256};
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::gadgets::por::PoRCompound;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::por;
use storage_proofs_core::util::NODE_SIZE;
use storage_proofs_post::fallback::{self, generate_leaf_challenge_inner, get_challenge_index, PublicSector};

type Domain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

/// The public inputs of partition `index` (of all the request's partitions, as the verifier
/// counts them), whose sectors are `sectors` (at most `pp.sector_count`): each sector's comm_r
/// and its challenged leaves, the last sector's repeated up to `pp.sector_count` as the circuit
/// repeats it.
pub(super) fn partition_inputs<Tree: 'static + MerkleTreeTrait>(
    pp: &fallback::PublicParams,
    randomness: &Domain<Tree>,
    sectors: &[PublicSector<Domain<Tree>>],
    index: usize,
) -> anyhow::Result<Vec<Scalar>> {
    anyhow::ensure!(!sectors.is_empty() && sectors.len() <= pp.sector_count, "invalid number of sectors");
    let por_pp = por::PublicParams { leaves: pp.sector_size as usize / NODE_SIZE, private: true };
    let mut inputs = Vec::new();
    for (i, sector) in sectors.iter().enumerate() {
        inputs.push(sector.comm_r.into());
        let mut hasher = Sha256::new();
        hasher.update(AsRef::<[u8]>::as_ref(randomness));
        hasher.update(u64::from(sector.id).to_le_bytes());
        for n in 0..pp.challenge_count {
            let sector_index = index * pp.sector_count + i;
            let challenge = get_challenge_index(pp.api_version, sector_index, pp.challenge_count, n);
            let leaf = generate_leaf_challenge_inner::<Domain<Tree>>(hasher.clone(), pp, challenge);
            let por_in = por::PublicInputs { commitment: None, challenge: leaf as usize };
            inputs.extend(PoRCompound::<Tree>::generate_public_inputs(&por_in, &por_pp, Some(index))?);
        }
    }
    let per_sector = inputs.len() / sectors.len();
    let last = inputs[inputs.len() - per_sector..].to_vec();
    for _ in sectors.len()..pp.sector_count {
        inputs.extend_from_slice(&last);
    }
    Ok(inputs)
}

#[cfg(test)]
mod tests {
    use filecoin_hashers::Domain as _;
    use filecoin_proofs::constants::{SectorShapeBase, SectorShapeSub8};
    use filecoin_proofs_api::RegisteredPoStProof;
    use rand::{RngCore, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use storage_proofs_post::fallback::{FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound};

    use super::*;
    use crate::circuits::post::post_type::public_params_for;

    fn domain<Tree: MerkleTreeTrait>(rng: &mut ChaCha8Rng) -> Domain<Tree> {
        let mut b = [0u8; 32];
        rng.fill_bytes(&mut b);
        b[31] &= 0x3f;
        Domain::<Tree>::try_from_bytes(&b).unwrap()
    }

    /// Equal to the verifier's own inputs over every partition's sectors, with placeholders
    /// before partition `index`'s (as a single partition's request had to give them), for each
    /// API version (V1's challenges depend on the sector's place among all partitions') and
    /// with a partition full or short of sectors.
    fn matches_filecoin<Tree: 'static + MerkleTreeTrait>(proof: RegisteredPoStProof, index: usize) {
        let pp = public_params_for::<Tree>(proof).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(index as u64);
        let randomness = domain::<Tree>(&mut rng);
        for count in [1, pp.sector_count] {
            let sectors: Vec<_> = (0..count)
                .map(|i| PublicSector { id: (1000 + i as u64).into(), comm_r: domain::<Tree>(&mut rng) })
                .collect();
            let placeholders = std::iter::repeat_n(sectors[0].clone(), index * pp.sector_count);
            let all = fallback::PublicInputs {
                randomness,
                prover_id: domain::<Tree>(&mut rng),
                sectors: placeholders.chain(sectors.iter().cloned()).collect(),
                k: None,
            };
            let theirs = <FallbackPoStCompound<Tree> as CompoundProof<
                FallbackPoSt<'_, Tree>,
                FallbackPoStCircuit<Tree>,
            >>::generate_public_inputs(&all, &pp, Some(index))
            .unwrap();
            let ours = partition_inputs::<Tree>(&pp, &randomness, &sectors, index).unwrap();
            assert_eq!(ours, theirs, "{proof:?}, partition {index}, {count} sectors");
        }
    }

    #[test]
    fn partition_inputs_are_the_verifiers() {
        use RegisteredPoStProof::*;
        for index in [0, 1, 2_999] {
            matches_filecoin::<SectorShapeBase>(StackedDrgWindow2KiBV1, index);
            matches_filecoin::<SectorShapeBase>(StackedDrgWindow2KiBV1_2, index);
        }
        matches_filecoin::<SectorShapeBase>(StackedDrgWinning2KiBV1, 0);
        // 2,349 sectors a partition: a few partitions in is enough to tell the index apart.
        matches_filecoin::<SectorShapeSub8>(StackedDrgWindow32GiBV1, 3);
        matches_filecoin::<SectorShapeSub8>(StackedDrgWindow32GiBV1_2, 3);
    }
}
