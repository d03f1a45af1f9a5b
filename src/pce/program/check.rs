//! The structural check of a witness program against its PCE: every index a replay uses
//! (rows, columns, group offsets and members, exponents, a split's part ends and what each
//! part reads and writes) is in range, so that a program that passes can never make
//! [`Program::run`] panic or index out of bounds. A program loaded from a file is checked
//! before use, one about to be saved before it is written.

use rayon::prelude::*;

use super::{terms, Layout, Program, Split, ARG_MASK, BITS, KIND_SHIFT, PACKED};
use crate::pce::header::bad_file;
use crate::pce::Pce;
use crate::Result;

/// Steps per checking task.
const STEPS_PER_TASK: usize = 1 << 16;

/// Checks `p` against `pce`: `BadPceFile`, naming the first fault found, if anything a
/// replay indexes with is out of range.
pub(crate) fn check(p: &Program, pce: &Pce) -> Result<()> {
    if (p.num_inputs, p.num_aux) != (pce.num_inputs, pce.num_aux) {
        return Err(bad_file(format!(
            "witness program for {} inputs and {} aux, the PCE has {} and {}",
            p.num_inputs, p.num_aux, pce.num_inputs, pce.num_aux
        )));
    }
    let n = p.num_inputs + p.num_aux;
    if p.is_bit.len() != n.div_ceil(64) {
        return Err(bad_file(format!("witness program: {} boolean-column words for {n} columns", p.is_bit.len())));
    }
    if p.coefs.len() != pce.dict.len() || p.small.len() != pce.dict.len() {
        return Err(bad_file("witness program: coefficients not the PCE's dictionary"));
    }
    if let Some(&col) = p.free.iter().find(|&&c| c as usize >= n) {
        return Err(bad_file(format!("witness program: free column {col} out of {n}")));
    }
    let starts = group_starts(&p.groups, n)?;
    let (groups, rows) = (&p.groups[..], pce.num_constraints());
    p.steps.par_chunks(STEPS_PER_TASK).enumerate().try_for_each(|(t, chunk)| {
        for (k, &[r, arg]) in chunk.iter().enumerate() {
            let target = (arg & ARG_MASK) as usize;
            let fault = match arg >> KIND_SHIFT {
                _ if r as usize >= rows => Some(format!("row {r} out of {rows}")),
                BITS if target >= groups.len() || starts[target / 64] >> (target % 64) & 1 == 0 => {
                    Some(format!("group offset {target} is no group's"))
                }
                BITS => None,
                _ if target >= n => Some(format!("target column {target} out of {n}")),
                _ => None,
            };
            if let Some(f) = fault {
                return Err(bad_file(format!("witness program step {}: {f}", t * STEPS_PER_TASK + k)));
            }
        }
        Ok(())
    })?;
    match &p.split {
        Some(split) => check_split(p, split, pce),
        None => Ok(()),
    }
}

/// Walks the decomposition groups: each one's mode, sign, members' columns (< `n`) and
/// exponents (< 256) checked, and its offset marked in the returned bitmap.
fn group_starts(groups: &[u32], n: usize) -> Result<Vec<u64>> {
    let mut starts = vec![0u64; groups.len().div_ceil(64)];
    let mut at = 0;
    while at < groups.len() {
        let fault = |f: String| bad_file(format!("witness program group at {at}: {f}"));
        let (count, mode, negative) = match groups.get(at..at + 3) {
            Some(&[c, m, s]) => (c as usize, m, s),
            _ => return Err(fault("cut short".into())),
        };
        if mode > PACKED || negative > 1 {
            return Err(fault(format!("mode {mode}, sign {negative}")));
        }
        let members = groups.get(at + 3..).and_then(|g| g.get(..count.checked_mul(2)?));
        let members = members.ok_or_else(|| fault(format!("{count} members past the end")))?;
        for m in members.chunks_exact(2) {
            if m[0] as usize >= n || m[1] >= 256 {
                return Err(fault(format!("member column {} (of {n}), exponent {}", m[0], m[1])));
            }
        }
        starts[at / 64] |= 1 << (at % 64);
        at += 3 + members.len();
    }
    Ok(starts)
}

/// A split's parts: ends in order up to the last step, and each part's steps writing only
/// their own part's columns and reading only those and the prefix's (what the parallel
/// replay's column views hold).
fn check_split(p: &Program, split: &Split, pce: &Pce) -> Result<()> {
    let l: Layout = split.layout;
    let per = l.per_part(p.num_inputs, p.num_aux).filter(|&(i, a)| i + a > 0);
    let per = per.ok_or_else(|| bad_file(format!("witness program: {l:?} does not split the columns")))?;
    let ends = &split.ends;
    if ends.len() != l.parts + 1 || ends.windows(2).any(|w| w[0] > w[1]) || ends.last() != Some(&p.steps.len()) {
        return Err(bad_file("witness program: part ends out of order or not ending at the last step"));
    }
    let (steps, groups) = (&p.steps[..], &p.groups[..]);
    let group = |col: u32| l.group_of(p.num_inputs, per, col as usize);
    (0..l.parts).into_par_iter().try_for_each(|i| {
        for &[r, arg] in &steps[ends[i]..ends[i + 1]] {
            let target = arg & ARG_MASK;
            let own = |col: u32| group(col) == i + 1;
            let writes_own = match arg >> KIND_SHIFT {
                BITS => {
                    let at = target as usize;
                    let count = groups[at] as usize;
                    groups[at + 3..at + 3 + 2 * count].chunks_exact(2).all(|m| own(m[0]))
                }
                _ => own(target),
            };
            let r = r as usize;
            let mut reads = terms(pce.a.row(r)).chain(terms(pce.b.row(r))).chain(terms(pce.c.row(r)));
            if !writes_own || reads.any(|t| group(t.col) != 0 && !own(t.col)) {
                return Err(bad_file(format!("witness program: a step of part {i} (row {r}) leaves its part")));
            }
        }
        Ok(())
    })
}
