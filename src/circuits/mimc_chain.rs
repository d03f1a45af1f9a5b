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

/// The round constants, drawn as they are needed: synthesis holds O(1)
/// memory besides the witness, as the engine's footprint assumes.
fn constants(rounds: usize) -> impl Iterator<Item = Scalar> {
    let mut rng = ChaCha20Rng::seed_from_u64(CONSTANTS_SEED);
    (0..rounds).map(move |_| Scalar::random(&mut rng))
}

/// One round on values: (x, y) → (t³ + μ·y, x) with t = x + c.
fn round(x: Scalar, y: Scalar, c: Scalar, mu: Scalar) -> (Scalar, Scalar) {
    let t = x + c;
    (t.square() * t + mu * y, x)
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

    /// Whether round `i` (from 0) ends with x bound to a public input.
    fn binds_input(&self, i: usize) -> bool {
        i + 1 == self.rounds / 2 || i + 1 == self.rounds
    }

    /// The public inputs (without the ONE): x after half the rounds and at the end.
    pub fn public_inputs(&self) -> Vec<Scalar> {
        let Some((mut x, mut y)) = self.start else { return Vec::new() };
        let mu = mu();
        let mut out = Vec::with_capacity(2);
        for (i, c) in constants(self.rounds).enumerate() {
            (x, y) = round(x, y, c, mu);
            if self.binds_input(i) {
                out.push(x);
            }
        }
        out
    }
}

impl Circuit<Scalar> for MimcChain {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let start = self.start;
        let one = CS::one();
        let mut x = cs.alloc(|| "x0", || start.map(|s| s.0).ok_or(SynthesisError::AssignmentMissing))?;
        let mut y = cs.alloc(|| "y0", || start.map(|s| s.1).ok_or(SynthesisError::AssignmentMissing))?;
        let (mut xv, mut yv) = (start.map(|s| s.0), start.map(|s| s.1));
        let mu = mu();
        for (i, c) in constants(self.rounds).enumerate() {
            let t = xv.map(|x| x + c);
            let t2 = cs.alloc(|| "t2", || t.map(|t| t.square()).ok_or(SynthesisError::AssignmentMissing))?;
            cs.enforce(|| "t*t", |lc| lc + x + (c, one), |lc| lc + x + (c, one), |lc| lc + t2);
            let t3 = cs.alloc(|| "t3", || t.map(|t| t.square() * t).ok_or(SynthesisError::AssignmentMissing))?;
            cs.enforce(|| "t2*t", |lc| lc + t2, |lc| lc + x + (c, one), |lc| lc + t3);
            let next = xv.zip(yv).map(|(x, y)| round(x, y, c, mu));
            let nx = cs.alloc(|| "x", || next.map(|s| s.0).ok_or(SynthesisError::AssignmentMissing))?;
            cs.enforce(|| "mix", |lc| lc + t3 + (mu, y), |lc| lc + one, |lc| lc + nx);
            (x, y) = (nx, x);
            (xv, yv) = (next.map(|s| s.0), next.map(|s| s.1));
            if self.binds_input(i) {
                bind_input(cs, x, xv)?;
            }
        }
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
