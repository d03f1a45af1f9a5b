//! The `.pce` file: a PCE saved once (atomically), read back at every start —
//! into memory by default, or mapped and used in place ([`Access`]).
//!
//! # Layout (format versions 1 and 2, little-endian)
//!
//! A 1024-byte header (its fields: `src/pce/header.rs`), then ten sections, in
//! this order: A row pointers (u32), A words (u32), the same for B and C, the
//! dictionary (32-byte canonical little-endian scalars), and the a_aux,
//! b_input, b_aux bitmaps (u64 words, Lsb0); version 2 adds the circuit's
//! witness program last (`src/pce/program/stored.rs`), which a PCE saved with
//! its program carries. The layout is fully determined by
//! the counts: each section starts at the first 64-byte boundary after the
//! previous one (zero padding between) and the file ends exactly where the
//! last one does. 64 bytes keep every array cache-line aligned (and so aligned
//! for its type in a 64-byte aligned buffer or a page-aligned mapping) while a
//! tiny circuit's file stays a few KB.
//!
//! # Trust
//!
//! The header checksum, the layout, and every structural property the
//! evaluator and prover rely on ([`validate`]: row pointers, columns, tags,
//! dictionary indices, nnz, densities) are checked on every load; a file that
//! passes can never make the evaluator (plain Rust indexing) panic. The
//! per-section checksums — a pass over every byte — are checked when asked
//! (the C API's default); trusted local files can skip them. The witness
//! program's section is always checked, against its checksum and structurally
//! ([`super::program`]'s `check`), before its program is used: the verdict
//! kept beside the file (`<file>.vouched`, [`super::program`]'s `vouched`)
//! is about those exact bytes.
//!
//! Read into memory ([`Access::Read`]), a loaded PCE no longer depends on its
//! file: the file may be rewritten, truncated or removed. Mapped
//! ([`Access::Map`]), it depends on the file staying as it was validated — see
//! [`Access::Map`] for what happens otherwise.
//!
//! **Why blake3**: it is the fastest widely used *cryptographic* hash (SIMD:
//! SSE4.1/AVX2/AVX-512/NEON, several GB/s per core, and tree-parallel over rayon
//! for a 25 GiB file), so one hash serves both as a corruption check and as a
//! collision-resistant fingerprint of the matrices; it is well maintained (the
//! BLAKE3 team, audited, no unsafe API surface for us) and already a
//! dependency. xxh3 is faster per core but is not collision resistant, so the
//! fingerprint would need a second hash.
//!
//! The fingerprint is a hash of the dimensions and of each section's checksum,
//! i.e. of the whole content, independent of the layout: [`fingerprint`] of a
//! freshly extracted PCE equals the one stored in its file.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Arc, Mutex, Weak};

use blstrs::Scalar;
use ff::PrimeField;
use rayon::prelude::*;

pub use super::bytes::FileBytes;
use super::bytes::Line;
pub use super::bytes::ALIGN;
use super::header::{bad_file, identity, sec, Dims, Header, SectionSum};
pub use super::header::{FORMAT_VERSION, HEADER_LEN, MAGIC, MAX_ID_LEN, SECTIONS, SECTION_NAMES};
use super::matrix::{Array, CsrMatrix};
use super::program::stored::{self, Stored};
use super::program::trust::ProgramSlot;
use super::program::vouched::Sidecar;
use super::system::{Bitmap, Densities, Pce};
pub use super::validate::validate;
use crate::{Error, Result};

/// How a loaded `.pce` file's bytes are held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Access {
    /// Read into memory (the default). The loaded PCE owns its bytes (they
    /// count as [`crate::mem::Owner::Pce`]): the file may then be rewritten,
    /// truncated or removed without effect on it.
    #[default]
    Read,
    /// Mapped and used in place: the pages are shared with the page cache
    /// (and with other processes mapping the file) and reclaimable, counted as
    /// [`crate::mem::Owner::PceMapped`]. The hazard: the file must stay as it
    /// was while the PCE is loaded — replaced only by rename, as [`save`]
    /// does. A truncation, or an I/O error when a reclaimed page is read
    /// again, is a SIGBUS that kills the process in the middle of a proof; a
    /// rewrite in place (`cp other.pce this.pce`) changes the matrices under
    /// the prover after they were validated.
    Map,
}

/// A PCE loaded from a file, with the identity the file carried.
#[derive(Debug)]
pub struct LoadedPce {
    pub pce: Pce,
    pub circuit_id: String,
    pub fingerprint: [u8; 32],
}

/// blake3 of a byte slice, tree-parallel over rayon when it is large.
fn checksum(bytes: &[u8]) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    if bytes.len() >= 1 << 20 {
        h.update_rayon(bytes);
    } else {
        h.update(bytes);
    }
    *h.finalize().as_bytes()
}

/// The dictionary as the file stores it: canonical little-endian scalars.
fn dict_bytes(dict: &[Scalar]) -> Vec<u8> {
    let mut out = Vec::with_capacity(dict.len() * 32);
    for s in dict {
        out.extend_from_slice(&s.to_repr());
    }
    out
}

/// The ten sections of a PCE as byte slices, in file order (`dict` is
/// [`dict_bytes`] of its dictionary).
fn section_bytes<'a>(pce: &'a Pce, dict: &'a [u8]) -> [&'a [u8]; SECTIONS] {
    let d = &pce.density;
    [
        bytemuck::cast_slice(&pce.a.row_ptr[..]),
        bytemuck::cast_slice(&pce.a.words[..]),
        bytemuck::cast_slice(&pce.b.row_ptr[..]),
        bytemuck::cast_slice(&pce.b.words[..]),
        bytemuck::cast_slice(&pce.c.row_ptr[..]),
        bytemuck::cast_slice(&pce.c.words[..]),
        dict,
        bytemuck::cast_slice(&d.a_aux.words[..]),
        bytemuck::cast_slice(&d.b_input.words[..]),
        bytemuck::cast_slice(&d.b_aux.words[..]),
    ]
}

/// Length and checksum of each section, hashed in parallel.
fn section_sums(sections: &[&[u8]; SECTIONS]) -> [SectionSum; SECTIONS] {
    let sums: Vec<[u8; 32]> = sections.par_iter().map(|s| checksum(s)).collect();
    std::array::from_fn(|i| SectionSum { len: sections[i].len() as u64, checksum: sums[i] })
}

/// The fingerprint of a PCE: blake3 (keyed by a context string) over its
/// dimensions and the blake3 of each of its arrays. Equal for a PCE and for the
/// file it was saved to and loaded from.
pub fn fingerprint(pce: &Pce) -> [u8; 32] {
    let dict = dict_bytes(&pce.dict);
    super::header::fingerprint_of(&Dims::of(pce), &section_sums(&section_bytes(pce, &dict)))
}

fn little_endian_only() -> Result<()> {
    if cfg!(target_endian = "little") {
        Ok(())
    } else {
        Err(bad_file("the .pce format is little-endian and used in place; this host is big-endian"))
    }
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::Io(format!("{what} {}: {e}", path.display()))
}

/// Writes `pce` to `path` atomically: a temporary file in the same directory,
/// fsync'd, renamed over `path`, and the directory fsync'd. With the witness
/// program its slot holds (loaded or recorded, and not refused by the
/// gadgets) the file is version 2, else version 1. The PCE and its program are
/// checked first, so a file this writes is one [`load`] accepts.
pub fn save(pce: &Pce, circuit_id: &str, path: &Path) -> Result<()> {
    little_endian_only()?;
    if circuit_id.is_empty() || circuit_id.len() > MAX_ID_LEN {
        return Err(Error::InvalidInput(format!(
            "circuit id must be 1 to {MAX_ID_LEN} bytes, got {}",
            circuit_id.len()
        )));
    }
    let refused = |e| match e {
        Error::BadPceFile(m) => Error::InvalidInput(format!("refusing to save an invalid PCE: {m}")),
        e => e,
    };
    validate(pce).map_err(refused)?;
    let program = pce.program.to_save().map(|p| Stored::of(p, pce)).transpose().map_err(refused)?;
    let dict = dict_bytes(&pce.dict);
    let sections = section_bytes(pce, &dict);
    let program_sum = program.as_ref().map(|p| SectionSum { len: p.len(), checksum: p.checksum() });
    let header = Header::new(circuit_id, Dims::of(pce), section_sums(&sections), program_sum)
        .ok_or_else(|| Error::TooLarge("file length overflows".into()))?;
    write_atomically(path, &header, &sections, program.as_ref())
}

/// Writes the header, the sections and the witness program's (zero padded to their offsets)
/// to `path`, whole or not at all ([`crate::files::write_atomically`]).
fn write_atomically(
    path: &Path,
    header: &Header,
    sections: &[&[u8]; SECTIONS],
    program: Option<&Stored>,
) -> Result<()> {
    crate::files::write_atomically(path, header.file_len, |f| {
        let zeros = [0u8; ALIGN];
        let mut pos = HEADER_LEN as u64;
        f.write_all(&header.encode())?;
        for (i, section) in sections.iter().enumerate() {
            let pad = (header.offsets[i] - pos) as usize;
            f.write_all(&zeros[..pad])?;
            // Large writes straight from the arrays: no buffering, no copy.
            f.write_all(section)?;
            pos = header.offsets[i] + section.len() as u64;
        }
        if let (Some(program), Some(at)) = (program, &header.program) {
            f.write_all(&zeros[..(at.offset - pos) as usize])?;
            program.write(f)?;
            pos = at.offset + program.len();
        }
        debug_assert_eq!(pos, header.file_len);
        Ok(())
    })
}

/// Bytes per positioned read when a file is read into memory (the reads run
/// in parallel).
const READ_CHUNK: usize = 16 << 20;

/// Loads the `.pce` file at `path`, read into memory or mapped (`access`),
/// and checks it: see [`load_from`]. A witness program it carries is trusted
/// at once if the verdict beside it (`<path>.vouched`) says this file's
/// program agreed with the gadgets; else a witness decides and writes it there.
pub fn load(path: &Path, expected_id: Option<&str>, verify_checksums: bool, access: Access) -> Result<LoadedPce> {
    little_endian_only()?;
    crate::files::sweep_temps(path);
    let f = crate::files::open_regular(path)?;
    let len = f.metadata().map_err(|e| io_err("reading metadata of", path, e))?.len();
    if len < HEADER_LEN as u64 {
        return Err(bad_file(format!(
            "{}: truncated: {len} bytes, shorter than the {HEADER_LEN}-byte header",
            path.display()
        )));
    }
    let bytes = match access {
        Access::Read => {
            crate::mem::check_room(&format!("reading {}", path.display()), len)?;
            read_all(&f, len, path)?
        }
        Access::Map => {
            // SAFETY: memmap2's `map` is unsafe because the file may change
            // while mapped. The mapping is read-only and its contents are
            // treated as untrusted bytes (everything is validated before
            // use). The remaining hazard — the file truncated or rewritten in
            // place while mapped (SIGBUS, or contents changing under us) — is
            // the caller's to exclude: `Access::Map` is an explicit opt-in
            // whose documentation states it.
            let map =
                unsafe { memmap2::MmapOptions::new().populate().map(&f) }.map_err(|e| io_err("mapping", path, e))?;
            FileBytes::mapped(map)
        }
    };
    load_bytes(bytes, expected_id, verify_checksums, Some(path)).map_err(|e| match e {
        Error::BadPceFile(m) => bad_file(format!("{}: {m}", path.display())),
        e => e,
    })
}

/// The first `len` bytes of `file`, in a 64-byte aligned buffer, by
/// positioned reads in parallel. A file cut short meanwhile is an I/O error.
fn read_all(file: &File, len: u64, path: &Path) -> Result<FileBytes> {
    let len = usize::try_from(len).map_err(|_| Error::TooLarge(format!("{}: {len} bytes", path.display())))?;
    let mut lines: Vec<Line> = bytemuck::zeroed_vec(len.div_ceil(ALIGN));
    bytemuck::cast_slice_mut::<Line, u8>(&mut lines)[..len]
        .par_chunks_mut(READ_CHUNK)
        .enumerate()
        .try_for_each(|(i, chunk)| file.read_exact_at(chunk, (i * READ_CHUNK) as u64))
        .map_err(|e| io_err("reading", path, e))?;
    Ok(FileBytes::read(lines, len))
}

/// Loads a PCE from the bytes of a `.pce` file. The big arrays stay in
/// `bytes` (`Array::File`, shared); only the dictionary is copied (as
/// canonical scalars). A witness program it carries is loaded too (its arrays
/// views of `bytes` as well); with no file to keep a verdict beside, its first
/// witness decides whether it is trusted.
pub fn load_from(bytes: FileBytes, expected_id: Option<&str>, verify_checksums: bool) -> Result<LoadedPce> {
    load_bytes(bytes, expected_id, verify_checksums, None)
}

/// [`load_from`], the verdict on its program kept beside `path` if the bytes are a file's.
fn load_bytes(
    bytes: FileBytes,
    expected_id: Option<&str>,
    verify_checksums: bool,
    path: Option<&Path>,
) -> Result<LoadedPce> {
    little_endian_only()?;
    let header = Header::read(&bytes)?;
    if let Some(want) = expected_id {
        if want != header.circuit_id {
            return Err(bad_file(format!("file is for circuit {:?}, expected {want:?}", header.circuit_id)));
        }
    }
    header.check_consistent(&bytes)?;
    // Every section now lies in the file at an ALIGN'ed offset; with the
    // bytes ALIGN'ed too (a read buffer is, a mapping is page aligned), the
    // typed views of `file_pce` are aligned for their types and never panic.
    if !(bytes.as_ptr() as usize).is_multiple_of(ALIGN) {
        return Err(bad_file("the file's bytes are not 64-byte aligned in memory"));
    }
    if verify_checksums {
        verify_section_checksums(&bytes, &header)?;
    }
    let dict = read_dictionary(&bytes[header.section_range(sec::DICT)])?;
    let bytes = Arc::new(bytes);
    let mut pce = file_pce(&bytes, &header, dict);
    validate(&pce)?;
    if let (Some(program), Some(range)) = (header.program, header.program_range()) {
        if checksum(&bytes[range.clone()]) != program.sum.checksum {
            return Err(bad_file("witness program section checksum mismatch (corrupt data)"));
        }
        let program = stored::load(&bytes, range, &pce)?;
        pce.program = ProgramSlot::loaded(program, path.map(|p| Sidecar::of(p, identity(&bytes))));
    }
    if verify_checksums {
        verified().push(Arc::downgrade(&bytes));
    }
    let Header { circuit_id, fingerprint, .. } = header;
    Ok(LoadedPce { pce, circuit_id, fingerprint })
}

/// The file bytes whose every section's checksum was checked (the `Weak` pins their address
/// while they live).
static VERIFIED: Mutex<Vec<Weak<FileBytes>>> = Mutex::new(Vec::new());

fn verified() -> std::sync::MutexGuard<'static, Vec<Weak<FileBytes>>> {
    let mut all = VERIFIED.lock().unwrap_or_else(|e| e.into_inner());
    all.retain(|w| w.strong_count() > 0);
    all
}

/// Checks the section checksums of the file a loaded PCE was read from (or maps), unless they
/// were checked when it was loaded or since: for a PCE loaded without the check and asked for
/// again with it. A PCE that never was a file (extracted, not saved) has nothing to check.
pub fn ensure_verified(pce: &Pce) -> Result<()> {
    let Array::File { bytes, .. } = &pce.a.row_ptr else { return Ok(()) };
    if verified().iter().any(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(bytes))) {
        return Ok(());
    }
    verify_section_checksums(bytes, &Header::read(bytes)?)?;
    verified().push(Arc::downgrade(bytes));
    Ok(())
}

/// Checks every section against its checksum in the header, in parallel.
fn verify_section_checksums(bytes: &[u8], header: &Header) -> Result<()> {
    let bad_sections: Vec<usize> = (0..SECTIONS)
        .into_par_iter()
        .filter(|&i| checksum(&bytes[header.section_range(i)]) != header.sections[i].checksum)
        .collect();
    match bad_sections.first() {
        Some(&i) => Err(bad_file(format!("{} section checksum mismatch (corrupt data)", SECTION_NAMES[i]))),
        None => Ok(()),
    }
}

/// The dictionary section as scalars, each one canonical.
fn read_dictionary(section: &[u8]) -> Result<Vec<Scalar>> {
    let mut dict = Vec::with_capacity(section.len() / 32);
    for (k, chunk) in section.chunks_exact(32).enumerate() {
        let repr: [u8; 32] = chunk.try_into().unwrap();
        let s: Option<Scalar> = Scalar::from_repr(repr).into();
        dict.push(s.ok_or_else(|| bad_file(format!("dictionary entry {k} is not a canonical scalar")))?);
    }
    Ok(dict)
}

/// The view of section `i` of `bytes` as an array of `T`.
fn file_array<T: bytemuck::Pod>(bytes: &Arc<FileBytes>, header: &Header, i: usize) -> Array<T> {
    let len = header.sections[i].len as usize / std::mem::size_of::<T>();
    Array::File { bytes: bytes.clone(), offset: header.offsets[i] as usize, len }
}

/// The PCE whose arrays are views into `bytes` at the sections `header`
/// names (which [`Header::check_consistent`] has checked lie in it).
fn file_pce(bytes: &Arc<FileBytes>, header: &Header, dict: Vec<Scalar>) -> Pce {
    let dims = &header.dims;
    let matrix = |k: usize| CsrMatrix {
        row_ptr: file_array(bytes, header, sec::row_ptr(k)),
        words: file_array(bytes, header, sec::words(k)),
        nnz: dims.nnz[k],
    };
    let bitmap = |i: usize, len: u64, ones: u64| Bitmap {
        words: file_array(bytes, header, i),
        len: len as usize,
        ones: ones as usize,
    };
    Pce {
        num_inputs: dims.num_inputs as usize,
        num_aux: dims.num_aux as usize,
        a: matrix(0),
        b: matrix(1),
        c: matrix(2),
        dict,
        density: Densities {
            a_aux: bitmap(sec::A_AUX, dims.num_aux, dims.ones[0]),
            b_input: bitmap(sec::B_INPUT, dims.num_inputs, dims.ones[1]),
            b_aux: bitmap(sec::B_AUX, dims.num_aux, dims.ones[2]),
        },
        device_copies: Default::default(),
        program: Default::default(),
    }
}
