//! A sparse Merkle tree: a few leaves present, every other one a default value, so a tree of
//! 2^30 leaves costs what its present leaves' paths cost. The default may differ between
//! aligned runs of leaves (a SnapDeals replica's nodes, constant over each run of one `rho`):
//! an absent node inside a run is the hash of absent children of that run (one value per level
//! and run); a node above several runs, and a present node's parent, is hashed from its group.
//! Levels may have different arities, as filecoin-proofs' compound trees do (base arity, then
//! the sub-tree and top-tree levels).

use std::collections::BTreeMap;

use filecoin_hashers::Hasher;
use merkletree::hash::Algorithm;
use rayon::prelude::*;
use sha2::digest::typenum::Unsigned;
use storage_proofs_core::merkle::MerkleTreeTrait;

/// A Merkle tree over `arities.iter().product()` leaves, only some of them present.
pub struct SparseTree<H: Hasher> {
    arities: Vec<usize>,
    /// Present nodes per level, leaves first; the last level holds the root alone. A level whose
    /// nodes each span more than one run holds all its nodes.
    levels: Vec<BTreeMap<u64, H::Domain>>,
    /// An absent node's value per level and run (the leaves' first).
    defaults: Vec<Vec<H::Domain>>,
    /// log2 of a run's leaves.
    run_bits: u32,
}

/// How filecoin-proofs' verifier (`InclusionPath::root`) hashes a group of siblings at `height`.
fn hash_group<H: Hasher>(children: &[H::Domain], height: usize) -> H::Domain {
    H::Function::default().multi_node(children, height)
}

impl<H: Hasher> SparseTree<H> {
    /// The tree whose leaves are `present` where given and `default_leaf` everywhere else;
    /// level `i` (from the leaves) groups `arities[i]` nodes. Parents are hashed on all cores.
    pub fn new(arities: Vec<usize>, default_leaf: H::Domain, present: BTreeMap<u64, H::Domain>) -> Self {
        let run_bits = leaves_of(&arities).trailing_zeros();
        Self::build(arities, run_bits, |_| default_leaf, present)
    }

    /// The tree whose leaves are `run_leaf(r)` throughout run `r`, the `r`-th aligned run of
    /// `1 << run_bits` leaves.
    pub fn piecewise(arities: Vec<usize>, run_bits: u32, run_leaf: impl Fn(u64) -> H::Domain + Sync) -> Self {
        Self::build(arities, run_bits, run_leaf, BTreeMap::new())
    }

    fn build(
        arities: Vec<usize>,
        run_bits: u32,
        run_leaf: impl Fn(u64) -> H::Domain + Sync,
        present: BTreeMap<u64, H::Domain>,
    ) -> Self {
        let leaves = leaves_of(&arities);
        assert!(leaves.is_power_of_two() && run_bits <= leaves.trailing_zeros(), "runs must tile the leaves");
        assert!(present.keys().all(|&i| i < leaves), "a present leaf beyond the tree's {leaves} leaves");
        let mut tree = SparseTree {
            defaults: vec![(0..leaves >> run_bits).into_par_iter().map(&run_leaf).collect()],
            levels: vec![present],
            arities,
            run_bits,
        };
        let mut span = 1u64;
        for height in 0..tree.arities.len() {
            let arity = tree.arities[height] as u64;
            span *= arity;
            let within_runs = span <= 1 << run_bits;
            let below = &tree.levels[height];
            let mut groups: Vec<u64> = match within_runs {
                true => below.keys().map(|i| i / arity).collect(),
                false => (0..leaves / span).collect(),
            };
            groups.dedup();
            let above = groups
                .into_par_iter()
                .map(|g| {
                    let children: Vec<H::Domain> = (0..arity).map(|j| tree.node(height, g * arity + j)).collect();
                    (g, hash_group::<H>(&children, height))
                })
                .collect();
            let defaults = match within_runs {
                true => tree.defaults[height]
                    .par_iter()
                    .map(|&d| hash_group::<H>(&vec![d; arity as usize], height))
                    .collect(),
                false => vec![],
            };
            tree.defaults.push(defaults);
            tree.levels.push(above);
        }
        tree
    }

    pub fn root(&self) -> H::Domain {
        let top = self.levels.len() - 1;
        self.node(top, 0)
    }

    pub fn leaf(&self, i: u64) -> H::Domain {
        self.node(0, i)
    }

    /// Node `i` of `level` (0: the leaves).
    pub fn node(&self, level: usize, i: u64) -> H::Domain {
        match self.levels[level].get(&i) {
            Some(n) => *n,
            None => {
                let span: u64 = self.arities[..level].iter().map(|&a| a as u64).product();
                self.defaults[level][((i * span) >> self.run_bits) as usize]
            }
        }
    }

    /// Leaf `i`'s path to the root as filecoin-proofs' `MerkleProof::from_parts` takes it:
    /// per level (leaves first) the siblings, without the node itself, and its place among them.
    pub fn path(&self, mut i: u64) -> Vec<(Vec<H::Domain>, usize)> {
        self.arities
            .iter()
            .enumerate()
            .map(|(height, &arity)| {
                let (group, place) = (i / arity as u64, (i % arity as u64) as usize);
                let siblings = (0..arity as u64)
                    .filter(|&j| j != place as u64)
                    .map(|j| self.node(height, group * arity as u64 + j))
                    .collect();
                i = group;
                (siblings, place)
            })
            .collect()
    }
}

fn leaves_of(arities: &[usize]) -> u64 {
    arities.iter().map(|&a| a as u64).product()
}

/// The arity of each level of filecoin-proofs' tree shape `Tree` over `nodes` leaves, leaves
/// first: the base trees' levels, then the sub-tree level and the top-tree level where the
/// shape has them.
pub fn shape_arities<Tree: MerkleTreeTrait>(nodes: usize) -> Vec<usize> {
    let (base, sub, top) = (Tree::Arity::to_usize(), Tree::SubTreeArity::to_usize(), Tree::TopTreeArity::to_usize());
    let base_leaves = nodes / sub.max(1) / top.max(1);
    let mut arities = vec![base; base_leaves.ilog(base) as usize];
    arities.extend([sub, top].into_iter().filter(|&a| a > 0));
    arities
}

#[cfg(test)]
mod tests {
    use super::*;
    use filecoin_hashers::poseidon::{PoseidonDomain, PoseidonHasher};
    use filecoin_hashers::sha256::{Sha256Domain, Sha256Hasher};
    use filecoin_proofs::constants::SectorShapeTop2;
    use storage_proofs_core::merkle::{BinaryMerkleTree, MerkleProofTrait, MerkleTreeTrait};

    type Top2Proof = <SectorShapeTop2 as MerkleTreeTrait>::Proof;
    type BinaryProof = <BinaryMerkleTree<Sha256Hasher> as MerkleTreeTrait>::Proof;

    fn poseidon(v: u64) -> PoseidonDomain {
        PoseidonDomain::from(blstrs::Scalar::from(v))
    }

    /// A dense tree (every leaf present) against the sparse one with the same values, and every
    /// path verifying as filecoin-proofs verifies it, at the compound shape (8, 8, 2).
    #[test]
    fn paths_verify_in_filecoin_proofs() {
        let arities = vec![8, 8, 2];
        let present: BTreeMap<u64, PoseidonDomain> =
            [3u64, 64, 65, 127].iter().map(|&i| (i, poseidon(i + 7))).collect();
        let sparse = SparseTree::<PoseidonHasher>::new(arities.clone(), poseidon(5), present.clone());
        let dense_leaves = (0..128u64).map(|i| (i, *present.get(&i).unwrap_or(&poseidon(5)))).collect();
        let dense = SparseTree::<PoseidonHasher>::new(arities, poseidon(99), dense_leaves);
        assert!(sparse.root() == dense.root(), "sparse and dense roots differ");
        for i in [0u64, 3, 64, 65, 100, 127] {
            let p = Top2Proof::from_parts(sparse.leaf(i), sparse.root(), sparse.path(i));
            assert!(p.verify() && p.proves_challenge(i as usize), "leaf {i}");
        }
        let p = Top2Proof::from_parts(poseidon(1), sparse.root(), sparse.path(3));
        assert!(!p.verify(), "a changed leaf verifies");
    }

    /// filecoin-proofs' shapes: 32 GiB eight base trees of arity 8 under one node of arity 8;
    /// 64 GiB sixteen, under 8 then 2; 2 KiB one tree of arity 8.
    #[test]
    fn production_shapes() {
        use filecoin_proofs::constants::{SectorShapeBase, SectorShapeSub8};
        let base9 = [8; 9];
        assert_eq!(shape_arities::<SectorShapeSub8>(1 << 30), [&base9[..], &[8]].concat());
        assert_eq!(shape_arities::<SectorShapeTop2>(1 << 31), [&base9[..], &[8, 2]].concat());
        assert_eq!(shape_arities::<SectorShapeBase>(64), vec![8, 8]);
    }

    /// A piecewise tree against the dense one with the same leaves: runs of 16 leaves under
    /// arity-8 levels (a run ends inside the second level's nodes), and a run as large as the
    /// tree.
    #[test]
    fn piecewise_is_dense() {
        let arities = vec![8, 8, 2];
        let run = |r: u64| poseidon(1000 + r);
        let piecewise = SparseTree::<PoseidonHasher>::piecewise(arities.clone(), 4, run);
        let dense = SparseTree::<PoseidonHasher>::new(
            arities.clone(),
            poseidon(0),
            (0..128).map(|i| (i, run(i >> 4))).collect(),
        );
        assert!(piecewise.root() == dense.root(), "piecewise and dense roots differ");
        for i in [0u64, 15, 16, 77, 127] {
            let p = Top2Proof::from_parts(piecewise.leaf(i), piecewise.root(), piecewise.path(i));
            assert!(p.verify() && p.proves_challenge(i as usize) && piecewise.leaf(i) == run(i >> 4), "leaf {i}");
        }
        let one_run = SparseTree::<PoseidonHasher>::piecewise(arities.clone(), 7, |_| poseidon(5));
        assert!(one_run.root() == SparseTree::<PoseidonHasher>::new(arities, poseidon(5), BTreeMap::new()).root());
    }

    /// The all-zero binary sha256 tree's root is filecoin-proofs' zero piece commitment.
    #[test]
    fn zero_tree_is_the_zero_piece() {
        use filecoin_proofs::{pieces::zero_padding, PaddedBytesAmount, UnpaddedBytesAmount};
        let tree = SparseTree::<Sha256Hasher>::new(vec![2; 20], Sha256Domain::default(), BTreeMap::new());
        let piece = zero_padding(UnpaddedBytesAmount::from(PaddedBytesAmount(32 << 20))).unwrap();
        assert_eq!(<[u8; 32]>::from(tree.root()), piece.commitment);
        let p = BinaryProof::from_parts(tree.leaf(5), tree.root(), tree.path(5));
        assert!(p.verify() && p.proves_challenge(5));
    }
}
