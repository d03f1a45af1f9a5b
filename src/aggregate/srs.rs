//! The aggregation SRS: powers of two secrets α and β in G1 and G2, read from the file
//! filecoin-proofs names `v28-fil-inner-product-v1.srs` (bellperson's `GenericSRS` layout: four
//! vectors `g^αⁱ`, `g^βⁱ`, `h^αⁱ`, `h^βⁱ`, each a big-endian u32 count then compressed points).
//! Only the prefix the largest aggregate needs is read and decoded (checked on the curve and
//! in the subgroup): `2n` G1 and `n` G2 points of each secret for `n` proofs.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::SystemTime;

use blstrs::{G1Affine, G2Affine};
use group::GroupEncoding;
use rayon::prelude::*;

use crate::mem::{Owner, Tracked};
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
    /// The points' bytes, counted as SRS in `mem::stats` while this is alive.
    tracked: Tracked,
}

/// What identifies a loaded prefix: the file (canonical path, size, modification time: a
/// file changed on disk is read afresh) and the proofs it was read for.
type Key = (PathBuf, u64, Option<SystemTime>, usize);

/// The prefixes loaded and still held by someone.
static LOADED: Mutex<Vec<(Key, Weak<AggregationSrs>)>> = Mutex::new(Vec::new());

/// The SRS prefix of `path` for `max_proofs`, shared with every other holder of the same one:
/// read once, kept while someone holds it (as [`AggregationSrs::load`] otherwise).
pub fn load_shared(path: &Path, max_proofs: usize) -> Result<Arc<AggregationSrs>> {
    let canonical = std::fs::canonicalize(path).map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
    let meta = std::fs::metadata(&canonical).map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
    let key = (canonical, meta.len(), meta.modified().ok(), max_proofs);
    // Held while loading, so that two callers of one file read it once.
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    loaded.retain(|(_, w)| w.strong_count() > 0);
    if let Some(srs) = loaded.iter().find(|(k, _)| *k == key).and_then(|(_, w)| w.upgrade()) {
        return Ok(srs);
    }
    let srs = Arc::new(AggregationSrs::load(&key.0, max_proofs)?);
    loaded.push((key, Arc::downgrade(&srs)));
    Ok(srs)
}

fn bad(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::BadParamsFile(format!("{}: {what}", path.display()))
}

/// A compressed point, if it is one of its group (on the curve, in the subgroup).
pub(super) fn decode_point<A: GroupEncoding>(bytes: &[u8]) -> Option<A>
where
    A::Repr: Default + AsMut<[u8]>,
{
    let mut repr = A::Repr::default();
    repr.as_mut().copy_from_slice(bytes);
    A::from_bytes(&repr).into()
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
        .map(|(i, b)| decode_point(b).ok_or_else(|| bad(path, format!("point {i} at {offset} is not a valid point"))))
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
        let bytes = 2 * (g_len * std::mem::size_of::<G1Affine>() + h_len * std::mem::size_of::<G2Affine>());
        crate::mem::check_room(&format!("the aggregation SRS of {}", path.display()), bytes as u64)?;
        Ok(AggregationSrs {
            max_proofs,
            g_alpha: read_points(&file, path, starts[0], g_len)?,
            g_beta: read_points(&file, path, starts[1], g_len)?,
            h_alpha: read_points(&file, path, starts[2], h_len)?,
            h_beta: read_points(&file, path, starts[3], h_len)?,
            tracked: Tracked::new(Owner::Srs, bytes),
        })
    }

    /// The most proofs an aggregate made with this SRS can hold.
    pub fn max_proofs(&self) -> usize {
        self.max_proofs
    }

    /// Bytes of points held.
    pub fn bytes(&self) -> u64 {
        self.tracked.bytes()
    }
}

/// `g·xⁱ` for `i < n`, affine.
fn powers_of<C>(g: C, x: &blstrs::Scalar, n: usize) -> Vec<C::AffineRepr>
where
    C: group::Curve + std::ops::Mul<blstrs::Scalar, Output = C> + Send + Sync,
    C::AffineRepr: Send + Default + Copy,
{
    let points: Vec<C> = super::ops::powers(x, n).into_par_iter().map(|s| g * s).collect();
    let mut out = vec![C::AffineRepr::default(); n];
    C::batch_normalize(&points, &mut out);
    out
}

/// Writes to `path` (atomically) an aggregation SRS for up to `max_proofs` proofs, in
/// bellperson's layout with `2·max_proofs` powers of each secret in each group (what
/// `setup_fake_srs(rng, max_proofs)` makes), from secrets derived from `seed`. For tests and
/// demos only: whoever knows the seed can forge aggregates.
pub fn generate(path: &Path, max_proofs: usize, seed: u64) -> Result<()> {
    use blstrs::{G1Projective, G2Projective, Scalar};
    use ff::Field;
    use group::Group;
    use rand_chacha::rand_core::SeedableRng;
    if !(2..=MAX_PROOFS).contains(&max_proofs) || !max_proofs.is_power_of_two() {
        return Err(Error::InvalidInput(format!("max_proofs {max_proofs}: a power of two from 2 to {MAX_PROOFS}")));
    }
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let (alpha, beta) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
    let n = 2 * max_proofs;
    let mut bytes = Vec::with_capacity(4 * 4 + n * 2 * (48 + 96));
    for g1 in [powers_of(G1Projective::generator(), &alpha, n), powers_of(G1Projective::generator(), &beta, n)] {
        bytes.extend_from_slice(&(n as u32).to_be_bytes());
        g1.iter().for_each(|p| bytes.extend_from_slice(p.to_bytes().as_ref()));
    }
    for g2 in [powers_of(G2Projective::generator(), &alpha, n), powers_of(G2Projective::generator(), &beta, n)] {
        bytes.extend_from_slice(&(n as u32).to_be_bytes());
        g2.iter().for_each(|p| bytes.extend_from_slice(p.to_bytes().as_ref()));
    }
    crate::files::write_atomically(path, bytes.len() as u64, |f| std::io::Write::write_all(f, &bytes))
}
