//! The nodes a sparse sector holds and their labels: every challenged node and its parents
//! (DRG parents in its own layer, expander parents in the layer before), nothing else. A
//! parent's labels are drawn from the seed; a challenged node's are computed as SDR computes
//! them, from its parents' labels, layer by layer. A node both challenged and a parent holds
//! its computed labels in both roles.

use std::collections::{BTreeMap, BTreeSet};

use filecoin_proofs::constants::{DefaultTreeDomain, DefaultTreeHasher};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use storage_proofs_core::drgraph::{Graph, BASE_DEGREE};
use storage_proofs_porep::stacked::{StackedBucketGraph, EXP_DEGREE, TOTAL_PARENTS};

/// The present nodes of a sparse sector: their columns (a label per layer) and, for the
/// challenged ones, their parents.
pub struct Opened {
    /// Every present node's labels, layer 1 first.
    columns: BTreeMap<u32, Vec<DefaultTreeDomain>>,
    /// Each challenged node's parents as the graph gives them: DRG parents, then expander ones.
    parents: BTreeMap<u32, Vec<u32>>,
}

impl Opened {
    /// Opens the `challenged` nodes of the sector `replica_id` names in `graph` with `layers`
    /// layers; the parents' labels are drawn from `seed`. The graph's parents are computed
    /// on all cores, for the challenged nodes only (no parent cache).
    pub fn new(
        graph: &StackedBucketGraph<DefaultTreeHasher>,
        layers: usize,
        replica_id: &DefaultTreeDomain,
        challenged: &[usize],
        seed: u64,
    ) -> Opened {
        let challenged: BTreeSet<u32> = challenged.iter().map(|&c| c as u32).collect();
        let parents: BTreeMap<u32, Vec<u32>> = challenged
            .par_iter()
            .map(|&c| {
                let mut p = vec![0u32; BASE_DEGREE + EXP_DEGREE];
                graph.parents(c as usize, &mut p).expect("the stacked graph's parents of a node inside it");
                (c, p)
            })
            .collect();
        let drawn: BTreeSet<u32> = parents.values().flatten().copied().filter(|p| !challenged.contains(p)).collect();
        let mut columns: BTreeMap<u32, Vec<DefaultTreeDomain>> =
            drawn.into_par_iter().map(|p| (p, drawn_column(seed, p, layers))).collect();
        columns.extend(challenged.iter().map(|&c| (c, Vec::with_capacity(layers))));
        let mut opened = Opened { columns, parents };
        // Layer by layer, nodes in ascending order: a DRG parent precedes its child in the same
        // layer, an expander parent was labelled in the layer before.
        for layer in 1..=layers {
            for &c in &challenged {
                let label = label(replica_id, layer, c, &opened.label_parents(c, layer));
                opened.columns.get_mut(&c).expect("a challenged node's column").push(label);
            }
        }
        opened
    }

    /// Every present node with its labels, in node order.
    pub fn columns(&self) -> impl Iterator<Item = (u32, &[DefaultTreeDomain])> {
        self.columns.iter().map(|(&n, c)| (n, c.as_slice()))
    }

    /// Node `n`'s labels, layer 1 first.
    pub fn column(&self, n: u32) -> &[DefaultTreeDomain] {
        self.columns.get(&n).map(Vec::as_slice).expect("a node of the sparse sector")
    }

    /// A challenged node's parents: its DRG parents, then its expander parents.
    pub fn parents(&self, c: u32) -> &[u32] {
        self.parents.get(&c).map(Vec::as_slice).expect("a challenged node")
    }

    /// The parent labels challenged node `c`'s label at `layer` is hashed from, repeated to
    /// filecoin-proofs' 37 as its labeling proof holds them: at layer 1 the DRG parents' labels,
    /// above it theirs in the same layer then the expander parents' in the layer below.
    pub fn label_parents(&self, c: u32, layer: usize) -> Vec<DefaultTreeDomain> {
        let count = if layer == 1 { BASE_DEGREE } else { BASE_DEGREE + EXP_DEGREE };
        let labels: Vec<DefaultTreeDomain> = self.parents(c)[..count]
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let at = if i < BASE_DEGREE { layer } else { layer - 1 };
                *self.column(p).get(at - 1).expect("a parent labelled before its child")
            })
            .collect();
        labels.iter().copied().cycle().take(TOTAL_PARENTS).collect()
    }
}

/// A parent node's labels, drawn from `seed` (one ChaCha stream per node: the same whichever
/// challenges it serves), each a field element as SDR's are (top two bits cleared).
fn drawn_column(seed: u64, node: u32, layers: usize) -> Vec<DefaultTreeDomain> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7370_6172_7365);
    rng.set_stream(u64::from(node));
    (0..layers)
        .map(|_| {
            let mut b = [0u8; 32];
            rng.fill_bytes(&mut b);
            b[31] &= 0x3f;
            DefaultTreeDomain::from(b)
        })
        .collect()
}

/// SDR's label of `node` at `layer` (filecoin-proofs' `create_label`): sha256 of the replica
/// id, the layer (u32, big-endian) and the node (u64, big-endian) in a 64-byte block, then the
/// 37 parent labels; the digest's top two bits cleared so it is a field element.
fn label(replica_id: &DefaultTreeDomain, layer: usize, node: u32, parents: &[DefaultTreeDomain]) -> DefaultTreeDomain {
    let mut block = [0u8; 64];
    block[..32].copy_from_slice(replica_id.as_ref());
    block[32..36].copy_from_slice(&(layer as u32).to_be_bytes());
    block[36..44].copy_from_slice(&u64::from(node).to_be_bytes());
    let mut h = Sha256::new();
    h.update(block);
    for p in parents {
        h.update(AsRef::<[u8]>::as_ref(p));
    }
    let mut digest: [u8; 32] = h.finalize().into();
    digest[31] &= 0x3f;
    DefaultTreeDomain::from(digest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use filecoin_proofs::constants::SectorShapeBase;
    use filecoin_proofs::parameters::public_params;
    use filecoin_proofs_api::RegisteredSealProof;
    use storage_proofs_porep::stacked::LabelingProof;

    /// In a 2 KiB sector (64 nodes) most challenged nodes are each other's parents: every
    /// label verifies as filecoin-proofs' labeling proof, and a parent that is challenged
    /// holds its computed labels.
    #[test]
    fn labels_are_sdr_labels() {
        let vp = public_params::<SectorShapeBase>(&RegisteredSealProof::StackedDrg2KiBV1_1.as_v1_config()).unwrap();
        let replica_id = DefaultTreeDomain::from([7u8; 32]);
        let challenged: Vec<usize> = (1..64).step_by(3).collect();
        let o = Opened::new(&vp.graph, vp.num_layers, &replica_id, &challenged, 1);
        let mut shared = 0;
        for &c in &challenged {
            let c = c as u32;
            for layer in 1..=vp.num_layers {
                let proof = LabelingProof::<DefaultTreeHasher>::new(layer as u32, c.into(), o.label_parents(c, layer));
                assert!(proof.verify(&replica_id, &o.column(c)[layer - 1]), "node {c} layer {layer}");
            }
            shared += o.parents(c).iter().filter(|p| challenged.contains(&(**p as usize))).count();
        }
        assert!(shared > 0, "no challenged node is another's parent: the case is not exercised");
    }
}
