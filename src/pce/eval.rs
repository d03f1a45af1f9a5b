//! Sparse evaluation: `a = A·z`, `b = B·z`, `c = C·z` with `z = [inputs | aux]`.
//!
//! Memory-bound: rows are split into blocks across rayon's pool and each result
//! is written straight into its final vector (no zero prefill, no concatenated
//! copy of the witness). ±1 coefficients cost one addition; for dictionary
//! coefficients a 0 or 1 witness value (most of a SHA-256 witness) skips the
//! multiplication.

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use super::matrix::{decode, CsrMatrix, TAG_MINUS_ONE, TAG_PLUS_ONE};
use super::system::Pce;
use crate::witness::Witness;
use crate::{Error, Result};

/// The three evaluations bellperson's prover calls `a`, `b`, `c`.
pub struct Abc {
    pub a: Vec<Scalar>,
    pub b: Vec<Scalar>,
    pub c: Vec<Scalar>,
    /// Dropped with a, b, c, or handed their buffers by [`Abc::release`]:
    /// lets the engine take their memory back the moment a backend is done
    /// with them (see [`Abc::hold`]).
    pub(crate) hold: Option<Box<dyn AbcLease>>,
}

/// What the engine attaches to a, b, c: it accounts for their memory, and can
/// keep their buffers for the next proof.
pub trait AbcLease: Send + Sync {
    /// Takes the buffers of a, b and c once a backend is done with them.
    fn reuse(self: Box<Self>, bufs: [Vec<Scalar>; 3]);
}

impl Abc {
    pub fn new(a: Vec<Scalar>, b: Vec<Scalar>, c: Vec<Scalar>) -> Abc {
        Abc { a, b, c, hold: None }
    }

    /// Keeps `lease` exactly as long as a, b and c.
    pub fn hold(&mut self, lease: impl AbcLease + 'static) {
        self.hold = Some(Box::new(lease));
    }

    /// Ends a, b and c, handing their buffers to the lease if there is one.
    pub fn release(self) {
        if let Some(lease) = self.hold {
            lease.reuse([self.a, self.b, self.c]);
        }
    }

    pub fn heap_bytes(&self) -> usize {
        (self.a.capacity() + self.b.capacity() + self.c.capacity()) * 32
    }
}

impl PartialEq for Abc {
    fn eq(&self, o: &Abc) -> bool {
        (&self.a, &self.b, &self.c) == (&o.a, &o.b, &o.c)
    }
}

impl Eq for Abc {}

impl std::fmt::Debug for Abc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Abc").field("a", &self.a).field("b", &self.b).field("c", &self.c).finish_non_exhaustive()
    }
}

/// Rows per rayon task: big enough to amortise scheduling, small enough to balance.
const ROWS_PER_TASK: usize = 1 << 12;

/// The witness seen as one vector without copying it.
pub(crate) struct Z<'a> {
    pub inputs: &'a [Scalar],
    pub aux: &'a [Scalar],
}

/// The witness value of a column (inputs first, then aux).
pub(crate) trait Values {
    fn get(&self, col: usize) -> &Scalar;
}

impl Values for Z<'_> {
    #[inline(always)]
    fn get(&self, col: usize) -> &Scalar {
        match col.checked_sub(self.inputs.len()) {
            None => &self.inputs[col],
            Some(j) => &self.aux[j],
        }
    }
}

#[inline(always)]
pub(crate) fn eval_row(row: &[u32], z: &impl Values, dict: &[Scalar]) -> Scalar {
    let mut acc = Scalar::ZERO;
    let mut k = 0;
    while k < row.len() {
        let (tag, col) = decode(row[k]);
        let v = z.get(col as usize);
        match tag {
            TAG_PLUS_ONE => acc += v,
            TAG_MINUS_ONE => acc -= v,
            _ => {
                k += 1;
                if *v == Scalar::ONE {
                    acc += dict[row[k] as usize];
                } else if !v.is_zero_vartime() {
                    acc += *v * dict[row[k] as usize];
                }
            }
        }
        k += 1;
    }
    acc
}

/// Writes one product into `out` (its old contents dropped, its capacity
/// kept, grown to exactly the rows if it is smaller).
fn eval_matrix(m: &CsrMatrix, z: &Z, dict: &[Scalar], mut out: Vec<Scalar>) -> Vec<Scalar> {
    out.clear();
    out.reserve_exact(m.rows());
    (0..m.rows())
        .into_par_iter()
        .with_min_len(ROWS_PER_TASK)
        .map(|r| eval_row(m.row(r), z, dict))
        .collect_into_vec(&mut out);
    out
}

/// Computes `a`, `b`, `c` for one witness; the three products run
/// concurrently. They have capacity for the whole evaluation domain, so
/// padding them for the NTTs later never reallocates (and never holds two
/// copies at once).
pub fn evaluate(pce: &Pce, w: &Witness) -> Result<Abc> {
    let m = pce.domain_size();
    evaluate_into(pce, w, [(); 3].map(|_| Vec::with_capacity(m)))
}

/// As [`evaluate`], into the buffers `bufs` (e.g. kept from an earlier proof).
pub fn evaluate_into(pce: &Pce, w: &Witness, bufs: [Vec<Scalar>; 3]) -> Result<Abc> {
    pce.check_witness(w)?;
    let z = Z { inputs: &w.inputs, aux: &w.aux };
    let dict = &pce.dict[..];
    let [a, b, c] = bufs;
    let (a, (b, c)) = rayon::join(
        || eval_matrix(&pce.a, &z, dict, a),
        || rayon::join(|| eval_matrix(&pce.b, &z, dict, b), || eval_matrix(&pce.c, &z, dict, c)),
    );
    Ok(Abc::new(a, b, c))
}

/// Refuses a witness that does not satisfy the circuit (the first row with
/// `a·b ≠ c`): its proof would not verify. The engine runs this in the
/// synthesis stage, on the SpMV threads, so the backend stage (the GPU's
/// time) never waits for a pass over a, b and c.
pub fn check_satisfied(abc: &Abc) -> Result<()> {
    match (0..abc.a.len()).into_par_iter().find_first(|&i| abc.a[i] * abc.b[i] != abc.c[i]) {
        Some(constraint) => Err(Error::Unsatisfied { constraint }),
        None => Ok(()),
    }
}
