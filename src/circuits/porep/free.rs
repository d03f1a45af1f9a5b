//! The free values of a PoRep partition's witness program: what the circuit takes from its C1
//! output, in the order filecoin's `StackedCircuit` allocates it. Its witness program computes
//! everything else (labels, encodings, Poseidon and SHA-256 hashes, bit decompositions).
//!
//! The order, from `StackedCircuit::synthesize` and the gadgets it calls:
//! - the public inputs replica_id, comm_d, comm_r, then comm_r_last and comm_c;
//! - per challenge: the data leaf and its comm_d path; each DRG then expansion parent's column
//!   (one label per layer) and its comm_c path; the challenge's 64 bits (little-endian); the
//!   comm_r_last path; the challenge column's comm_c path.
//!
//! A Merkle path is, level after level (base, then sub-tree, then top), the index bits of the
//! level (log2 of its arity, little-endian) and then its sibling hashes.

use blstrs::Scalar;
use storage_proofs_core::merkle::MerkleProofTrait;
use storage_proofs_porep::stacked::ColumnProof;

use super::proving::Proving;
use super::shape::Shape;
use crate::{Error, Result};

/// A Merkle path as filecoin's circuits take it: per level, the siblings and the index.
type PathOptions = Vec<(Vec<Option<Scalar>>, Option<usize>)>;

fn missing(what: &str) -> Error {
    Error::Synthesis(format!("the PoRep vanilla proof lacks {what}"))
}

/// The free values of `p`'s witness program, in order.
pub(super) fn values<Tree: Shape>(p: &Proving<Tree>) -> Result<Vec<Scalar>> {
    let mut out = vec![
        p.replica_id.into(),
        p.comm_d.ok_or_else(|| missing("comm_d"))?.into(),
        p.comm_r.ok_or_else(|| missing("comm_r"))?.into(),
        p.comm_r_last.into(),
        p.comm_c.into(),
    ];
    for v in &p.challenges {
        out.push(v.comm_d_proofs.leaf().into());
        path(&mut out, v.comm_d_proofs.as_options())?;
        let columns = &v.replica_column_proofs;
        let layers = v.labeling_proofs.len();
        for parent in columns.drg_parents.iter().chain(&columns.exp_parents) {
            for layer in 1..=layers {
                let label = parent.get_node_at_layer(layer).map_err(|e| Error::Synthesis(format!("{e:#}")))?;
                out.push(Scalar::from(*label));
            }
            path(&mut out, inclusion_path(parent)?)?;
        }
        let challenge = serde_json::to_value(v.labeling_proofs.first().ok_or_else(|| missing("a labeling proof"))?)
            .ok()
            .and_then(|l| l["node"].as_u64())
            .ok_or_else(|| missing("the challenged node"))?;
        out.extend((0..64).map(|i| Scalar::from(challenge >> i & 1)));
        path(&mut out, v.comm_r_last_proof.as_options())?;
        path(&mut out, inclusion_path(&columns.c_x)?)?;
    }
    Ok(out)
}

/// A path's free values: per level its index bits, then its siblings.
fn path(out: &mut Vec<Scalar>, levels: PathOptions) -> Result<()> {
    for (siblings, index) in levels {
        let index = index.ok_or_else(|| missing("a path index"))?;
        let bits = (siblings.len() + 1).trailing_zeros();
        out.extend((0..bits).map(|i| Scalar::from((index >> i & 1) as u64)));
        for s in siblings {
            out.push(s.ok_or_else(|| missing("a path sibling"))?);
        }
    }
    Ok(())
}

/// A column's inclusion path (the vanilla column proof keeps it to its crate: read through its
/// serialized form).
fn inclusion_path<P>(c: &ColumnProof<P>) -> Result<PathOptions>
where
    P: MerkleProofTrait + serde::de::DeserializeOwned,
    ColumnProof<P>: serde::Serialize,
{
    let v = serde_json::to_value(c).map_err(|e| Error::Synthesis(format!("a column proof: {e}")))?;
    let proof: P = serde_json::from_value(v["inclusion_proof"].clone())
        .map_err(|e| Error::Synthesis(format!("a column's inclusion proof: {e}")))?;
    Ok(proof.as_options())
}
