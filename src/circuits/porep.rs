//! Filecoin PoRep C2: the production `StackedDrg` seal circuit of filecoin-proofs 19.1.
//!
//! A request is a C1 output (filecoin-proofs-api's `SealCommitPhase1Output`, as JSON bytes,
//! exactly what `seal_commit_phase1` returns and Lotus/Curio hand to C2). From it this module
//! builds, per partition `k`:
//! - the circuit, `StackedCompound::circuit(&pub_in, (), &vanilla[k], &vp, Some(k))` with the
//!   **un-partitioned** public inputs (`k: None`), as `circuit_proofs` in filecoin-proofs does;
//! - the verifier's public inputs, `StackedCompound::generate_public_inputs(&pub_in, &vp, Some(k))`.
//!
//! The R1CS does not depend on the witness, so the PCE is recorded from [`blank_circuit`], with no
//! C1 at all. Every V1_1 seal proof is supported (2 KiB, 8 MiB, 512 MiB: `SectorShapeBase`;
//! 32 GiB: `SectorShapeSub8`; 64 GiB: `SectorShapeTop2`); the tree shape is a type parameter in
//! filecoin-proofs, and [`PorepCircuit`] erases it so one concrete `bellperson::Circuit` type
//! serves every size.
//!
//! [`prove_c1`] proves all partitions through the PCE path on the CPU backend and returns the
//! concatenated 192-byte proofs, the byte layout of `seal_commit_phase2` (bellperson
//! `Proof::write` per partition, in partition order), and by default verifies each partition
//! against its public inputs with the verifying key.
//!
//! Thread-safety: everything here is plain data; [`PorepC1`] is `Send + Sync` and may be shared
//! across threads to synthesise partitions concurrently. Only [`make_c1`] touches process state
//! (the `FIL_PROOFS_PARENT_CACHE` environment variable, see its docs).

use std::any::Any;
use std::fmt;
use std::io::Read;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use bellperson::groth16::{self as bgroth16, Parameters, Proof, VerifyingKey};
use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::{Bls12, Scalar};
use ff::{Field, PrimeField};

use filecoin_hashers::Domain;
use filecoin_proofs::constants::{
    DefaultPieceDomain, DefaultPieceHasher, DefaultTreeDomain, DefaultTreeHasher, SectorShapeBase, SectorShapeSub8,
    SectorShapeTop2,
};
use filecoin_proofs::parameters::public_params;
use filecoin_proofs::PoRepConfig;
use filecoin_proofs_api::seal::{SealCommitPhase1Output, VanillaSealProof};
use filecoin_proofs_api::RegisteredSealProof;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::merkle::{MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_porep::stacked::{self, StackedCircuit, StackedCompound, StackedDrg};

use crate::witness::{Room, Witness, WitnessSource};
use crate::{Error, Result};

mod fixture;
mod witness;
pub use fixture::{make_c1, prover_id_from_miner};

/// Bytes of one partition's Groth16 proof (bellperson `Proof::write`: A, C compressed G1, B
/// compressed G2).
pub const PARTITION_PROOF_LEN: usize = 192;

// ---------------------------------------------------------------------------------------------
// Sizes
// ---------------------------------------------------------------------------------------------

/// The PoRep sector sizes of the V1_1 seal proofs that Filecoin mainnet uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PorepSize {
    KiB2,
    MiB8,
    MiB512,
    GiB32,
    GiB64,
}

impl PorepSize {
    /// Every supported size, smallest first.
    pub const ALL: [PorepSize; 5] =
        [PorepSize::KiB2, PorepSize::MiB8, PorepSize::MiB512, PorepSize::GiB32, PorepSize::GiB64];

    /// Sector size in bytes (padded).
    pub fn sector_bytes(self) -> u64 {
        match self {
            PorepSize::KiB2 => 2 << 10,
            PorepSize::MiB8 => 8 << 20,
            PorepSize::MiB512 => 512 << 20,
            PorepSize::GiB32 => 32 << 30,
            PorepSize::GiB64 => 64 << 30,
        }
    }

    /// Short name used in circuit ids and on command lines: `2k`, `8m`, `512m`, `32g`, `64g`.
    pub fn short_name(self) -> &'static str {
        match self {
            PorepSize::KiB2 => "2k",
            PorepSize::MiB8 => "8m",
            PorepSize::MiB512 => "512m",
            PorepSize::GiB32 => "32g",
            PorepSize::GiB64 => "64g",
        }
    }

    /// Parses `2k`/`2KiB`/`2kib`, `8m`/`8MiB`, `512m`, `32g`/`32GiB`, `64g` (case-insensitive),
    /// or a byte count (`2048`, `34359738368`).
    pub fn from_name(name: &str) -> Result<Self> {
        let n = name.trim().to_ascii_lowercase();
        let n = n.strip_prefix("porep-").unwrap_or(&n);
        let found = match n {
            "2k" | "2kib" | "2048" => Some(PorepSize::KiB2),
            "8m" | "8mib" | "8388608" => Some(PorepSize::MiB8),
            "512m" | "512mib" | "536870912" => Some(PorepSize::MiB512),
            "32g" | "32gib" | "34359738368" => Some(PorepSize::GiB32),
            "64g" | "64gib" | "68719476736" => Some(PorepSize::GiB64),
            _ => None,
        };
        found.ok_or_else(|| {
            Error::InvalidInput(format!("unknown PoRep sector size {name:?}: expected one of 2k, 8m, 512m, 32g, 64g"))
        })
    }

    /// The size for a sector size in bytes.
    pub fn from_sector_bytes(bytes: u64) -> Result<Self> {
        PorepSize::ALL
            .into_iter()
            .find(|s| s.sector_bytes() == bytes)
            .ok_or_else(|| Error::InvalidInput(format!("no V1_1 PoRep for a sector of {bytes} bytes")))
    }

    /// The registered V1_1 seal proof of this size (what a C1 for it must name).
    pub fn registered_proof(self) -> RegisteredSealProof {
        match self {
            PorepSize::KiB2 => RegisteredSealProof::StackedDrg2KiBV1_1,
            PorepSize::MiB8 => RegisteredSealProof::StackedDrg8MiBV1_1,
            PorepSize::MiB512 => RegisteredSealProof::StackedDrg512MiBV1_1,
            PorepSize::GiB32 => RegisteredSealProof::StackedDrg32GiBV1_1,
            PorepSize::GiB64 => RegisteredSealProof::StackedDrg64GiBV1_1,
        }
    }

    /// The size of a registered proof; only the V1_1 (interactive, non-synthetic) proofs are
    /// accepted, anything else is a clear error.
    pub fn from_registered_proof(rp: RegisteredSealProof) -> Result<Self> {
        PorepSize::ALL.into_iter().find(|s| s.registered_proof() == rp).ok_or_else(|| {
            Error::InvalidInput(format!(
                "unsupported registered seal proof {rp:?}: only the V1_1 proofs \
                     (StackedDrg{{2KiB,8MiB,512MiB,32GiB,64GiB}}V1_1) are supported"
            ))
        })
    }

    /// Number of partitions (= Groth16 proofs) of a seal of this size.
    pub fn partitions(self) -> usize {
        usize::from(self.registered_proof().partitions())
    }

    /// filecoin-proofs' PoRep configuration of this size.
    pub fn porep_config(self) -> PoRepConfig {
        self.registered_proof().as_v1_config()
    }

    /// Human-readable size (`2KiB`, ..., `64GiB`), as in registered proof names.
    pub fn label(self) -> &'static str {
        match self {
            PorepSize::KiB2 => "2KiB",
            PorepSize::MiB8 => "8MiB",
            PorepSize::MiB512 => "512MiB",
            PorepSize::GiB32 => "32GiB",
            PorepSize::GiB64 => "64GiB",
        }
    }
}

impl fmt::Display for PorepSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

// ---------------------------------------------------------------------------------------------
// Shape dispatch
// ---------------------------------------------------------------------------------------------

type G = DefaultPieceHasher;
type PubIn = stacked::PublicInputs<DefaultTreeDomain, DefaultPieceDomain>;
type VanillaProof<Tree> = stacked::Proof<Tree, G>;
type Compound<Tree> = StackedCompound<Tree, G>;

/// The tree shapes filecoin-proofs uses for V1_1 seals, with the glue that erases them.
trait Shape: MerkleTreeTrait<Hasher = DefaultTreeHasher> + Sized + 'static {
    fn wrap_circuit(c: Partition<Self>) -> PorepCircuit;
    fn wrap_sealed(t: Typed<Self>) -> Sealed;
}

impl Shape for SectorShapeBase {
    fn wrap_circuit(c: Partition<Self>) -> PorepCircuit {
        PorepCircuit(CircuitInner::Base(c))
    }
    fn wrap_sealed(t: Typed<Self>) -> Sealed {
        Sealed::Base(t)
    }
}
impl Shape for SectorShapeSub8 {
    fn wrap_circuit(c: Partition<Self>) -> PorepCircuit {
        PorepCircuit(CircuitInner::Sub8(c))
    }
    fn wrap_sealed(t: Typed<Self>) -> Sealed {
        Sealed::Sub8(t)
    }
}
impl Shape for SectorShapeTop2 {
    fn wrap_circuit(c: Partition<Self>) -> PorepCircuit {
        PorepCircuit(CircuitInner::Top2(c))
    }
    fn wrap_sealed(t: Typed<Self>) -> Sealed {
        Sealed::Top2(t)
    }
}

/// Calls `$f::<Tree>($args)` with the tree shape of `$size`.
macro_rules! with_size {
    ($size:expr, $f:ident $(, $arg:expr)* $(,)?) => {
        match $size {
            PorepSize::KiB2 | PorepSize::MiB8 | PorepSize::MiB512 => $f::<SectorShapeBase>($($arg),*),
            PorepSize::GiB32 => $f::<SectorShapeSub8>($($arg),*),
            PorepSize::GiB64 => $f::<SectorShapeTop2>($($arg),*),
        }
    };
}

/// Runs `f`, turning an error or a panic inside filecoin-proofs into a cuzk error.
fn guarded<T>(what: &str, make: fn(String) -> Error, f: impl FnOnce() -> anyhow::Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(make(format!("{what}: {e:#}"))),
        Err(p) => Err(make(format!("{what}: panicked: {}", crate::error::panic_text(&*p)))),
    }
}

fn vanilla_params<Tree: Shape>(size: PorepSize) -> Result<stacked::PublicParams<Tree>> {
    guarded("building PoRep public parameters", Error::InvalidInput, || public_params::<Tree>(&size.porep_config()))
}

fn cache_id_typed<Tree: Shape>(size: PorepSize) -> Result<String> {
    let vp = vanilla_params::<Tree>(size)?;
    Ok(<Compound<Tree> as CacheableParameters<StackedCircuit<Tree, G>, _>>::cache_identifier(&vp))
}

fn blank_typed<Tree: Shape>(size: PorepSize) -> Result<PorepCircuit> {
    let vp = vanilla_params::<Tree>(size)?;
    let c = guarded("building the blank PoRep circuit", Error::Synthesis, || {
        Ok(<Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, G>, _>>::blank_circuit(&vp))
    })?;
    Ok(Tree::wrap_circuit(Partition::Blank(c)))
}

/// filecoin-proofs' parameter cache identifier of `size`'s circuit, e.g.
/// `stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-032d3138…`.
/// The `.params`/`.vk` files are `v28-<this>.params` / `.vk` in the parameter cache.
pub fn param_cache_identifier(size: PorepSize) -> Result<String> {
    with_size!(size, cache_id_typed, size)
}

/// The circuit id of a PoRep PCE: `porep-<size>-v1_1-<param cache identifier>`, e.g.
/// `porep-2k-v1_1-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-032d…`.
/// It names the registered proof and the exact parameter set, so a PCE file recorded for another
/// size, version or circuit revision does not match.
pub fn circuit_id(size: PorepSize) -> Result<String> {
    Ok(format!("porep-{}-v1_1-{}", size.short_name(), param_cache_identifier(size)?))
}

/// The circuit that parameter generation synthesises: same R1CS as every real partition, no
/// witness values. Use it to record the PCE (`pce::extract(blank_circuit(size)?)`).
pub fn blank_circuit(size: PorepSize) -> Result<PorepCircuit> {
    with_size!(size, blank_typed, size)
}

// ---------------------------------------------------------------------------------------------
// The circuit type
// ---------------------------------------------------------------------------------------------

/// One partition's PoRep circuit (filecoin-proofs `StackedCircuit`), with its tree shape erased.
/// Implements `bellperson::Circuit<Scalar>` by delegating to filecoin-proofs' synthesis, so it
/// works with `pce::extract`, `Witness::generate`, the reference CS and
/// `bellperson::groth16::create_proof`; as a [`WitnessSource`] it synthesizes its challenges in
/// parallel.
pub struct PorepCircuit(CircuitInner);

enum CircuitInner {
    Base(Partition<SectorShapeBase>),
    Sub8(Partition<SectorShapeSub8>),
    Top2(Partition<SectorShapeTop2>),
}

enum Partition<Tree: Shape> {
    /// No witness values: filecoin-proofs' blank circuit (parameters, PCE extraction).
    Blank(StackedCircuit<Tree, G>),
    /// A C1's partition: what `StackedCompound::circuit` puts into its `StackedCircuit`
    /// (whose fields are private), kept here so challenges can be synthesized one by one.
    Proving(Proving<Tree>),
}

struct Proving<Tree: Shape> {
    replica_id: DefaultTreeDomain,
    comm_d: Option<DefaultPieceDomain>,
    comm_r: Option<DefaultTreeDomain>,
    comm_r_last: DefaultTreeDomain,
    comm_c: DefaultTreeDomain,
    /// One vanilla proof per challenge.
    challenges: Vec<VanillaProof<Tree>>,
}

impl<Tree: Shape> Proving<Tree> {
    /// filecoin-proofs' own synthesis of the prefix and the given challenges.
    fn synthesize_with<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        challenges: Vec<VanillaProof<Tree>>,
    ) -> std::result::Result<(), SynthesisError> {
        StackedCircuit::<Tree, G>::synthesize(
            cs,
            Some(self.replica_id),
            self.comm_d,
            self.comm_r,
            Some(self.comm_r_last),
            Some(self.comm_c),
            challenges.into_iter().map(Into::into).collect(),
        )
    }
}

impl<Tree: Shape> witness::Challenges for Proving<Tree> {
    fn count(&self) -> usize {
        self.challenges.len()
    }

    fn synthesize<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        i: Option<usize>,
    ) -> std::result::Result<(), SynthesisError> {
        self.synthesize_with(cs, i.map(|i| self.challenges[i].clone()).into_iter().collect())
    }
}

impl<Tree: Shape> Partition<Tree> {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> std::result::Result<(), SynthesisError> {
        match self {
            Partition::Blank(c) => c.synthesize(cs),
            Partition::Proving(mut p) => {
                let all = std::mem::take(&mut p.challenges);
                p.synthesize_with(cs, all)
            }
        }
    }

    fn witness(self, room: Room) -> Result<Witness> {
        match self {
            Partition::Blank(c) => Witness::generate_sized(c, room),
            Partition::Proving(p) => crate::witness::catching(|| witness::in_parallel(&p, room)),
        }
    }
}

impl Circuit<Scalar> for PorepCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> std::result::Result<(), SynthesisError> {
        match self.0 {
            CircuitInner::Base(c) => c.synthesize(cs),
            CircuitInner::Sub8(c) => c.synthesize(cs),
            CircuitInner::Top2(c) => c.synthesize(cs),
        }
    }
}

impl WitnessSource for PorepCircuit {
    fn witness(self, room: Room) -> Result<Witness> {
        match self.0 {
            CircuitInner::Base(c) => c.witness(room),
            CircuitInner::Sub8(c) => c.witness(room),
            CircuitInner::Top2(c) => c.witness(room),
        }
    }
}

impl fmt::Debug for PorepCircuit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape = match self.0 {
            CircuitInner::Base(_) => "SectorShapeBase",
            CircuitInner::Sub8(_) => "SectorShapeSub8",
            CircuitInner::Top2(_) => "SectorShapeTop2",
        };
        write!(f, "PorepCircuit({shape})")
    }
}

// ---------------------------------------------------------------------------------------------
// C1 parsing
// ---------------------------------------------------------------------------------------------

struct Typed<Tree: Shape> {
    vp: stacked::PublicParams<Tree>,
    vanilla: Vec<Vec<VanillaProof<Tree>>>,
}

enum Sealed {
    Base(Typed<SectorShapeBase>),
    Sub8(Typed<SectorShapeSub8>),
    Top2(Typed<SectorShapeTop2>),
}

/// A parsed and validated C1 output, ready to build partition circuits from.
pub struct PorepC1 {
    size: PorepSize,
    pub_in: PubIn,
    sealed: Sealed,
    comm_r: [u8; 32],
    comm_d: [u8; 32],
}

impl fmt::Debug for PorepC1 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PorepC1")
            .field("size", &self.size)
            .field("partitions", &self.num_partitions())
            .field("comm_r", &hex(&self.comm_r))
            .field("comm_d", &hex(&self.comm_d))
            .finish()
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Just the proof type, read first so that an unknown or unsupported proof gets its own message.
#[derive(serde::Deserialize)]
struct Head {
    registered_proof: serde_json::Value,
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
    /// `SealCommitPhase1Output`). Errors, all `Error::InvalidInput` with the reason:
    /// empty/truncated/malformed JSON; a registered proof that is unknown or not V1_1; vanilla
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
        let name = match &head.registered_proof {
            serde_json::Value::String(s) => s.clone(),
            other => {
                return Err(Error::InvalidInput(format!("C1 output: registered_proof must be a string, found {other}")))
            }
        };
        let rp: RegisteredSealProof = serde_json::from_value(serde_json::Value::String(name.clone()))
            .map_err(|_| Error::InvalidInput(format!("C1 output: unknown registered proof {name:?}")))?;
        if let Some((_, why)) = KNOWN_PROOFS.iter().find(|(n, _)| *n == name) {
            return Err(Error::InvalidInput(format!(
                "C1 output: registered proof {name} is {why}; only V1_1 seal proofs are supported"
            )));
        }
        let size = PorepSize::from_registered_proof(rp)?;
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
        let sealed = match c1.vanilla_proofs {
            VanillaSealProof::StackedDrg2KiBV1(v) => typed::<SectorShapeBase>(size, &pub_in, Box::new(v))?,
            VanillaSealProof::StackedDrg8MiBV1(v) => typed::<SectorShapeBase>(size, &pub_in, Box::new(v))?,
            VanillaSealProof::StackedDrg512MiBV1(v) => typed::<SectorShapeBase>(size, &pub_in, Box::new(v))?,
            VanillaSealProof::StackedDrg32GiBV1(v) => typed::<SectorShapeSub8>(size, &pub_in, Box::new(v))?,
            VanillaSealProof::StackedDrg64GiBV1(v) => typed::<SectorShapeTop2>(size, &pub_in, Box::new(v))?,
        };
        Ok(PorepC1 { size, pub_in, sealed, comm_r, comm_d })
    }

    /// The sector size of this C1.
    pub fn size(&self) -> PorepSize {
        self.size
    }

    /// The registered seal proof this C1 names.
    pub fn registered_proof(&self) -> RegisteredSealProof {
        self.size.registered_proof()
    }

    /// The circuit id a PCE must carry to prove this C1 (see [`circuit_id`]).
    pub fn circuit_id(&self) -> Result<String> {
        circuit_id(self.size)
    }

    /// The sealed replica commitment.
    pub fn comm_r(&self) -> [u8; 32] {
        self.comm_r
    }

    /// The unsealed data commitment.
    pub fn comm_d(&self) -> [u8; 32] {
        self.comm_d
    }

    /// Number of partitions (= proofs) in this C1.
    pub fn num_partitions(&self) -> usize {
        match &self.sealed {
            Sealed::Base(t) => t.vanilla.len(),
            Sealed::Sub8(t) => t.vanilla.len(),
            Sealed::Top2(t) => t.vanilla.len(),
        }
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
        match &self.sealed {
            Sealed::Base(t) => t.circuit(&self.pub_in, k),
            Sealed::Sub8(t) => t.circuit(&self.pub_in, k),
            Sealed::Top2(t) => t.circuit(&self.pub_in, k),
        }
    }

    /// Partition `k`'s public inputs as the verifier computes them (without the leading ONE).
    pub fn public_inputs(&self, k: usize) -> Result<Vec<Scalar>> {
        self.check_k(k)?;
        match &self.sealed {
            Sealed::Base(t) => t.public_inputs(&self.pub_in, k),
            Sealed::Sub8(t) => t.public_inputs(&self.pub_in, k),
            Sealed::Top2(t) => t.public_inputs(&self.pub_in, k),
        }
    }
}

fn canonical(bytes: &[u8; 32]) -> Option<Scalar> {
    Scalar::from_repr_vartime(*bytes)
}

/// Moves the vanilla proofs into their concrete type and validates their shape against the
/// public parameters of `size`, then verifies them (vanilla verification, as C1 itself does).
fn typed<Tree: Shape>(size: PorepSize, pub_in: &PubIn, raw: Box<dyn Any>) -> Result<Sealed> {
    let vanilla: Vec<Vec<VanillaProof<Tree>>> = *raw
        .downcast()
        .map_err(|_| Error::InvalidInput(format!("C1 output: vanilla proofs do not have the {size} tree shape")))?;
    let vp = vanilla_params::<Tree>(size)?;
    let nodes = (size.sector_bytes() / 32) as usize;
    let partitions = size.partitions();
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
    Ok(Tree::wrap_sealed(Typed { vp, vanilla }))
}

impl<Tree: Shape> Typed<Tree> {
    /// What `StackedCompound::circuit` builds for partition `k`, with the same checks.
    fn circuit(&self, pub_in: &PubIn, k: usize) -> Result<PorepCircuit> {
        let challenges = &self.vanilla[k];
        let first =
            challenges.first().ok_or_else(|| Error::InvalidInput(format!("partition {k} has no vanilla proofs")))?;
        let (comm_r_last, comm_c) = (first.comm_r_last(), first.comm_c());
        if !challenges.iter().all(|p| p.comm_r_last() == comm_r_last && p.comm_c() == comm_c) {
            return Err(Error::InvalidInput(format!("partition {k}: inconsistent comm_r_last or comm_c")));
        }
        Ok(Tree::wrap_circuit(Partition::Proving(Proving {
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

// ---------------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------------

/// Reads a Filecoin `.params` file (bellperson format, the same files a node keeps in its
/// parameter cache) fully into memory: `bellperson::groth16::Parameters::read`, through the core's
/// [`crate::groth16::read_params`].
///
/// Why not bellperson's `MappedParameters`: the PCE path takes `&Parameters<Bls12>` (the CPU
/// backend needs every base vector as a slice, and the CUDA backend uploads them once and keeps
/// them resident), while mapped parameters re-read and re-parse each vector on every proof.
/// `checked = true` also runs the on-curve and subgroup check on every point (minutes for the
/// 1.1 GB 2 KiB file on 2 cores); filecoin-proofs itself reads cached parameters unchecked and
/// relies on the file digest checked at download (paramfetch) instead.
pub fn read_params(path: &Path, checked: bool) -> Result<Parameters<Bls12>> {
    crate::groth16::read_params(path, checked)
}

/// The file name filecoin-proofs gives `size`'s parameters in its parameter cache
/// (`v28-<param cache identifier>.params`); the `.vk` file has the same stem.
pub fn params_file_name(size: PorepSize) -> Result<String> {
    Ok(format!("v{}-{}.params", storage_proofs_core::parameter_cache::VERSION, param_cache_identifier(size)?))
}

/// Reads a Filecoin `.vk` file (bellperson `VerifyingKey::write` format).
pub fn read_verifying_key(path: &Path) -> Result<VerifyingKey<Bls12>> {
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut buf))
        .map_err(|e| Error::Io(format!("reading verifying key {}: {e}", path.display())))?;
    VerifyingKey::read(&buf[..]).map_err(|e| Error::Io(format!("parsing verifying key {}: {e}", path.display())))
}

// ---------------------------------------------------------------------------------------------
// Proving and verifying
// ---------------------------------------------------------------------------------------------

/// Options of [`prove_c1`].
#[derive(Clone, Debug)]
pub struct ProveOptions {
    /// Verify every partition's proof with the parameters' verifying key before returning
    /// (as filecoin-proofs does after `seal_commit_phase2`). On by default.
    pub verify: bool,
    /// Fixed Groth16 blinding (r, s) per partition, for reproducible proofs in tests; `None`
    /// draws them from the OS RNG.
    pub randomness: Option<Vec<(Scalar, Scalar)>>,
}

impl Default for ProveOptions {
    fn default() -> Self {
        ProveOptions { verify: true, randomness: None }
    }
}

/// Checks that a witness from `c1` fits `pce` (same number of inputs and aux variables), so a
/// PCE recorded for another size or version is refused instead of producing garbage.
fn check_witness_fits(pce: &crate::pce::Pce, w: &crate::witness::Witness, c1: &PorepC1) -> Result<()> {
    if w.inputs.len() != pce.num_inputs || w.aux.len() != pce.num_aux {
        return Err(Error::InvalidInput(format!(
            "the {} C1 does not match this PCE: its circuit has {} inputs and {} aux variables, \
             the PCE {} and {} (PCE for another sector size or circuit version?)",
            c1.size,
            w.inputs.len(),
            w.aux.len(),
            pce.num_inputs,
            pce.num_aux
        )));
    }
    Ok(())
}

/// Proves every partition of `c1` through the PCE path on the CPU backend and returns the
/// concatenated 192-byte partition proofs in partition order: the bytes `seal_commit_phase2`
/// returns for a V1_1 seal. Partitions are proved one after another (memory: one partition's
/// witness and a/b/c at a time). With `opts.verify` (the default) each proof is checked with
/// `params.vk` against [`PorepC1::public_inputs`]; a failure is `Error::VerificationFailed`.
pub fn prove_c1(
    pce: &crate::pce::Pce,
    c1: &PorepC1,
    params: &Parameters<Bls12>,
    opts: &ProveOptions,
) -> Result<Vec<u8>> {
    let n = c1.num_partitions();
    if let Some(rs) = &opts.randomness {
        if rs.len() != n {
            return Err(Error::InvalidInput(format!("{} (r, s) pairs given for {n} partitions", rs.len())));
        }
    }
    let pvk = opts.verify.then(|| bgroth16::prepare_verifying_key(&params.vk));
    let mut out = Vec::with_capacity(n * PARTITION_PROOF_LEN);
    for k in 0..n {
        let proof = prove_partition(pce, c1, k, params, opts, &mut rand::rngs::OsRng)?;
        if let Some(pvk) = &pvk {
            verify_partition(pvk, c1, k, &proof)?;
        }
        proof.write(&mut out).map_err(|e| Error::Io(format!("encoding proof: {e}")))?;
    }
    debug_assert_eq!(out.len(), n * PARTITION_PROOF_LEN);
    Ok(out)
}

/// Proves partition `k` of `c1` (PCE path, CPU backend); (r, s) from `opts.randomness[k]` or `rng`.
pub fn prove_partition<R: rand_core::RngCore>(
    pce: &crate::pce::Pce,
    c1: &PorepC1,
    k: usize,
    params: &Parameters<Bls12>,
    opts: &ProveOptions,
    rng: &mut R,
) -> Result<Proof<Bls12>> {
    let circuit = c1.circuit(k)?;
    let witness = crate::witness::Witness::generate(circuit)?;
    check_witness_fits(pce, &witness, c1)?;
    let abc = crate::pce::evaluate(pce, &witness)?;
    let (r, s) = match &opts.randomness {
        Some(rs) => *rs.get(k).ok_or_else(|| Error::InvalidInput(format!("no (r, s) given for partition {k}")))?,
        None => (Scalar::random(&mut *rng), Scalar::random(&mut *rng)),
    };
    let (proof, _timings) = crate::groth16::prove(pce, &witness, abc, params, r, s)?;
    Ok(proof)
}

fn verify_partition(
    pvk: &bgroth16::PreparedVerifyingKey<Bls12>,
    c1: &PorepC1,
    k: usize,
    proof: &Proof<Bls12>,
) -> Result<()> {
    let inputs = c1.public_inputs(k)?;
    match bgroth16::verify_proof(pvk, proof, &inputs) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Error::VerificationFailed),
        Err(e) => {
            Err(Error::InvalidInput(format!("verifying partition {k}: {e} (verifying key for another circuit?)")))
        }
    }
}

/// Verifies a seal proof (concatenated 192-byte partition proofs, as returned by [`prove_c1`] or
/// `seal_commit_phase2`) for `c1`: each partition against its public inputs with `vk`, as
/// filecoin-proofs' `verify_seal` does for V1_1. `Ok(())` when all verify,
/// `Error::VerificationFailed` when one does not, `Error::InvalidInput` for a wrong length or an
/// undecodable proof.
pub fn verify_c1_proof(c1: &PorepC1, vk: &VerifyingKey<Bls12>, proof: &[u8]) -> Result<()> {
    let n = c1.num_partitions();
    if proof.len() != n * PARTITION_PROOF_LEN {
        return Err(Error::InvalidInput(format!(
            "seal proof has {} bytes, expected {} ({n} partitions × {PARTITION_PROOF_LEN})",
            proof.len(),
            n * PARTITION_PROOF_LEN
        )));
    }
    let pvk = bgroth16::prepare_verifying_key(vk);
    for k in 0..n {
        let bytes = &proof[k * PARTITION_PROOF_LEN..(k + 1) * PARTITION_PROOF_LEN];
        let p = Proof::<Bls12>::read(bytes)
            .map_err(|e| Error::InvalidInput(format!("partition {k} proof does not decode: {e}")))?;
        verify_partition(&pvk, c1, k, &p)?;
    }
    Ok(())
}

/// Records the PCE of `size`'s PoRep circuit from the blank circuit (no C1 needed).
pub fn extract_pce(size: PorepSize) -> Result<crate::pce::Pce> {
    crate::pce::extract(blank_circuit(size)?)
}
