//! A SnapDeals request's input bytes: what `generate_empty_sector_update_proof_with_vanilla`
//! takes, in one versioned binary encoding (little-endian; framing as the PoSt input's):
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `CUZKSNAP` |
//! | 4 | version, 1 |
//! | 4 + n | the registered update proof's name as filecoin-proofs-api spells it (`StackedDrg32GiBV1`) |
//! | 32 × 3 | comm_r_old, comm_r_new, comm_d_new |
//! | 8 + m × (8 + len) | each partition's vanilla proof, as `generate_partition_proofs` returned it, in order |

use filecoin_proofs_api::RegisteredUpdateProof;

use crate::circuits::frame::{name_of, put_blobs, put_name, Reader};
use crate::Result;

/// The first bytes of every SnapDeals input.
const MAGIC: [u8; 8] = *b"CUZKSNAP";
/// The encoding's version; another is refused.
const VERSION: u32 = 1;

/// A SnapDeals request, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapInput {
    pub proof: RegisteredUpdateProof,
    pub comm_r_old: [u8; 32],
    pub comm_r_new: [u8; 32],
    pub comm_d_new: [u8; 32],
    /// Each partition's vanilla proof (`PartitionProofBytes`), in partition order.
    pub partitions: Vec<Vec<u8>>,
}

impl SnapInput {
    /// Decodes `bytes`; any deviation from the layout is `InvalidInput` saying where.
    pub fn decode(bytes: &[u8]) -> Result<SnapInput> {
        let mut r = Reader::new(bytes, "SnapDeals input");
        if r.take(8, "the magic")? != MAGIC {
            return Err(r.bad("does not start with CUZKSNAP (not a SnapDeals input)"));
        }
        let version = r.u32("the version")?;
        if version != VERSION {
            return Err(r.bad(format!("version {version}; this library reads version {VERSION}")));
        }
        let proof: RegisteredUpdateProof = r.proof_name("update")?;
        let comm_r_old = r.bytes32("comm_r_old")?;
        let comm_r_new = r.bytes32("comm_r_new")?;
        let comm_d_new = r.bytes32("comm_d_new")?;
        let count = r.len("the number of partition proofs", 8)?;
        let partitions = r.blobs(count, "partition proof")?;
        r.end("the last partition proof")?;
        Ok(SnapInput { proof, comm_r_old, comm_r_new, comm_d_new, partitions })
    }

    /// The encoding of this input.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(140 + self.partitions.iter().map(|v| 8 + v.len()).sum::<usize>());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        put_name(&mut out, &name_of(self.proof));
        for c in [&self.comm_r_old, &self.comm_r_new, &self.comm_d_new] {
            out.extend_from_slice(c);
        }
        put_blobs(&mut out, &self.partitions);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_every_truncation_refused() {
        let input = SnapInput {
            proof: RegisteredUpdateProof::StackedDrg32GiBV1,
            comm_r_old: [1; 32],
            comm_r_new: [2; 32],
            comm_d_new: [3; 32],
            partitions: vec![vec![7; 10], vec![8; 3]],
        };
        let bytes = input.encode();
        assert_eq!(SnapInput::decode(&bytes).unwrap(), input);
        for n in 0..bytes.len() {
            assert!(SnapInput::decode(&bytes[..n]).is_err(), "cut at {n}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(SnapInput::decode(&long).unwrap_err().to_string().contains("follow"));
        let mut other = bytes.clone();
        other[16] = b'X';
        assert!(SnapInput::decode(&other).unwrap_err().to_string().contains("unknown registered update proof"));
    }
}
