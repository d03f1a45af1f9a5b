//! The decoded form of a `.params` file, kept beside it (`<file>.cuzk-srs`) so that a restart
//! reads the points back as they are in memory instead of decoding them again.
//!
//! Layout (little-endian; `BODY` is the header length):
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 8 | magic `CUZKSRS\0` |
//! | 8 | 4 | format version |
//! | 12 | 4 | flags (none defined: 0) |
//! | 16 | 8 | the source file's length |
//! | 24 | 32 | the source file's digest: blake3 of its length and of the blake3 of each 16 MiB |
//! | 56 | 48 | points in h, l, a, b_g1, b_g2 and bytes of the verifying key |
//! | 104 | 32 | blake3 of the body |
//! | 136 | 32 | blake3 of bytes 0..136 |
//!
//! The body: the verifying key in bellperson's encoding, zero-padded to 64 bytes, then the
//! points of h, l, a, b_g1 (96 bytes each) and b_g2 (192 bytes each) as this build holds them in
//! memory.
//!
//! Trust: a cache is tied to every byte of its source. Each read digests the whole source
//! beside reading the cache (disk or page-cache speed, not decoding speed) and serves the cache
//! only when the digests, the header's checksum, the body's checksum and the size agree; a
//! source changed in place by one byte, whatever its times say, is decoded afresh (and refused
//! if it is bad). The checksums are not keyed: they find damage, not forgery, so a cache is
//! trusted as far as the directory it lies in, as the `.params` file is. A checked load never
//! takes a cache's word: it checks every point it serves ([`super::file`]). A cache is written
//! only for the file that was decoded: its digest is taken by the writer after the decoding, and
//! the cache is dropped if the file's status (inode, length, modification and change times)
//! moved meanwhile. It holds only what the source holds, so a cache that cannot be written
//! (read-only directory, full disk) only costs the next start its decoding. It is written in
//! the background ([`write_in_background`]): the load that decoded the file returns without
//! waiting for the disk, and the writer stops when the parameters are unloaded.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};

use bellperson::groth16::{Parameters, VerifyingKey};
use blstrs::{Bls12, G1Affine, G2Affine};
use rayon::prelude::*;

use super::raw::{self, RawPoint};
use crate::files::open_regular;
use crate::{Error, Result};

const MAGIC: [u8; 8] = *b"CUZKSRS\0";
const VERSION: u32 = 2;
const BODY: u64 = 168;
/// The source is digested in blocks of this size, in parallel.
const DIGEST_BLOCK: u64 = 16 << 20;
const ALIGN: u64 = 64;
const POINTS_PER_READ: usize = 1 << 14;
/// Bytes the writer writes between looks at its stop flag.
const WRITE_CHUNK: usize = 64 << 20;

/// Where a source file's cache lives.
pub fn path_of(source: &Path) -> PathBuf {
    let mut name = source.file_name().unwrap_or_default().to_os_string();
    name.push(".cuzk-srs");
    source.with_file_name(name)
}

fn stopped() -> std::io::Error {
    std::io::Error::other("stopped: the parameters were unloaded")
}

/// What a cache must match of its source file: all of its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    len: u64,
    digest: [u8; 32],
}

impl Source {
    /// The digest of the open file `f`, read block by block on every core (an error once
    /// `stop` is set).
    pub fn of(f: &File, stop: &AtomicBool) -> std::io::Result<Source> {
        let len = f.metadata()?.len();
        let blocks: Vec<[u8; 32]> = (0..len.div_ceil(DIGEST_BLOCK) as usize)
            .into_par_iter()
            .map_init(Vec::new, |buf, k| {
                if stop.load(Relaxed) {
                    return Err(stopped());
                }
                let at = k as u64 * DIGEST_BLOCK;
                buf.resize(DIGEST_BLOCK.min(len - at) as usize, 0);
                f.read_exact_at(buf, at)?;
                Ok(*blake3::hash(buf).as_bytes())
            })
            .collect::<std::io::Result<_>>()?;
        let mut h = blake3::Hasher::new();
        h.update(&len.to_le_bytes());
        blocks.iter().for_each(|b| {
            h.update(b);
        });
        Ok(Source { len, digest: *h.finalize().as_bytes() })
    }
}

/// A file's status: it differs after any write to the file (the change time cannot be set back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp([i64; 7]);

impl Stamp {
    pub fn of(f: &File) -> std::io::Result<Stamp> {
        let m = f.metadata()?;
        Ok(Stamp([
            m.dev() as i64,
            m.ino() as i64,
            m.len() as i64,
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
        ]))
    }
}

struct Header {
    source: Source,
    counts: [u64; 5],
    vk_bytes: u64,
    body_sum: [u8; 32],
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

impl Header {
    fn encode(&self) -> [u8; BODY as usize] {
        let mut h = [0u8; BODY as usize];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..12].copy_from_slice(&VERSION.to_le_bytes());
        h[16..24].copy_from_slice(&self.source.len.to_le_bytes());
        h[24..56].copy_from_slice(&self.source.digest);
        for (i, c) in self.counts.iter().chain([&self.vk_bytes]).enumerate() {
            h[56 + 8 * i..64 + 8 * i].copy_from_slice(&c.to_le_bytes());
        }
        h[104..136].copy_from_slice(&self.body_sum);
        let sum = *blake3::hash(&h[..136]).as_bytes();
        h[136..168].copy_from_slice(&sum);
        h
    }

    /// The header, if it is one of this version with a right checksum.
    fn decode(h: &[u8; BODY as usize]) -> Option<Header> {
        let ok = h[0..8] == MAGIC
            && h[8..12] == VERSION.to_le_bytes()
            && h[12..16] == [0; 4]
            && h[136..168] == *blake3::hash(&h[..136]).as_bytes()
            && cfg!(target_endian = "little");
        ok.then(|| Header {
            source: Source { len: u64_at(h, 16), digest: h[24..56].try_into().expect("32 bytes") },
            counts: std::array::from_fn(|i| u64_at(h, 56 + 8 * i)),
            vk_bytes: u64_at(h, 96),
            body_sum: h[104..136].try_into().expect("32 bytes"),
        })
    }

    /// Byte offsets of the five vectors and the end of the body.
    fn offsets(&self) -> Option<([u64; 5], u64)> {
        let mut at = (BODY.checked_add(self.vk_bytes)?).div_ceil(ALIGN) * ALIGN;
        let mut offsets = [0; 5];
        for (i, &n) in self.counts.iter().enumerate() {
            offsets[i] = at;
            at = at.checked_add(n.checked_mul(if i == 4 { 192 } else { 96 })?)?;
        }
        Some((offsets, at))
    }
}

fn vk_encoding(vk: &VerifyingKey<Bls12>) -> Vec<u8> {
    let mut b = Vec::new();
    vk.write(&mut b).expect("writing to a Vec");
    b
}

/// The vectors of a parameter set as the cache stores them, in order.
fn vectors(p: &Parameters<Bls12>) -> [&[u8]; 5] {
    [raw::as_bytes(&p.h), raw::as_bytes(&p.l), raw::as_bytes(&p.a), raw::as_bytes(&p.b_g1), raw::as_bytes(&p.b_g2)]
}

/// Writes the cache of `p`, decoded from `source`, beside it, whole or not at all
/// ([`crate::files::write_atomically`]); stops (an error) once `stop` is set.
pub fn write(path: &Path, source: Source, p: &Parameters<Bls12>, stop: &AtomicBool) -> Result<()> {
    let vk = vk_encoding(&p.vk);
    let mut body = blake3::Hasher::new();
    let pad = vec![0u8; ((BODY + vk.len() as u64).div_ceil(ALIGN) * ALIGN - BODY) as usize - vk.len()];
    body.update(&vk);
    body.update(&pad);
    for v in vectors(p) {
        body.update_rayon(v);
    }
    let header = Header {
        source,
        counts: [p.h.len(), p.l.len(), p.a.len(), p.b_g1.len(), p.b_g2.len()].map(|n| n as u64),
        vk_bytes: vk.len() as u64,
        body_sum: *body.finalize().as_bytes(),
    };
    let (_, end) = header.offsets().ok_or_else(|| Error::TooLarge("a parameter cache's length overflows".into()))?;
    crate::files::write_atomically(path, end, |f| {
        let mut f = std::io::BufWriter::with_capacity(8 << 20, f);
        f.write_all(&header.encode())?;
        f.write_all(&vk)?;
        f.write_all(&pad)?;
        for chunk in vectors(p).into_iter().flat_map(|v| v.chunks(WRITE_CHUNK)) {
            if stop.load(Relaxed) {
                return Err(stopped());
            }
            f.write_all(chunk)?;
        }
        f.flush()
    })
}

/// The caches being written now: one writer per cache file at a time.
static WRITING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static WRITTEN: Condvar = Condvar::new();

fn writing() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    WRITING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Writes the cache of `p`, decoded from the open `source` whose status was `stamp`, on a thread
/// of its own, which holds the points (an `Arc` of each query) until it is done or `stop` is
/// set; a failure is only logged. Nothing is started when that cache is being written already.
pub fn write_in_background(path: PathBuf, source: File, stamp: Stamp, p: Parameters<Bls12>, stop: Arc<AtomicBool>) {
    {
        let mut w = writing();
        if w.contains(&path) {
            return;
        }
        w.push(path.clone());
    }
    fn done(path: &Path) {
        writing().retain(|x| x != path);
        WRITTEN.notify_all();
    }
    let job = std::thread::Builder::new().name("cuzk-params-cache".into());
    let mine = path.clone();
    let spawned = job.spawn(move || {
        let digest = Source::of(&source, &stop).map_err(|e| Error::Io(format!("digesting the source: {e}")));
        let r = digest.and_then(|digest| match Stamp::of(&source) {
            Ok(now) if now == stamp => write(&mine, digest, &p, &stop),
            _ => Err(Error::Io("the source changed while it was decoded".into())),
        });
        if let Err(e) = r {
            log::warn!("no parameter cache {}: {e}: the next load decodes the parameters again", mine.display());
        }
        done(&mine);
    });
    if let Err(e) = spawned {
        log::warn!("no thread to write a parameter cache ({e}): the next load decodes again");
        done(&path);
    }
}

/// Waits until no cache is being written.
pub fn wait_for_writes() {
    let mut w = writing();
    while !w.is_empty() {
        w = WRITTEN.wait(w).unwrap_or_else(|e| e.into_inner());
    }
}

fn points<P: RawPoint>(file: &File, at: u64, n: u64, stop: &AtomicBool) -> Result<Arc<Vec<P>>> {
    let size = std::mem::size_of::<P>() as u64;
    let v = raw::filled(n as usize, POINTS_PER_READ, |first, bytes| {
        if stop.load(Relaxed) {
            return Err(Error::Io(stopped().to_string()));
        }
        file.read_exact_at(bytes, at + first as u64 * size).map_err(|e| Error::Io(e.to_string()))
    })?;
    Ok(Arc::new(v))
}

/// The parameters in the cache at `path`, when it is a good cache of the open `source` as its
/// bytes are now; `None` on any mismatch or damage, or once `stop` is set.
pub fn read(path: &Path, source: &File, stop: &AtomicBool) -> Option<Parameters<Bls12>> {
    let file = open_regular(path).ok()?;
    let mut h = [0u8; BODY as usize];
    file.read_exact_at(&mut h, 0).ok()?;
    let header = Header::decode(&h)?;
    let (offsets, end) = header.offsets()?;
    if header.source.len != source.metadata().ok()?.len() || file.metadata().ok()?.len() != end {
        return None;
    }
    let (p, digest) = rayon::join(
        || -> Option<Parameters<Bls12>> {
            let mut vk = vec![0u8; (offsets[0] - BODY) as usize];
            file.read_exact_at(&mut vk, BODY).ok()?;
            let [nh, nl, na, nb1, nb2] = header.counts;
            let p = Parameters {
                vk: VerifyingKey::read(&vk[..header.vk_bytes as usize]).ok()?,
                h: points::<G1Affine>(&file, offsets[0], nh, stop).ok()?,
                l: points::<G1Affine>(&file, offsets[1], nl, stop).ok()?,
                a: points::<G1Affine>(&file, offsets[2], na, stop).ok()?,
                b_g1: points::<G1Affine>(&file, offsets[3], nb1, stop).ok()?,
                b_g2: points::<G2Affine>(&file, offsets[4], nb2, stop).ok()?,
            };
            let mut body = blake3::Hasher::new();
            body.update(&vk);
            for v in vectors(&p) {
                body.update_rayon(v);
            }
            (*body.finalize().as_bytes() == header.body_sum).then_some(p)
        },
        || Source::of(source, stop).ok(),
    );
    (digest? == header.source).then_some(p?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::{Family, Synthetic};
    use crate::params::read_params;
    use std::time::Duration;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("cuzk-params-cache-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// Parameters written to `<dir>/s.params`, and their bytes.
    fn written(d: &Path, seed: u64) -> (PathBuf, Parameters<Bls12>, Vec<u8>) {
        let pce = crate::pce::extract(Synthetic::new(Family::Sha256Chain, 3000, 1).blank()).unwrap();
        let params = crate::params::dummy_params(&pce, seed);
        let path = d.join("s.params");
        let mut bytes = Vec::new();
        params.write(&mut bytes).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        (path, params, bytes)
    }

    fn cached(source_path: &Path) -> Option<Parameters<Bls12>> {
        read(&path_of(source_path), &File::open(source_path).unwrap(), &AtomicBool::new(false))
    }

    #[test]
    fn a_cache_is_used_only_while_it_is_whole_and_matches_its_source() {
        let d = dir("match");
        let (source_path, params, bytes) = written(&d, 8);
        let cache = path_of(&source_path);

        // The first read decodes and leaves the cache (written in the background); it reads
        // back equal, for checked loads too.
        assert!(read_params(&source_path, false).unwrap() == params);
        wait_for_writes();
        assert!(cached(&source_path).is_some_and(|p| p == params));
        assert!(read_params(&source_path, true).unwrap() == params);

        // Any damage is a miss, and the next read repairs the cache.
        let good = std::fs::read(&cache).unwrap();
        for (what, at) in [("header", 20), ("vk", BODY as usize + 5), ("points", good.len() - 7)] {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            std::fs::write(&cache, &bad).unwrap();
            assert!(cached(&source_path).is_none(), "{what}");
            assert!(read_params(&source_path, false).unwrap() == params);
            wait_for_writes();
            assert!(cached(&source_path).is_some(), "{what}: rewritten");
        }
        std::fs::write(&cache, &good[..good.len() - 1]).unwrap();
        assert!(cached(&source_path).is_none(), "truncated");

        // A source changed in place by one byte, its modification time set back, is never
        // served from the cache: it is decoded, and refused as a decoding refuses it.
        std::fs::write(&cache, &good).unwrap();
        let mtime = std::fs::metadata(&source_path).unwrap().modified().unwrap();
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        std::fs::write(&source_path, &flipped).unwrap();
        File::options().write(true).open(&source_path).unwrap().set_modified(mtime).unwrap();
        assert!(cached(&source_path).is_none(), "stale");
        match read_params(&source_path, false) {
            Err(Error::BadParamsFile(m)) => assert!(m.contains("not a valid curve point"), "{m}"),
            other => panic!("{:?}", other.map(|_| ())),
        }
        std::fs::remove_dir_all(d).unwrap();
    }

    /// The checksums find damage, not forgery: a checked load checks the points a cache holds
    /// and decodes the source instead when one is outside its subgroup.
    #[test]
    fn a_checked_load_does_not_take_a_forged_caches_word() {
        let d = dir("forged");
        let (source_path, params, _) = written(&d, 9);
        let mut forged = params.clone();
        Arc::make_mut(&mut forged.h)[1] = crate::params::srs::tests::off_subgroup_point();
        let stop = AtomicBool::new(false);
        let source = Source::of(&File::open(&source_path).unwrap(), &stop).unwrap();
        write(&path_of(&source_path), source, &forged, &stop).unwrap();
        assert!(read_params(&source_path, false).unwrap() == forged, "unchecked: trusted as the directory is");
        assert!(read_params(&source_path, true).unwrap() == params, "checked: decoded from the source");
        wait_for_writes();
        std::fs::remove_dir_all(d).unwrap();
    }

    /// A hostile directory: a FIFO (or a symlink to one) at the cache's path does not block a
    /// load; a symlink there is replaced, not written through; a dead writer's temporary file
    /// is swept by the next load.
    #[test]
    fn a_planted_fifo_symlink_or_temporary_file_does_no_harm() {
        let d = dir("hostile");
        let (source_path, params, _) = written(&d, 10);
        let cache = path_of(&source_path);
        let fifo = d.join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        for planted in [&fifo, &d.join("link-to-fifo")] {
            if planted != &fifo {
                std::os::unix::fs::symlink(&fifo, planted).unwrap();
            }
            std::os::unix::fs::symlink(planted, &cache).unwrap();
            let (tx, rx) = std::sync::mpsc::channel();
            let p = source_path.clone();
            std::thread::spawn(move || tx.send(read_params(&p, false).map(|_| ())).unwrap());
            rx.recv_timeout(Duration::from_secs(60)).expect("a load blocked on a FIFO").unwrap();
            wait_for_writes();
            assert!(std::fs::symlink_metadata(&cache).unwrap().is_file(), "the symlink was replaced");
            std::fs::remove_file(&cache).unwrap();
        }

        let victim = d.join("victim");
        std::fs::write(&victim, b"untouched").unwrap();
        std::os::unix::fs::symlink(&victim, &cache).unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let mut temp = cache.file_name().unwrap().to_os_string();
        temp.push(format!(".cuzk-tmp.{dead}.0"));
        let temp = d.join(temp);
        std::fs::write(&temp, b"a killed writer's partial cache").unwrap();
        assert!(read_params(&source_path, false).unwrap() == params);
        wait_for_writes();
        assert_eq!(std::fs::read(&victim).unwrap(), b"untouched");
        assert!(!temp.exists(), "swept");
        assert!(cached(&source_path).is_some_and(|p| p == params));
        std::fs::remove_dir_all(d).unwrap();
    }
}
