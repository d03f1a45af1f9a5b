//! `mimc-chain`: an arithmetic-heavy permutation chain, the opposite of
//! `sha256-chain`: field-element witnesses (no bits), a distinct large round
//! constant in every round (a large coefficient dictionary) and a public input
//! allocated half-way, between enforces.
//!
//! State (x, y); round i with constant cᵢ:  t = x + cᵢ,  x' = t³ + μ·y,  y' = x.
//! Three constraints per round: t·t = t₂, t₂·t = t₃, (t₃ + μ·y)·1 = x'.

use bellperson::{Circuit, ConstraintSystem, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// Round constants are part of the circuit, so they come from a fixed seed.
const CONSTANTS_SEED: u64 = 0x6d696d63;
const ROWS_PER_ROUND: usize = 3;
/// ONE, the half-way input and the final input.
const INPUTS: usize = 3;

#[derive(Clone)]
pub struct MimcChain {
    pub rounds: usize,
    /// The private start state; `None` for the blank instance.
    pub start: Option<(Scalar, Scalar)>,
}

fn constants(rounds: usize) -> Vec<Scalar> {
    let mut rng = ChaCha20Rng::seed_from_u64(CONSTANTS_SEED);
    (0..rounds).map(|_| Scalar::random(&mut rng)).collect()
}

fn mu() -> Scalar {
    Scalar::from(5u64).invert().unwrap()
}

impl MimcChain {
    /// Rounds so that rows (input rows and the two input-binding rows included) fit `n`.
    pub fn rounds_for(n: usize) -> usize {
        (n.saturating_sub(2 * INPUTS) / ROWS_PER_ROUND).max(2)
    }

    pub fn rows(rounds: usize) -> usize {
        rounds * ROWS_PER_ROUND + 2 + INPUTS
    }

    pub fn random(rounds: usize, seed: u64) -> Self {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        MimcChain { rounds, start: Some((Scalar::random(&mut rng), Scalar::random(&mut rng))) }
    }

    pub fn blank(rounds: usize) -> Self {
        MimcChain { rounds, start: None }
    }

    /// The state after each round, natively.
    fn trace(&self) -> Option<Vec<(Scalar, Scalar)>> {
        let (mut x, mut y) = self.start?;
        let mu = mu();
        Some(
            constants(self.rounds)
                .into_iter()
                .map(|c| {
                    let t = x + c;
                    (x, y) = (t.square() * t + mu * y, x);
                    (x, y)
                })
                .collect(),
        )
    }

    /// The public inputs (without the ONE): x after half the rounds and at the end.
    pub fn public_inputs(&self) -> Vec<Scalar> {
        let trace = self.trace().unwrap_or_default();
        let half = self.rounds / 2 - 1;
        trace.get(half).into_iter().chain(trace.last()).map(|s| s.0).collect()
    }
}

impl Circuit<Scalar> for MimcChain {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let values = self.trace();
        let at = |i: usize| values.as_ref().map(|t| t[i]);
        let start = self.start;
        let one = CS::one();
        let mut x = cs.alloc(|| "x0", || start.map(|s| s.0).ok_or(SynthesisError::AssignmentMissing))?;
        let mut y = cs.alloc(|| "y0", || start.map(|s| s.1).ok_or(SynthesisError::AssignmentMissing))?;
        let (mut xv, mut yv) = (start.map(|s| s.0), start.map(|s| s.1));
        let mu = mu();
        for (i, c) in constants(self.rounds).into_iter().enumerate() {
            let t = xv.map(|x| x + c);
            let t2 = cs.alloc(|| "t2", || t.map(|t| t.square()).ok_or(SynthesisError::AssignmentMissing))?;
            cs.enforce(|| "t*t", |lc| lc + x + (c, one), |lc| lc + x + (c, one), |lc| lc + t2);
            let t3 = cs.alloc(|| "t3", || t.map(|t| t.square() * t).ok_or(SynthesisError::AssignmentMissing))?;
            cs.enforce(|| "t2*t", |lc| lc + t2, |lc| lc + x + (c, one), |lc| lc + t3);
            let nx = cs.alloc(|| "x", || at(i).map(|s| s.0).ok_or(SynthesisError::AssignmentMissing))?;
            cs.enforce(|| "mix", |lc| lc + t3 + (mu, y), |lc| lc + one, |lc| lc + nx);
            (x, y) = (nx, x);
            (xv, yv) = (at(i).map(|s| s.0), xv);
            if i + 1 == self.rounds / 2 || i + 1 == self.rounds {
                bind_input(cs, x, xv)?;
            }
        }
        let _ = yv;
        Ok(())
    }
}

/// Exposes `v` as a public input: `(input)·1 = v`.
fn bind_input<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    v: Variable,
    value: Option<Scalar>,
) -> Result<(), SynthesisError> {
    let input = cs.alloc_input(|| "out", || value.ok_or(SynthesisError::AssignmentMissing))?;
    cs.enforce(|| "bind", |lc| lc + input, |lc| lc + CS::one(), |lc| lc + v);
    Ok(())
}
