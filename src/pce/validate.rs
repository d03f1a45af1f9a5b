//! The structural validator: everything the evaluator and the prover index
//! with, checked in one parallel pass over the matrices, so that a PCE that
//! passes can never make them panic. `load` runs it on every file, `save`
//! before writing one.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::header::bad_file;
use super::matrix::{decode, CsrMatrix, MAX_COLS, TAG_DICT};
use super::system::{Bitmap, Pce};
use crate::{Error, Result};

/// Rows per validation task.
const ROWS_PER_TASK: usize = 1 << 15;

/// A bitmap being rebuilt by several threads.
struct AtomicBits(Vec<AtomicU64>);

impl AtomicBits {
    fn new(len: usize) -> Self {
        AtomicBits((0..len.div_ceil(64)).map(|_| AtomicU64::new(0)).collect())
    }
    #[inline(always)]
    fn set(&self, i: usize) {
        let (w, bit) = (&self.0[i / 64], 1u64 << (i % 64));
        // Most variables appear several times: read before the locked or.
        if w.load(Ordering::Relaxed) & bit == 0 {
            w.fetch_or(bit, Ordering::Relaxed);
        }
    }
    fn matches(&self, b: &Bitmap) -> bool {
        b.words.len() == self.0.len() && self.0.iter().zip(b.words.iter()).all(|(x, y)| x.load(Ordering::Relaxed) == *y)
    }
}

/// The density bitmaps a matrix's columns are recorded into while it is
/// scanned: A feeds aux, B inputs and aux, C none. A type per case, so each
/// scan is compiled for its own case with no branch on it per word.
trait DensitySink: Copy + Sync {
    /// Records column `col` (already checked < inputs + aux).
    fn record(self, col: usize);
}

/// C: no density.
#[derive(Clone, Copy)]
struct NoDensity;

impl DensitySink for NoDensity {
    #[inline(always)]
    fn record(self, _: usize) {}
}

/// A: the aux variables used.
#[derive(Clone, Copy)]
struct AuxDensity<'a> {
    num_inputs: usize,
    aux: &'a AtomicBits,
}

impl DensitySink for AuxDensity<'_> {
    #[inline(always)]
    fn record(self, col: usize) {
        if col >= self.num_inputs {
            self.aux.set(col - self.num_inputs)
        }
    }
}

/// B: the inputs and the aux variables used.
#[derive(Clone, Copy)]
struct InputAuxDensity<'a> {
    num_inputs: usize,
    inputs: &'a AtomicBits,
    aux: &'a AtomicBits,
}

impl DensitySink for InputAuxDensity<'_> {
    #[inline(always)]
    fn record(self, col: usize) {
        if col < self.num_inputs {
            self.inputs.set(col)
        } else {
            self.aux.set(col - self.num_inputs)
        }
    }
}

/// What a matrix's words are checked against.
#[derive(Clone, Copy)]
struct Bounds {
    /// Inputs + aux.
    cols: usize,
    dict_len: usize,
}

/// Scans rows `r` of a matrix. Fast path: errors are accumulated in a flag
/// (no early exits, few branches) and the densities recorded; when the flag
/// is raised the caller rescans with [`row_error`] for the message.
/// Returns (flag, non-zeros).
#[inline(always)]
fn scan_rows(rp: &[u32], words: &[u32], r: Range<usize>, bounds: Bounds, density: impl DensitySink) -> (bool, u64) {
    let (mut invalid, mut nnz) = (false, 0u64);
    for i in r {
        let (s, e) = (rp[i] as usize, rp[i + 1] as usize);
        if s > e || e > words.len() {
            return (true, nnz);
        }
        let row = &words[s..e];
        let mut k = 0;
        while k < row.len() {
            let (tag, col) = decode(row[k]);
            let col = col as usize;
            invalid |= col >= bounds.cols;
            invalid |= tag > TAG_DICT;
            if tag == TAG_DICT {
                k += 1;
                invalid |= row.get(k).is_none_or(|&d| d as usize >= bounds.dict_len);
            }
            if col < bounds.cols {
                density.record(col);
            }
            nnz += 1;
            k += 1;
        }
    }
    (invalid, nnz)
}

/// The first error in rows `r`, named.
fn row_error(name: &str, rp: &[u32], words: &[u32], r: Range<usize>, bounds: Bounds) -> Error {
    let Bounds { cols, dict_len } = bounds;
    for i in r {
        let (s, e) = (rp[i] as usize, rp[i + 1] as usize);
        if s > e || e > words.len() {
            return bad_file(format!(
                "{name} row {i}: row pointers {s}..{e} not monotone within {} words",
                words.len()
            ));
        }
        let row = &words[s..e];
        let mut k = 0;
        while k < row.len() {
            let (tag, col) = decode(row[k]);
            if col as usize >= cols {
                return bad_file(format!("{name} row {i}: column {col} out of {cols} columns"));
            }
            if tag > TAG_DICT {
                return bad_file(format!("{name} row {i}: invalid coefficient tag {tag}"));
            }
            if tag == TAG_DICT {
                k += 1;
                match row.get(k) {
                    None => return bad_file(format!("{name} row {i}: dictionary tag on the row's last word")),
                    Some(&d) if d as usize >= dict_len => {
                        return bad_file(format!("{name} row {i}: dictionary index {d} out of {dict_len}"))
                    }
                    _ => {}
                }
            }
            k += 1;
        }
    }
    bad_file(format!("{name}: inconsistent rows"))
}

/// Checks one matrix of `rows` rows and records its densities.
fn check_matrix(name: &str, m: &CsrMatrix, rows: usize, bounds: Bounds, density: impl DensitySink) -> Result<()> {
    let (rp, words) = (&m.row_ptr[..], &m.words[..]);
    if rp.len() != rows + 1 {
        return Err(bad_file(format!("{name} has {} row pointers, expected {}", rp.len(), rows + 1)));
    }
    if rp[0] != 0 {
        return Err(bad_file(format!("{name} row pointers start at {}, not 0", rp[0])));
    }
    if rp[rows] as usize != words.len() {
        return Err(bad_file(format!("{name} row pointers end at {}, but it has {} words", rp[rows], words.len())));
    }
    let nnz = (0..rows.div_ceil(ROWS_PER_TASK))
        .into_par_iter()
        .map(|t| -> Result<u64> {
            let r = t * ROWS_PER_TASK..((t + 1) * ROWS_PER_TASK).min(rows);
            let (invalid, nnz) = scan_rows(rp, words, r.clone(), bounds, density);
            if invalid {
                return Err(row_error(name, rp, words, r, bounds));
            }
            Ok(nnz)
        })
        .try_reduce(|| 0, |a, b| Ok(a + b))?;
    if nnz != m.nnz {
        return Err(bad_file(format!("{name} has {nnz} non-zeros, its header says {}", m.nnz)));
    }
    Ok(())
}

/// Checks everything the evaluator and the prover index with: row pointers
/// (first 0, monotone, last = words), columns (< inputs + aux), coefficient
/// tags (3 is invalid), dictionary indices (< dictionary length, never missing
/// at a row's end), nnz, and the density bitmaps — rebuilt from A and B and
/// compared bit for bit (trailing bits included) with the stored ones, with
/// their population counts. O(words), parallel over rows.
pub fn validate(pce: &Pce) -> Result<()> {
    let (ni, na) = (pce.num_inputs, pce.num_aux);
    let cols = ni.checked_add(na).filter(|&c| c <= MAX_COLS).ok_or_else(|| bad_file("too many columns"))?;
    let rows = pce.a.rows();
    if pce.a.row_ptr.is_empty() {
        return Err(bad_file("A has no row pointers"));
    }
    let d = &pce.density;
    for (name, b, len) in [("a_aux", &d.a_aux, na), ("b_input", &d.b_input, ni), ("b_aux", &d.b_aux, na)] {
        if b.len != len || b.words.len() != len.div_ceil(64) {
            return Err(bad_file(format!(
                "{name} density has {} bits in {} words, expected {len} bits",
                b.len,
                b.words.len()
            )));
        }
        let ones: usize = b.words.iter().map(|w| w.count_ones() as usize).sum();
        if ones != b.ones {
            return Err(bad_file(format!("{name} density has {ones} bits set, its header says {}", b.ones)));
        }
    }
    let bounds = Bounds { cols, dict_len: pce.dict.len() };
    let (a_aux, b_input, b_aux) = (AtomicBits::new(na), AtomicBits::new(ni), AtomicBits::new(na));
    let a_density = AuxDensity { num_inputs: ni, aux: &a_aux };
    let b_density = InputAuxDensity { num_inputs: ni, inputs: &b_input, aux: &b_aux };
    let (ra, (rb, rc)) = rayon::join(
        || check_matrix("A", &pce.a, rows, bounds, a_density),
        || {
            rayon::join(
                || check_matrix("B", &pce.b, rows, bounds, b_density),
                || check_matrix("C", &pce.c, rows, bounds, NoDensity),
            )
        },
    );
    ra?;
    rb?;
    rc?;
    for (name, rebuilt, stored) in
        [("a_aux", &a_aux, &d.a_aux), ("b_input", &b_input, &d.b_input), ("b_aux", &b_aux, &d.b_aux)]
    {
        if !rebuilt.matches(stored) {
            return Err(bad_file(format!("{name} density does not match the matrices")));
        }
    }
    Ok(())
}
