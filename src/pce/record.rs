//! `RecordingCs`: a constraint system that records A, B, C into the compact form.
//!
//! It never runs value closures, so blank circuits (no witness) record the same
//! matrices as real ones. While recording, inputs and enforces interleave, so a
//! column's final index is unknown: inputs are stored as `COL_MASK - i`, aux as
//! `j`, and both are remapped once the final input count is known.

use std::collections::HashMap;
use std::sync::Arc;

use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::{Field, PrimeField};

use super::matrix::{decode, encode, CsrMatrix, COL_MASK, MAX_COLS, TAG_DICT, TAG_MINUS_ONE, TAG_PLUS_ONE};
use super::system::{Bitmap, Densities, Pce};
use crate::progress::Progress;
use crate::{Error, Result};

/// Why recording stops when a matrix outgrows its `u32` row pointers.
const WORDS_OVERFLOW: &str = "more than 2^32 words in one matrix";

/// Rows of one matrix under construction.
#[derive(Default)]
struct Rows {
    row_ptr: Vec<u32>,
    words: Vec<u32>,
    nnz: u64,
}

impl Rows {
    fn new() -> Self {
        Rows { row_ptr: vec![0], words: Vec::new(), nnz: 0 }
    }
    /// Closes the current row; false if the word count left u32.
    fn end_row(&mut self) -> bool {
        match u32::try_from(self.words.len()) {
            Ok(n) => {
                self.row_ptr.push(n);
                true
            }
            Err(_) => false,
        }
    }
}

/// The distinct coefficients other than ±1, interned.
#[derive(Default)]
struct Dict {
    values: Vec<Scalar>,
    index: HashMap<[u8; 32], u32>,
}

impl Dict {
    fn intern(&mut self, c: Scalar) -> u32 {
        let values = &mut self.values;
        *self.index.entry(c.to_repr()).or_insert_with(|| {
            values.push(c);
            (values.len() - 1) as u32
        })
    }
}

/// Records every `enforce` as one row of A, B and C.
pub struct RecordingCs {
    num_inputs: usize,
    num_aux: usize,
    /// A, B, C.
    m: [Rows; 3],
    dict: Dict,
    /// Set when the circuit outgrows the format; reported by `finish`.
    overflow: Option<String>,
    /// Counts the root's rows as they are recorded (a sub-circuit's when it is appended).
    progress: Option<Arc<Progress>>,
}

impl RecordingCs {
    fn input_col(&mut self, i: usize) -> u32 {
        if i >= MAX_COLS {
            self.overflow.get_or_insert(format!("input index {i}"));
            return 0;
        }
        COL_MASK - i as u32
    }

    fn aux_col(&mut self, j: usize) -> u32 {
        if j >= MAX_COLS {
            self.overflow.get_or_insert(format!("aux index {j}"));
            return 0;
        }
        j as u32
    }

    fn push_term(rows: &mut Rows, dict: &mut Dict, col: u32, coeff: &Scalar) {
        if coeff.is_zero_vartime() {
            // bellperson skips zero coefficients in values and densities alike.
            return;
        }
        rows.nnz += 1;
        if *coeff == Scalar::ONE {
            rows.words.push(encode(TAG_PLUS_ONE, col));
        } else if *coeff == -Scalar::ONE {
            rows.words.push(encode(TAG_MINUS_ONE, col));
        } else {
            rows.words.push(encode(TAG_DICT, col));
            rows.words.push(dict.intern(*coeff));
        }
    }

    fn record(&mut self, which: usize, lc: &LinearCombination<Scalar>) {
        // LinearCombination already merged repeated variables (summing coefficients).
        for (&i, coeff) in lc.iter_inputs() {
            let col = self.input_col(i);
            Self::push_term(&mut self.m[which], &mut self.dict, col, coeff);
        }
        for (&j, coeff) in lc.iter_aux() {
            let col = self.aux_col(j);
            Self::push_term(&mut self.m[which], &mut self.dict, col, coeff);
        }
        if !self.m[which].end_row() {
            self.overflow.get_or_insert(WORDS_OVERFLOW.into());
        }
    }

    /// Appends bellperson's `input_i · 0 = 0` rows, remaps columns to their final
    /// indices and derives the density bitmaps.
    pub fn finish(mut self) -> Result<Pce> {
        if let Some(what) = self.overflow.take() {
            return Err(Error::TooLarge(what));
        }
        if self.num_inputs + self.num_aux > MAX_COLS {
            return Err(Error::TooLarge(format!(
                "{} inputs + {} aux exceed {MAX_COLS} columns",
                self.num_inputs, self.num_aux
            )));
        }
        for i in 0..self.num_inputs {
            let col = COL_MASK - i as u32;
            Self::push_term(&mut self.m[0], &mut self.dict, col, &Scalar::ONE);
            let ok = self.m.iter_mut().fold(true, |ok, rows| rows.end_row() & ok);
            if !ok {
                return Err(Error::TooLarge(WORDS_OVERFLOW.into()));
            }
        }
        let (ni, na) = (self.num_inputs, self.num_aux);
        let mut a_aux = vec![false; na];
        let mut b_input = vec![false; ni];
        let mut b_aux = vec![false; na];
        for (which, rows) in self.m.iter_mut().enumerate() {
            remap(&mut rows.words, |col| {
                let input = col as usize >= MAX_COLS - ni;
                let idx = if input { (COL_MASK - col) as usize } else { col as usize };
                match (which, input) {
                    (0, false) => a_aux[idx] = true,
                    (1, true) => b_input[idx] = true,
                    (1, false) => b_aux[idx] = true,
                    _ => {}
                }
                if input {
                    idx as u32
                } else {
                    (ni + idx) as u32
                }
            });
        }
        let matrix = |r: Rows| CsrMatrix { row_ptr: r.row_ptr.into(), words: r.words.into(), nnz: r.nnz };
        let [a, b, c] = self.m;
        Ok(Pce {
            num_inputs: ni,
            num_aux: na,
            a: matrix(a),
            b: matrix(b),
            c: matrix(c),
            dict: self.dict.values,
            density: Densities {
                a_aux: Bitmap::from_bits(&a_aux),
                b_input: Bitmap::from_bits(&b_input),
                b_aux: Bitmap::from_bits(&b_aux),
            },
            device_copies: Default::default(),
            program: Default::default(),
        })
    }
}

/// Rewrites the column of every word (skipping dictionary-index words).
fn remap(words: &mut [u32], mut f: impl FnMut(u32) -> u32) {
    let mut k = 0;
    while k < words.len() {
        let (tag, col) = decode(words[k]);
        words[k] = encode(tag, f(col));
        k += if tag == TAG_DICT { 2 } else { 1 };
    }
}

impl ConstraintSystem<Scalar> for RecordingCs {
    type Root = Self;

    fn new() -> Self {
        RecordingCs {
            num_inputs: 0,
            num_aux: 0,
            m: [Rows::new(), Rows::new(), Rows::new()],
            dict: Dict::default(),
            overflow: None,
            progress: None,
        }
    }

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.num_aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.num_aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.num_inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.num_inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.record(0, &a(LinearCombination::zero()));
        self.record(1, &b(LinearCombination::zero()));
        self.record(2, &c(LinearCombination::zero()));
        if let Some(p) = &self.progress {
            p.add(1);
        }
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

    fn is_extensible() -> bool {
        true
    }

    /// Appends a sub-circuit recorded separately, as bellperson's prover does:
    /// the child's input 0 (its own ONE) is the parent's ONE, its other inputs
    /// and its aux follow the parent's.
    fn extend(&mut self, other: &Self) {
        if let Some(what) = &other.overflow {
            self.overflow.get_or_insert(what.clone());
        }
        let (pi, pa) = (self.num_inputs, self.num_aux);
        if let Some(p) = &self.progress {
            p.add(other.m[0].row_ptr.len() as u64 - 1);
        }
        for which in 0..3 {
            let src = &other.m[which];
            for r in 0..src.row_ptr.len() - 1 {
                let row = &src.words[src.row_ptr[r] as usize..src.row_ptr[r + 1] as usize];
                let mut k = 0;
                while k < row.len() {
                    let (tag, child_col) = decode(row[k]);
                    let col = if child_col as usize >= MAX_COLS - other.num_inputs {
                        let i = (COL_MASK - child_col) as usize;
                        self.input_col(if i == 0 { 0 } else { pi + i - 1 })
                    } else {
                        self.aux_col(pa + child_col as usize)
                    };
                    self.m[which].words.push(encode(tag, col));
                    if tag == TAG_DICT {
                        let idx = self.dict.intern(other.dict.values[row[k + 1] as usize]);
                        self.m[which].words.push(idx);
                        k += 1;
                    }
                    k += 1;
                }
                if !self.m[which].end_row() {
                    self.overflow.get_or_insert(WORDS_OVERFLOW.into());
                }
            }
            self.m[which].nnz += src.nnz;
        }
        self.num_inputs += other.num_inputs.saturating_sub(1);
        self.num_aux += other.num_aux;
    }
}

/// Records a circuit's R1CS as bellperson's prover sees it: the ONE input at
/// index 0, the circuit's constraints, then one `input_i · 0 = 0` row per input.
pub fn extract<C: Circuit<Scalar>>(circuit: C) -> Result<Pce> {
    extract_with(circuit, None)
}

/// [`extract`], its progress logged as `job` (constraints recorded so far: their number is
/// known only at the end).
pub fn extract_logged<C: Circuit<Scalar>>(circuit: C, job: String) -> Result<Pce> {
    let progress = Arc::new(Progress::start(job, "constraints", None));
    let pce = extract_with(circuit, Some(progress.clone()))?;
    progress.finish();
    Ok(pce)
}

fn extract_with<C: Circuit<Scalar>>(circuit: C, progress: Option<Arc<Progress>>) -> Result<Pce> {
    let mut cs = RecordingCs { progress, ..RecordingCs::new() };
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    cs.finish()
}
