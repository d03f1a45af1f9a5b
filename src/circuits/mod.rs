//! The circuits cuzk proves, named one way everywhere — the C ABI, `cuzk-bench` and the tests:
//! a [`Circuit`] is a kind, a name within the kind and a size. A request's input turns a
//! circuit into a [`Statement`]: the instances its partitions prove, one Groth16 proof each.
//! A new circuit kind is a variant of [`Kind`], [`Circuit`], [`Statement`] and [`Instance`], and
//! its own module; nothing outside this file dispatches on kinds.

#[cfg(feature = "porep")]
#[macro_use]
mod filecoin;
pub mod filecoin_verify;
#[cfg(feature = "porep")]
mod frame;
pub mod mimc_chain;
#[cfg(feature = "porep")]
pub mod porep;
#[cfg(feature = "porep")]
pub mod post;
pub mod sha256_chain;
#[cfg(feature = "porep")]
pub mod snap;
mod source;
mod synthetic;

use std::path::Path;
use std::sync::Arc;

use bellperson::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;

pub use mimc_chain::MimcChain;
pub use sha256_chain::Sha256Chain;
pub use source::WitnessSource;
pub use synthetic::{Family, Synthetic};

use crate::groth16::PROOF_BYTES;
use crate::pce::program::Program;
use crate::pce::{self, registry, Access, Pce};
use crate::witness::{Witness, WitnessBuffer};
use crate::{Error, Result};

/// The largest synthetic size accepted (the compact PCE format's column limit).
pub const MAX_SYNTHETIC_SIZE: u64 = 1 << 30;

/// The kinds of built-in circuit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A synthetic benchmark family (`sha256-chain`, `mimc-chain`) at any size.
    Synthetic,
    /// Filecoin PoRep C2 (V1_1) of one sector size; needs the `porep` feature.
    Porep,
    /// Filecoin WinningPoSt of one sector size; needs the `porep` feature.
    WinningPost,
    /// Filecoin WindowPoSt (V1 and V1_2) of one sector size; needs the `porep` feature.
    WindowPost,
    /// Filecoin SnapDeals (the empty-sector update) of one sector size; needs the `porep`
    /// feature.
    SnapDeals,
}

/// One built-in circuit: its R1CS is fixed by this value alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Circuit {
    /// A synthetic family at a target number of constraints (rows).
    Synthetic { family: Family, size: usize },
    /// The partition circuit of one PoRep sector size.
    #[cfg(feature = "porep")]
    Porep(porep::PorepSize),
    /// The partition circuit of one PoSt kind and sector size.
    #[cfg(feature = "porep")]
    Post(post::PostType),
    /// The SnapDeals partition circuit of one sector size.
    #[cfg(feature = "porep")]
    Snap(porep::PorepSize),
}

#[cfg(not(feature = "porep"))]
fn porep_unsupported() -> Error {
    Error::Unsupported("PoRep circuits need the `porep` feature, which this build lacks".into())
}

impl Circuit {
    /// The circuit of `kind` named `name` with `size`: for synthetic circuits a family name and
    /// the target constraints (1 ..= [`MAX_SYNTHETIC_SIZE`]); for PoRep and PoSt a sector size
    /// (`2KiB`, `32GiB`, ...) and size 0.
    pub fn new(kind: Kind, name: &str, size: u64) -> Result<Circuit> {
        match kind {
            Kind::Synthetic => {
                let family = Family::parse(name)?;
                if size == 0 {
                    return Err(Error::InvalidInput("circuit size is 0: give the target number of constraints".into()));
                }
                if size > MAX_SYNTHETIC_SIZE {
                    return Err(Error::TooLarge(format!(
                        "circuit size {size} is above the limit {MAX_SYNTHETIC_SIZE}"
                    )));
                }
                Ok(Circuit::Synthetic { family, size: size as usize })
            }
            Kind::Porep | Kind::WinningPost | Kind::WindowPost | Kind::SnapDeals => {
                if size != 0 {
                    return Err(Error::InvalidInput("circuit size must be 0 for PoRep and PoSt".into()));
                }
                Self::filecoin(kind, name)
            }
        }
    }

    #[cfg(feature = "porep")]
    fn filecoin(kind: Kind, sector: &str) -> Result<Circuit> {
        let size = porep::PorepSize::from_name(sector).map_err(|e| match e {
            Error::InvalidInput(m) => Error::UnknownCircuit(m),
            other => other,
        })?;
        let post = |kind| Circuit::Post(post::PostType { kind, size });
        Ok(match kind {
            Kind::WinningPost => post(post::PostKind::Winning),
            Kind::WindowPost => post(post::PostKind::Window),
            Kind::SnapDeals => Circuit::Snap(size),
            _ => Circuit::Porep(size),
        })
    }

    #[cfg(not(feature = "porep"))]
    fn filecoin(_: Kind, _: &str) -> Result<Circuit> {
        Err(porep_unsupported())
    }

    /// Parses the command-line form: `porep-<sector size>`, `winning-post-<sector size>`,
    /// `window-post-<sector size>` or `snap-<sector size>` (e.g. `porep-32GiB`; `size`
    /// ignored), or a synthetic family name with `size` target constraints.
    pub fn parse(name: &str, size: u64) -> Result<Circuit> {
        let prefixed = [
            ("porep-", Kind::Porep),
            ("winning-post-", Kind::WinningPost),
            ("window-post-", Kind::WindowPost),
            ("snap-", Kind::SnapDeals),
        ];
        match prefixed.iter().find_map(|(p, kind)| name.strip_prefix(p).map(|sector| (sector, *kind))) {
            Some((sector, kind)) => Self::new(kind, sector, 0),
            None => Self::new(Kind::Synthetic, name, size),
        }
    }

    pub fn kind(&self) -> Kind {
        match self {
            Circuit::Synthetic { .. } => Kind::Synthetic,
            #[cfg(feature = "porep")]
            Circuit::Porep(_) => Kind::Porep,
            #[cfg(feature = "porep")]
            Circuit::Post(t) => match t.kind {
                post::PostKind::Winning => Kind::WinningPost,
                post::PostKind::Window => Kind::WindowPost,
            },
            #[cfg(feature = "porep")]
            Circuit::Snap(_) => Kind::SnapDeals,
        }
    }

    /// A short human name: `sha256-chain-2^20`, `mimc-chain-1000`, `porep-32GiB`,
    /// `winning-post-32GiB`.
    pub fn label(&self) -> String {
        match self {
            Circuit::Synthetic { family, size } if size.is_power_of_two() => {
                format!("{}-2^{}", family.name(), size.trailing_zeros())
            }
            Circuit::Synthetic { family, size } => format!("{}-{size}", family.name()),
            #[cfg(feature = "porep")]
            Circuit::Porep(s) => format!("porep-{s}"),
            #[cfg(feature = "porep")]
            Circuit::Post(t) => t.label(),
            #[cfg(feature = "porep")]
            Circuit::Snap(s) => format!("snap-{s}"),
        }
    }

    /// Names the R1CS: equal ids mean equal matrices (what the PCE registry and files are keyed by).
    pub fn circuit_id(&self) -> Result<String> {
        match self {
            Circuit::Synthetic { family, size } => Ok(Synthetic::new(*family, *size, 0).circuit_id()),
            #[cfg(feature = "porep")]
            Circuit::Porep(s) => porep::circuit_id(*s),
            #[cfg(feature = "porep")]
            Circuit::Post(t) => post::circuit_id(*t),
            #[cfg(feature = "porep")]
            Circuit::Snap(s) => snap::circuit_id(*s),
        }
    }

    /// The file name of the circuit's production parameters in filecoin-proofs' parameter cache
    /// (`v28-<param cache identifier>.params`, what filecoin-proofs' `cache_params_path` ends
    /// in), e.g. `v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a3….params`
    /// for PoRep at 32 GiB. A synthetic circuit has none (`InvalidInput`).
    pub fn params_file_name(&self) -> Result<String> {
        match self {
            Circuit::Synthetic { .. } => Err(Error::InvalidInput(format!(
                "{} is a synthetic circuit: it has no production parameters (generate some)",
                self.label()
            ))),
            #[cfg(feature = "porep")]
            Circuit::Porep(s) => porep::params_file_name(*s),
            #[cfg(feature = "porep")]
            Circuit::Post(t) => post::params_file_name(*t),
            #[cfg(feature = "porep")]
            Circuit::Snap(s) => snap::params_file_name(*s),
        }
    }

    /// Groth16 proofs per request: one per partition (WindowPoSt: per partition of a
    /// request for one; one for all of them has as many as its sectors fill).
    pub fn partitions(&self) -> usize {
        match self {
            Circuit::Synthetic { .. } => 1,
            #[cfg(feature = "porep")]
            Circuit::Porep(s) => s.partitions(),
            #[cfg(feature = "porep")]
            Circuit::Post(_) => 1,
            #[cfg(feature = "porep")]
            Circuit::Snap(s) => snap::partitions(*s),
        }
    }

    /// Bytes of a request's proof: [`PROOF_BYTES`] per partition.
    pub fn proof_len(&self) -> usize {
        PROOF_BYTES * self.partitions()
    }

    /// Bytes of the proof of the request with `input`: [`Circuit::proof_len`], except for a
    /// WindowPoSt request for every partition, whose count its input's header gives, and a
    /// non-interactive PoRep C1, whose registered proof says it has more partitions.
    #[cfg_attr(not(feature = "porep"), allow(unused_variables))]
    pub fn proof_len_for(&self, input: &[u8]) -> Result<usize> {
        match self {
            #[cfg(feature = "porep")]
            Circuit::Post(t) => post::proof_len_of(input, *t),
            #[cfg(feature = "porep")]
            Circuit::Porep(s) => Ok(PROOF_BYTES * porep::PorepC1::variant_of(input)?.partitions(*s)),
            _ => Ok(self.proof_len()),
        }
    }

    /// The circuit without a witness: what the PCE and parameters are made from.
    pub fn blank(&self) -> Result<Instance> {
        match self {
            Circuit::Synthetic { family, size } => Ok(Instance::Synthetic(Synthetic::new(*family, *size, 0).blank())),
            #[cfg(feature = "porep")]
            Circuit::Porep(s) => porep::blank_circuit(*s).map(Instance::Porep),
            #[cfg(feature = "porep")]
            Circuit::Post(t) => post::blank_circuit(*t).map(Instance::Post),
            #[cfg(feature = "porep")]
            Circuit::Snap(s) => snap::blank_circuit(*s).map(Instance::Snap),
        }
    }

    /// Records the circuit's PCE from its blank form; `TooLarge` at once when the process cannot
    /// take what that needs ([`Circuit::extraction_bytes`]).
    pub fn extract_pce(&self) -> Result<Pce> {
        if let Some(bytes) = self.extraction_bytes() {
            crate::mem::check_room(&format!("extracting the PCE of {}", self.label()), bytes)?;
        }
        pce::extract_logged(self.blank()?, format!("extracting the PCE of {}", self.label()))
    }

    /// The most host memory extracting this circuit's PCE takes, where it can be more than a
    /// machine holds: a synthetic circuit's, 128 bytes per constraint (the recorder's vectors
    /// while they grow, then the compact form; 86–116 measured at 2^20, the process included).
    /// A PoRep or PoSt partition's is bounded by its sector size (5.27 GiB for PoRep at 32 GiB,
    /// BENCHMARKS.md).
    pub fn extraction_bytes(&self) -> Option<u64> {
        match self {
            Circuit::Synthetic { size, .. } => Some(128 * *size as u64),
            #[cfg(feature = "porep")]
            Circuit::Porep(_) | Circuit::Post(_) | Circuit::Snap(_) => None,
        }
    }

    /// The process-wide PCE of this circuit: the one already loaded, else the file at `path`
    /// (`verify_checksums`: check every section; `access`: read into memory, the default, or
    /// mapped — see [`Access`]), else extracted, with its witness program
    /// ([`Circuit::record_program`]), and saved there.
    pub fn load_pce(&self, path: &Path, verify_checksums: bool, access: Access) -> Result<Arc<Pce>> {
        let id = self.circuit_id()?;
        let circuit = *self;
        registry::load_or_extract(&id, path, verify_checksums, access, move || {
            let pce = circuit.extract_pce()?;
            circuit.record_program(&pce)?;
            Ok(pce)
        })
    }

    /// Records `pce`'s witness program where this circuit's witnesses replay one (sha256-chain;
    /// PoRep, split by challenge), so that the file `pce` is saved to carries it and no process
    /// that loads it records it again.
    pub fn record_program(&self, pce: &Pce) -> Result<()> {
        match self {
            Circuit::Synthetic { family: Family::Sha256Chain, .. } => {
                pce.program(|| None);
            }
            #[cfg(feature = "porep")]
            Circuit::Porep(size) => {
                let layout = porep::program_layout(*size)?;
                pce.program(|| Some(layout));
            }
            _ => {}
        }
        Ok(())
    }

    /// What a request proves: a synthetic circuit's instance from `seed` (no `input` bytes), a
    /// PoRep C1 output or a PoSt input ([`post::PostInput`]) in `input` (`seed` 0), parsed and
    /// checked against the circuit.
    pub fn statement(&self, seed: u64, input: &[u8]) -> Result<Statement> {
        match self {
            Circuit::Synthetic { family, size } => {
                if !input.is_empty() {
                    return Err(Error::InvalidInput("synthetic circuits take no input bytes".into()));
                }
                Ok(Statement::Synthetic(Synthetic::new(*family, *size, seed)))
            }
            #[cfg(feature = "porep")]
            Circuit::Porep(_) | Circuit::Post(_) | Circuit::Snap(_) if seed != 0 => {
                Err(Error::InvalidInput("the seed must be 0 for PoRep, PoSt and SnapDeals".into()))
            }
            #[cfg(feature = "porep")]
            Circuit::Porep(s) => {
                if input.is_empty() {
                    return Err(Error::InvalidInput("a PoRep request needs its C1 output as input".into()));
                }
                porep::PorepC1::parse_for(input, *s).map(|c1| Statement::Porep(Box::new(c1)))
            }
            #[cfg(feature = "porep")]
            Circuit::Post(t) => post::PostRequest::parse_for(input, *t).map(|r| Statement::Post(Box::new(r))),
            #[cfg(feature = "porep")]
            Circuit::Snap(s) => snap::SnapRequest::parse_for(input, *s).map(|r| Statement::Snap(Box::new(r))),
        }
    }
}

/// Where a proof type puts its requests in the engine's queues (`engine::Priority::in_class`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProofClass {
    /// PoRep, SnapDeals, the benchmark circuits: ordered by their priority alone.
    Throughput,
    /// WindowPoSt: ahead of every throughput request (its deadline is a chain epoch).
    Deadline,
    /// WinningPoSt: the latency class (a block waits for it).
    Critical,
}

/// What one request proves: the instance of every partition, and its public inputs.
pub enum Statement {
    Synthetic(Synthetic),
    /// Boxed: a parsed C1 holds every partition's vanilla proofs.
    #[cfg(feature = "porep")]
    Porep(Box<porep::PorepC1>),
    #[cfg(feature = "porep")]
    Post(Box<post::PostRequest>),
    #[cfg(feature = "porep")]
    Snap(Box<snap::SnapRequest>),
}

impl std::fmt::Debug for Statement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Statement::Synthetic(c) => write!(f, "Statement({})", c.circuit_id()),
            #[cfg(feature = "porep")]
            Statement::Porep(c1) => write!(f, "Statement({c1:?})"),
            #[cfg(feature = "porep")]
            Statement::Post(r) => write!(f, "Statement({r:?})"),
            #[cfg(feature = "porep")]
            Statement::Snap(r) => write!(f, "Statement({r:?})"),
        }
    }
}

impl Statement {
    /// The class its proof type puts a request in.
    pub fn class(&self) -> ProofClass {
        match self {
            #[cfg(feature = "porep")]
            Statement::Post(r) => match r.post_type().kind {
                post::PostKind::Winning => ProofClass::Critical,
                post::PostKind::Window => ProofClass::Deadline,
            },
            _ => ProofClass::Throughput,
        }
    }

    pub fn partitions(&self) -> usize {
        match self {
            Statement::Synthetic(_) => 1,
            #[cfg(feature = "porep")]
            Statement::Porep(c1) => c1.num_partitions(),
            #[cfg(feature = "porep")]
            Statement::Post(r) => r.num_partitions(),
            #[cfg(feature = "porep")]
            Statement::Snap(r) => r.num_partitions(),
        }
    }

    /// Host bytes its parsed input holds while it is proven (a PoRep C1's vanilla proofs); the
    /// engine reserves them in shares, one beside each partition's footprint.
    pub fn input_bytes(&self) -> u64 {
        match self {
            #[cfg(feature = "porep")]
            Statement::Porep(c1) => c1.heap_bytes(),
            _ => 0,
        }
    }

    fn check_partition(&self, k: usize) -> Result<()> {
        match k < self.partitions() {
            true => Ok(()),
            false => Err(Error::InvalidInput(format!("partition {k} of {}", self.partitions()))),
        }
    }

    /// Partition `k`'s circuit, with its witness values.
    pub fn instance(&self, k: usize) -> Result<Instance> {
        self.check_partition(k)?;
        match self {
            Statement::Synthetic(c) => Ok(Instance::Synthetic(c.clone())),
            #[cfg(feature = "porep")]
            Statement::Porep(c1) => c1.circuit(k).map(Instance::Porep),
            #[cfg(feature = "porep")]
            Statement::Post(r) => r.circuit(k).map(Instance::Post),
            #[cfg(feature = "porep")]
            Statement::Snap(r) => r.circuit(k).map(Instance::Snap),
        }
    }

    /// Partition `k`'s public inputs as the verifier computes them (without the ONE).
    pub fn public_inputs(&self, k: usize) -> Result<Vec<Scalar>> {
        self.check_partition(k)?;
        match self {
            Statement::Synthetic(c) => Ok(c.public_inputs()),
            #[cfg(feature = "porep")]
            Statement::Porep(c1) => c1.public_inputs(k),
            #[cfg(feature = "porep")]
            Statement::Post(r) => r.public_inputs(k),
            #[cfg(feature = "porep")]
            Statement::Snap(r) => r.public_inputs(k),
        }
    }
}

/// One partition's circuit: a bellperson circuit and a [`WitnessSource`].
pub enum Instance {
    Synthetic(Synthetic),
    #[cfg(feature = "porep")]
    Porep(porep::PorepCircuit),
    #[cfg(feature = "porep")]
    Post(post::PostCircuit),
    #[cfg(feature = "porep")]
    Snap(snap::SnapCircuit),
}

impl bellperson::Circuit<Scalar> for Instance {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> std::result::Result<(), SynthesisError> {
        match self {
            Instance::Synthetic(c) => c.synthesize(cs),
            #[cfg(feature = "porep")]
            Instance::Porep(c) => c.synthesize(cs),
            #[cfg(feature = "porep")]
            Instance::Post(c) => c.synthesize(cs),
            #[cfg(feature = "porep")]
            Instance::Snap(c) => c.synthesize(cs),
        }
    }
}

impl WitnessSource for Instance {
    fn gadget_witness(self, into: WitnessBuffer) -> Result<Witness> {
        match self {
            Instance::Synthetic(c) => c.gadget_witness(into),
            #[cfg(feature = "porep")]
            Instance::Porep(c) => c.gadget_witness(into),
            #[cfg(feature = "porep")]
            Instance::Post(c) => c.gadget_witness(into),
            #[cfg(feature = "porep")]
            Instance::Snap(c) => c.gadget_witness(into),
        }
    }

    fn witness(self, pce: &Pce, into: WitnessBuffer) -> Result<Witness> {
        match self {
            Instance::Synthetic(c) => c.witness(pce, into),
            #[cfg(feature = "porep")]
            Instance::Porep(c) => c.witness(pce, into),
            #[cfg(feature = "porep")]
            Instance::Post(c) => c.witness(pce, into),
            #[cfg(feature = "porep")]
            Instance::Snap(c) => c.witness(pce, into),
        }
    }

    fn program<'p>(&self, pce: &'p Pce) -> Option<&'p Program> {
        match self {
            Instance::Synthetic(c) => c.program(pce),
            #[cfg(feature = "porep")]
            Instance::Porep(c) => c.program(pce),
            #[cfg(feature = "porep")]
            Instance::Post(c) => c.program(pce),
            #[cfg(feature = "porep")]
            Instance::Snap(c) => c.program(pce),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_to_one_circuit() {
        let c = Circuit::parse("sha256-chain", 1 << 16).unwrap();
        assert_eq!(c, Circuit::new(Kind::Synthetic, "sha256-chain", 1 << 16).unwrap());
        assert_eq!(
            (c.kind(), c.label(), c.partitions(), c.proof_len()),
            (Kind::Synthetic, "sha256-chain-2^16".into(), 1, 192)
        );
        assert!(matches!(Circuit::parse("nope", 10), Err(Error::UnknownCircuit(_))));
        assert!(matches!(Circuit::parse("mimc-chain", 0), Err(Error::InvalidInput(_))));
        assert!(matches!(Circuit::parse("mimc-chain", MAX_SYNTHETIC_SIZE + 1), Err(Error::TooLarge(_))));
        assert!(matches!(Circuit::new(Kind::Porep, "2KiB", 5), Err(Error::InvalidInput(_))));
        #[cfg(feature = "porep")]
        {
            let p = Circuit::parse("porep-32GiB", 0).unwrap();
            assert_eq!(
                (p.kind(), p.label(), p.partitions(), p.proof_len()),
                (Kind::Porep, "porep-32GiB".into(), 10, 1920)
            );
            assert_eq!(p, Circuit::new(Kind::Porep, "32g", 0).unwrap());
            assert!(matches!(Circuit::parse("porep-3GiB", 0), Err(Error::UnknownCircuit(_))));
        }
        #[cfg(not(feature = "porep"))]
        assert!(matches!(Circuit::parse("porep-2KiB", 0), Err(Error::Unsupported(_))));
    }

    #[test]
    fn statements_check_their_input() {
        let c = Circuit::parse("mimc-chain", 100).unwrap();
        assert!(matches!(c.statement(1, b"x"), Err(Error::InvalidInput(_))));
        let s = c.statement(7, &[]).unwrap();
        assert_eq!(s.partitions(), 1);
        assert!(s.instance(1).is_err());
        assert_eq!(s.public_inputs(0).unwrap(), Synthetic::new(Family::MimcChain, 100, 7).public_inputs());
    }
}
