//! A PoSt request's input bytes: exactly what filecoin-proofs-api's `*_with_vanilla` calls take,
//! in one versioned binary encoding (all integers little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `CUZKPOST` |
//! | 4 | version, 1 |
//! | 4 + n | the registered proof's name as filecoin-proofs-api spells it (`StackedDrgWinning32GiBV1`, `StackedDrgWindow32GiBV1_2`, …): its length n, then ASCII |
//! | 32 | randomness (a canonical scalar, little-endian, as the API requires) |
//! | 32 | prover id (likewise) |
//! | 8 | partition index: `u64::MAX` proves every partition (`generate_window_post_with_vanilla`, and WinningPoSt), another value that one WindowPoSt partition (`generate_single_window_post_with_vanilla`) |
//! | 8 | number of vanilla proofs m |
//! | m × (8 + len) | each vanilla proof: its length, then the bytes `generate_single_vanilla_proof` returned |
//!
//! Nothing may follow. The vanilla proofs are decoded (bincode, as the API does) and checked
//! by [`super::PostRequest`]; this file only frames them.

use filecoin_proofs_api::RegisteredPoStProof;

use crate::circuits::frame::{name_of, put_blobs, put_name, Reader};
use crate::Result;

/// The first bytes of every PoSt input.
pub const INPUT_MAGIC: [u8; 8] = *b"CUZKPOST";
/// The encoding's version; another is refused.
pub const INPUT_VERSION: u32 = 1;
/// The partition index that asks for every partition.
const ALL_PARTITIONS: u64 = u64::MAX;

/// A PoSt request, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostInput {
    pub proof: RegisteredPoStProof,
    pub randomness: [u8; 32],
    pub prover_id: [u8; 32],
    /// `None`: every partition; `Some(k)`: WindowPoSt partition `k` alone (its sectors' proofs).
    pub partition: Option<u64>,
    /// Each sector's vanilla proof, as filecoin-proofs-api returns it.
    pub vanilla: Vec<Vec<u8>>,
}

impl PostInput {
    /// Decodes `bytes`; any deviation from the layout is `InvalidInput` saying where.
    pub fn decode(bytes: &[u8]) -> Result<PostInput> {
        let mut r = Reader::new(bytes, "PoSt input");
        if r.take(8, "the magic")? != INPUT_MAGIC {
            return Err(r.bad("does not start with CUZKPOST (not a PoSt input)"));
        }
        let version = r.u32("the version")?;
        if version != INPUT_VERSION {
            return Err(r.bad(format!("version {version}; this library reads version {INPUT_VERSION}")));
        }
        let proof: RegisteredPoStProof = r.proof_name("PoSt")?;
        let randomness = r.bytes32("the randomness")?;
        let prover_id = r.bytes32("the prover id")?;
        let partition = match r.u64("the partition index")? {
            ALL_PARTITIONS => None,
            k => Some(k),
        };
        let count = r.len("the number of vanilla proofs", 8)?;
        let vanilla = r.blobs(count, "vanilla proof")?;
        r.end("the last vanilla proof")?;
        Ok(PostInput { proof, randomness, prover_id, partition, vanilla })
    }

    /// The encoding of this input.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(120 + self.vanilla.iter().map(|v| 8 + v.len()).sum::<usize>());
        out.extend_from_slice(&INPUT_MAGIC);
        out.extend_from_slice(&INPUT_VERSION.to_le_bytes());
        put_name(&mut out, &name_of(self.proof));
        out.extend_from_slice(&self.randomness);
        out.extend_from_slice(&self.prover_id);
        out.extend_from_slice(&self.partition.unwrap_or(ALL_PARTITIONS).to_le_bytes());
        put_blobs(&mut out, &self.vanilla);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    fn sample() -> PostInput {
        PostInput {
            proof: RegisteredPoStProof::StackedDrgWindow2KiBV1_2,
            randomness: [3; 32],
            prover_id: [4; 32],
            partition: Some(1),
            vanilla: vec![vec![1, 2, 3], vec![], vec![9; 40]],
        }
    }

    #[test]
    fn round_trip_and_every_truncation_refused() {
        let input = sample();
        let bytes = input.encode();
        assert_eq!(PostInput::decode(&bytes).unwrap(), input);
        let all = PostInput { partition: None, ..sample() };
        assert_eq!(PostInput::decode(&all.encode()).unwrap().partition, None);
        for n in 0..bytes.len() {
            assert!(matches!(PostInput::decode(&bytes[..n]), Err(Error::InvalidInput(_))), "cut at {n}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(PostInput::decode(&long).unwrap_err().to_string().contains("follow"));
    }

    #[test]
    fn foreign_or_hostile_headers_are_refused() {
        let bytes = sample().encode();
        let with = |at: usize, b: &[u8]| {
            let mut v = bytes.clone();
            v[at..at + b.len()].copy_from_slice(b);
            PostInput::decode(&v).unwrap_err().to_string()
        };
        assert!(with(0, b"X").contains("CUZKPOST"));
        assert!(with(8, &2u32.to_le_bytes()).contains("version 2"));
        assert!(with(12, &u32::MAX.to_le_bytes()).contains("truncated"));
        assert!(with(16, b"Z").contains("unknown registered PoSt proof"));
        let count_at = 16 + "StackedDrgWindow2KiBV1_2".len() + 64 + 8;
        assert!(with(count_at, &u64::MAX.to_le_bytes()).contains("more than"));
        assert!(with(count_at + 8, &(1u64 << 40).to_le_bytes()).contains("more than"));
    }
}
