//! Replaying a witness program: the free values placed, then every step in order, in
//! machine integers over a byte per variable where the values are small; a split program's
//! parts in parallel.

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use super::{
    add_u256, as_u256, bit_of, terms, IntCoef, Program, ARG_MASK, FIELD, INT_MINUS, INT_PLUS, KIND_SHIFT,
    PRODUCT_FIELD, PRODUCT_INT,
};
use crate::pce::eval::{eval_row, Values};
use crate::pce::matrix::{decode, CsrMatrix, TAG_DICT, TAG_MINUS_ONE, TAG_PLUS_ONE};
use crate::pce::Pce;
use crate::witness::{pieces, Witness, WitnessBuffer};
use crate::{Error, Result};

impl Program {
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
            let p = Plain::of(self);
            let mut whole = Run::new(
                p,
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
                p.steps.iter().for_each(|&[r, arg]| whole.step(r as usize, arg));
                return Ok(w);
            };
            p.steps[..split.ends[0]].iter().for_each(|&[r, arg]| whole.step(r as usize, arg));
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
                let mut part = Run::new(p, m, &pce.dict, vals, bits);
                p.steps[split.ends[i]..split.ends[i + 1]].iter().for_each(|&[r, arg]| part.step(r as usize, arg));
            });
            Ok(w)
        })
    }
}

/// A program's arrays as plain slices (a file-backed [`crate::pce::matrix::Array`] would
/// check its view on every access), and its coefficients.
#[derive(Clone, Copy)]
struct Plain<'a> {
    steps: &'a [[u32; 2]],
    groups: &'a [u32],
    is_bit: &'a [u64],
    coefs: &'a [IntCoef],
    small: &'a [i64],
}

impl<'a> Plain<'a> {
    fn of(p: &'a Program) -> Self {
        Plain { steps: &p.steps, groups: &p.groups, is_bit: &p.is_bit, coefs: &p.coefs, small: &p.small }
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
    p: Plain<'a>,
    /// A, B, C.
    m: [Rows<'a>; 3],
    dict: &'a [Scalar],
    vals: Cols<'b, Scalar>,
    /// The byte view: each column's value when it is a small integer
    /// (booleans, and what integer steps compute from them).
    bits: Cols<'b, i8>,
}

impl<'a, 'b> Run<'a, 'b> {
    fn new(p: Plain<'a>, m: [Rows<'a>; 3], dict: &'a [Scalar], vals: Cols<'b, Scalar>, bits: Cols<'b, i8>) -> Self {
        Run { p, m, dict, vals, bits }
    }

    #[inline(always)]
    fn byte(&self, col: u32) -> i8 {
        *self.bits.get(col as usize)
    }

    /// Writes a field value (and its byte, for a boolean column).
    #[inline(always)]
    fn set(&mut self, col: u32, v: Scalar) {
        if col == 0 || bit_of(self.p.is_bit, col as usize) {
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

    /// Wrapping: a row the recorder chose stays far inside `i64`; one a damaged program
    /// names gives a wrong value (refused by the satisfaction check), never a panic.
    #[inline(always)]
    fn int_row(&self, row: &[u32]) -> i64 {
        let mut acc = 0i64;
        let mut k = 0;
        while k < row.len() {
            let (tag, col) = decode(row[k]);
            let v = self.byte(col) as i64;
            match tag {
                TAG_PLUS_ONE => acc = acc.wrapping_add(v),
                TAG_MINUS_ONE => acc = acc.wrapping_sub(v),
                _ => {
                    k += 1;
                    acc = acc.wrapping_add(v.wrapping_mul(self.p.small[row[k] as usize]));
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
        let g = self.p.groups;
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
