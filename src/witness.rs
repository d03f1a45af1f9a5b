//! `WitnessCs`: an alloc-only constraint system producing exactly bellperson's
//! input and aux assignments. `enforce` is a no-op; it never builds a linear
//! combination, which is where the PCE path saves most of synthesis.

use bellperson::{Circuit, ConstraintSystem, Index, SynthesisError, Variable};
use blstrs::Scalar;
use ff::{Field, PrimeField};

use crate::{Error, Result};

/// The methods of an alloc-only constraint system that do nothing: no
/// constraint is recorded, no namespace kept, each system is its own root.
macro_rules! alloc_only_methods {
    () => {
        fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
        where
            A: FnOnce() -> AR,
            AR: Into<String>,
            LA: FnOnce(bellperson::LinearCombination<blstrs::Scalar>) -> bellperson::LinearCombination<blstrs::Scalar>,
            LB: FnOnce(bellperson::LinearCombination<blstrs::Scalar>) -> bellperson::LinearCombination<blstrs::Scalar>,
            LC: FnOnce(bellperson::LinearCombination<blstrs::Scalar>) -> bellperson::LinearCombination<blstrs::Scalar>,
        {
        }

        fn push_namespace<NR, N>(&mut self, _: N)
        where
            NR: Into<String>,
            N: FnOnce() -> NR,
        {
        }

        fn pop_namespace(&mut self) {}

        fn get_root(&mut self) -> &mut Self::Root {
            self
        }
    };
}
pub(crate) use alloc_only_methods;

/// A circuit's assignment: `inputs[0]` is the ONE input.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Witness {
    pub inputs: Vec<Scalar>,
    pub aux: Vec<Scalar>,
}

impl Witness {
    /// Synthesizes `circuit` for its assignment only, the way bellperson's prover
    /// starts: the ONE input first, then the circuit.
    pub fn generate<C: Circuit<Scalar>>(circuit: C) -> Result<Witness> {
        Self::generate_sized(circuit, WitnessBuffer::new(0, 0))
    }

    /// As `generate`, into the buffer `into` (sized from the PCE, so the vectors never
    /// reallocate).
    pub fn generate_sized<C: Circuit<Scalar>>(circuit: C, into: WitnessBuffer) -> Result<Witness> {
        catching(|| {
            let mut cs = WitnessCs::started(into)?;
            circuit.synthesize(&mut cs)?;
            Ok(cs.into_witness())
        })
    }

    pub fn heap_bytes(&self) -> usize {
        (self.inputs.capacity() + self.aux.capacity()) * 32
    }
}

/// Where a witness goes: the counts of input and aux values the PCE expects,
/// and the buffer the aux values are written into — one a finished proof left
/// behind, when the engine has one, so no fresh pages are faulted in.
pub struct WitnessBuffer {
    pub inputs: usize,
    pub aux: usize,
    buf: Vec<Scalar>,
}

impl WitnessBuffer {
    pub fn new(inputs: usize, aux: usize) -> WitnessBuffer {
        WitnessBuffer { inputs, aux, buf: Vec::new() }
    }

    /// A buffer whose aux values go into `buf` (emptied first).
    pub fn reusing(inputs: usize, aux: usize, buf: Vec<Scalar>) -> WitnessBuffer {
        WitnessBuffer { inputs, aux, buf }
    }

    pub(crate) fn into_witness(self) -> Witness {
        let mut aux = self.buf;
        aux.clear();
        aux.reserve_exact(self.aux);
        Witness { inputs: Vec::with_capacity(self.inputs), aux }
    }
}

/// `v` cut into `parts` consecutive slices of `per` values (the rest left out).
pub(crate) fn pieces<T>(mut v: &mut [T], parts: usize, per: usize) -> Vec<&mut [T]> {
    (0..parts)
        .map(|_| {
            let (head, tail) = std::mem::take(&mut v).split_at_mut(per);
            v = tail;
            head
        })
        .collect()
}

/// Runs witness generation; a circuit that panics (e.g. on a malformed
/// vanilla proof) is a synthesis error, not a crash.
pub(crate) fn catching(f: impl FnOnce() -> Result<Witness>) -> Result<Witness> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|p| Err(Error::Synthesis(format!("the circuit panicked: {}", crate::error::panic_text(&*p)))))
}

/// The alloc-only constraint system. It starts empty (like bellperson's
/// `ProvingAssignment`) so sub-circuits made with `new()` for `extend` allocate
/// their own temporary ONE, which `extend` drops.
pub struct WitnessCs(Witness);

impl WitnessCs {
    /// A root system as bellperson's prover starts it: the ONE input first.
    pub(crate) fn started(into: WitnessBuffer) -> Result<WitnessCs> {
        let mut cs = WitnessCs(into.into_witness());
        cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
        Ok(cs)
    }

    pub(crate) fn into_witness(self) -> Witness {
        self.0
    }
}

impl ConstraintSystem<Scalar> for WitnessCs {
    type Root = Self;

    fn new() -> Self {
        WitnessCs(Witness::default())
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.0.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.0.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.0.inputs.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.0.inputs.len() - 1)))
    }

    crate::witness::alloc_only_methods!();

    fn is_extensible() -> bool {
        true
    }

    fn extend(&mut self, other: &Self) {
        self.0.inputs.extend(other.0.inputs.iter().skip(1));
        self.0.aux.extend(&other.0.aux);
    }

    fn is_witness_generator(&self) -> bool {
        true
    }

    fn extend_inputs(&mut self, new_inputs: &[Scalar]) {
        self.0.inputs.extend(new_inputs);
    }

    fn extend_aux(&mut self, new_aux: &[Scalar]) {
        self.0.aux.extend(new_aux);
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Scalar], &mut [Scalar]) {
        let (i, j) = (self.0.aux.len(), self.0.inputs.len());
        self.0.aux.resize(i + aux_n, Scalar::ZERO);
        self.0.inputs.resize(j + inputs_n, Scalar::ZERO);
        (&mut self.0.aux[i..], &mut self.0.inputs[j..])
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Scalar] {
        let j = self.0.inputs.len();
        self.0.inputs.resize(j + n, Scalar::ZERO);
        &mut self.0.inputs[j..]
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Scalar] {
        let i = self.0.aux.len();
        self.0.aux.resize(i + n, Scalar::ZERO);
        &mut self.0.aux[i..]
    }

    fn inputs_slice(&self) -> &[Scalar] {
        &self.0.inputs
    }

    fn aux_slice(&self) -> &[Scalar] {
        &self.0.aux
    }
}

/// A digest of a witness: its inputs, then its aux values, each value's canonical bytes.
/// [`Witness::digest`] and [`digest_of`] agree on equal witnesses.
fn absorb(h: &mut blake3::Hasher, v: &Scalar) {
    h.update(v.to_repr().as_ref());
}

impl Witness {
    /// The digest of this witness (see [`digest_of`]).
    pub fn digest(&self) -> [u8; 32] {
        let (mut hi, mut ha) = (blake3::Hasher::new(), blake3::Hasher::new());
        self.inputs.iter().for_each(|v| absorb(&mut hi, v));
        self.aux.iter().for_each(|v| absorb(&mut ha, v));
        combine(hi, ha)
    }
}

fn combine(inputs: blake3::Hasher, aux: blake3::Hasher) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(inputs.finalize().as_bytes());
    h.update(aux.finalize().as_bytes());
    *h.finalize().as_bytes()
}

/// The digest of the witness `synthesize` makes, by the gadgets, without keeping it: the
/// values are hashed as they are allocated (a witness program's first witness is checked
/// against it, with no second copy of a witness in memory).
pub fn digest_of(
    synthesize: impl FnOnce(&mut DigestCs) -> std::result::Result<(), SynthesisError>,
) -> Result<[u8; 32]> {
    let mut cs = DigestCs { inputs: blake3::Hasher::new(), aux: blake3::Hasher::new() };
    absorb(&mut cs.inputs, &Scalar::ONE);
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| synthesize(&mut cs)))
        .map_err(|p| Error::Synthesis(format!("the circuit panicked: {}", crate::error::panic_text(&*p))))??;
    Ok(combine(cs.inputs, cs.aux))
}

/// An alloc-only constraint system that hashes the values instead of keeping them.
pub struct DigestCs {
    inputs: blake3::Hasher,
    aux: blake3::Hasher,
}

impl ConstraintSystem<Scalar> for DigestCs {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        absorb(&mut self.aux, &f()?);
        Ok(Variable::new_unchecked(Index::Aux(0)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        absorb(&mut self.inputs, &f()?);
        Ok(Variable::new_unchecked(Index::Input(0)))
    }

    crate::witness::alloc_only_methods!();
}
