//! A PoRep partition's witness with its challenges synthesized in parallel.
//!
//! `StackedCircuit::synthesize` allocates a prefix (replica id and its bits,
//! the commitments, `H(comm_c || comm_r_last)`) and then each challenge's
//! proof in turn; a challenge only reads the prefix's values. Every challenge
//! allocates the same number of inputs and aux variables, so its values have
//! a known place in the final witness: each is synthesized on its own thread
//! (with a copy of the prefix in front, which is skipped) straight into that
//! place. The result equals the sequential witness value for value (tested),
//! and takes no memory beyond the witness itself.

use bellperson::{ConstraintSystem, Index, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use crate::pce::program::Layout;
use crate::witness::{pieces, Witness, WitnessBuffer, WitnessCs};
use crate::{Error, Result};

/// Where one synthesis writes its values: the first `skip` are dropped (the
/// prefix), the rest fill `dst` in order.
struct Share<'a> {
    skip: usize,
    dst: &'a mut [Scalar],
    filled: usize,
    seen: usize,
}

impl Share<'_> {
    fn push(&mut self, v: Scalar) -> std::result::Result<usize, SynthesisError> {
        let at = self.seen;
        self.seen += 1;
        if at >= self.skip {
            // More values than the challenge's share: not the circuit the sizes came from.
            *self.dst.get_mut(self.filled).ok_or(SynthesisError::Unsatisfiable)? = v;
            self.filled += 1;
        }
        Ok(at)
    }
}

/// An alloc-only constraint system writing into two slots (inputs, aux).
/// Not a witness generator and not extensible: gadgets take their plain
/// allocation paths, which allocate in the same order.
struct ShareCs<'a> {
    inputs: Share<'a>,
    aux: Share<'a>,
}

impl ConstraintSystem<Scalar> for ShareCs<'_> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        Ok(Variable::new_unchecked(Index::Aux(self.aux.push(f()?)?)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        Ok(Variable::new_unchecked(Index::Input(self.inputs.push(f()?)?)))
    }

    crate::witness::alloc_only_methods!();
}

/// A circuit made of a prefix and independent, equally sized challenges.
pub(super) trait Challenges: Sync {
    fn count(&self) -> usize;
    /// Synthesizes the prefix, then challenge `i` alone (`None`: no challenge).
    fn synthesize<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        i: Option<usize>,
    ) -> std::result::Result<(), SynthesisError>;
}

/// The witness of `c`; `inputs`/`aux` are the whole circuit's counts (from
/// the PCE), the ONE input included.
/// The partition's layout for its witness program: the prefix (what the circuit allocates
/// before its challenges), then one part per challenge.
pub(super) fn layout(c: &impl Challenges) -> Result<Layout> {
    let mut root = WitnessCs::started(WitnessBuffer::new(0, 0))?;
    c.synthesize(&mut root, None)?;
    let prefix = root.into_witness();
    Ok(Layout { prefix_inputs: prefix.inputs.len(), prefix_aux: prefix.aux.len(), parts: c.count() })
}

pub(super) fn in_parallel(c: &impl Challenges, into: WitnessBuffer) -> Result<Witness> {
    let parts = c.count();
    let (inputs, aux) = (into.inputs, into.aux);
    let mut root = WitnessCs::started(into)?;
    c.synthesize(&mut root, None)?;
    let mut w = root.into_witness();
    let (prefix_in, prefix_aux) = (w.inputs.len() - 1, w.aux.len());
    let share = |total: usize, prefix: usize, what: &str| -> Result<usize> {
        let rest = total.checked_sub(prefix).filter(|r| parts > 0 && r % parts == 0);
        rest.map(|r| r / parts).ok_or_else(|| {
            Error::InvalidInput(format!(
                "{total} {what} do not split into a prefix of {prefix} and {parts} equal challenges: \
                 a PCE for another circuit?"
            ))
        })
    };
    let (per_in, per_aux) = (share(inputs, prefix_in + 1, "inputs")?, share(aux, prefix_aux, "aux variables")?);
    w.inputs.resize(inputs, Scalar::ZERO);
    w.aux.resize(aux, Scalar::ZERO);
    let dst_in = pieces(&mut w.inputs[prefix_in + 1..], parts, per_in);
    let dst_aux = pieces(&mut w.aux[prefix_aux..], parts, per_aux);
    dst_in.into_par_iter().zip(dst_aux).enumerate().try_for_each(|(i, (dst_in, dst_aux))| -> Result<()> {
        let mut cs = ShareCs {
            inputs: Share { skip: prefix_in, dst: dst_in, filled: 0, seen: 0 },
            aux: Share { skip: prefix_aux, dst: dst_aux, filled: 0, seen: 0 },
        };
        c.synthesize(&mut cs, Some(i))?;
        if cs.inputs.filled != per_in || cs.aux.filled != per_aux {
            return Err(Error::Synthesis(format!(
                "challenge {i} allocated {} inputs and {} aux variables, expected {per_in} and {per_aux}",
                cs.inputs.filled, cs.aux.filled
            )));
        }
        Ok(())
    })?;
    Ok(w)
}
