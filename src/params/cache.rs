//! The decoded form of a `.params` file, kept beside it (`<file>.cuzk-srs`) so that a restart
//! reads the points back as they are in memory instead of decoding them again.
//!
//! Layout (little-endian; `BODY` is the header length):
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 8 | magic `CUZKSRS\0` |
//! | 8 | 4 | format version |
//! | 12 | 4 | flags: 1 = every point was subgroup-checked |
//! | 16 | 24 | the source file: length, modification time (ns since the epoch, i64), inode |
//! | 40 | 32 | the source file: blake3 of 17 samples of 4 KiB (its first and last bytes, and evenly between) |
//! | 72 | 48 | points in h, l, a, b_g1, b_g2 and bytes of the verifying key |
//! | 120 | 32 | blake3 of the body |
//! | 152 | 32 | blake3 of bytes 0..152 |
//!
//! The body: the verifying key in bellperson's encoding, zero-padded to 64 bytes, then the
//! points of h, l, a, b_g1 (96 bytes each) and b_g2 (192 bytes each) as this build holds them in
//! memory. A cache is used only when its header, its checksums and its size are right and it
//! describes the source file as it is now (length, modification time, inode, samples of its
//! bytes: file times can be coarser than two quick rewrites of one file); anything else is
//! a miss, and the source is decoded again and the cache rewritten. It holds only what the
//! source holds, so a cache that cannot be written (read-only directory, full disk) only costs
//! the next start its decoding. It is written in the background ([`write_in_background`]):
//! the load that decoded the file returns without waiting for the disk.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

use bellperson::groth16::{Parameters, VerifyingKey};
use blstrs::{Bls12, G1Affine, G2Affine};

use super::raw::{self, RawPoint};
use crate::{Error, Result};

const MAGIC: [u8; 8] = *b"CUZKSRS\0";
const VERSION: u32 = 1;
const FLAG_CHECKED: u32 = 1;
const BODY: u64 = 184;
/// Samples of the source that its identity includes, and their size.
const SAMPLES: u64 = 17;
const SAMPLE_BYTES: u64 = 4096;
const ALIGN: u64 = 64;
const POINTS_PER_READ: usize = 1 << 14;

/// Where a source file's cache lives.
pub fn path_of(source: &Path) -> PathBuf {
    let mut name = source.file_name().unwrap_or_default().to_os_string();
    name.push(".cuzk-srs");
    source.with_file_name(name)
}

/// What a cache must match of its source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    len: u64,
    mtime_ns: i64,
    inode: u64,
    samples: [u8; 32],
}

impl Source {
    /// The identity of the open file `f` now.
    pub fn of(f: &File) -> std::io::Result<Source> {
        let meta = f.metadata()?;
        let len = meta.len();
        let mut hash = blake3::Hasher::new();
        let mut block = vec![0u8; SAMPLE_BYTES.min(len) as usize];
        for k in 0..SAMPLES {
            let at = (len - block.len() as u64) / (SAMPLES - 1) * k;
            f.read_exact_at(&mut block, at)?;
            hash.update(&block);
        }
        Ok(Source {
            len,
            mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            inode: meta.ino(),
            samples: *hash.finalize().as_bytes(),
        })
    }
}

struct Header {
    checked: bool,
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
        h[12..16].copy_from_slice(&(if self.checked { FLAG_CHECKED } else { 0 }).to_le_bytes());
        h[16..24].copy_from_slice(&self.source.len.to_le_bytes());
        h[24..32].copy_from_slice(&self.source.mtime_ns.to_le_bytes());
        h[32..40].copy_from_slice(&self.source.inode.to_le_bytes());
        h[40..72].copy_from_slice(&self.source.samples);
        for (i, c) in self.counts.iter().chain([&self.vk_bytes]).enumerate() {
            h[72 + 8 * i..80 + 8 * i].copy_from_slice(&c.to_le_bytes());
        }
        h[120..152].copy_from_slice(&self.body_sum);
        let sum = *blake3::hash(&h[..152]).as_bytes();
        h[152..184].copy_from_slice(&sum);
        h
    }

    /// The header, if it is one of this version with a right checksum.
    fn decode(h: &[u8; BODY as usize]) -> Option<Header> {
        let ok = h[0..8] == MAGIC
            && h[8..12] == VERSION.to_le_bytes()
            && h[152..184] == *blake3::hash(&h[..152]).as_bytes()
            && cfg!(target_endian = "little");
        ok.then(|| Header {
            checked: u32::from_le_bytes(h[12..16].try_into().expect("4 bytes")) & FLAG_CHECKED != 0,
            source: Source {
                len: u64_at(h, 16),
                mtime_ns: u64_at(h, 24) as i64,
                inode: u64_at(h, 32),
                samples: h[40..72].try_into().expect("32 bytes"),
            },
            counts: std::array::from_fn(|i| u64_at(h, 72 + 8 * i)),
            vk_bytes: u64_at(h, 112),
            body_sum: h[120..152].try_into().expect("32 bytes"),
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

/// Writes the cache of `p`, decoded from `source` (`checked`: with subgroup checks), beside
/// it: to a temporary file, synced, then renamed over any older cache.
pub fn write(path: &Path, source: Source, p: &Parameters<Bls12>, checked: bool) -> Result<()> {
    let vk = vk_encoding(&p.vk);
    let mut body = blake3::Hasher::new();
    let pad = vec![0u8; ((BODY + vk.len() as u64).div_ceil(ALIGN) * ALIGN - BODY) as usize - vk.len()];
    body.update(&vk);
    body.update(&pad);
    for v in vectors(p) {
        body.update_rayon(v);
    }
    let header = Header {
        checked,
        source,
        counts: [p.h.len(), p.l.len(), p.a.len(), p.b_g1.len(), p.b_g2.len()].map(|n| n as u64),
        vk_bytes: vk.len() as u64,
        body_sum: *body.finalize().as_bytes(),
    };
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let put = || -> std::io::Result<()> {
        let mut f = std::io::BufWriter::with_capacity(8 << 20, File::create(&tmp)?);
        f.write_all(&header.encode())?;
        f.write_all(&vk)?;
        f.write_all(&pad)?;
        for v in vectors(p) {
            f.write_all(v)?;
        }
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    put().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::Io(format!("writing {}: {e}", path.display()))
    })
}

/// The caches being written now: one writer per cache file at a time.
static WRITING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static WRITTEN: Condvar = Condvar::new();

fn writing() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    WRITING.lock().unwrap_or_else(|e| e.into_inner())
}

/// [`write`]s the cache of `p` on a thread of its own, which holds the points (an `Arc` of each
/// query: parameters unloaded meanwhile are freed when it ends); a failure is only logged.
/// Nothing is started when that cache is being written already.
pub fn write_in_background(path: PathBuf, source: Source, p: Parameters<Bls12>, checked: bool) {
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
        if let Err(e) = write(&mine, source, &p, checked) {
            log::warn!("{e}: the next load decodes the parameters again");
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

fn points<P: RawPoint>(file: &File, at: u64, n: u64) -> Result<Arc<Vec<P>>> {
    let size = std::mem::size_of::<P>() as u64;
    let v = raw::filled(n as usize, POINTS_PER_READ, |first, bytes| {
        file.read_exact_at(bytes, at + first as u64 * size).map_err(|e| Error::Io(e.to_string()))
    })?;
    Ok(Arc::new(v))
}

/// The parameters in the cache at `path`, when it is a good cache of `source` (decoded with
/// subgroup checks when `checked` is asked for); `None` on any mismatch or damage.
pub fn read(path: &Path, source: Source, checked: bool) -> Option<Parameters<Bls12>> {
    let file = File::open(path).ok()?;
    let mut h = [0u8; BODY as usize];
    file.read_exact_at(&mut h, 0).ok()?;
    let header = Header::decode(&h)?;
    let (offsets, end) = header.offsets()?;
    if header.source != source || (checked && !header.checked) || file.metadata().ok()?.len() != end {
        return None;
    }
    let mut vk = vec![0u8; (offsets[0] - BODY) as usize];
    file.read_exact_at(&mut vk, BODY).ok()?;
    let [nh, nl, na, nb1, nb2] = header.counts;
    let p = Parameters {
        vk: VerifyingKey::read(&vk[..header.vk_bytes as usize]).ok()?,
        h: points::<G1Affine>(&file, offsets[0], nh).ok()?,
        l: points::<G1Affine>(&file, offsets[1], nl).ok()?,
        a: points::<G1Affine>(&file, offsets[2], na).ok()?,
        b_g1: points::<G1Affine>(&file, offsets[3], nb1).ok()?,
        b_g2: points::<G2Affine>(&file, offsets[4], nb2).ok()?,
    };
    let mut body = blake3::Hasher::new();
    body.update(&vk);
    for v in vectors(&p) {
        body.update_rayon(v);
    }
    (*body.finalize().as_bytes() == header.body_sum).then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::{Family, Synthetic};

    #[test]
    fn a_cache_is_used_only_while_it_matches_its_source() {
        let dir = std::env::temp_dir().join(format!("cuzk-params-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pce = crate::pce::extract(Synthetic::new(Family::Sha256Chain, 3000, 1).blank()).unwrap();
        let params = crate::params::dummy_params(&pce, 8);
        let source_path = dir.join("s.params");
        let mut bytes = Vec::new();
        params.write(&mut bytes).unwrap();
        std::fs::write(&source_path, &bytes).unwrap();
        let cache = path_of(&source_path);
        let source = || Source::of(&File::open(&source_path).unwrap()).unwrap();

        // The first read decodes and leaves the cache (written in the background); it reads
        // back equal.
        assert!(crate::params::read_params(&source_path, false).unwrap() == params);
        wait_for_writes();
        assert!(read(&cache, source(), false).is_some_and(|p| p == params));
        // An unchecked cache does not serve a checked load; a checked read rewrites it checked.
        assert!(read(&cache, source(), true).is_none());
        assert!(crate::params::read_params(&source_path, true).unwrap() == params);
        wait_for_writes();
        assert!(read(&cache, source(), true).is_some_and(|p| p == params));

        // Any damage is a miss, and the next read repairs the cache.
        let good = std::fs::read(&cache).unwrap();
        for (what, at) in [("header", 20), ("vk", BODY as usize + 5), ("points", good.len() - 7)] {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            std::fs::write(&cache, &bad).unwrap();
            assert!(read(&cache, source(), false).is_none(), "{what}");
            assert!(crate::params::read_params(&source_path, false).unwrap() == params);
            wait_for_writes();
            assert!(read(&cache, source(), false).is_some(), "{what}: rewritten");
        }
        std::fs::write(&cache, &good[..good.len() - 1]).unwrap();
        assert!(read(&cache, source(), false).is_none(), "truncated");

        // A source rewritten in place (same length and inode) makes it stale, by its new time
        // or, within the file system's time granularity, by its bytes.
        std::fs::write(&cache, &good).unwrap();
        let old = source();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&source_path, &bytes).unwrap();
        assert_ne!(old, source());
        assert!(read(&cache, source(), false).is_none(), "stale");
        let mut other = bytes.clone();
        other[3] ^= 1;
        std::fs::write(&source_path, &other).unwrap();
        let same_time = Source { mtime_ns: source().mtime_ns, ..old };
        assert_ne!(same_time, source(), "the samples tell them apart");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
