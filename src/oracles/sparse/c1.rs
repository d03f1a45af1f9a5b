//! A C1 output (`SealCommitPhase1Output`) of a sparse sector: all-zero data (comm_d is the
//! zero commitment of its size) in which only the opened nodes exist ([`Opened`]), tree_c and
//! tree_r_last sparse trees of the production shapes, its vanilla proofs built with
//! storage-proofs-porep's own types. What filecoin-proofs' `seal_commit_phase1` would return
//! for such a sector, in seconds and without a buffer of sector size.

use std::any::Any;
use std::collections::BTreeMap;

use filecoin_hashers::{HashFunction, Hasher};
use filecoin_proofs::constants::{
    DefaultPieceDomain, DefaultPieceHasher, DefaultTreeDomain, DefaultTreeHasher, SectorShapeBase, SectorShapeSub8,
    SectorShapeTop2,
};
use filecoin_proofs::parameters::public_params;
use filecoin_proofs_api::seal::{SealCommitPhase1Output, VanillaSealProof};
use filecoin_proofs_api::{RegisteredSealProof, SectorId};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use storage_proofs_core::drgraph::Graph;
use storage_proofs_core::merkle::{MerkleProof, MerkleTreeTrait};
use storage_proofs_porep::stacked::{
    generate_replica_id, Column, ColumnProof, EncodingProof, LabelingProof, Proof, PublicInputs, ReplicaColumnProof,
};

use super::labels::Opened;
use super::tree::{shape_arities, SparseTree};
use crate::circuits::porep::{PorepSize, SealVariant};
use crate::oracles::porep::{fil, prover_id_from_miner, SealedC1};
use crate::{Error, Result};

/// Makes the C1 output of a sparse `size` sector sealed with `variant`'s registered proof
/// (interactive only: see below), everything from `seed`: ticket, interactive seed, sector
/// id, parent labels; the miner is f01000 as in [`crate::oracles::porep::make_c1`]. Same seed,
/// same bytes. Its challenges are filecoin-proofs' own (`PublicInputs::challenges`) from the
/// replica id and the seed; their proofs are built on all cores.
///
/// SyntheticPoRep and NonInteractivePoRep draw their challenges from comm_r, which commits to
/// every label before the challenges are known: only a sector whose labels were all computed
/// can answer them (that is the proof's soundness), so a sparse sector cannot. Both prove the
/// interactive partition circuit, which this C1 serves.
pub fn make_sparse_c1(size: PorepSize, variant: SealVariant, seed: u64) -> Result<SealedC1> {
    if variant != SealVariant::Interactive {
        return Err(Error::InvalidInput(format!(
            "a sparse sector answers interactive challenges only: {variant:?} challenges derive from \
             comm_r, which commits to every label before they are drawn (they prove the same \
             partition circuit as the interactive seal)"
        )));
    }
    let rp = size.registered_proof_of(variant);
    let ids = Ids::from_seed(seed);
    let c1 = match size {
        PorepSize::KiB2 | PorepSize::MiB8 | PorepSize::MiB512 => assemble::<SectorShapeBase>(rp, &ids, seed),
        PorepSize::GiB32 => assemble::<SectorShapeSub8>(rp, &ids, seed),
        PorepSize::GiB64 => assemble::<SectorShapeTop2>(rp, &ids, seed),
    }
    .map_err(fil("building a sparse C1"))?;
    let bytes = serde_json::to_vec(&c1).map_err(|e| Error::InvalidInput(format!("encoding C1: {e}")))?;
    Ok(SealedC1 { bytes, prover_id: ids.prover_id, sector_id: ids.sector_id })
}

/// What names the sector and its commitment: drawn from the seed.
struct Ids {
    prover_id: [u8; 32],
    sector_id: SectorId,
    ticket: [u8; 32],
    /// The interactive seed (never all zero: `seal_commit_phase2` refuses that).
    seed: [u8; 32],
}

impl Ids {
    fn from_seed(seed: u64) -> Ids {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6375_7a6b_5f73_7031);
        let mut ticket = [0u8; 32];
        rng.fill_bytes(&mut ticket);
        let mut chain_seed = [0u8; 32];
        rng.fill_bytes(&mut chain_seed);
        chain_seed[0] |= 1;
        let sector_id = SectorId::from(1 + rng.next_u64() % 1_000_000);
        Ids { prover_id: prover_id_from_miner(1000), sector_id, ticket, seed: chain_seed }
    }
}

type TreeProof<Tree> = MerkleProof<
    DefaultTreeHasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;

/// The sparse trees a C1 opens: tree_d (binary sha256, all zero), tree_c and tree_r_last.
struct Trees {
    d: SparseTree<DefaultPieceHasher>,
    c: SparseTree<DefaultTreeHasher>,
    r_last: SparseTree<DefaultTreeHasher>,
}

fn assemble<Tree>(rp: RegisteredSealProof, ids: &Ids, seed: u64) -> anyhow::Result<SealCommitPhase1Output>
where
    Tree: MerkleTreeTrait<Hasher = DefaultTreeHasher> + 'static,
{
    let config = rp.as_v1_config();
    let vp = public_params::<Tree>(&config)?;
    let nodes = vp.graph.size();
    let d = SparseTree::new(vec![2; nodes.trailing_zeros() as usize], Default::default(), BTreeMap::new());
    let comm_d = d.root();
    let replica_id = generate_replica_id::<DefaultTreeHasher, _>(
        &ids.prover_id,
        u64::from(ids.sector_id),
        &ids.ticket,
        comm_d,
        &config.porep_id,
    );
    let pub_in =
        PublicInputs::<DefaultTreeDomain, DefaultPieceDomain> { replica_id, seed: Some(ids.seed), tau: None, k: None };
    let challenges: Vec<Vec<usize>> =
        (0..usize::from(config.partitions)).map(|k| pub_in.challenges(&vp.challenges, nodes, Some(k))).collect();
    let all: Vec<usize> = challenges.iter().flatten().copied().collect();
    let opened = Opened::new(&vp.graph, vp.num_layers, &replica_id, &all, seed);

    // A present node's column hash in tree_c, its replica (data 0 + last label) in tree_r_last.
    let arities = shape_arities::<Tree>(nodes);
    let column_hashes = opened
        .columns()
        .map(|(n, col)| Ok((u64::from(n), Column::<DefaultTreeHasher>::new(n, col.to_vec())?.hash().into())))
        .collect::<anyhow::Result<BTreeMap<_, _>>>()?;
    let replica = opened.columns().map(|(n, col)| (u64::from(n), col[col.len() - 1])).collect();
    let trees = Trees {
        d,
        c: SparseTree::new(arities.clone(), Default::default(), column_hashes),
        r_last: SparseTree::new(arities, Default::default(), replica),
    };
    let comm_r = <DefaultTreeHasher as Hasher>::Function::hash2(&trees.c.root(), &trees.r_last.root());

    let proofs: Vec<Vec<Proof<Tree, DefaultPieceHasher>>> = challenges
        .par_iter()
        .map(|part| part.par_iter().map(|&c| challenge_proof::<Tree>(c, &opened, &trees, vp.num_layers)).collect())
        .collect::<anyhow::Result<_>>()?;
    Ok(SealCommitPhase1Output {
        registered_proof: rp,
        vanilla_proofs: tagged(rp, Box::new(proofs))?,
        comm_r: comm_r.into(),
        comm_d: comm_d.into(),
        replica_id,
        seed: ids.seed,
        ticket: ids.ticket,
    })
}

/// Challenge `c`'s vanilla proof, as `StackedDrg::prove_layers` makes it from a sealed sector.
fn challenge_proof<Tree>(
    c: usize,
    opened: &Opened,
    trees: &Trees,
    layers: usize,
) -> anyhow::Result<Proof<Tree, DefaultPieceHasher>>
where
    Tree: MerkleTreeTrait<Hasher = DefaultTreeHasher> + 'static,
{
    let (n, i) = (c as u32, c as u64);
    let column_proof = |p: &u32| -> anyhow::Result<ColumnProof<TreeProof<Tree>>> {
        let path =
            TreeProof::<Tree>::from_parts(trees.c.leaf(u64::from(*p)), trees.c.root(), trees.c.path(u64::from(*p)));
        ColumnProof::from_column(Column::new(*p, opened.column(*p).to_vec())?, path)
    };
    let (drg, exp) = opened.parents(n).split_at(storage_proofs_core::drgraph::BASE_DEGREE);
    Ok(Proof {
        comm_d_proofs: MerkleProof::from_parts(trees.d.leaf(i), trees.d.root(), trees.d.path(i)),
        comm_r_last_proof: TreeProof::<Tree>::from_parts(
            trees.r_last.leaf(i),
            trees.r_last.root(),
            trees.r_last.path(i),
        ),
        replica_column_proofs: ReplicaColumnProof {
            c_x: column_proof(&n)?,
            drg_parents: drg.iter().map(column_proof).collect::<anyhow::Result<_>>()?,
            exp_parents: exp.iter().map(column_proof).collect::<anyhow::Result<_>>()?,
        },
        labeling_proofs: (1..=layers).map(|l| LabelingProof::new(l as u32, i, opened.label_parents(n, l))).collect(),
        encoding_proof: EncodingProof::new(layers as u32, i, opened.label_parents(n, layers)),
    })
}

/// The vanilla proofs in filecoin-proofs-api's variant of `rp`'s sector size.
fn tagged(rp: RegisteredSealProof, proofs: Box<dyn Any>) -> anyhow::Result<VanillaSealProof> {
    fn take<T: 'static>(b: Box<dyn Any>) -> anyhow::Result<T> {
        b.downcast().map(|b| *b).map_err(|_| anyhow::anyhow!("vanilla proofs of another tree shape"))
    }
    let (size, _) = PorepSize::from_registered_proof(rp).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(match size {
        PorepSize::KiB2 => VanillaSealProof::StackedDrg2KiBV1(take(proofs)?),
        PorepSize::MiB8 => VanillaSealProof::StackedDrg8MiBV1(take(proofs)?),
        PorepSize::MiB512 => VanillaSealProof::StackedDrg512MiBV1(take(proofs)?),
        PorepSize::GiB32 => VanillaSealProof::StackedDrg32GiBV1(take(proofs)?),
        PorepSize::GiB64 => VanillaSealProof::StackedDrg64GiBV1(take(proofs)?),
    })
}
