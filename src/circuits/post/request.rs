//! A PoSt request checked and partitioned as filecoin-proofs does it: each partition's circuit
//! and the public inputs its verifier computes.

use std::fmt;

use blstrs::Scalar;
use filecoin_hashers::{Domain as _, Hasher};
use filecoin_proofs::constants::{DefaultTreeHasher, SectorShapeBase, SectorShapeSub8, SectorShapeTop2};
use filecoin_proofs::FallbackPoStSectorProof;
use filecoin_proofs_api::RegisteredPoStProof;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::merkle::{MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_post::fallback::{self, FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound, PublicSector};

use super::circuit::{CircuitShape, PostCircuit};
use super::input::PostInput;
use super::post_type::{config, public_params_for, PostKind, PostType};
use super::shape::Shape;
use super::verifier::partition_inputs;
use crate::circuits::filecoin::{canonical, check_partition_index, guarded, merkle_proof_sound};
use crate::{Error, Result};

/// The most partitions a WindowPoSt deadline holds (the miner actor's
/// `MAX_PARTITIONS_PER_DEADLINE`): a single-partition request's index must be below it.
const MAX_PARTITION_INDEX: u64 = 3000;

type VanillaProof<Tree> = fallback::Proof<<Tree as MerkleTreeTrait>::Proof>;
type Domain = <DefaultTreeHasher as Hasher>::Domain;

struct Shaped<Tree: Shape> {
    pp: fallback::PublicParams,
    /// The prover's public inputs: what each partition's circuit takes its sectors from.
    pub_in: fallback::PublicInputs<Domain>,
    /// Each partition's vanilla proof, as filecoin-proofs partitions them.
    partitions: Vec<VanillaProof<Tree>>,
    /// The verifier's public inputs, with this request's partitions' sectors only, and the
    /// index of its first partition among all (a single WindowPoSt partition's own index).
    verifier: fallback::PublicInputs<Domain>,
    first: usize,
}

enum AnyShape {
    Base(Shaped<SectorShapeBase>),
    Sub8(Shaped<SectorShapeSub8>),
    Top2(Shaped<SectorShapeTop2>),
}

/// A tree shape whose requests erase into [`AnyShape`] (and whose circuits into
/// [`PostCircuit`]).
trait RequestShape: CircuitShape {
    fn wrap_request(r: Shaped<Self>) -> AnyShape;
}

erase_shapes!(RequestShape::wrap_request(Shaped) -> AnyShape { AnyShape, std::convert::identity });

/// A parsed, checked PoSt request, ready to build partition circuits from.
pub struct PostRequest {
    typ: PostType,
    proof: RegisteredPoStProof,
    partition: Option<u64>,
    shaped: AnyShape,
}

impl fmt::Debug for PostRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostRequest")
            .field("proof", &self.proof)
            .field("partition", &self.partition)
            .field("partitions", &self.num_partitions())
            .finish()
    }
}

fn bad(m: impl fmt::Display) -> Error {
    Error::InvalidInput(format!("PoSt input: {m}"))
}

impl PostRequest {
    /// Decodes and checks a request for circuit `typ`. Errors, all `InvalidInput` with the
    /// reason: a malformed input ([`PostInput::decode`]); a registered proof of another kind
    /// or sector size; a non-canonical randomness or prover id; too many or too few vanilla
    /// proofs (WinningPoSt: one; a WindowPoSt partition: at most its sector count); a partition
    /// index for WinningPoSt or out of range; a vanilla proof that does not decode, is for
    /// another tree, repeats a sector, holds a value that is not a field element, or does not
    /// verify against its sector's comm_r and the challenges the randomness draws.
    pub fn parse_for(bytes: &[u8], typ: PostType) -> Result<PostRequest> {
        let input = PostInput::decode(bytes)?;
        let of = PostType::of_registered_proof(input.proof);
        if of != typ {
            return Err(bad(format!("it is a {of} request ({:?}) but the circuit is {typ}", input.proof)));
        }
        for (what, v) in [("randomness", &input.randomness), ("prover id", &input.prover_id)] {
            if !canonical(v) {
                return Err(bad(format!("the {what} is not a canonical BLS12-381 scalar (little-endian)")));
            }
        }
        let n = input.vanilla.len();
        let per = typ.sectors_per_partition();
        match (typ.kind, input.partition) {
            (PostKind::Winning, Some(k)) => return Err(bad(format!("partition index {k}: WinningPoSt has one"))),
            (PostKind::Winning, None) if n != 1 => {
                return Err(bad(format!("{n} vanilla proofs; WinningPoSt proves exactly one sector")))
            }
            (PostKind::Window, _) if n == 0 => return Err(bad("no vanilla proofs")),
            (PostKind::Window, Some(k)) if k >= MAX_PARTITION_INDEX => {
                return Err(bad(format!(
                    "partition index {k} is out of range (a deadline has at most {MAX_PARTITION_INDEX})"
                )))
            }
            (PostKind::Window, Some(_)) if n > per => {
                return Err(bad(format!("{n} vanilla proofs for one partition of at most {per} sectors")))
            }
            _ => {}
        }
        let shaped = with_shape!(typ.size, shaped, &input)?;
        Ok(PostRequest { typ, proof: input.proof, partition: input.partition, shaped })
    }

    pub fn post_type(&self) -> PostType {
        self.typ
    }

    /// Partitions (= Groth16 proofs) this request proves.
    pub fn num_partitions(&self) -> usize {
        by_shape!(AnyShape, &self.shaped, s => s.partitions.len())
    }

    /// Partition `k`'s circuit, with its witness values, as filecoin-proofs builds it.
    pub fn circuit(&self, k: usize) -> Result<PostCircuit> {
        check_partition_index(k, self.num_partitions(), "PoSt input")?;
        by_shape!(AnyShape, &self.shaped, s => s.circuit(k))
    }

    /// Partition `k`'s public inputs as the API's verifier computes them (without the ONE).
    pub fn public_inputs(&self, k: usize) -> Result<Vec<Scalar>> {
        check_partition_index(k, self.num_partitions(), "PoSt input")?;
        by_shape!(AnyShape, &self.shaped, s => s.public_inputs(k))
    }
}

/// Bytes of a request's proof, read from its header alone (no vanilla proof decoded): 192 per
/// partition.
pub(crate) fn proof_len_of(bytes: &[u8], typ: PostType) -> Result<usize> {
    let input = PostInput::decode(bytes)?;
    let partitions = match input.partition {
        Some(_) => 1,
        None => typ.partitions_for(input.vanilla.len()),
    };
    Ok(partitions * crate::groth16::PROOF_BYTES)
}

/// Decodes one vanilla proof and checks its shape and values before filecoin-proofs' code
/// hashes them.
fn decode_vanilla<Tree: Shape>(
    i: usize,
    bytes: &[u8],
    typ: PostType,
    challenges: usize,
) -> Result<FallbackPoStSectorProof<Tree>> {
    let p: FallbackPoStSectorProof<Tree> = bincode::deserialize(bytes).map_err(|e| {
        bad(format!("vanilla proof {i} does not decode as a {} sector's FallbackPoStSectorProof: {e}", typ.size))
    })?;
    let bad_i = |m: String| bad(format!("vanilla proof {i} (sector {}): {m}", u64::from(p.sector_id)));
    if !canonical(p.comm_r.as_ref()) {
        return Err(bad_i("comm_r is not a canonical scalar".into()));
    }
    let [sector] = &p.vanilla_proof.sectors[..] else {
        return Err(bad_i(format!("{} sector proofs, expected 1", p.vanilla_proof.sectors.len())));
    };
    if sector.inclusion_proofs.len() != challenges {
        return Err(bad_i(format!("{} inclusion proofs, expected {challenges}", sector.inclusion_proofs.len())));
    }
    if !canonical(sector.comm_c.as_ref()) || !canonical(sector.comm_r_last.as_ref()) {
        return Err(bad_i("comm_c or comm_r_last is not a canonical scalar".into()));
    }
    let leaves = (typ.size.sector_bytes() / 32) as usize;
    for (j, proof) in sector.inclusion_proofs.iter().enumerate() {
        let path = proof.path();
        if path.len() != proof.expected_len(leaves) {
            return Err(bad_i(format!(
                "inclusion proof {j}'s path has {} levels, expected {}",
                path.len(),
                proof.expected_len(leaves)
            )));
        }
        if !merkle_proof_sound(proof) {
            return Err(bad_i(format!(
                "inclusion proof {j} holds a value that is not a canonical scalar, or a step not of this tree"
            )));
        }
    }
    Ok(p)
}

fn shaped<Tree: RequestShape>(input: &PostInput) -> Result<AnyShape> {
    let typ = PostType::of_registered_proof(input.proof);
    let cfg = config(input.proof);
    let pp = public_params_for::<Tree>(input.proof)?;
    let challenges = match typ.kind {
        PostKind::Winning => cfg.challenge_count,
        PostKind::Window => pp.challenge_count,
    };
    let mut vanilla = input
        .vanilla
        .iter()
        .enumerate()
        .map(|(i, b)| decode_vanilla::<Tree>(i, b, typ, challenges))
        .collect::<Result<Vec<_>>>()?;
    // The verifier orders sectors by id (a BTreeMap): so must the prover.
    vanilla.sort_by_key(|p| u64::from(p.sector_id));
    if let Some(w) = vanilla.windows(2).find(|w| w[0].sector_id == w[1].sector_id) {
        return Err(bad(format!("sector {} has two vanilla proofs", u64::from(w[0].sector_id))));
    }
    let domain = |b: &[u8; 32], what: &str| guarded(what, Error::InvalidInput, || Domain::try_from_bytes(b));
    let sectors: Vec<_> = vanilla.iter().map(|p| PublicSector { id: p.sector_id, comm_r: p.comm_r }).collect();
    let pub_in = fallback::PublicInputs {
        randomness: domain(&input.randomness, "PoSt randomness")?,
        prover_id: domain(&input.prover_id, "PoSt prover id")?,
        sectors: sectors.clone(),
        k: input.partition.map(|k| k as usize),
    };
    let verify_failed = |e: Error| bad(format!("the vanilla proofs do not verify: {e}"));
    let (partitions, verifier, first) = match (typ.kind, input.partition) {
        (PostKind::Winning, _) => {
            let parts = guarded("partitioning", Error::InvalidInput, || {
                filecoin_proofs::partition_vanilla_proofs(&cfg, &pp, &pub_in, 1, &vanilla)
            })
            .map_err(verify_failed)?;
            // The verifier lists the one sector once per circuit sector (66 times).
            let all = sectors.iter().cycle().take(pp.sector_count).cloned().collect();
            (parts, fallback::PublicInputs { sectors: all, k: None, ..pub_in.clone() }, 0)
        }
        (PostKind::Window, None) => {
            let count = typ.partitions_for(vanilla.len());
            let parts = guarded("partitioning", Error::InvalidInput, || {
                filecoin_proofs::partition_vanilla_proofs(&cfg, &pp, &pub_in, count, &vanilla)
            })
            .map_err(verify_failed)?;
            (parts, pub_in.clone(), 0)
        }
        (PostKind::Window, Some(k)) => {
            let part = guarded("partitioning", Error::InvalidInput, || {
                filecoin_proofs::single_partition_vanilla_proofs(&cfg, &pp, &pub_in, &vanilla)
            })
            .map_err(verify_failed)?;
            // Partition k's sectors alone: its inputs are computed from them and its index
            // (`verifier.rs`), not from every partition's.
            (vec![part], fallback::PublicInputs { k: None, ..pub_in.clone() }, k as usize)
        }
    };
    Ok(Tree::wrap_request(Shaped { pp, pub_in, partitions, verifier, first }))
}

impl<Tree: CircuitShape> Shaped<Tree> {
    fn circuit(&self, k: usize) -> Result<PostCircuit> {
        let c = guarded("building the PoSt circuit", Error::InvalidInput, || {
            <FallbackPoStCompound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, FallbackPoStCircuit<Tree>>>::circuit(
                &self.pub_in,
                Default::default(),
                &self.partitions[k],
                &self.pp,
                Some(k),
            )
        })?;
        Ok(Tree::wrap_circuit(c))
    }

    fn public_inputs(&self, k: usize) -> Result<Vec<Scalar>> {
        let sectors = self.verifier.sectors.chunks(self.pp.sector_count).nth(k).unwrap_or_default();
        guarded("generating PoSt public inputs", Error::InvalidInput, || {
            partition_inputs::<Tree>(&self.pp, &self.verifier.randomness, sectors, self.first + k)
        })
    }
}
