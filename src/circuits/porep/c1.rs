//! A C1 output (`SealCommitPhase1Output`) parsed and validated: the partitions' circuits and
//! public inputs.

use std::any::Any;
use std::fmt;

use blstrs::Scalar;
use ff::PrimeField;
use filecoin_hashers::Domain;
use filecoin_proofs::constants::{
    DefaultPieceDomain, DefaultTreeDomain, SectorShapeBase, SectorShapeSub8, SectorShapeTop2,
};
use filecoin_proofs_api::seal::{SealCommitPhase1Output, VanillaSealProof};
use filecoin_proofs_api::RegisteredSealProof;
use serde::Deserialize;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::merkle::MerkleProofTrait;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_porep::stacked::{self, StackedCircuit, StackedDrg};

use super::c1_head::{Head, Name};
use super::circuit::{CircuitShape, PorepCircuit, ShapedCircuit};
use super::proving::Proving;
use super::shape::{vanilla_params, Compound, PubIn, Shape, VanillaProof, G};
use super::sizes::{PorepSize, SealVariant};
use crate::circuits::filecoin::guarded;
use crate::{Error, Result};

struct ShapedProofs<Tree: Shape> {
    vp: stacked::PublicParams<Tree>,
    vanilla: Vec<Vec<VanillaProof<Tree>>>,
}

enum VanillaProofs {
    Base(ShapedProofs<SectorShapeBase>),
    Sub8(ShapedProofs<SectorShapeSub8>),
    Top2(ShapedProofs<SectorShapeTop2>),
}

/// A tree shape whose vanilla proofs erase into [`VanillaProofs`] (and whose circuits into
/// [`PorepCircuit`]).
trait ProofsShape: CircuitShape {
    fn wrap_proofs(t: ShapedProofs<Self>) -> VanillaProofs;
}

erase_shapes!(ProofsShape::wrap_proofs(ShapedProofs) -> VanillaProofs { VanillaProofs, std::convert::identity });

/// A parsed and validated C1 output, ready to build partition circuits from.
pub struct PorepC1 {
    size: PorepSize,
    variant: SealVariant,
    pub_in: PubIn,
    proofs: VanillaProofs,
    comm_r: [u8; 32],
    comm_d: [u8; 32],
    /// What its vanilla proofs hold on the heap ([`PorepC1::heap_bytes`]).
    heap_bytes: u64,
}

impl fmt::Debug for PorepC1 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PorepC1")
            .field("size", &self.size)
            .field("variant", &self.variant)
            .field("partitions", &self.num_partitions())
            .field("comm_r", &hex(&self.comm_r))
            .field("comm_d", &hex(&self.comm_d))
            .finish()
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn json_error(what: &str, e: serde_json::Error) -> Error {
    use serde_json::error::Category;
    let kind = match e.classify() {
        Category::Eof => "truncated",
        Category::Syntax => "malformed JSON",
        Category::Data => "not a SealCommitPhase1Output",
        Category::Io => "unreadable",
    };
    Error::InvalidInput(format!("{what}: {kind}: {e}"))
}

/// The registered-proof names filecoin-proofs-api knows, for error messages.
const KNOWN_PROOFS: &[(&str, &str)] = &[
    ("StackedDrg2KiBV1", "V1 (pre-V1_1)"),
    ("StackedDrg8MiBV1", "V1 (pre-V1_1)"),
    ("StackedDrg512MiBV1", "V1 (pre-V1_1)"),
    ("StackedDrg32GiBV1", "V1 (pre-V1_1)"),
    ("StackedDrg64GiBV1", "V1 (pre-V1_1)"),
];

impl PorepC1 {
    /// Parses and validates a C1 output (JSON bytes of filecoin-proofs-api's
    /// `SealCommitPhase1Output`), streaming: read twice, first its head (`c1_head.rs`), then
    /// into its final types, never into a JSON document. Errors, all `Error::InvalidInput` with
    /// the reason:
    /// empty/truncated/malformed JSON; a registered proof that is unknown or V1 (before V1_1); vanilla
    /// proofs tagged for another sector size; a partition or challenge count, Merkle path length or
    /// layer count that does not match the sector size; zero or non-canonical commitments; vanilla
    /// proofs that do not verify against comm_r, comm_d, replica id and seed.
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        Self::parse_inner(bytes, None)
    }

    /// As [`parse`](Self::parse), and also refuses a C1 whose sector size is not `expected`
    /// (e.g. a 32 GiB C1 sent to a 2 KiB PCE).
    pub fn parse_for(bytes: &[u8], expected: PorepSize) -> Result<Self> {
        Self::parse_inner(bytes, Some(expected))
    }

    fn parse_inner(bytes: &[u8], expected: Option<PorepSize>) -> Result<Self> {
        if bytes.iter().all(|b| b.is_ascii_whitespace()) {
            return Err(Error::InvalidInput("C1 output is empty".into()));
        }
        let head: Head = serde_json::from_slice(bytes).map_err(|e| json_error("C1 output", e))?;
        let name = match head.registered_proof {
            Name::Name(s) => s,
            Name::Other(found) => {
                return Err(Error::InvalidInput(format!("C1 output: registered_proof must be a string, found {found}")))
            }
        };
        let rp = RegisteredSealProof::deserialize(serde::de::value::StrDeserializer::<serde_json::Error>::new(&name))
            .map_err(|_| Error::InvalidInput(format!("C1 output: unknown registered proof {:?}", shown(&name))))?;
        if let Some((_, why)) = KNOWN_PROOFS.iter().find(|(n, _)| *n == name) {
            return Err(Error::InvalidInput(format!(
                "C1 output: registered proof {name} is {why}; the V1_1 seal proofs and their \
                 SyntheticPoRep and NonInteractivePoRep variants are supported"
            )));
        }
        let (size, variant) = PorepSize::from_registered_proof(rp)?;
        if let Some(want) = expected {
            if want != size {
                return Err(Error::InvalidInput(format!(
                    "C1 output is for a {size} sector ({rp:?}) but a {want} PoRep ({:?}) was requested",
                    want.registered_proof()
                )));
            }
        }

        let c1: SealCommitPhase1Output = serde_json::from_slice(bytes).map_err(|e| json_error("C1 output", e))?;
        if c1.registered_proof != rp {
            return Err(Error::InvalidInput("C1 output: registered_proof changed while parsing".into()));
        }

        let tag_size = match &c1.vanilla_proofs {
            VanillaSealProof::StackedDrg2KiBV1(_) => PorepSize::KiB2,
            VanillaSealProof::StackedDrg8MiBV1(_) => PorepSize::MiB8,
            VanillaSealProof::StackedDrg512MiBV1(_) => PorepSize::MiB512,
            VanillaSealProof::StackedDrg32GiBV1(_) => PorepSize::GiB32,
            VanillaSealProof::StackedDrg64GiBV1(_) => PorepSize::GiB64,
        };
        if tag_size != size {
            return Err(Error::InvalidInput(format!(
                "C1 output: registered proof {rp:?} is for a {size} sector but its vanilla proofs \
                 are tagged for {tag_size}"
            )));
        }

        for (name, v) in [("comm_d", &c1.comm_d), ("comm_r", &c1.comm_r), ("seed", &c1.seed)] {
            if v.iter().all(|&b| b == 0) {
                return Err(Error::InvalidInput(format!("C1 output: {name} is all zero")));
            }
        }
        for (name, v) in [("comm_d", &c1.comm_d), ("comm_r", &c1.comm_r)] {
            if canonical(v).is_none() {
                return Err(Error::InvalidInput(format!("C1 output: {name} is not a canonical BLS12-381 scalar")));
            }
        }
        let replica_bytes: [u8; 32] = c1.replica_id.into();
        if canonical(&replica_bytes).is_none() {
            return Err(Error::InvalidInput("C1 output: replica_id is not a canonical BLS12-381 scalar".into()));
        }

        if let Some(what) = head.vanilla_proofs.0 {
            return Err(Error::InvalidInput(format!("C1 output: {what} (corrupted C1)")));
        }

        let pub_in = PubIn {
            replica_id: c1.replica_id,
            tau: Some(stacked::Tau {
                comm_d: guarded("C1 comm_d", Error::InvalidInput, || DefaultPieceDomain::try_from_bytes(&c1.comm_d))?,
                comm_r: guarded("C1 comm_r", Error::InvalidInput, || DefaultTreeDomain::try_from_bytes(&c1.comm_r))?,
            }),
            k: None,
            seed: Some(c1.seed),
        };

        let (comm_r, comm_d) = (c1.comm_r, c1.comm_d);
        // Their data, thrice: their vectors' headers and spare capacity come on top of it (they
        // held 1.7 times their data at 2 KiB).
        let heap_bytes = 3 * bincode::serialized_size(&c1.vanilla_proofs).unwrap_or(0);
        let proofs = match c1.vanilla_proofs {
            VanillaSealProof::StackedDrg2KiBV1(v) => typed::<SectorShapeBase>(rp, &pub_in, Box::new(v))?,
            VanillaSealProof::StackedDrg8MiBV1(v) => typed::<SectorShapeBase>(rp, &pub_in, Box::new(v))?,
            VanillaSealProof::StackedDrg512MiBV1(v) => typed::<SectorShapeBase>(rp, &pub_in, Box::new(v))?,
            VanillaSealProof::StackedDrg32GiBV1(v) => typed::<SectorShapeSub8>(rp, &pub_in, Box::new(v))?,
            VanillaSealProof::StackedDrg64GiBV1(v) => typed::<SectorShapeTop2>(rp, &pub_in, Box::new(v))?,
        };
        Ok(PorepC1 { size, variant, pub_in, proofs, comm_r, comm_d, heap_bytes })
    }

    /// Bytes its vanilla proofs hold on the heap, at most: three times their data (every
    /// hash's 32 bytes, 8 per index and count). What a request of this C1 holds beside its
    /// partitions.
    pub fn heap_bytes(&self) -> u64 {
        self.heap_bytes
    }

    /// The seal proof variant a C1 output names, read without parsing the rest of it.
    pub fn variant_of(bytes: &[u8]) -> Result<SealVariant> {
        #[derive(serde::Deserialize)]
        struct Name {
            registered_proof: RegisteredSealProof,
        }
        let name: Name = serde_json::from_slice(bytes).map_err(|e| json_error("C1 output", e))?;
        Ok(PorepSize::from_registered_proof(name.registered_proof)?.1)
    }

    /// The seal proof variant the C1 names.
    pub fn variant(&self) -> SealVariant {
        self.variant
    }

    /// Number of partitions (= proofs) in this C1.
    pub fn num_partitions(&self) -> usize {
        by_shape!(VanillaProofs, &self.proofs, t => t.vanilla.len())
    }

    fn check_k(&self, k: usize) -> Result<()> {
        if k >= self.num_partitions() {
            return Err(Error::InvalidInput(format!(
                "partition {k} out of range: this {} C1 has {} partitions",
                self.size,
                self.num_partitions()
            )));
        }
        Ok(())
    }

    /// Partition `k`'s circuit (with its witness values), as filecoin-proofs builds it for C2.
    pub fn circuit(&self, k: usize) -> Result<PorepCircuit> {
        self.check_k(k)?;
        by_shape!(VanillaProofs, &self.proofs, t => t.circuit(&self.pub_in, k))
    }

    /// Partition `k`'s public inputs as the verifier computes them (without the leading ONE).
    pub fn public_inputs(&self, k: usize) -> Result<Vec<Scalar>> {
        self.check_k(k)?;
        by_shape!(VanillaProofs, &self.proofs, t => t.public_inputs(&self.pub_in, k))
    }
}

fn canonical(bytes: &[u8; 32]) -> Option<Scalar> {
    Scalar::from_repr_vartime(*bytes)
}

/// A name as an error shows it: cut at 100 characters (none of the registered proofs' is
/// half as long).
fn shown(name: &str) -> std::borrow::Cow<'_, str> {
    match name.char_indices().nth(100) {
        Some((end, _)) => format!("{}…", &name[..end]).into(),
        None => name.into(),
    }
}

/// Moves the vanilla proofs into their concrete type and validates their shape against the
/// public parameters of the seal proof `rp`, then verifies them (vanilla verification, as C1
/// itself does).
fn typed<Tree: ProofsShape>(rp: RegisteredSealProof, pub_in: &PubIn, raw: Box<dyn Any>) -> Result<VanillaProofs> {
    let (size, variant) = PorepSize::from_registered_proof(rp)?;
    let vanilla: Vec<Vec<VanillaProof<Tree>>> = *raw
        .downcast()
        .map_err(|_| Error::InvalidInput(format!("C1 output: vanilla proofs do not have the {size} tree shape")))?;
    let vp = vanilla_params::<Tree>(rp)?;
    let nodes = (size.sector_bytes() / 32) as usize;
    let partitions = variant.partitions(size);
    let per_partition = vp.challenges.num_challenges_per_partition();
    let bad = |m: String| Error::InvalidInput(format!("C1 output ({size}): {m}"));

    if vanilla.len() != partitions {
        return Err(bad(format!("{} partitions of vanilla proofs, expected {partitions}", vanilla.len())));
    }
    for (k, part) in vanilla.iter().enumerate() {
        if part.len() != per_partition {
            return Err(bad(format!("partition {k} has {} challenge proofs, expected {per_partition}", part.len())));
        }
        for (i, p) in part.iter().enumerate() {
            let d_len = p.comm_d_proofs.expected_len(nodes);
            if p.comm_d_proofs.path().len() != d_len {
                return Err(bad(format!(
                    "partition {k} challenge {i}: comm_d Merkle path has length {}, expected {d_len} \
                     (a C1 of another sector size?)",
                    p.comm_d_proofs.path().len()
                )));
            }
            let r_len = p.comm_r_last_proof.expected_len(nodes);
            if p.comm_r_last_proof.path().len() != r_len {
                return Err(bad(format!(
                    "partition {k} challenge {i}: comm_r_last Merkle path has length {}, expected {r_len}",
                    p.comm_r_last_proof.path().len()
                )));
            }
            if p.labeling_proofs.len() != vp.num_layers {
                return Err(bad(format!(
                    "partition {k} challenge {i}: {} labeling proofs, expected {} layers",
                    p.labeling_proofs.len(),
                    vp.num_layers
                )));
            }
        }
    }
    let ok = guarded("C1 vanilla proof verification", Error::InvalidInput, || {
        <StackedDrg<'_, Tree, G> as ProofScheme<'_>>::verify_all_partitions(&vp, pub_in, &vanilla)
    })?;
    if !ok {
        return Err(bad("the vanilla proofs do not verify against comm_r, comm_d, replica_id and seed \
             (corrupted C1, or one for another sector or sector size)"
            .into()));
    }
    Ok(Tree::wrap_proofs(ShapedProofs { vp, vanilla }))
}

impl<Tree: CircuitShape> ShapedProofs<Tree> {
    /// What `StackedCompound::circuit` builds for partition `k`, with the same checks.
    fn circuit(&self, pub_in: &PubIn, k: usize) -> Result<PorepCircuit> {
        let challenges = &self.vanilla[k];
        let first =
            challenges.first().ok_or_else(|| Error::InvalidInput(format!("partition {k} has no vanilla proofs")))?;
        let (comm_r_last, comm_c) = (first.comm_r_last(), first.comm_c());
        if !challenges.iter().all(|p| p.comm_r_last() == comm_r_last && p.comm_c() == comm_c) {
            return Err(Error::InvalidInput(format!("partition {k}: inconsistent comm_r_last or comm_c")));
        }
        Ok(Tree::wrap_circuit(ShapedCircuit::Proving(Proving {
            replica_id: pub_in.replica_id,
            comm_d: pub_in.tau.as_ref().map(|t| t.comm_d),
            comm_r: pub_in.tau.as_ref().map(|t| t.comm_r),
            comm_r_last,
            comm_c,
            challenges: challenges.clone(),
        })))
    }

    fn public_inputs(&self, pub_in: &PubIn, k: usize) -> Result<Vec<Scalar>> {
        guarded("generating PoRep public inputs", Error::InvalidInput, || {
            <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, G>, StackedCircuit<Tree, G>>>::generate_public_inputs(
                pub_in,
                &self.vp,
                Some(k),
            )
        })
    }
}
