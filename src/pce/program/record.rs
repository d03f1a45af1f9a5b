//! Recording a witness program: the PCE's rows looked at in order, each solved once its
//! unknowns allow, the columns nothing solves taken as free.

use super::{
    bit_of, int_coefs, terms, IntCoef, Layout, Program, Split, Term, ARG_MASK, BITS, FIELD, INT_MINUS, INT_PLUS,
    KIND_SHIFT, MAX_BYTE, MAX_DICT, MAX_INT_EXP, MAX_INT_TERMS, PACKED, PRODUCT_FIELD, PRODUCT_INT,
};
use crate::pce::matrix::{TAG_DICT, TAG_MINUS_ONE, TAG_PLUS_ONE};
use crate::pce::Pce;
use crate::progress::Progress;

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
    fn visit(&mut self, r: u32, steps: &mut Vec<[u32; 2]>, queue: &mut Vec<u32>, cursor: &mut usize) {
        match self.look(r as usize) {
            Look::Done => {}
            Look::Wait(col) => {
                self.next[r as usize] = self.head[col as usize];
                self.head[col as usize] = r;
                *cursor = (*cursor).min(col as usize);
            }
            Look::Step(arg) => {
                steps.push([r, arg]);
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

/// Groups `steps` by the part their targets are in (stable: each group keeps
/// its order), if every step reads only the prefix and its own part.
fn split(pce: &Pce, layout: Layout, groups: &[u32], steps: &mut [[u32; 2]]) -> Option<Split> {
    let n_in = pce.num_inputs;
    let per = layout.per_part(n_in, pce.num_aux)?;
    let group = |col: u32| layout.group_of(n_in, per, col as usize);
    let targets = |arg: u32| -> Vec<u32> {
        let target = arg & ARG_MASK;
        match arg >> KIND_SHIFT {
            BITS => (0..groups[target as usize] as usize).map(|k| groups[target as usize + 3 + 2 * k]).collect(),
            _ => vec![target],
        }
    };
    let mut counts = vec![0usize; layout.parts + 1];
    for &[r, arg] in steps.iter() {
        let ts = targets(arg);
        let g = group(ts[0]);
        let r = r as usize;
        let mut reads = terms(pce.a.row(r)).chain(terms(pce.b.row(r))).chain(terms(pce.c.row(r)));
        if ts.iter().any(|&t| group(t) != g) || reads.any(|t| !matches!(group(t.col), 0) && group(t.col) != g) {
            return None;
        }
        counts[g] += 1;
    }
    steps.sort_by_key(|&[_, arg]| group(targets(arg)[0]));
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
        let (coefs, small) = int_coefs(&pce.dict);
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
        let job = format!("recording the witness program of {rows} constraints");
        let progress = Progress::start(job, "rows", Some(rows as u64));
        let (mut steps, mut queue, mut cursor) = (Vec::new(), Vec::new(), n);
        for r in 0..rows as u32 {
            progress.add(1);
            if checks[r as usize] {
                continue;
            }
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
        for &[_, arg] in &steps {
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
        let free: Vec<u32> = (0..n as u32).filter(|&c| !solved[c as usize]).collect();
        progress.finish();
        Some(Program {
            num_inputs: pce.num_inputs,
            num_aux: pce.num_aux,
            steps: steps.into(),
            groups: groups.into(),
            free: free.into(),
            is_bit: is_bit.into(),
            coefs,
            small,
            split,
        })
    }
}
