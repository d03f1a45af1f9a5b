//! Reading bellperson/Filecoin `.params` files at the speed of the disk, not of one thread.
//!
//! The format (bellperson's `Parameters::write`): the verifying key (α, β in G1; β, γ in G2; δ in
//! G1 and G2; then `ic`: a big-endian `u32` count and that many points), then the H, L, A and
//! B-in-G1 queries and the B-in-G2 query, each a `u32` count and uncompressed points (96 bytes in
//! G1, 192 in G2). The whole layout is walked and checked against the file's size before
//! anything is allocated, so a corrupt count is an error, never a huge allocation. The points
//! are then decoded by every core at once from positioned reads of the file (no mapping: a file
//! that shrinks during the load is an error, not a SIGBUS). The result equals bellperson's
//! `Parameters::read` of the same file, point for point, and refuses what it refuses (a point
//! off the curve, a point at infinity; with `checked`, a point outside the subgroup).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use bellperson::groth16::{Parameters, VerifyingKey};
use blstrs::{Bls12, G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;
use rayon::prelude::*;

use super::cache::{self, Stamp};
use crate::files::open_regular;
use crate::progress::Progress;
use crate::{Error, Result};

const G1_BYTES: usize = 96;
const G2_BYTES: usize = 192;
/// α, β (G1), β, γ (G2), δ (G1), δ (G2): the verifying key before its `ic` count.
const VK_FIXED_BYTES: u64 = 3 * G1_BYTES as u64 + 3 * G2_BYTES as u64;
/// Points one positioned read brings in (768 KiB in G1).
const POINTS_PER_READ: usize = 1 << 13;

/// Where one vector's points lie in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Section {
    name: &'static str,
    /// The first point's byte offset.
    offset: u64,
    len: usize,
}

/// The vectors of a `.params` file, in file order.
#[derive(Debug)]
struct Layout {
    ic: Section,
    h: Section,
    l: Section,
    a: Section,
    b_g1: Section,
    b_g2: Section,
}

fn bad(path: &Path, m: impl std::fmt::Display) -> Error {
    Error::BadParamsFile(format!("{}: {m}", path.display()))
}

fn io(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::Io(format!("{what} {}: {e}", path.display()))
}

impl Layout {
    /// Walks the counts from the start of the file; every vector must lie inside it and the last
    /// must end where the file does.
    fn read(file: &File, file_len: u64, path: &Path) -> Result<Layout> {
        let mut at = VK_FIXED_BYTES;
        let mut next = |name: &'static str, point_bytes: usize| -> Result<Section> {
            let mut count = [0u8; 4];
            if at + 4 > file_len {
                return Err(bad(
                    path,
                    format!("truncated: {name}'s count at byte {at} is past the end ({file_len} bytes)"),
                ));
            }
            file.read_exact_at(&mut count, at).map_err(|e| io(path, "reading", e))?;
            let len = u32::from_be_bytes(count) as u64;
            let offset = at + 4;
            let end = offset + len * point_bytes as u64;
            if end > file_len {
                return Err(bad(
                    path,
                    format!(
                        "truncated or corrupt: {name} says {len} points ({} bytes from byte {offset}) but the file has {file_len} bytes",
                        len * point_bytes as u64
                    ),
                ));
            }
            at = end;
            Ok(Section { name, offset, len: len as usize })
        };
        let layout = Layout {
            ic: next("vk.ic", G1_BYTES)?,
            h: next("h", G1_BYTES)?,
            l: next("l", G1_BYTES)?,
            a: next("a", G1_BYTES)?,
            b_g1: next("b_g1", G1_BYTES)?,
            b_g2: next("b_g2", G2_BYTES)?,
        };
        let end = layout.b_g2.offset + (layout.b_g2.len * G2_BYTES) as u64;
        if end != file_len {
            return Err(bad(path, format!("{} bytes after the last query (not a .params file?)", file_len - end)));
        }
        Ok(layout)
    }
}

/// The first failure of a parallel decode, by point index.
type Failure = Mutex<Option<(usize, String)>>;

fn note(failure: &Failure, i: usize, m: String) {
    let mut f = failure.lock().unwrap_or_else(|p| p.into_inner());
    if f.as_ref().is_none_or(|(at, _)| i < *at) {
        *f = Some((i, m));
    }
}

/// The points of one section as bellperson reads them (`checked`: on the curve and in the
/// subgroup; otherwise on the curve), decoded in parallel.
fn read_points<P, const N: usize>(
    file: &File,
    s: Section,
    path: &Path,
    stop: &AtomicBool,
    progress: &Progress,
    decode: impl Fn(&[u8; N]) -> Option<P> + Sync,
) -> Result<Vec<P>>
where
    P: PrimeCurveAffine + Send,
{
    let failure: Failure = Mutex::new(None);
    let mut out = Vec::with_capacity(s.len);
    // Each rayon job walks a run of consecutive indices; its window holds the bytes of the next
    // `POINTS_PER_READ` of them, read when the walk leaves it.
    (0..s.len)
        .into_par_iter()
        .with_min_len(POINTS_PER_READ)
        .map_init(
            || (usize::MAX, Vec::<u8>::new()),
            |(start, bytes), i| {
                if *start == usize::MAX || i < *start || i >= *start + bytes.len() / N {
                    let n = POINTS_PER_READ.min(s.len - i);
                    bytes.resize(n * N, 0);
                    *start = i;
                    progress.add(n as u64);
                    if stop.load(Relaxed) {
                        note(&failure, 0, "stopped: the parameters were unloaded".into());
                        bytes.clear();
                        return P::identity();
                    }
                    if let Err(e) = file.read_exact_at(bytes, s.offset + (i * N) as u64) {
                        note(&failure, i, format!("reading {}[{i}..]: {e} (did the file change?)", s.name));
                        bytes.clear();
                        return P::identity();
                    }
                }
                let at = (i - *start) * N;
                let repr: &[u8; N] = bytes[at..at + N].try_into().expect("a window holds whole points");
                match decode(repr) {
                    Some(p) if !bool::from(p.is_identity()) => p,
                    Some(_) => {
                        note(&failure, i, format!("{}[{i}] is the point at infinity", s.name));
                        P::identity()
                    }
                    None => {
                        note(&failure, i, format!("{}[{i}] is not a valid curve point", s.name));
                        P::identity()
                    }
                }
            },
        )
        .collect_into_vec(&mut out);
    match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some((_, m)) => Err(bad(path, m)),
        None => Ok(out),
    }
}

fn g1(checked: bool) -> impl Fn(&[u8; G1_BYTES]) -> Option<G1Affine> + Sync {
    move |b| {
        Option::from(if checked { G1Affine::from_uncompressed(b) } else { G1Affine::from_uncompressed_unchecked(b) })
    }
}

fn g2(checked: bool) -> impl Fn(&[u8; G2_BYTES]) -> Option<G2Affine> + Sync {
    move |b| {
        Option::from(if checked { G2Affine::from_uncompressed(b) } else { G2Affine::from_uncompressed_unchecked(b) })
    }
}

/// Reads a `.params` file: from its decoded cache beside it when that is a good cache of the
/// file as its bytes are now (`cache.rs`: a checked read checks the cache's points too, and
/// decodes the file instead if one fails), else by decoding it ([`decode_params`]) and
/// writing the cache for the next start, in the background (a cache that cannot be written is
/// only logged; [`super::wait_for_cache_writes`] waits for it). `TooLarge` when the process
/// cannot take the decoded parameters (about the file's size: points are kept as the file
/// stores them, uncompressed).
pub fn read_params(path: &Path, checked: bool) -> Result<Parameters<Bls12>> {
    read_params_until(path, checked, &Arc::new(AtomicBool::new(false)))
}

/// [`read_params`], stopping (an error) once `stop` is set; so does the cache writer it starts.
pub(super) fn read_params_until(path: &Path, checked: bool, stop: &Arc<AtomicBool>) -> Result<Parameters<Bls12>> {
    let opened = open(path)?;
    let cache = cache::path_of(path);
    crate::files::sweep_temps(&cache);
    let stamp = Stamp::of(&opened.0).map_err(|e| io(path, "reading the metadata of", e))?;
    if let Some(p) = cache::read(&cache, &opened.0, stop) {
        match !checked || in_subgroups(&p) {
            true => return Ok(p),
            false => {
                log::warn!("{}: a point outside its subgroup: decoding {} instead", cache.display(), path.display())
            }
        }
    }
    let source = opened.0.try_clone().map_err(|e| io(path, "reopening", e))?;
    let p = decode(opened, path, checked, stop)?;
    cache::write_in_background(cache, source, stamp, p.clone(), stop.clone());
    Ok(p)
}

/// Whether every point of `p` is on its curve and in its prime-order subgroup, checked on
/// every core.
pub(super) fn in_subgroups(p: &Parameters<Bls12>) -> bool {
    let g1 = |x: &G1Affine| bool::from(x.is_on_curve() & x.is_torsion_free());
    let g2 = |x: &G2Affine| bool::from(x.is_on_curve() & x.is_torsion_free());
    let vk = &p.vk;
    [&p.h, &p.l, &p.a, &p.b_g1].into_iter().all(|q| q.par_iter().all(g1))
        && p.b_g2.par_iter().all(g2)
        && [vk.alpha_g1, vk.beta_g1, vk.delta_g1].iter().chain(&vk.ic).all(g1)
        && [vk.beta_g2, vk.gamma_g2, vk.delta_g2].iter().all(g2)
}

/// What a `.params` file says before its queries: the verifying key, and the bytes its points
/// take in memory once decoded.
pub struct Head {
    pub vk: VerifyingKey<Bls12>,
    pub decoded_bytes: u64,
}

/// Reads and checks a `.params` file's layout and verifying key without decoding its queries
/// (milliseconds): what [`decode_params`] refuses for the file's layout, key or size is refused
/// here too; a bad point in a query is found only by decoding it. Errors as [`decode_params`].
pub fn read_head(path: &Path) -> Result<Head> {
    let (_, l, vk) = open(path)?;
    let g1 = std::mem::size_of::<G1Affine>() as u64;
    let g2 = std::mem::size_of::<G2Affine>() as u64;
    // The key's α, β, δ in G1 and β, γ, δ in G2 beside the queries (as `srs::params_bytes`).
    let g1s = (l.ic.len + l.h.len + l.l.len + l.a.len + l.b_g1.len + 3) as u64;
    Ok(Head { vk, decoded_bytes: g1s * g1 + (l.b_g2.len as u64 + 3) * g2 })
}

/// The file opened, its layout checked against its size, the process's room for its points
/// checked, and its verifying key read (a few kilobytes: bellperson's own reader, on its bytes).
fn open(path: &Path) -> Result<(File, Layout, VerifyingKey<Bls12>)> {
    let file = open_regular(path)?;
    let meta = file.metadata().map_err(|e| io(path, "reading the metadata of", e))?;
    crate::mem::check_room(&format!("decoding {}", path.display()), meta.len())?;
    let layout = Layout::read(&file, meta.len(), path)?;
    let mut vk_bytes = vec![0u8; (layout.ic.offset + (layout.ic.len * G1_BYTES) as u64) as usize];
    file.read_exact_at(&mut vk_bytes, 0).map_err(|e| io(path, "reading", e))?;
    let vk = VerifyingKey::<Bls12>::read(&vk_bytes[..]).map_err(|e| bad(path, format!("verifying key: {e}")))?;
    Ok((file, layout, vk))
}

/// Decodes a `.params` file (see the module doc), without the cache. `checked` adds the
/// subgroup check of every point, in parallel; filecoin-proofs reads its cache unchecked,
/// trusting the digest checked at download. Errors: `Io` (unreadable), `InvalidInput` (not a
/// regular file), `BadParamsFile` (truncated, corrupt or foreign, naming what and where),
/// `TooLarge` (the process cannot take the decoded points: about the file's size).
pub fn decode_params(path: &Path, checked: bool) -> Result<Parameters<Bls12>> {
    decode_params_until(path, checked, &AtomicBool::new(false))
}

/// [`decode_params`], stopping (an error) once `stop` is set.
pub(super) fn decode_params_until(path: &Path, checked: bool, stop: &AtomicBool) -> Result<Parameters<Bls12>> {
    decode(open(path)?, path, checked, stop)
}

fn decode(
    (file, layout, vk): (File, Layout, VerifyingKey<Bls12>),
    path: &Path,
    checked: bool,
    stop: &AtomicBool,
) -> Result<Parameters<Bls12>> {
    let points = [layout.h, layout.l, layout.a, layout.b_g1, layout.b_g2].iter().map(|s| s.len as u64).sum();
    let progress = Progress::start(format!("decoding {}", path.display()), "points", Some(points));
    let g1s = |s: Section| read_points(&file, s, path, stop, &progress, g1(checked)).map(Arc::new);
    let params = Parameters {
        vk,
        h: g1s(layout.h)?,
        l: g1s(layout.l)?,
        a: g1s(layout.a)?,
        b_g1: g1s(layout.b_g1)?,
        b_g2: Arc::new(read_points(&file, layout.b_g2, path, stop, &progress, g2(checked))?),
    };
    progress.finish();
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::{Family, Synthetic};
    use rand::{Rng, SeedableRng};

    fn written(dir: &Path) -> (std::path::PathBuf, Parameters<Bls12>, Vec<u8>) {
        let pce = crate::pce::extract(Synthetic::new(Family::MimcChain, 300, 1).blank()).unwrap();
        let params = crate::params::dummy_params(&pce, 4);
        let mut bytes = Vec::new();
        params.write(&mut bytes).unwrap();
        let path = dir.join("p.params");
        std::fs::write(&path, &bytes).unwrap();
        (path, params, bytes)
    }

    fn dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("cuzk-params-file-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn equals_bellpersons_read() {
        let d = dir("eq");
        let (path, params, bytes) = written(&d);
        for checked in [false, true] {
            let ours = decode_params(&path, checked).unwrap();
            assert!(ours == params, "checked {checked}");
            assert!(read_params(&path, checked).unwrap() == params, "checked {checked}, decoded");
            cache::wait_for_writes();
            assert!(read_params(&path, checked).unwrap() == params, "checked {checked}, through the cache");
            assert!(ours == Parameters::<Bls12>::read(&bytes[..], checked).unwrap());
        }
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn truncated_corrupt_and_foreign_files_are_refused() {
        let d = dir("bad");
        let (path, _, bytes) = written(&d);
        let at = |b: &[u8]| {
            std::fs::write(&path, b).unwrap();
            decode_params(&path, false)
        };
        let bad_file = |r: Result<Parameters<Bls12>>, needle: &str| match r {
            Err(Error::BadParamsFile(m)) => assert!(m.contains(needle), "{m} lacks {needle:?}"),
            other => panic!("expected BadParamsFile({needle}), got {:?}", other.map(|_| ())),
        };
        // Cut anywhere: at a count, inside a vector, inside the key.
        for cut in [0, 100, VK_FIXED_BYTES as usize + 2, bytes.len() / 2, bytes.len() - 1] {
            assert!(matches!(at(&bytes[..cut]), Err(Error::BadParamsFile(_))), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.extend_from_slice(b"junk");
        bad_file(at(&longer), "4 bytes after the last query");
        // A count of 2^32 − 1 points is refused from the file's size, nothing allocated.
        std::fs::write(&path, &bytes).unwrap();
        let layout = Layout::read(&File::open(&path).unwrap(), bytes.len() as u64, &path).unwrap();
        let mut huge = bytes.clone();
        let count_at = (layout.l.offset - 4) as usize;
        huge[count_at..count_at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
        bad_file(at(&huge), "l says 4294967295 points");
        // A point off the curve, and the point at infinity, name their place.
        let mut off = bytes.clone();
        off[layout.a.offset as usize + 3 * G1_BYTES + 50] ^= 1;
        bad_file(at(&off), "a[3] is not a valid curve point");
        let mut inf = bytes.clone();
        let p = layout.b_g2.offset as usize + G2_BYTES;
        inf[p..p + G2_BYTES].copy_from_slice(G2Affine::identity().to_uncompressed().as_ref());
        bad_file(at(&inf), "b_g2[1] is the point at infinity");
        // Not a regular file: a directory, a FIFO (refused at once, not waited on).
        assert!(matches!(decode_params(&d, false), Err(Error::InvalidInput(_))));
        let fifo = d.join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        assert!(matches!(decode_params(&fifo, false), Err(Error::InvalidInput(_))));
        assert!(matches!(read_params(&fifo, false), Err(Error::InvalidInput(_))));
        std::fs::remove_dir_all(d).unwrap();
    }

    /// Random damage to the key and the counts: always an error or the right parameters,
    /// never a panic or an allocation the file cannot back.
    #[test]
    fn damaged_headers_and_counts_are_errors() {
        let d = dir("fuzz");
        let (path, _, bytes) = written(&d);
        let layout = Layout::read(&File::open(&path).unwrap(), bytes.len() as u64, &path).unwrap();
        let counts: Vec<usize> = [layout.ic, layout.h, layout.l, layout.a, layout.b_g1, layout.b_g2]
            .iter()
            .map(|s| s.offset as usize - 4)
            .collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(19);
        for round in 0..300 {
            let mut b = bytes.clone();
            for _ in 0..rng.gen_range(1..4) {
                let at = if rng.gen_bool(0.5) {
                    counts[rng.gen_range(0..counts.len())] + rng.gen_range(0..4)
                } else {
                    rng.gen_range(0..(VK_FIXED_BYTES as usize + 8))
                };
                b[at] ^= 1 << rng.gen_range(0..8);
            }
            if rng.gen_bool(0.2) {
                b.truncate(rng.gen_range(0..b.len()));
            }
            std::fs::write(&path, &b).unwrap();
            // What we accept, bellperson reads the same way (counts may trade points between
            // queries and still describe a valid file).
            match decode_params(&path, false) {
                Ok(p) => assert!(Parameters::<Bls12>::read(&b[..], false).is_ok_and(|q| p == q), "round {round}"),
                Err(Error::BadParamsFile(_)) => {}
                Err(e) => panic!("round {round}: {e}"),
            }
        }
        std::fs::remove_dir_all(d).unwrap();
    }
}
