//! The aggregation SRS: powers of two secrets α and β in G1 and G2, read from the file
//! filecoin-proofs names `v28-fil-inner-product-v1.srs` (bellperson's `GenericSRS` layout: four
//! vectors `g^αⁱ`, `g^βⁱ`, `h^αⁱ`, `h^βⁱ`, each a big-endian u32 count then compressed points).
//! Only the prefix the largest aggregate needs is read and decoded (checked on the curve and
//! in the subgroup): `2n` G1 and `n` G2 points of each secret for `n` proofs.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use blstrs::{G1Affine, G2Affine};
use group::GroupEncoding;
use rayon::prelude::*;

use crate::{Error, Result};

/// The longest vector the file format allows (bellperson's `MAX_SRS_SIZE`).
const MAX_VECTOR: u64 = (2 << 19) + 1;
/// The most proofs one aggregate can hold (the format's limit).
pub const MAX_PROOFS: usize = 1 << 19;

/// The part of the SRS that aggregating up to `max_proofs` proofs uses.
pub struct AggregationSrs {
    max_proofs: usize,
    /// `g^αⁱ`, `g^βⁱ` for `i < 2·max_proofs`.
    pub(super) g_alpha: Vec<G1Affine>,
    pub(super) g_beta: Vec<G1Affine>,
    /// `h^αⁱ`, `h^βⁱ` for `i < max_proofs`.
    pub(super) h_alpha: Vec<G2Affine>,
    pub(super) h_beta: Vec<G2Affine>,
}

fn bad(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::BadParamsFile(format!("{}: {what}", path.display()))
}

/// `count` points of `len` bytes each at `offset`, decoded in parallel.
fn read_points<A: GroupEncoding + Send>(file: &File, path: &Path, offset: u64, count: usize) -> Result<Vec<A>>
where
    A::Repr: Default + AsMut<[u8]>,
{
    let len = A::Repr::default().as_mut().len();
    let mut bytes = vec![0u8; count * len];
    file.read_exact_at(&mut bytes, offset).map_err(|e| bad(path, format!("reading points at {offset}: {e}")))?;
    bytes
        .par_chunks(len)
        .enumerate()
        .map(|(i, b)| {
            let mut repr = A::Repr::default();
            repr.as_mut().copy_from_slice(b);
            Option::from(A::from_bytes(&repr))
                .ok_or_else(|| bad(path, format!("point {i} at {offset} is not a valid point")))
        })
        .collect()
}

impl AggregationSrs {
    /// Reads what aggregating up to `max_proofs` proofs (a power of two, 2 ..= 2^19) needs
    /// from the SRS file at `path`. A file whose vectors are shorter, whose size is not what its
    /// counts say, or with a point that does not decode is `BadParamsFile`.
    pub fn load(path: &Path, max_proofs: usize) -> Result<Self> {
        if !(2..=MAX_PROOFS).contains(&max_proofs) || !max_proofs.is_power_of_two() {
            return Err(Error::InvalidInput(format!(
                "max_proofs {max_proofs}: a power of two from 2 to {MAX_PROOFS} is needed"
            )));
        }
        let file = crate::files::open_regular(path)?;
        let size = file.metadata().map_err(|e| Error::Io(format!("{}: {e}", path.display())))?.len();
        // The four counts and where each vector starts.
        let (mut counts, mut starts, mut at) = ([0u64; 4], [0u64; 4], 0u64);
        for (k, point_len) in [48u64, 48, 96, 96].into_iter().enumerate() {
            let mut be = [0u8; 4];
            file.read_exact_at(&mut be, at).map_err(|_| bad(path, "truncated before a vector's count"))?;
            counts[k] = u32::from_be_bytes(be) as u64;
            if counts[k] > MAX_VECTOR {
                return Err(bad(path, format!("vector {k} claims {} points (at most {MAX_VECTOR})", counts[k])));
            }
            starts[k] = at + 4;
            at = starts[k] + counts[k] * point_len;
        }
        if at != size {
            return Err(bad(path, format!("{size} bytes where its counts make {at}")));
        }
        let (g_len, h_len) = (2 * max_proofs, max_proofs);
        if counts[0].min(counts[1]) < g_len as u64 || counts[2].min(counts[3]) < h_len as u64 {
            return Err(Error::InvalidInput(format!(
                "{}: holds {:?} powers, too few for {max_proofs} proofs ({g_len} in G1, {h_len} in G2)",
                path.display(),
                counts
            )));
        }
        Ok(AggregationSrs {
            max_proofs,
            g_alpha: read_points(&file, path, starts[0], g_len)?,
            g_beta: read_points(&file, path, starts[1], g_len)?,
            h_alpha: read_points(&file, path, starts[2], h_len)?,
            h_beta: read_points(&file, path, starts[3], h_len)?,
        })
    }

    /// The most proofs an aggregate made with this SRS can hold.
    pub fn max_proofs(&self) -> usize {
        self.max_proofs
    }

    /// Bytes of points held.
    pub fn bytes(&self) -> usize {
        std::mem::size_of::<G1Affine>() * (self.g_alpha.len() + self.g_beta.len())
            + std::mem::size_of::<G2Affine>() * (self.h_alpha.len() + self.h_beta.len())
    }
}
