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

use std::sync::OnceLock;

use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;

use super::eval::{eval_row, Values};
use super::matrix::{decode, CsrMatrix, Pce, TAG_DICT, TAG_MINUS_ONE, TAG_PLUS_ONE};
use crate::mem::{Owner, Tracked};
use crate::witness::{pieces, Witness, WitnessBuffer};
use crate::{Error, Result};

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

/// A circuit's witness program, recorded once from its PCE.
#[derive(Debug)]
pub struct Program {
    num_inputs: usize,
    num_aux: usize,
    /// `(row, kind << 30 | target or group offset)`, in the order they run.
    steps: Vec<(u32, u32)>,
    /// Decomposition groups: `[count, mode, negative, (col, exp) × count]`.
    groups: Vec<u32>,
    /// The free columns, in order.
    free: Vec<u32>,
    /// Columns constrained boolean: their byte in the integer view is kept.
    is_bit: Vec<u64>,
    /// Per dictionary entry: the coefficient as an integer, and as an `i64`
    /// when it is small (0 otherwise: no integer row uses it).
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

/// `v` if row `r` is a booleanity row, `(1 − v)·v = 0` (or `v·(1 − v) = 0`,
/// or `(1 − m − v)·v = 0`, bellperson's conditional bit, boolean when `m` is).
fn booleanity(pce: &Pce, r: usize) -> Option<u32> {
    if !pce.c.row(r).is_empty() {
        return None;
    }
    let check = |single: &[u32], other: &[u32]| -> Option<u32> {
        let mut t = terms(single);
        let v = t.next()?;
        if t.next().is_some() || v.tag != TAG_PLUS_ONE || v.col == 0 {
            return None;
        }
        let mut one = false;
        let mut minus_v = false;
        for t in terms(other) {
            one |= t.col == 0 && t.tag == TAG_PLUS_ONE;
            minus_v |= t.col == v.col && t.tag == TAG_MINUS_ONE;
        }
        (one && minus_v).then_some(v.col)
    };
    check(pce.b.row(r), pce.a.row(r)).or_else(|| check(pce.a.row(r), pce.b.row(r)))
}

/// The outcome of looking at one row while recording.
enum Look {
    /// Nothing left to solve: a check only.
    Done,
    /// Not solvable while this column is unknown.
    Wait(u32),
    /// Solvable: the step; its targets are in `Recorder::targets`.
    Step(u32),
}

/// No row (the end of a watch list).
const NONE: u32 = u32::MAX;

struct Recorder<'a> {
    pce: &'a Pce,
    coefs: &'a [IntCoef],
    known: Vec<bool>,
    is_bit: Vec<u64>,
    groups: Vec<u32>,
    /// The columns the last step solves.
    targets: Vec<Term>,
    /// Per column solved by an integer step: the largest magnitude of its
    /// value, if it fits the byte view (0 otherwise).
    bound: Vec<u8>,
    /// Rows waiting on each column: the first, then `next` links.
    head: Vec<u32>,
    next: Vec<u32>,
}

impl Recorder<'_> {
    fn coef(&self, t: &Term) -> IntCoef {
        match t.tag {
            TAG_PLUS_ONE => IntCoef::ONE,
            TAG_MINUS_ONE => IntCoef::MINUS_ONE,
            _ => self.coefs[t.dict as usize],
        }
    }

    fn known(&self, t: &Term) -> bool {
        self.known[t.col as usize]
    }

    fn is_bit(&self, t: &Term) -> bool {
        t.col == 0 || bit_of(&self.is_bit, t.col as usize)
    }

    /// The largest magnitude a column's value can have (0: unbounded).
    fn bound(&self, col: u32) -> u64 {
        match col == 0 || bit_of(&self.is_bit, col as usize) {
            true => 1,
            false => self.bound[col as usize] as u64,
        }
    }

    /// The largest magnitude of a row of small columns (the unknowns count 0).
    fn bound_of(&self, row: &[u32]) -> u64 {
        terms(row)
            .filter(|t| self.known(t))
            .map(|t| self.coef(&t).small().map_or(u64::MAX, |c| c.unsigned_abs()).saturating_mul(self.bound(t.col)))
            .fold(0u64, |a, b| a.saturating_add(b))
    }

    /// Can an integer step read this (known) term? Its column is kept in
    /// the byte view exactly, and its coefficient is small.
    fn int_term(&self, t: &Term) -> bool {
        self.bound(t.col) > 0 && self.bound(t.col) <= MAX_BYTE && self.coef(t).small().is_some()
    }

    /// Every term of `row` but `skip`'s an integer one.
    fn int_row(&self, row: &[u32], skip: &[Term]) -> bool {
        row.len() <= MAX_INT_TERMS && terms(row).all(|t| skip.iter().any(|s| s.col == t.col) || self.int_term(&t))
    }

    fn look(&mut self, r: usize) -> Look {
        let (a, b, c) = (self.pce.a.row(r), self.pce.b.row(r), self.pce.c.row(r));
        if terms(a).chain(terms(b)).chain(terms(c)).all(|t| self.known(&t)) {
            return Look::Done;
        }
        if let Some(look) = self.packed(a, b, c) {
            return look;
        }
        if let Some(t) = terms(a).chain(terms(b)).filter(|t| !self.known(t)).min_by_key(|t| t.col) {
            return Look::Wait(t.col);
        }
        let mut unknown = std::mem::take(&mut self.targets);
        unknown.clear();
        unknown.extend(terms(c).filter(|t| !self.known(t)));
        let look = if unknown.len() == 1 {
            let t = unknown[0];
            let int = t.tag != TAG_DICT && self.int_row(a, &[]) && self.int_row(b, &[]) && self.int_row(c, &unknown);
            let kind = match (int, t.tag) {
                (true, TAG_PLUS_ONE) => INT_PLUS,
                (true, _) => INT_MINUS,
                (false, _) => FIELD,
            };
            if int {
                let bound = self.bound_of(a) * self.bound_of(b) + self.bound_of(c);
                self.bound[t.col as usize] = bound.clamp(1, MAX_BYTE) as u8;
            }
            Look::Step(kind << KIND_SHIFT | t.col)
        } else {
            match self.product_group(&unknown, a, b, c) {
                Some(at) => Look::Step(BITS << KIND_SHIFT | at),
                // Wait for an unknown that cannot be a decomposed bit (a
                // packed number's own column), else for the lowest.
                None => {
                    let lone = |t: &&Term| !self.is_bit(t) || self.coef(t).low_zeros() == 256;
                    let wait = unknown.iter().filter(lone).chain(&unknown).min_by_key(|t| (!lone(t), t.col));
                    Look::Wait(wait.expect("an unknown").col)
                }
            }
        };
        self.targets = unknown;
        if let Look::Step(_) = look {
            for k in 0..self.targets.len() {
                self.known[self.targets[k].col as usize] = true;
            }
        }
        look
    }

    /// Appends a group of `(target, exponent)` and returns its offset.
    fn push_group(&mut self, mode: u32, negative: bool, members: &[(Term, u32)]) -> Option<u32> {
        let at = u32::try_from(self.groups.len()).ok().filter(|&at| at <= ARG_MASK)?;
        self.groups.extend([members.len() as u32, mode, negative as u32]);
        for (t, e) in members {
            self.groups.extend([t.col, *e]);
        }
        Some(at)
    }

    /// The unknowns of C (≥ 2, A and B known) decomposed: booleans with
    /// coefficients `±2^e` of one sign, distinct exponents.
    fn product_group(&mut self, unknown: &[Term], a: &[u32], b: &[u32], c: &[u32]) -> Option<u32> {
        let mut members = Vec::with_capacity(unknown.len());
        let mut sign = None;
        for t in unknown {
            let (neg, e) = self.coef(t).pow2?;
            if !self.is_bit(t) || *sign.get_or_insert(neg) != neg {
                return None;
            }
            members.push((*t, e));
        }
        let mut exps: Vec<u32> = members.iter().map(|m| m.1).collect();
        exps.sort_unstable();
        if exps.windows(2).any(|w| w[0] == w[1]) {
            return None;
        }
        let int = exps.last().is_some_and(|&e| e <= MAX_INT_EXP)
            && self.int_row(a, &[])
            && self.int_row(b, &[])
            && self.int_row(c, unknown);
        self.push_group(if int { PRODUCT_INT } else { PRODUCT_FIELD }, sign == Some(true), &members)
    }

    /// A packed sum `A·z × 1 = C·z` over booleans, whose C unknowns all have
    /// coefficients `+2^e`: the unknowns of C below the lowest bit an unknown
    /// term of A can touch are its low bits, known already (sums carry up,
    /// never down). `None` if the row is not one.
    fn packed(&mut self, a: &[u32], b: &[u32], c: &[u32]) -> Option<Look> {
        let mut bt = terms(b);
        match (bt.next(), bt.next()) {
            (Some(Term { col: 0, tag: TAG_PLUS_ONE, .. }), None) => {}
            _ => return None,
        }
        // Known terms are read as bytes; unknown ones count as 0 until known.
        if !terms(a).chain(terms(c)).all(|t| !self.known(&t) || (1..=MAX_BYTE).contains(&self.bound(t.col))) {
            return None;
        }
        // Both sides must be equal as integers, not only modulo p: their
        // difference is below p (≈ 2^254.86) in magnitude. Unknowns of A
        // count as booleans here; they are checked again once known.
        let size: f64 = terms(a)
            .chain(terms(c))
            .map(|t| self.coef(&t).magnitude() * if self.known(&t) { self.bound(t.col) as f64 } else { 1.0 })
            .sum();
        if size >= 2f64.powi(254) {
            return None;
        }
        // The lowest bit an unknown of A reaches, and the unknown of A that
        // reaches it allocated last (the one to wait on).
        let mut reach = 256;
        let mut blocker: Option<Term> = None;
        for t in terms(a).filter(|t| !self.known(t)) {
            let z = self.coef(&t).low_zeros();
            if z < reach || (z == reach && blocker.is_some_and(|b| b.col < t.col)) {
                reach = z;
                blocker = Some(t);
            }
        }
        let mut unknown = Vec::new();
        for t in terms(c).filter(|t| !self.known(t)) {
            if !self.is_bit(&t) {
                return None;
            }
            unknown.push((t, self.coef(&t).pos_pow2()?));
        }
        if unknown.is_empty() {
            return Some(Look::Wait(blocker.expect("an unknown").col));
        }
        let mut exps: Vec<u32> = unknown.iter().map(|m| m.1).collect();
        exps.sort_unstable();
        if exps.windows(2).any(|w| w[0] == w[1]) {
            return None;
        }
        let window: Vec<(Term, u32)> = unknown.iter().copied().filter(|m| m.1 < reach).collect();
        if window.is_empty() {
            // Wait for the unknown of A that blocks the lowest unknown bit.
            let low = exps[0];
            let wait = terms(a)
                .filter(|t| !self.known(t) && self.coef(t).low_zeros() <= low)
                .min_by_key(|t| t.col)
                .expect("a blocker");
            return Some(Look::Wait(wait.col));
        }
        let at = self.push_group(PACKED, false, &window)?;
        self.targets.clear();
        for (t, _) in &window {
            self.known[t.col as usize] = true;
            self.targets.push(*t);
        }
        Some(Look::Step(BITS << KIND_SHIFT | at))
    }

    /// Looks at row `r`: records its step, or makes it wait on a column.
    /// Rows to look at again (their column became known) go to `queue`.
    fn visit(&mut self, r: u32, steps: &mut Vec<(u32, u32)>, queue: &mut Vec<u32>, cursor: &mut usize) {
        match self.look(r as usize) {
            Look::Done => {}
            Look::Wait(col) => {
                self.next[r as usize] = self.head[col as usize];
                self.head[col as usize] = r;
                *cursor = (*cursor).min(col as usize);
            }
            Look::Step(arg) => {
                steps.push((r, arg));
                // A packed row may have more to give once more of A is known; any other
                // step leaves its row with nothing unknown.
                if arg >> KIND_SHIFT == BITS && self.groups[(arg & ARG_MASK) as usize + 1] == PACKED {
                    queue.push(r);
                }
                for k in 0..self.targets.len() {
                    let col = self.targets[k].col as usize;
                    self.wake(col, queue);
                }
            }
        }
    }

    /// Queues the rows waiting on `col`.
    fn wake(&mut self, col: usize, queue: &mut Vec<u32>) {
        let mut r = std::mem::replace(&mut self.head[col], NONE);
        while r != NONE {
            queue.push(r);
            r = self.next[r as usize];
        }
    }
}

/// The group of column `col` under `layout`: 0 for the prefix, `1 + i` for part i.
fn group_of(l: &Layout, num_inputs: usize, (per_in, per_aux): (usize, usize), col: usize) -> usize {
    match col.checked_sub(num_inputs) {
        None if col < l.prefix_inputs => 0,
        None => 1 + (col - l.prefix_inputs) / per_in,
        Some(j) if j < l.prefix_aux => 0,
        Some(j) => 1 + (j - l.prefix_aux) / per_aux,
    }
}

/// Groups `steps` by the part their targets are in (stable: each group keeps
/// its order), if every step reads only the prefix and its own part.
fn split(pce: &Pce, layout: Layout, groups: &[u32], steps: &mut [(u32, u32)]) -> Option<Split> {
    let n_in = pce.num_inputs;
    let per = layout.per_part(n_in, pce.num_aux)?;
    let group = |col: u32| group_of(&layout, n_in, per, col as usize);
    let targets = |arg: u32| -> Vec<u32> {
        let target = arg & ARG_MASK;
        match arg >> KIND_SHIFT {
            BITS => (0..groups[target as usize] as usize).map(|k| groups[target as usize + 3 + 2 * k]).collect(),
            _ => vec![target],
        }
    };
    let mut counts = vec![0usize; layout.parts + 1];
    for &(r, arg) in steps.iter() {
        let ts = targets(arg);
        let g = group(ts[0]);
        let r = r as usize;
        let mut reads = terms(pce.a.row(r)).chain(terms(pce.b.row(r))).chain(terms(pce.c.row(r)));
        if ts.iter().any(|&t| group(t) != g) || reads.any(|t| !matches!(group(t.col), 0) && group(t.col) != g) {
            return None;
        }
        counts[g] += 1;
    }
    steps.sort_by_key(|&(_, arg)| group(targets(arg)[0]));
    let ends = counts.iter().scan(0, |end, c| {
        *end += c;
        Some(*end)
    });
    Some(Split { layout, ends: ends.collect() })
}

impl Program {
    /// Records the program of `pce`'s circuit; `None` when the circuit has
    /// more distinct coefficients than [`MAX_DICT`].
    ///
    /// Rows are looked at in order; a row that cannot be solved yet waits on
    /// one of its unknown columns and is looked at again when that column is
    /// solved. When every row left waits, the lowest column waited on is
    /// taken as free (in a circuit, a value is allocated before what is
    /// computed from it). Booleanity rows and `x · 0 = 0` solve nothing and are skipped.
    pub fn record(pce: &Pce, layout: Option<Layout>) -> Option<Program> {
        if pce.dict.len() > MAX_DICT {
            return None;
        }
        let n = pce.num_inputs + pce.num_aux;
        let rows = pce.num_constraints();
        let mut is_bit = vec![0u64; n.div_ceil(64)];
        let mut checks = vec![false; rows];
        for (r, check) in checks.iter_mut().enumerate() {
            if let Some(v) = booleanity(pce, r) {
                is_bit[v as usize / 64] |= 1 << (v % 64);
                *check = true;
            }
            // `x · 0 = 0` (bellperson's rows binding the inputs) says nothing.
            *check |= pce.c.row(r).is_empty() && (pce.a.row(r).is_empty() || pce.b.row(r).is_empty());
        }
        let coefs: Vec<IntCoef> = pce.dict.iter().map(IntCoef::of).collect();
        let mut rec = Recorder {
            pce,
            coefs: &coefs,
            known: vec![false; n],
            is_bit,
            groups: Vec::new(),
            targets: Vec::new(),
            bound: vec![0; n],
            head: vec![NONE; n],
            next: vec![NONE; rows],
        };
        rec.known[0] = true;
        let (mut steps, mut queue, mut cursor) = (Vec::new(), Vec::new(), n);
        for r in (0..rows as u32).filter(|&r| !checks[r as usize]) {
            rec.visit(r, &mut steps, &mut queue, &mut cursor);
            while let Some(r) = queue.pop() {
                rec.visit(r, &mut steps, &mut queue, &mut cursor);
            }
        }
        loop {
            while let Some(r) = queue.pop() {
                rec.visit(r, &mut steps, &mut queue, &mut cursor);
            }
            while cursor < n && rec.head[cursor] == NONE {
                cursor += 1;
            }
            if cursor == n {
                break;
            }
            rec.known[cursor] = true;
            rec.wake(cursor, &mut queue);
        }
        let mut solved = vec![false; n];
        solved[0] = true;
        for &(_, arg) in &steps {
            match arg >> KIND_SHIFT {
                BITS => {
                    let at = (arg & ARG_MASK) as usize;
                    for k in 0..rec.groups[at] as usize {
                        solved[rec.groups[at + 3 + 2 * k] as usize] = true;
                    }
                }
                _ => solved[(arg & ARG_MASK) as usize] = true,
            }
        }
        let (groups, is_bit) = (rec.groups, rec.is_bit);
        let split = layout.and_then(|l| split(pce, l, &groups, &mut steps));
        Some(Program {
            num_inputs: pce.num_inputs,
            num_aux: pce.num_aux,
            steps,
            groups,
            free: (0..n as u32).filter(|&c| !solved[c as usize]).collect(),
            is_bit,
            small: coefs.iter().map(|c| c.small().unwrap_or(0)).collect(),
            coefs,
            split,
        })
    }

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

    pub fn heap_bytes(&self) -> usize {
        self.steps.capacity() * 8
            + (self.groups.capacity() + self.free.capacity()) * 4
            + self.is_bit.capacity() * 8
            + self.coefs.capacity() * std::mem::size_of::<IntCoef>()
            + self.small.capacity() * 8
    }

    /// The witness of `pce`'s circuit from the values of its free columns
    /// (exactly [`Program::free`]'s count, in its order), into `into`. A
    /// split program replays its prefix, then its parts in parallel (on the
    /// calling rayon pool).
    pub fn run(&self, pce: &Pce, free: impl IntoIterator<Item = Scalar>, into: WitnessBuffer) -> Result<Witness> {
        if (pce.num_inputs, pce.num_aux) != (self.num_inputs, self.num_aux) {
            return Err(Error::InvalidInput("the witness program is another circuit's".into()));
        }
        let mut values = free.into_iter();
        crate::witness::catching(move || {
            // Every column is zero until its step writes it; steps rely on it.
            let mut w = into.into_witness();
            w.inputs.resize(self.num_inputs, Scalar::ZERO);
            w.aux.resize(self.num_aux, Scalar::ZERO);
            let (mut bits_in, mut bits_aux) = (vec![0i8; self.num_inputs], vec![0i8; self.num_aux]);
            let m = [Rows::of(&pce.a), Rows::of(&pce.b), Rows::of(&pce.c)];
            let mut whole = Run::new(
                self,
                m,
                &pce.dict,
                Cols::whole(&mut w.inputs, &mut w.aux),
                Cols::whole(&mut bits_in, &mut bits_aux),
            );
            whole.set(0, Scalar::ONE);
            for (i, &col) in self.free.iter().enumerate() {
                let v = values.next().ok_or_else(|| {
                    Error::Synthesis(format!("{i} free values given, the circuit has {}", self.free.len()))
                })?;
                whole.set(col, v);
            }
            if values.next().is_some() {
                return Err(Error::Synthesis(format!("more free values given than the circuit's {}", self.free.len())));
            }
            let Some(split) = &self.split else {
                self.steps.iter().for_each(|&(r, arg)| whole.step(r as usize, arg));
                return Ok(w);
            };
            self.steps[..split.ends[0]].iter().for_each(|&(r, arg)| whole.step(r as usize, arg));
            let l = split.layout;
            let (per_in, per_aux) = l.per_part(self.num_inputs, self.num_aux).expect("checked when split");
            let (shared_in, own_in) = w.inputs.split_at_mut(l.prefix_inputs);
            let (shared_aux, own_aux) = w.aux.split_at_mut(l.prefix_aux);
            let (bits_shared_in, bits_own_in) = bits_in.split_at_mut(l.prefix_inputs);
            let (bits_shared_aux, bits_own_aux) = bits_aux.split_at_mut(l.prefix_aux);
            let parts = pieces(own_in, l.parts, per_in)
                .into_iter()
                .zip(pieces(own_aux, l.parts, per_aux))
                .zip(pieces(bits_own_in, l.parts, per_in).into_iter().zip(pieces(bits_own_aux, l.parts, per_aux)));
            let parts: Vec<_> = parts.collect();
            parts.into_par_iter().enumerate().for_each(|(i, ((own_in, own_aux), (bits_in, bits_aux)))| {
                let (in_base, aux_base) = (l.prefix_inputs + i * per_in, l.prefix_aux + i * per_aux);
                let num_inputs = self.num_inputs;
                let vals = Cols { num_inputs, shared_in, own_in, in_base, shared_aux, own_aux, aux_base };
                let bits = Cols {
                    num_inputs,
                    shared_in: bits_shared_in,
                    own_in: bits_in,
                    in_base,
                    shared_aux: bits_shared_aux,
                    own_aux: bits_aux,
                    aux_base,
                };
                let mut part = Run::new(self, m, &pce.dict, vals, bits);
                self.steps[split.ends[i]..split.ends[i + 1]].iter().for_each(|&(r, arg)| part.step(r as usize, arg));
            });
            Ok(w)
        })
    }
}

/// A matrix's row pointers and words as plain slices (a file-backed
/// [`CsrMatrix`] would check its view on every row).
#[derive(Clone, Copy)]
struct Rows<'a> {
    ptr: &'a [u32],
    words: &'a [u32],
}

impl<'a> Rows<'a> {
    fn of(m: &'a CsrMatrix) -> Self {
        Rows { ptr: &m.row_ptr, words: &m.words }
    }

    #[inline(always)]
    fn row(&self, r: usize) -> &'a [u32] {
        &self.words[self.ptr[r] as usize..self.ptr[r + 1] as usize]
    }
}

/// The columns one replay reads and writes: its own (from `*_base` on,
/// written), and before them the shared ones it only reads (a split's
/// prefix, written first). A whole replay owns everything.
struct Cols<'a, T> {
    num_inputs: usize,
    shared_in: &'a [T],
    own_in: &'a mut [T],
    in_base: usize,
    shared_aux: &'a [T],
    own_aux: &'a mut [T],
    aux_base: usize,
}

impl<'a, T> Cols<'a, T> {
    fn whole(inputs: &'a mut [T], aux: &'a mut [T]) -> Self {
        let num_inputs = inputs.len();
        Cols { num_inputs, shared_in: &[], own_in: inputs, in_base: 0, shared_aux: &[], own_aux: aux, aux_base: 0 }
    }

    #[inline(always)]
    fn get(&self, col: usize) -> &T {
        match col.checked_sub(self.num_inputs) {
            None if col < self.in_base => &self.shared_in[col],
            None => &self.own_in[col - self.in_base],
            Some(j) if j < self.aux_base => &self.shared_aux[j],
            Some(j) => &self.own_aux[j - self.aux_base],
        }
    }

    /// An own column (a split checked that every step writes its own).
    #[inline(always)]
    fn get_mut(&mut self, col: usize) -> &mut T {
        match col.checked_sub(self.num_inputs) {
            None => &mut self.own_in[col - self.in_base],
            Some(j) => &mut self.own_aux[j - self.aux_base],
        }
    }
}

impl Values for Cols<'_, Scalar> {
    #[inline(always)]
    fn get(&self, col: usize) -> &Scalar {
        Cols::get(self, col)
    }
}

/// One replay: of a whole program, or of one part of a split.
struct Run<'a, 'b> {
    p: &'a Program,
    /// A, B, C.
    m: [Rows<'a>; 3],
    dict: &'a [Scalar],
    vals: Cols<'b, Scalar>,
    /// The byte view: each column's value when it is a small integer
    /// (booleans, and what integer steps compute from them).
    bits: Cols<'b, i8>,
}

impl<'a, 'b> Run<'a, 'b> {
    fn new(p: &'a Program, m: [Rows<'a>; 3], dict: &'a [Scalar], vals: Cols<'b, Scalar>, bits: Cols<'b, i8>) -> Self {
        Run { p, m, dict, vals, bits }
    }

    #[inline(always)]
    fn byte(&self, col: u32) -> i8 {
        *self.bits.get(col as usize)
    }

    /// Writes a field value (and its byte, for a boolean column).
    #[inline(always)]
    fn set(&mut self, col: u32, v: Scalar) {
        if col == 0 || bit_of(&self.p.is_bit, col as usize) {
            *self.bits.get_mut(col as usize) = (v == Scalar::ONE) as i8;
        }
        *self.vals.get_mut(col as usize) = v;
    }

    /// Writes an integer value.
    #[inline(always)]
    fn set_int(&mut self, col: u32, v: i128) {
        *self.bits.get_mut(col as usize) = v as i8;
        *self.vals.get_mut(col as usize) = match v {
            0 => Scalar::ZERO,
            1 => Scalar::ONE,
            v if v > 0 => scalar_u128(v as u128),
            v => -scalar_u128(v.unsigned_abs()),
        };
    }

    #[inline(always)]
    fn int_row(&self, row: &[u32]) -> i64 {
        let mut acc = 0i64;
        let mut k = 0;
        while k < row.len() {
            let (tag, col) = decode(row[k]);
            let v = self.byte(col) as i64;
            match tag {
                TAG_PLUS_ONE => acc += v,
                TAG_MINUS_ONE => acc -= v,
                _ => {
                    k += 1;
                    acc += v * self.p.small[row[k] as usize];
                }
            }
            k += 1;
        }
        acc
    }

    /// `A·z × B·z − C·z` of row `r`, in integers.
    #[inline(always)]
    fn int_rhs(&self, r: usize) -> i128 {
        let [a, b, c] = self.m;
        self.int_row(a.row(r)) as i128 * self.int_row(b.row(r)) as i128 - self.int_row(c.row(r)) as i128
    }

    /// `A·z × B·z − C·z` of row `r`, in the field.
    fn field_rhs(&self, r: usize) -> Scalar {
        let ([a, b, c], dict, z) = (self.m, self.dict, &self.vals);
        eval_row(a.row(r), z, dict) * eval_row(b.row(r), z, dict) - eval_row(c.row(r), z, dict)
    }

    /// `x ± row·z` modulo 2^256, `z` read from the byte view.
    #[inline(always)]
    fn packed_row(&self, row: &[u32], negative: bool, x: &mut [u64; 4]) {
        const ONE: IntCoef = IntCoef::ONE;
        const MINUS_ONE: IntCoef = IntCoef::MINUS_ONE;
        let mut k = 0;
        while k < row.len() {
            let (tag, col) = decode(row[k]);
            let c = match tag {
                TAG_PLUS_ONE => &ONE,
                TAG_MINUS_ONE => &MINUS_ONE,
                _ => {
                    k += 1;
                    &self.p.coefs[row[k] as usize]
                }
            };
            k += 1;
            let v = self.byte(col);
            // Booleans, nearly always; a small value is added |v| times.
            for _ in 0..v.unsigned_abs() {
                add_u256(x, &c.mag, negative ^ c.neg ^ (v < 0));
            }
        }
    }

    fn step(&mut self, r: usize, arg: u32) {
        let target = arg & ARG_MASK;
        match arg >> KIND_SHIFT {
            INT_PLUS => {
                let v = self.int_rhs(r);
                self.set_int(target, v);
            }
            INT_MINUS => {
                let v = -self.int_rhs(r);
                self.set_int(target, v);
            }
            FIELD => {
                let rhs = self.field_rhs(r);
                let v = match terms(self.m[2].row(r)).find(|t| t.col == target).map(|t| (t.tag, t.dict)) {
                    Some((TAG_MINUS_ONE, _)) => -rhs,
                    Some((TAG_DICT, d)) => rhs * self.dict[d as usize].invert().unwrap_or(Scalar::ZERO),
                    _ => rhs,
                };
                self.set(target, v);
            }
            _ => self.decompose(r, target as usize),
        }
    }

    fn decompose(&mut self, r: usize, at: usize) {
        let g = &self.p.groups;
        let (count, mode, negative) = (g[at] as usize, g[at + 1], g[at + 2] == 1);
        let members = at + 3..at + 3 + 2 * count;
        let x: [u64; 4] = match mode {
            PRODUCT_INT => {
                let x = self.int_rhs(r);
                let x = if negative { -x } else { x };
                [x as u64, (x >> 64) as u64, 0, 0]
            }
            PRODUCT_FIELD => {
                let x = self.field_rhs(r);
                as_u256(&if negative { -x } else { x })
            }
            _ => {
                let mut x = [0u64; 4];
                self.packed_row(self.m[0].row(r), false, &mut x);
                self.packed_row(self.m[2].row(r), true, &mut x);
                x
            }
        };
        for k in members.step_by(2) {
            let (col, e) = (self.p.groups[k], self.p.groups[k + 1] as usize);
            self.set_int(col, (x[e / 64] >> (e % 64) & 1) as i128);
        }
    }
}

fn scalar_u128(v: u128) -> Scalar {
    Scalar::from((v >> 64) as u64) * Scalar::from(1u64 << 32).square() + Scalar::from(v as u64)
}

/// A PCE's witness program, recorded the first time a witness asks for it
/// (a circuit whose free values are known natively) and accounted as the
/// PCE's memory; and whether its first witness agreed with the gadgets'.
#[derive(Default)]
pub struct ProgramSlot {
    recorded: OnceLock<Option<(Program, Tracked)>>,
    trusted: OnceLock<bool>,
}

impl std::fmt::Debug for ProgramSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.recorded.get() {
            Some(Some((p, _))) => {
                write!(f, "Program({} steps, {} free, trusted {:?})", p.steps(), p.free().len(), self.trusted.get())
            }
            Some(None) => write!(f, "Program(none)"),
            None => write!(f, "Program(not recorded)"),
        }
    }
}

impl Pce {
    /// This circuit's witness program, recorded on first use (split by
    /// `layout`, when the circuit has one: the first use's counts); `None`
    /// when it has none (see [`Program::record`]) or its first witness
    /// disagreed with the gadgets'.
    pub fn program(&self, layout: impl FnOnce() -> Option<Layout>) -> Option<&Program> {
        if self.program.trusted.get() == Some(&false) {
            return None;
        }
        let slot = self.program.recorded.get_or_init(|| {
            Program::record(self, layout()).map(|p| {
                let bytes = Tracked::new(Owner::Pce, p.heap_bytes());
                (p, bytes)
            })
        });
        slot.as_ref().map(|(p, _)| p)
    }

    /// `replayed`, a witness this PCE's program made, if the program is
    /// trusted. The first witness decides, once per PCE: `gadgets` gives the
    /// digest of the same instance's witness by the circuit's gadgets
    /// (hashed as it is synthesized: no second witness in memory). A program
    /// that disagrees is dropped (logged): `None`, and the gadgets make this
    /// witness and every later one.
    pub fn vouch(&self, replayed: Witness, gadgets: impl FnOnce() -> Result<[u8; 32]>) -> Result<Option<Witness>> {
        let trusted = match self.program.trusted.get() {
            Some(&t) => t,
            None => {
                let agree = gadgets()? == replayed.digest();
                if !agree {
                    log::error!(
                        "a witness program disagrees with its circuit's gadgets: the gadgets make its witnesses"
                    );
                }
                *self.program.trusted.get_or_init(|| agree)
            }
        };
        Ok(trusted.then_some(replayed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::Sha256Chain;
    use crate::pce::extract;

    #[test]
    fn sha256_chain_replays_the_gadgets_witness() {
        for k in [1, 3] {
            let c = Sha256Chain::random(k, 5);
            let pce = extract(Sha256Chain::blank(k)).unwrap();
            let p = pce.program(|| None).unwrap();
            assert_eq!(p.free().len(), k * 512);
            let want = Witness::generate(c.clone()).unwrap();
            let got = p.run(&pce, c.free_values(), WitnessBuffer::new(0, 0)).unwrap();
            assert_eq!(got, want);
        }
    }

    /// Too few or too many free values, or another circuit's PCE, is an error.
    #[test]
    fn a_program_refuses_values_that_do_not_fit() {
        let c = Sha256Chain::random(1, 2);
        let pce = extract(Sha256Chain::blank(1)).unwrap();
        let p = pce.program(|| None).unwrap();
        let run = |values: Vec<Scalar>| p.run(&pce, values, WitnessBuffer::new(0, 0));
        let values: Vec<Scalar> = c.free_values().collect();
        assert!(matches!(run(values[1..].to_vec()), Err(Error::Synthesis(_))));
        assert!(matches!(run([&values[..], &[Scalar::ONE]].concat()), Err(Error::Synthesis(_))));
        let other = extract(Sha256Chain::blank(2)).unwrap();
        assert!(matches!(p.run(&other, values, WitnessBuffer::new(0, 0)), Err(Error::InvalidInput(_))));
    }

    /// A message bit that is not a bit gives a witness the constraints refuse.
    #[test]
    fn a_non_boolean_free_value_gives_an_unsatisfied_witness() {
        let c = Sha256Chain::random(1, 3);
        let pce = extract(Sha256Chain::blank(1)).unwrap();
        let mut values: Vec<Scalar> = c.free_values().collect();
        values[7] = Scalar::from(2u64);
        let w = pce.program(|| None).unwrap().run(&pce, values, WitnessBuffer::new(0, 0)).unwrap();
        let abc = crate::pce::evaluate(&pce, &w).unwrap();
        assert!(matches!(crate::pce::check_satisfied(&abc), Err(Error::Unsatisfied { .. })));
    }

    /// A program whose witness disagrees with the gadgets' (here: one value changed) is dropped
    /// at its first witness; the gadgets make the PCE's witnesses from then on.
    #[test]
    fn a_program_that_disagrees_is_dropped() {
        use bellperson::Circuit;
        let c = Sha256Chain::random(1, 4);
        let pce = extract(Sha256Chain::blank(1)).unwrap();
        let p = pce.program(|| None).unwrap();
        let mut w = p.run(&pce, c.free_values(), WitnessBuffer::new(0, 0)).unwrap();
        w.aux[100] += Scalar::ONE;
        let gadgets = || crate::witness::digest_of(|cs| c.clone().synthesize(cs));
        assert_eq!(pce.vouch(w, gadgets).unwrap(), None);
        assert!(pce.program(|| None).is_none());
        let w = c.clone().witness(&pce, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
        assert_eq!(w, Witness::generate(c).unwrap());
    }

    /// The witness of a sha256-chain instance is the program's, and equal to the gadgets'.
    #[test]
    fn sha256_chain_instances_use_the_program() {
        use crate::circuits::{Family, Synthetic, WitnessSource};
        let s = Synthetic::new(Family::Sha256Chain, 1 << 16, 9);
        let pce = extract(s.blank()).unwrap();
        let w = s.clone().witness(&pce, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
        assert_eq!(pce.program.trusted.get(), Some(&true), "recorded and checked by the first witness");
        assert_eq!(w, Witness::generate(s).unwrap());
    }
}
