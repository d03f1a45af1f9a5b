//! The reference ("old path") constraint system: bellperson's private
//! `ProvingAssignment`, rewritten so tests and benchmarks can see its output.
//!
//! It synthesizes the circuit building every linear combination, evaluates each
//! `enforce` on the spot and tracks densities exactly as bellperson 0.27's prover
//! does (`lc::eval_with_trackers`: zero coefficients skipped, A's input density
//! untracked), then appends one `input_i · 0 = 0` row per input.

use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

use crate::pce::Abc;
use crate::witness::Witness;
use crate::Result;

/// Everything bellperson's prover holds after synthesis.
#[derive(Debug, PartialEq, Eq)]
pub struct ReferenceCs {
    pub abc: Abc,
    pub witness: Witness,
    pub a_aux_density: Vec<bool>,
    pub b_input_density: Vec<bool>,
    pub b_aux_density: Vec<bool>,
}

/// bellperson skips the multiplication for a coefficient of one; so do we, so
/// the old path's timing is honest.
#[inline(always)]
fn times(v: Scalar, coeff: &Scalar) -> Scalar {
    if *coeff == Scalar::ONE {
        v
    } else {
        v * coeff
    }
}

fn eval(
    lc: &LinearCombination<Scalar>,
    w: &Witness,
    mut input_density: Option<&mut Vec<bool>>,
    mut aux_density: Option<&mut Vec<bool>>,
) -> Scalar {
    let mut acc = Scalar::ZERO;
    for (&i, coeff) in lc.iter_inputs() {
        if !coeff.is_zero_vartime() {
            acc += times(w.inputs[i], coeff);
            if let Some(d) = input_density.as_deref_mut() {
                d[i] = true;
            }
        }
    }
    for (&j, coeff) in lc.iter_aux() {
        if !coeff.is_zero_vartime() {
            acc += times(w.aux[j], coeff);
            if let Some(d) = aux_density.as_deref_mut() {
                d[j] = true;
            }
        }
    }
    acc
}

impl ReferenceCs {
    /// Synthesizes `circuit` exactly as `bellperson::groth16::create_proof` does.
    pub fn synthesize<C: Circuit<Scalar>>(circuit: C) -> Result<ReferenceCs> {
        let mut cs = ReferenceCs::new();
        cs.alloc_input(|| "", || Ok(Scalar::ONE))?;
        circuit.synthesize(&mut cs)?;
        for i in 0..cs.witness.inputs.len() {
            cs.enforce(|| "", |lc| lc + Variable::new_unchecked(Index::Input(i)), |lc| lc, |lc| lc);
        }
        Ok(cs)
    }
}

impl ConstraintSystem<Scalar> for ReferenceCs {
    type Root = Self;

    fn new() -> Self {
        ReferenceCs {
            abc: Abc::new(vec![], vec![], vec![]),
            witness: Witness::default(),
            a_aux_density: vec![],
            b_input_density: vec![],
            b_aux_density: vec![],
        }
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.witness.aux.push(f()?);
        self.a_aux_density.push(false);
        self.b_aux_density.push(false);
        Ok(Variable::new_unchecked(Index::Aux(self.witness.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.witness.inputs.push(f()?);
        self.b_input_density.push(false);
        Ok(Variable::new_unchecked(Index::Input(self.witness.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let (a, b, c) = (a(LinearCombination::zero()), b(LinearCombination::zero()), c(LinearCombination::zero()));
        let av = eval(&a, &self.witness, None, Some(&mut self.a_aux_density));
        let bv = eval(&b, &self.witness, Some(&mut self.b_input_density), Some(&mut self.b_aux_density));
        let cv = eval(&c, &self.witness, None, None);
        self.abc.a.push(av);
        self.abc.b.push(bv);
        self.abc.c.push(cv);
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

    /// bellperson's `ProvingAssignment::extend`: the child's ONE coalesces
    /// into the parent's input 0.
    fn extend(&mut self, other: &Self) {
        if let (Some(first), Some(&child_one)) = (self.b_input_density.first_mut(), other.b_input_density.first()) {
            *first |= child_one;
        }
        self.a_aux_density.extend(&other.a_aux_density);
        self.b_input_density.extend(other.b_input_density.iter().skip(1));
        self.b_aux_density.extend(&other.b_aux_density);
        self.abc.a.extend(&other.abc.a);
        self.abc.b.extend(&other.abc.b);
        self.abc.c.extend(&other.abc.c);
        self.witness.inputs.extend(other.witness.inputs.iter().skip(1));
        self.witness.aux.extend(&other.witness.aux);
    }
}
