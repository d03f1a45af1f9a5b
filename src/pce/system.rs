//! A circuit's pre-compiled constraint system ([`Pce`]): its A, B, C in compact form, the
//! dictionary of their coefficients, bellperson's densities, and what is made from it once
//! (device copies, the witness program).

use blstrs::Scalar;

use super::copies::DeviceCopies;
use super::matrix::{Array, CsrMatrix};
use super::program::trust::ProgramSlot;
use super::program::{Layout, Program};
use crate::witness::Witness;
use crate::{Error, Result};

/// A bitmap over variables, with its population count (bellperson's
/// `DensityTracker` semantics: bit set = the variable appears with a non-zero
/// coefficient).
#[derive(Debug)]
pub struct Bitmap {
    pub words: Array<u64>,
    pub len: usize,
    pub ones: usize,
}

impl Bitmap {
    pub fn from_bits(bits: &[bool]) -> Self {
        let mut words = vec![0u64; bits.len().div_ceil(64)];
        let mut ones = 0;
        for (i, &b) in bits.iter().enumerate() {
            if b {
                words[i / 64] |= 1 << (i % 64);
                ones += 1;
            }
        }
        Bitmap { words: words.into(), len: bits.len(), ones }
    }

    #[inline(always)]
    pub fn get(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    pub fn to_bits(&self) -> Vec<bool> {
        (0..self.len).map(|i| self.get(i)).collect()
    }
}

/// The three density bitmaps bellperson's prover tracks.
#[derive(Debug)]
pub struct Densities {
    /// Aux variables used in A.
    pub a_aux: Bitmap,
    /// Inputs used in B.
    pub b_input: Bitmap,
    /// Aux variables used in B.
    pub b_aux: Bitmap,
}

impl Densities {
    /// a_aux, b_input, b_aux.
    pub fn all(&self) -> [&Bitmap; 3] {
        [&self.a_aux, &self.b_input, &self.b_aux]
    }
}

/// A circuit's pre-compiled constraint system.
#[derive(Debug)]
pub struct Pce {
    /// Public inputs, the ONE at index 0 included.
    pub num_inputs: usize,
    pub num_aux: usize,
    pub a: CsrMatrix,
    pub b: CsrMatrix,
    pub c: CsrMatrix,
    /// Distinct coefficients other than ±1.
    pub dict: Vec<Scalar>,
    pub density: Densities,
    /// Its copies on devices (a GPU backend's), dropped with it.
    pub device_copies: DeviceCopies,
    /// Its witness program: loaded with its file, or recorded once a witness asks for it.
    pub program: ProgramSlot,
}

impl Pce {
    /// Refuses a witness of another shape than this PCE's (inputs, the ONE
    /// included, and aux): evaluating it would index out of bounds or mean
    /// another circuit.
    pub fn check_witness(&self, w: &Witness) -> Result<()> {
        if w.inputs.len() != self.num_inputs || w.aux.len() != self.num_aux {
            return Err(Error::InvalidInput(format!(
                "witness has {} inputs and {} aux, the PCE expects {} and {}",
                w.inputs.len(),
                w.aux.len(),
                self.num_inputs,
                self.num_aux
            )));
        }
        Ok(())
    }

    /// Constraints, bellperson's `input_i · 0 = 0` rows included.
    pub fn num_constraints(&self) -> usize {
        self.a.rows()
    }

    pub fn nnz(&self) -> u64 {
        self.a.nnz + self.b.nnz + self.c.nnz
    }

    /// The evaluation domain: the next power of two ≥ constraints.
    pub fn domain_size(&self) -> usize {
        self.num_constraints().next_power_of_two()
    }

    /// Bytes of the compact form (matrices, dictionary, densities).
    pub fn byte_len(&self) -> usize {
        self.a.byte_len()
            + self.b.byte_len()
            + self.c.byte_len()
            + self.dict.len() * 32
            + self.density.all().iter().map(|b| b.words.byte_len()).sum::<usize>()
    }

    /// Bytes per non-zero, all in.
    pub fn bytes_per_nnz(&self) -> f64 {
        self.byte_len() as f64 / self.nnz().max(1) as f64
    }

    /// Bytes held in anonymous memory: the dictionary, and the matrices and
    /// densities unless they are views of a mapped file.
    pub fn heap_bytes(&self) -> usize {
        self.a.heap_bytes()
            + self.b.heap_bytes()
            + self.c.heap_bytes()
            + self.dict.capacity() * 32
            + self.density.all().iter().map(|b| b.words.heap_bytes()).sum::<usize>()
    }

    /// This circuit's witness program: the one loaded with its file, else recorded on first use
    /// (split by `layout`, when the circuit has one: the first use's counts); `None` when it has
    /// none (see [`Program::record`]) or a witness it made disagreed with the gadgets'.
    pub fn program(&self, layout: impl FnOnce() -> Option<Layout>) -> Option<&Program> {
        self.program.get_or_record(|| Program::record(self, layout()))
    }

    /// `replayed`, a witness this PCE's program made, if the program is trusted: its file's
    /// verdict, else the first witness decides, once ([`ProgramSlot`]).
    pub fn vouch(&self, replayed: Witness, gadgets: impl FnOnce() -> Result<[u8; 32]>) -> Result<Option<Witness>> {
        self.program.vouch(replayed, gadgets)
    }
}
