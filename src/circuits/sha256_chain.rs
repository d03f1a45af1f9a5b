//! `sha256-chain`: k chained SHA-256 compressions from bellperson's gadgets,
//! defined constraint for constraint like the circuit of the peer benchmarks in
//! BENCHMARKS.md (bellperson and supraseal-c2 proving it): state₀ = IV, stateᵢ₊₁ = compress(stateᵢ, blockᵢ)
//! with 512 private bits per block, the final state multipacked into 2 inputs.
//! Boolean-heavy, like PoRep.

use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
use bellperson::gadgets::multipack;
use bellperson::gadgets::sha256::sha256_compression_function;
use bellperson::gadgets::uint32::UInt32;
use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;

use crate::pce::program::Program;
use crate::pce::Pce;
use crate::witness::{digest_of, Witness, WitnessBuffer};

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

const IV: [u32; 8] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
/// Rows of the first block (its state starts from constants), of each further
/// block, and the input rows (ONE + 2 packed inputs).
const FIRST_BLOCK: usize = 26_354;
const PER_BLOCK: usize = 26_704;
const INPUT_ROWS: usize = 3;

/// The circuit; `blocks == None` is the blank (witness-free) instance.
#[derive(Clone)]
pub struct Sha256Chain {
    pub k: usize,
    pub blocks: Option<Vec<[u8; 64]>>,
}

impl Sha256Chain {
    /// The largest k whose rows (input rows included) fit in `n` (at least 1).
    pub fn k_for(n: usize) -> usize {
        1 + n.saturating_sub(FIRST_BLOCK + INPUT_ROWS) / PER_BLOCK
    }

    /// Rows bellperson's prover has for k blocks.
    pub fn rows(k: usize) -> usize {
        FIRST_BLOCK + PER_BLOCK * (k.max(1) - 1) + INPUT_ROWS
    }

    /// k blocks drawn from a ChaCha20 stream seeded by `seed`.
    pub fn random(k: usize, seed: u64) -> Self {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let blocks = (0..k)
            .map(|_| {
                let mut b = [0u8; 64];
                rng.fill_bytes(&mut b);
                b
            })
            .collect();
        Sha256Chain { k, blocks: Some(blocks) }
    }

    pub fn blank(k: usize) -> Self {
        Sha256Chain { k, blocks: None }
    }

    /// The message bits in the order the circuit allocates them: the free
    /// values of its witness program.
    pub fn free_values(&self) -> impl Iterator<Item = Scalar> + '_ {
        self.blocks
            .iter()
            .flatten()
            .flat_map(|b| (0..512).map(move |j| Scalar::from(((b[j / 8] >> (7 - j % 8)) & 1) as u64)))
    }

    /// The witness, replayed from `pce`'s witness program: its free values are the message
    /// bits. The gadgets make it instead for a blank instance or a program that expects other
    /// free values (never for a PCE of this circuit).
    pub fn witness(self, pce: &Pce, into: WitnessBuffer) -> crate::Result<Witness> {
        let (inputs, aux) = (pce.num_inputs, pce.num_aux);
        let into = match self.program(pce) {
            Some(p) if p.free().len() == 512 * self.k => {
                let replayed = p.run(pce, self.free_values(), into)?;
                if let Some(w) = pce.vouch(replayed, || digest_of(|cs| self.clone().synthesize(cs)))? {
                    return Ok(w);
                }
                WitnessBuffer::new(inputs, aux)
            }
            _ => into,
        };
        Witness::generate_sized(self, into)
    }

    /// `pce`'s witness program (no layout: a chain is one sequence), for an instance with a
    /// witness.
    pub fn program<'p>(&self, pce: &'p Pce) -> Option<&'p Program> {
        self.blocks.as_ref().and_then(|_| pce.program(|| None))
    }

    /// The public inputs (without the ONE), computed natively by RustCrypto's
    /// SHA-256 compression, independently of the circuit.
    pub fn public_inputs(&self) -> Vec<Scalar> {
        use sha2::digest::generic_array::GenericArray;
        let mut state = IV;
        for b in self.blocks.iter().flatten() {
            sha2::compress256(&mut state, &[GenericArray::clone_from_slice(b)]);
        }
        let bits: Vec<bool> = state.iter().flat_map(|w| (0..32).rev().map(move |i| (w >> i) & 1 == 1)).collect();
        multipack::compute_multipacking::<Scalar>(&bits)
    }
}

impl Circuit<Scalar> for Sha256Chain {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut state: Vec<UInt32> = IV.iter().map(|&v| UInt32::constant(v)).collect();
        for i in 0..self.k {
            let block = self.blocks.as_ref().map(|b| b[i]);
            let bits = (0..512)
                .map(|j| {
                    let value = block.map(|b| (b[j / 8] >> (7 - j % 8)) & 1 == 1);
                    let bit = AllocatedBit::alloc(cs.namespace(|| format!("block {i} bit {j}")), value)?;
                    Ok(Boolean::from(bit))
                })
                .collect::<Result<Vec<_>, SynthesisError>>()?;
            state = sha256_compression_function(cs.namespace(|| format!("compress {i}")), &bits, &state)?;
        }
        let digest: Vec<Boolean> = state.into_iter().flat_map(|w| w.into_bits_be()).collect();
        multipack::pack_into_inputs(cs.namespace(|| "digest"), &digest)
    }
}
