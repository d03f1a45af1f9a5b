//! A SnapDeals request checked and verified as filecoin-proofs does it: each partition's
//! circuit and the public inputs its verifier computes.

use std::fmt;

use blstrs::Scalar;
use filecoin_hashers::Domain;
use filecoin_proofs::constants::{DefaultPieceDomain, SectorShapeBase, SectorShapeSub8, SectorShapeTop2};
use filecoin_proofs::SectorUpdateConfig;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::merkle::MerkleProofTrait;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_update::constants::{apex_leaf_count, challenge_count, TreeRDomain};
use storage_proofs_update::{
    EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound, PartitionProof, PublicInputs, PublicParams,
};

use super::circuit::{public_params, CircuitShape, SnapCircuit};
use super::input::SnapInput;
use super::shape::Shape;
use super::sizes::{partitions, size_of};
use crate::circuits::filecoin::{canonical, check_partition_index, guarded, merkle_proof_sound};
use crate::circuits::porep::PorepSize;
use crate::{Error, Result};

struct Shaped<Tree: Shape> {
    pp: PublicParams,
    pub_in: PublicInputs,
    proofs: Vec<PartitionProof<Tree>>,
}

enum AnyShape {
    Base(Shaped<SectorShapeBase>),
    Sub8(Shaped<SectorShapeSub8>),
    Top2(Shaped<SectorShapeTop2>),
}

/// A tree shape whose requests erase into [`AnyShape`] (and whose circuits into
/// [`SnapCircuit`]).
trait RequestShape: CircuitShape {
    fn wrap_request(r: Shaped<Self>) -> AnyShape;
}

erase_shapes!(RequestShape::wrap_request(Shaped) -> AnyShape { AnyShape, std::convert::identity });

/// A parsed, checked SnapDeals request, ready to build partition circuits from.
pub struct SnapRequest {
    size: PorepSize,
    shaped: AnyShape,
}

impl fmt::Debug for SnapRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SnapRequest").field("size", &self.size).field("partitions", &self.num_partitions()).finish()
    }
}

fn bad(m: impl fmt::Display) -> Error {
    Error::InvalidInput(format!("SnapDeals input: {m}"))
}

impl SnapRequest {
    /// Decodes and checks a request for the update circuit of `size`. Errors, all
    /// `InvalidInput` with the reason: a malformed input; a registered update proof of another
    /// sector size; commitments that are not canonical scalars; a partition count other than
    /// the size's; a partition proof that does not decode, has the wrong number of apex leaves
    /// or challenges, holds a value that is not a field element, or does not verify against
    /// the commitments.
    pub fn parse_for(bytes: &[u8], size: PorepSize) -> Result<SnapRequest> {
        let input = SnapInput::decode(bytes)?;
        let of = size_of(input.proof)?;
        if of != size {
            return Err(bad(format!("it is for a {of} sector ({:?}) but the circuit is snap-{size}", input.proof)));
        }
        for (what, v) in
            [("comm_r_old", &input.comm_r_old), ("comm_r_new", &input.comm_r_new), ("comm_d_new", &input.comm_d_new)]
        {
            if !canonical(v) {
                return Err(bad(format!("{what} is not a canonical BLS12-381 scalar")));
            }
        }
        let want = partitions(size);
        if input.partitions.len() != want {
            return Err(bad(format!(
                "{} partition proofs; a {size} sector's update has {want}",
                input.partitions.len()
            )));
        }
        let shaped = with_shape!(size, shaped, &input, size)?;
        Ok(SnapRequest { size, shaped })
    }

    /// Partitions (= Groth16 proofs) this request proves.
    pub fn num_partitions(&self) -> usize {
        by_shape!(AnyShape, &self.shaped, s => s.proofs.len())
    }

    /// Partition `k`'s circuit, with its witness values, as filecoin-proofs builds it.
    pub fn circuit(&self, k: usize) -> Result<SnapCircuit> {
        check_partition_index(k, self.num_partitions(), "SnapDeals input")?;
        by_shape!(AnyShape, &self.shaped, s => s.circuit(k))
    }

    /// Partition `k`'s public inputs as the API's verifier computes them (without the ONE).
    pub fn public_inputs(&self, k: usize) -> Result<Vec<Scalar>> {
        check_partition_index(k, self.num_partitions(), "SnapDeals input")?;
        by_shape!(AnyShape, &self.shaped, s => s.public_inputs(k))
    }
}

fn decode_partition<Tree: Shape>(k: usize, bytes: &[u8], size: PorepSize) -> Result<PartitionProof<Tree>> {
    let p: PartitionProof<Tree> = bincode::deserialize(bytes)
        .map_err(|e| bad(format!("partition proof {k} does not decode as a {size} sector's PartitionProof: {e}")))?;
    let nodes = (size.sector_bytes() / 32) as usize;
    let bad_k = |m: String| bad(format!("partition proof {k}: {m}"));
    if p.apex_leafs.len() != apex_leaf_count(nodes) || p.challenge_proofs.len() != challenge_count(nodes) {
        return Err(bad_k(format!(
            "{} apex leaves and {} challenges, expected {} and {}",
            p.apex_leafs.len(),
            p.challenge_proofs.len(),
            apex_leaf_count(nodes),
            challenge_count(nodes)
        )));
    }
    if !canonical(p.comm_c.as_ref()) || !p.apex_leafs.iter().all(|l| canonical(l.as_ref())) {
        return Err(bad_k("comm_c or an apex leaf is not a canonical scalar".into()));
    }
    for (i, c) in p.challenge_proofs.iter().enumerate() {
        let lens_ok = c.proof_r_old.path().len() == c.proof_r_old.expected_len(nodes)
            && c.proof_r_new.path().len() == c.proof_r_new.expected_len(nodes);
        let values_ok = merkle_proof_sound(&c.proof_r_old)
            && merkle_proof_sound(&c.proof_d_new)
            && merkle_proof_sound(&c.proof_r_new);
        if !lens_ok || !values_ok {
            return Err(bad_k(format!("challenge {i}'s Merkle proofs are not of this sector's trees")));
        }
    }
    Ok(p)
}

fn shaped<Tree: RequestShape>(input: &SnapInput, size: PorepSize) -> Result<AnyShape> {
    let proofs = input
        .partitions
        .iter()
        .enumerate()
        .map(|(k, b)| decode_partition::<Tree>(k, b, size))
        .collect::<Result<Vec<_>>>()?;
    let config = SectorUpdateConfig::from_porep_config(&input.proof.as_v1_config());
    let pub_in = PublicInputs {
        k: proofs.len(),
        comm_r_old: guarded("comm_r_old", Error::InvalidInput, || TreeRDomain::try_from_bytes(&input.comm_r_old))?,
        comm_d_new: guarded("comm_d_new", Error::InvalidInput, || {
            DefaultPieceDomain::try_from_bytes(&input.comm_d_new)
        })?,
        comm_r_new: guarded("comm_r_new", Error::InvalidInput, || TreeRDomain::try_from_bytes(&input.comm_r_new))?,
        h: config.h,
    };
    let pp = public_params(size);
    let ok = guarded("verifying the partition proofs", Error::InvalidInput, || {
        <EmptySectorUpdate<Tree> as ProofScheme<'_>>::verify_all_partitions(&pp, &pub_in, &proofs)
    })?;
    if !ok {
        return Err(bad("the partition proofs do not verify against comm_r_old, comm_r_new and comm_d_new"));
    }
    Ok(Tree::wrap_request(Shaped { pp, pub_in, proofs }))
}

type Compound<Tree> = EmptySectorUpdateCompound<Tree>;

impl<Tree: CircuitShape> Shaped<Tree> {
    fn circuit(&self, k: usize) -> Result<SnapCircuit> {
        let c = guarded("building the SnapDeals circuit", Error::InvalidInput, || {
            <Compound<Tree> as CompoundProof<EmptySectorUpdate<Tree>, EmptySectorUpdateCircuit<Tree>>>::circuit(
                &self.pub_in,
                (),
                &self.proofs[k],
                &self.pp,
                Some(k),
            )
        })?;
        Ok(Tree::wrap_circuit(c))
    }

    fn public_inputs(&self, k: usize) -> Result<Vec<Scalar>> {
        guarded("generating SnapDeals public inputs", Error::InvalidInput, || {
            <Compound<Tree> as CompoundProof<EmptySectorUpdate<Tree>, EmptySectorUpdateCircuit<Tree>>>::generate_public_inputs(
                &self.pub_in,
                &self.pp,
                Some(k),
            )
        })
    }
}
