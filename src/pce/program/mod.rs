//! The witness program: how every variable of a circuit follows from a few
//! free ones, read off the PCE's own matrices, so a proof's witness is made by
//! replaying it instead of running the circuit's gadgets.
//!
//! A row `A·z × B·z = C·z` in which one variable is still unknown, and only
//! in C, gives it: `v = (A·z × B·z − C'·z) / c`. A row whose unknowns are all
//! in C, all booleans (they have a `(1 − v)·v = 0` row), with coefficients
//! `±2^e` of one sign and distinct exponents, gives all of them at once by
//! binary decomposition (how `UInt32::addmany` and `to_bits` pack their
//! results). A row `A·z × 1 = C·z` over small values whose C unknowns are
//! booleans with coefficients `+2^e` (bellperson's `MultiEq`, several
//! additions packed in one row) gives its low bits as soon as the part of A
//! below them is known, window after window. Rows are looked at in order; one
//! that cannot be solved yet waits until a column it lacks is solved; when
//! every row left waits, the lowest column waited on is **free**: the circuit
//! supplies those values (a SHA-256 chain's message bits, PoRep's vanilla
//! proofs), in column order.
//!
//! In a satisfiable witness every such equation holds and has one solution,
//! so the replayed witness is the gadgets' own, bit for bit; an instance
//! whose free values satisfy nothing gives a witness that the satisfaction
//! check refuses, as the gadgets' would be.
//!
//! Most SHA-256 rows hold only booleans with small integer coefficients
//! (XOR: `2a·b = a + b − c`): those steps run in machine integers over a byte
//! per variable, and only their results are written as field elements.

mod check;
#[cfg(test)]
mod file_tests;
mod record;
mod replay;
pub(crate) mod stored;
#[cfg(test)]
mod tests;
pub mod trust;
pub(crate) mod vouched;

use blstrs::Scalar;
use ff::PrimeField;

use super::matrix::{decode, Array, TAG_DICT};

/// Step kinds, in the top two bits of a step's argument.
const KIND_SHIFT: u32 = 30;
const ARG_MASK: u32 = (1 << KIND_SHIFT) - 1;
/// One target, C coefficient +1, every other term an integer.
const INT_PLUS: u32 = 0;
/// One target, C coefficient −1, every other term an integer.
const INT_MINUS: u32 = 1;
/// One target, solved in the field.
const FIELD: u32 = 2;
/// A group of boolean targets decomposed (argument: the group's offset).
const BITS: u32 = 3;

/// How a group's value is computed: `A·z × B·z − C·z` in machine integers
/// or in the field, or a packed sum (`A·z − C·z` modulo 2^256, B being the
/// ONE; bellperson's `MultiEq` rows).
const PRODUCT_INT: u32 = 0;
const PRODUCT_FIELD: u32 = 1;
const PACKED: u32 = 2;

/// Integer coefficients must stay below this, so that a row sum of up to
/// [`MAX_INT_TERMS`] of them fits an `i64` (and a product of two an `i128`).
const SMALL_LIMIT: u64 = 1 << 40;
const MAX_INT_TERMS: usize = 1 << 20;
/// The byte view holds values of magnitude up to this exactly.
const MAX_BYTE: u64 = i8::MAX as u64;
/// Integer decomposition up to this exponent; higher ones go through the field.
const MAX_INT_EXP: u32 = 60;
/// A program keeps a few words per distinct coefficient; a circuit with
/// more of them than this (mimc-chain: one per round) gets none.
pub const MAX_DICT: usize = 1 << 20;

/// A coefficient as a signed integer `±mag` with `mag < p/2`.
#[derive(Clone, Copy, Debug)]
struct IntCoef {
    neg: bool,
    mag: [u64; 4],
    /// `(negative, e)` when it is `±2^e` (2^254 is above p/2, so its `mag`
    /// is `p − 2^254`; this still names it).
    pow2: Option<(bool, u32)>,
}

impl IntCoef {
    const ONE: IntCoef = IntCoef { neg: false, mag: [1, 0, 0, 0], pow2: Some((false, 0)) };
    const MINUS_ONE: IntCoef = IntCoef { neg: true, mag: [1, 0, 0, 0], pow2: Some((true, 0)) };

    fn of(c: &Scalar) -> IntCoef {
        let (pos, neg) = (as_u256(c), as_u256(&-*c));
        let pow2 = single_bit(&pos).map(|e| (false, e)).or_else(|| single_bit(&neg).map(|e| (true, e)));
        match pos.iter().rev().cmp(neg.iter().rev()) {
            std::cmp::Ordering::Greater => IntCoef { neg: true, mag: neg, pow2 },
            _ => IntCoef { neg: false, mag: pos, pow2 },
        }
    }

    fn small(&self) -> Option<i64> {
        let m = self.mag;
        (m[1] == 0 && m[2] == 0 && m[3] == 0 && m[0] < SMALL_LIMIT).then(|| {
            if self.neg {
                -(m[0] as i64)
            } else {
                m[0] as i64
            }
        })
    }

    /// `e` when the coefficient is `+2^e`.
    fn pos_pow2(&self) -> Option<u32> {
        self.pow2.filter(|p| !p.0).map(|p| p.1)
    }

    fn magnitude(&self) -> f64 {
        self.mag.iter().rev().fold(0.0, |acc, &l| acc * 2f64.powi(64) + l as f64)
    }

    /// The exponent of its lowest set bit: a multiple of it leaves lower bits alone.
    fn low_zeros(&self) -> u32 {
        self.mag.iter().enumerate().find(|(_, l)| **l != 0).map_or(256, |(i, l)| 64 * i as u32 + l.trailing_zeros())
    }
}

/// The canonical integer of `c`, little-endian limbs.
fn as_u256(c: &Scalar) -> [u64; 4] {
    let repr = c.to_repr();
    let mut limbs = [0u64; 4];
    for (i, l) in limbs.iter_mut().enumerate() {
        *l = u64::from_le_bytes(repr.as_ref()[8 * i..8 * i + 8].try_into().expect("8 bytes"));
    }
    limbs
}

/// `e` if `v == 2^e`.
fn single_bit(v: &[u64; 4]) -> Option<u32> {
    (v.iter().map(|l| l.count_ones()).sum::<u32>() == 1)
        .then(|| v.iter().enumerate().find(|(_, l)| **l != 0).map(|(i, l)| 64 * i as u32 + l.trailing_zeros()))?
}

/// `x ± m` modulo 2^256.
#[inline(always)]
fn add_u256(x: &mut [u64; 4], m: &[u64; 4], negative: bool) {
    let mut carry = false;
    for i in 0..4 {
        let (v, c1) = if negative { x[i].overflowing_sub(m[i]) } else { x[i].overflowing_add(m[i]) };
        let (v, c2) = if negative { v.overflowing_sub(carry as u64) } else { v.overflowing_add(carry as u64) };
        x[i] = v;
        carry = c1 || c2;
    }
}

/// A term of a row: column and coefficient (tag, and dictionary index for `TAG_DICT`).
#[derive(Clone, Copy)]
struct Term {
    col: u32,
    tag: u32,
    dict: u32,
}

fn terms(row: &[u32]) -> impl Iterator<Item = Term> + '_ {
    let mut k = 0;
    std::iter::from_fn(move || {
        let (tag, col) = decode(*row.get(k)?);
        let dict = if tag == TAG_DICT {
            k += 1;
            row[k]
        } else {
            0
        };
        k += 1;
        Some(Term { col, tag, dict })
    })
}

/// A circuit's witness program, recorded from its PCE, or loaded with the PCE's file (its
/// arrays then view the file's bytes, as the matrices do: `stored.rs`).
#[derive(Debug)]
pub struct Program {
    num_inputs: usize,
    num_aux: usize,
    /// `[row, kind << 30 | target or group offset]`, in the order they run.
    steps: Array<[u32; 2]>,
    /// Decomposition groups: `[count, mode, negative, (col, exp) × count]`.
    groups: Array<u32>,
    /// The free columns, in order.
    free: Array<u32>,
    /// Columns constrained boolean: their byte in the integer view is kept.
    is_bit: Array<u64>,
    /// Per dictionary entry: the coefficient as an integer, and as an `i64`
    /// when it is small (0 otherwise: no integer row uses it). Made from the
    /// PCE's dictionary, never stored.
    coefs: Vec<IntCoef>,
    small: Vec<i64>,
    /// Its steps grouped by part, when the circuit's layout splits it.
    split: Option<Split>,
}

/// How a circuit's columns fall into a prefix and `parts` equal parts, each
/// computed from the prefix and itself alone (a PoRep partition's
/// challenges): the parts' steps replay in parallel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Inputs before the parts', the ONE included.
    pub prefix_inputs: usize,
    pub prefix_aux: usize,
    pub parts: usize,
}

impl Layout {
    /// Inputs and aux per part, if the rest splits evenly.
    fn per_part(&self, num_inputs: usize, num_aux: usize) -> Option<(usize, usize)> {
        let per = |total: usize, prefix: usize| {
            total
                .checked_sub(prefix)
                .filter(|rest| self.parts > 0 && rest % self.parts == 0)
                .map(|rest| rest / self.parts)
        };
        Some((per(num_inputs, self.prefix_inputs)?, per(num_aux, self.prefix_aux)?))
    }

    /// The group of column `col`, given [`Layout::per_part`]'s counts: 0 for the prefix,
    /// `1 + i` for part i.
    fn group_of(&self, num_inputs: usize, (per_in, per_aux): (usize, usize), col: usize) -> usize {
        match col.checked_sub(num_inputs) {
            None if col < self.prefix_inputs => 0,
            None => 1 + (col - self.prefix_inputs) / per_in,
            Some(j) if j < self.prefix_aux => 0,
            Some(j) => 1 + (j - self.prefix_aux) / per_aux,
        }
    }
}

/// A program's steps grouped: the prefix's, then each part's.
#[derive(Debug)]
struct Split {
    layout: Layout,
    /// `ends[0]`: the prefix's steps end; `ends[i + 1]`: part i's.
    ends: Vec<usize>,
}

fn bit_of(bits: &[u64], i: usize) -> bool {
    bits[i / 64] >> (i % 64) & 1 == 1
}

impl Program {
    /// The free columns, in the order [`Program::run`] takes their values.
    pub fn free(&self) -> &[u32] {
        &self.free
    }

    /// Are its steps grouped by part (replayed in parallel)?
    pub fn is_split(&self) -> bool {
        self.split.is_some()
    }

    /// Steps the program runs.
    pub fn steps(&self) -> usize {
        self.steps.len()
    }

    /// Bytes held in anonymous memory: its own, and its arrays unless they view a mapped file.
    pub fn heap_bytes(&self) -> usize {
        self.steps.heap_bytes()
            + self.groups.heap_bytes()
            + self.free.heap_bytes()
            + self.is_bit.heap_bytes()
            + self.coefs.capacity() * std::mem::size_of::<IntCoef>()
            + self.small.capacity() * 8
    }

    /// Bytes of its arrays that live in a mapped file.
    pub fn mapped_bytes(&self) -> usize {
        let arrays = [self.steps.byte_len(), self.groups.byte_len(), self.free.byte_len(), self.is_bit.byte_len()];
        let heap =
            [self.steps.heap_bytes(), self.groups.heap_bytes(), self.free.heap_bytes(), self.is_bit.heap_bytes()];
        arrays.iter().zip(heap).map(|(len, heap)| len.saturating_sub(heap)).sum()
    }
}

/// The coefficients of a PCE's dictionary as integers, and as `i64` where small.
fn int_coefs(dict: &[Scalar]) -> (Vec<IntCoef>, Vec<i64>) {
    let coefs: Vec<IntCoef> = dict.iter().map(IntCoef::of).collect();
    let small = coefs.iter().map(|c| c.small().unwrap_or(0)).collect();
    (coefs, small)
}
