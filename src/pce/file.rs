//! The `.pce` file: a PCE saved once, mapped at every start and used in place.
//!
//! # Layout (format version 1, little-endian)
//!
//! ```text
//! offset  size  field
//!      0     8  magic  b"CUZKPCE\0"
//!      8     4  format version (1)
//!     12     4  header length (1024)
//!     16     8  file length
//!     24     8  num_inputs (the ONE included)
//!     32     8  num_aux
//!     40     8  num_constraints (rows of A, B and C)
//!     48    24  nnz of A, B, C
//!     72     8  dictionary length
//!     80    24  population counts of the a_aux, b_input, b_aux bitmaps
//!    104     4  section count (10)
//!    108     4  circuit id length (≤ 256)
//!    112    32  fingerprint
//!    144   256  circuit id, UTF-8, zero padded
//!    400   480  10 sections × {offset u64, byte length u64, blake3 checksum [32]}
//!    880   112  reserved, zero
//!    992    32  blake3 of bytes 0..992 (the header checksum)
//!   1024     …  sections, each at a 64-byte aligned offset, zero padding between
//! ```
//!
//! Sections, in this order: A row pointers (u32), A words (u32), the same for
//! B and C, the dictionary (32-byte canonical little-endian scalars), and the
//! a_aux, b_input, b_aux bitmaps (u64 words, Lsb0). The layout is fully
//! determined by the counts: each section starts at the first 64-byte boundary
//! after the previous one and the file ends exactly where the last one does.
//! 64 bytes keep every array cache-line aligned (and so aligned for its type
//! in a page-aligned mapping) while a tiny circuit's file stays a few KB.
//!
//! # Trust
//!
//! The header checksum, the layout, and every structural property the
//! evaluator and prover rely on ([`validate`]: row pointers, columns, tags,
//! dictionary indices, nnz, densities) are checked on every load; a file that
//! passes can never make the evaluator (plain Rust indexing) panic. The
//! per-section checksums — a pass over every byte — are checked when asked
//! (the API default); trusted local files can skip them.
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
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use blstrs::Scalar;
use ff::PrimeField;
use memmap2::Mmap;
use rayon::prelude::*;

use super::matrix::{decode, Array, Bitmap, CsrMatrix, Densities, Pce, MAX_COLS, TAG_DICT};
use crate::{Error, Result};

/// The first eight bytes of every `.pce` file.
pub const MAGIC: [u8; 8] = *b"CUZKPCE\0";
/// The format this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Bytes before the first section.
pub const HEADER_LEN: usize = 1024;
/// Alignment of every section's offset.
pub const ALIGN: usize = 64;
/// Longest circuit id.
pub const MAX_ID_LEN: usize = 256;
/// Number of sections.
pub const SECTIONS: usize = 10;
/// Section names, in file order.
pub const SECTION_NAMES: [&str; SECTIONS] = [
    "A row pointers",
    "A words",
    "B row pointers",
    "B words",
    "C row pointers",
    "C words",
    "dictionary",
    "a_aux density",
    "b_input density",
    "b_aux density",
];

const OFF_SECTIONS: usize = 400;
const SECTION_ENTRY: usize = 48;
const OFF_RESERVED: usize = OFF_SECTIONS + SECTIONS * SECTION_ENTRY; // 880
const OFF_HEADER_SUM: usize = 992;
const FINGERPRINT_CONTEXT: &str = "cuzk pce fingerprint v1";

/// A PCE loaded from a file, with the identity the file carried.
#[derive(Debug)]
pub struct LoadedPce {
    pub pce: Pce,
    pub circuit_id: String,
    pub fingerprint: [u8; 32],
}

fn bad(msg: impl Into<String>) -> Error {
    Error::BadPceFile(msg.into())
}

fn align_up(x: u64) -> Option<u64> {
    x.checked_add(ALIGN as u64 - 1).map(|v| v & !(ALIGN as u64 - 1))
}

/// The dimensions the header carries besides the sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Dims {
    num_inputs: u64,
    num_aux: u64,
    num_constraints: u64,
    nnz: [u64; 3],
    dict_len: u64,
    ones: [u64; 3],
}

impl Dims {
    fn of(pce: &Pce) -> Dims {
        let d = &pce.density;
        Dims {
            num_inputs: pce.num_inputs as u64,
            num_aux: pce.num_aux as u64,
            num_constraints: pce.num_constraints() as u64,
            nnz: [pce.a.nnz, pce.b.nnz, pce.c.nnz],
            dict_len: pce.dict.len() as u64,
            ones: [d.a_aux.ones as u64, d.b_input.ones as u64, d.b_aux.ones as u64],
        }
    }
}

/// The fingerprint from the dimensions and the section checksums.
fn fingerprint_of(dims: &Dims, sections: &[(u64, [u8; 32]); SECTIONS]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key(FINGERPRINT_CONTEXT);
    for v in [dims.num_inputs, dims.num_aux, dims.num_constraints, dims.dict_len]
        .into_iter()
        .chain(dims.nnz)
        .chain(dims.ones)
    {
        h.update(&v.to_le_bytes());
    }
    for (len, sum) in sections {
        h.update(&len.to_le_bytes());
        h.update(sum);
    }
    *h.finalize().as_bytes()
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

fn dict_bytes(dict: &[Scalar]) -> Vec<u8> {
    let mut out = Vec::with_capacity(dict.len() * 32);
    for s in dict {
        out.extend_from_slice(&s.to_repr());
    }
    out
}

/// The ten sections of a PCE as byte slices (the dictionary converted).
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

fn section_sums(sections: &[&[u8]; SECTIONS]) -> [(u64, [u8; 32]); SECTIONS] {
    let sums: Vec<[u8; 32]> = sections.par_iter().map(|s| checksum(s)).collect();
    std::array::from_fn(|i| (sections[i].len() as u64, sums[i]))
}

/// The fingerprint of a PCE: blake3 (keyed by a context string) over its
/// dimensions and the blake3 of each of its arrays. Equal for a PCE and for the
/// file it was saved to and loaded from.
pub fn fingerprint(pce: &Pce) -> [u8; 32] {
    let dict = dict_bytes(&pce.dict);
    fingerprint_of(&Dims::of(pce), &section_sums(&section_bytes(pce, &dict)))
}

fn little_endian_only() -> Result<()> {
    if cfg!(target_endian = "little") {
        Ok(())
    } else {
        Err(bad("the .pce format is little-endian and mapped in place; this host is big-endian"))
    }
}

fn put_u32(h: &mut [u8], at: usize, v: u32) {
    h[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
fn put_u64(h: &mut [u8], at: usize, v: u64) {
    h[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
fn get_u32(h: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(h[at..at + 4].try_into().unwrap())
}
fn get_u64(h: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(h[at..at + 8].try_into().unwrap())
}

/// Offsets of the sections given their byte lengths, and the file length.
fn layout(lens: &[u64; SECTIONS]) -> Option<([u64; SECTIONS], u64)> {
    let mut offsets = [0u64; SECTIONS];
    let mut end = HEADER_LEN as u64;
    for (i, &len) in lens.iter().enumerate() {
        offsets[i] = align_up(end)?;
        end = offsets[i].checked_add(len)?;
    }
    Some((offsets, end))
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::Io(format!("{what} {}: {e}", path.display()))
}

static TMP_COUNTER: AtomicUsize = AtomicUsize::new(0);

/// Writes `pce` to `path` atomically: a temporary file in the same directory,
/// fsync'd, renamed over `path`, and the directory fsync'd. The PCE is
/// validated first, so a file this writes is one [`load`] accepts.
pub fn save(pce: &Pce, circuit_id: &str, path: &Path) -> Result<()> {
    little_endian_only()?;
    if circuit_id.is_empty() || circuit_id.len() > MAX_ID_LEN {
        return Err(Error::InvalidInput(format!(
            "circuit id must be 1 to {MAX_ID_LEN} bytes, got {}",
            circuit_id.len()
        )));
    }
    validate(pce).map_err(|e| match e {
        Error::BadPceFile(m) => Error::InvalidInput(format!("refusing to save an invalid PCE: {m}")),
        e => e,
    })?;
    let dims = Dims::of(pce);
    let dict = dict_bytes(&pce.dict);
    let sections = section_bytes(pce, &dict);
    let sums = section_sums(&sections);
    let lens: [u64; SECTIONS] = std::array::from_fn(|i| sums[i].0);
    let (offsets, file_len) = layout(&lens).ok_or_else(|| Error::TooLarge("file length overflows".into()))?;

    let mut h = vec![0u8; HEADER_LEN];
    h[0..8].copy_from_slice(&MAGIC);
    put_u32(&mut h, 8, FORMAT_VERSION);
    put_u32(&mut h, 12, HEADER_LEN as u32);
    put_u64(&mut h, 16, file_len);
    put_u64(&mut h, 24, dims.num_inputs);
    put_u64(&mut h, 32, dims.num_aux);
    put_u64(&mut h, 40, dims.num_constraints);
    for i in 0..3 {
        put_u64(&mut h, 48 + 8 * i, dims.nnz[i]);
        put_u64(&mut h, 80 + 8 * i, dims.ones[i]);
    }
    put_u64(&mut h, 72, dims.dict_len);
    put_u32(&mut h, 104, SECTIONS as u32);
    put_u32(&mut h, 108, circuit_id.len() as u32);
    h[112..144].copy_from_slice(&fingerprint_of(&dims, &sums));
    h[144..144 + circuit_id.len()].copy_from_slice(circuit_id.as_bytes());
    for i in 0..SECTIONS {
        let at = OFF_SECTIONS + i * SECTION_ENTRY;
        put_u64(&mut h, at, offsets[i]);
        put_u64(&mut h, at + 8, lens[i]);
        h[at + 16..at + 48].copy_from_slice(&sums[i].1);
    }
    let sum = blake3::hash(&h[..OFF_HEADER_SUM]);
    h[OFF_HEADER_SUM..].copy_from_slice(sum.as_bytes());

    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().ok_or_else(|| Error::InvalidInput(format!("{} has no file name", path.display())))?;
    let tmp = dir.join(format!(
        "{}.tmp.{}.{}",
        name.to_string_lossy(),
        std::process::id(),
        TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let write = || -> Result<()> {
        let mut f = File::create(&tmp).map_err(|e| io_err("creating", &tmp, e))?;
        let zeros = [0u8; ALIGN];
        let mut pos = HEADER_LEN as u64;
        f.write_all(&h).map_err(|e| io_err("writing", &tmp, e))?;
        for i in 0..SECTIONS {
            let pad = (offsets[i] - pos) as usize;
            f.write_all(&zeros[..pad]).map_err(|e| io_err("writing", &tmp, e))?;
            // Large writes straight from the arrays: no buffering, no copy.
            f.write_all(sections[i]).map_err(|e| io_err("writing", &tmp, e))?;
            pos = offsets[i] + lens[i];
        }
        debug_assert_eq!(pos, file_len);
        f.sync_all().map_err(|e| io_err("fsync of", &tmp, e))?;
        drop(f);
        std::fs::rename(&tmp, path).map_err(|e| io_err("renaming onto", path, e))?;
        // Make the rename itself durable.
        File::open(&dir).and_then(|d| d.sync_all()).map_err(|e| io_err("fsync of directory", &dir, e))?;
        Ok(())
    };
    let r = write();
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

/// Maps `path` and loads it: see [`load_from_map`].
pub fn load(path: &Path, expected_id: Option<&str>, verify_checksums: bool) -> Result<LoadedPce> {
    little_endian_only()?;
    let f = File::open(path).map_err(|e| io_err("opening", path, e))?;
    let len = f.metadata().map_err(|e| io_err("reading metadata of", path, e))?.len();
    if len < HEADER_LEN as u64 {
        return Err(bad(format!(
            "{}: truncated: {len} bytes, shorter than the {HEADER_LEN}-byte header",
            path.display()
        )));
    }
    // SAFETY: the mapping is read-only and private to this process's view. Its
    // contents are treated as untrusted bytes (everything is validated before
    // use). The remaining hazard of any file mapping — another process
    // truncating or rewriting the file while mapped (SIGBUS, or contents
    // changing under us) — is excluded by convention: `.pce` files are only
    // ever replaced by rename, never modified in place.
    let map = unsafe { memmap2::MmapOptions::new().populate().map(&f) }.map_err(|e| io_err("mapping", path, e))?;
    load_from_map(Arc::new(map), expected_id, verify_checksums).map_err(|e| match e {
        Error::BadPceFile(m) => bad(format!("{}: {m}", path.display())),
        e => e,
    })
}

/// Loads a PCE from a mapping of a `.pce` file (or any read-only mapping, e.g.
/// an anonymous one in tests and fuzzing). The big arrays stay in the mapping
/// (`Array::Mapped`); only the dictionary is copied (as canonical scalars).
pub fn load_from_map(map: Arc<Mmap>, expected_id: Option<&str>, verify_checksums: bool) -> Result<LoadedPce> {
    little_endian_only()?;
    let bytes: &[u8] = &map;
    if bytes.len() < 12 {
        return Err(bad(format!("truncated: {} bytes, not even a magic and version", bytes.len())));
    }
    if bytes[..8] != MAGIC {
        return Err(bad(format!("not a cuzk PCE file: magic {:02x?}", &bytes[..8])));
    }
    let version = get_u32(bytes, 8);
    if version != FORMAT_VERSION {
        return Err(bad(format!("format version {version}, this build reads version {FORMAT_VERSION}")));
    }
    if bytes.len() < HEADER_LEN {
        return Err(bad(format!("truncated: {} bytes, shorter than the {HEADER_LEN}-byte header", bytes.len())));
    }
    let h = &bytes[..HEADER_LEN];
    if blake3::hash(&h[..OFF_HEADER_SUM]).as_bytes() != &h[OFF_HEADER_SUM..] {
        return Err(bad("header checksum mismatch (corrupt header)"));
    }
    let header_len = get_u32(h, 12);
    if header_len as usize != HEADER_LEN {
        return Err(bad(format!("header length {header_len}, expected {HEADER_LEN}")));
    }
    let file_len = get_u64(h, 16);
    if file_len != bytes.len() as u64 {
        return Err(bad(format!(
            "file is {} bytes, its header says {file_len} ({})",
            bytes.len(),
            if (bytes.len() as u64) < file_len { "truncated" } else { "trailing bytes" }
        )));
    }
    let nsec = get_u32(h, 104);
    if nsec as usize != SECTIONS {
        return Err(bad(format!("{nsec} sections, expected {SECTIONS}")));
    }
    let id_len = get_u32(h, 108) as usize;
    if id_len == 0 || id_len > MAX_ID_LEN {
        return Err(bad(format!("circuit id length {id_len} out of 1..={MAX_ID_LEN}")));
    }
    if h[144 + id_len..OFF_SECTIONS].iter().any(|&b| b != 0) || h[OFF_RESERVED..OFF_HEADER_SUM].iter().any(|&b| b != 0)
    {
        return Err(bad("non-zero padding or reserved bytes in the header"));
    }
    let circuit_id =
        std::str::from_utf8(&h[144..144 + id_len]).map_err(|_| bad("circuit id is not UTF-8"))?.to_string();
    if let Some(want) = expected_id {
        if want != circuit_id {
            return Err(bad(format!("file is for circuit {circuit_id:?}, expected {want:?}")));
        }
    }
    let dims = Dims {
        num_inputs: get_u64(h, 24),
        num_aux: get_u64(h, 32),
        num_constraints: get_u64(h, 40),
        nnz: [get_u64(h, 48), get_u64(h, 56), get_u64(h, 64)],
        dict_len: get_u64(h, 72),
        ones: [get_u64(h, 80), get_u64(h, 88), get_u64(h, 96)],
    };
    let mut fp = [0u8; 32];
    fp.copy_from_slice(&h[112..144]);
    let mut offsets = [0u64; SECTIONS];
    let mut sums = [(0u64, [0u8; 32]); SECTIONS];
    for i in 0..SECTIONS {
        let at = OFF_SECTIONS + i * SECTION_ENTRY;
        offsets[i] = get_u64(h, at);
        sums[i].0 = get_u64(h, at + 8);
        sums[i].1.copy_from_slice(&h[at + 16..at + 48]);
    }
    if fingerprint_of(&dims, &sums) != fp {
        return Err(bad("fingerprint does not match the header's dimensions and checksums"));
    }

    // Dimensions, then the exact layout they imply.
    if dims.num_inputs == 0 {
        return Err(bad("no inputs: a PCE always has the ONE input"));
    }
    let cols =
        dims.num_inputs.checked_add(dims.num_aux).filter(|&c| c <= MAX_COLS as u64).ok_or_else(|| {
            bad(format!("{} inputs + {} aux exceed {MAX_COLS} columns", dims.num_inputs, dims.num_aux))
        })?;
    let lens: [u64; SECTIONS] = std::array::from_fn(|i| sums[i].0);
    let rp_len = dims
        .num_constraints
        .checked_add(1)
        .and_then(|r| r.checked_mul(4))
        .ok_or_else(|| bad(format!("{} constraints overflow", dims.num_constraints)))?;
    let bitmap_len = |n: u64| n.div_ceil(64) * 8;
    let dict_bytes =
        dims.dict_len.checked_mul(32).ok_or_else(|| bad(format!("dictionary length {} overflows", dims.dict_len)))?;
    // (section, exact byte length if the dimensions fix it, element size)
    let expect: [(usize, Option<u64>, u64); SECTIONS] = [
        (0, Some(rp_len), 4),
        (1, None, 4),
        (2, Some(rp_len), 4),
        (3, None, 4),
        (4, Some(rp_len), 4),
        (5, None, 4),
        (6, Some(dict_bytes), 32),
        (7, Some(bitmap_len(dims.num_aux)), 8),
        (8, Some(bitmap_len(dims.num_inputs)), 8),
        (9, Some(bitmap_len(dims.num_aux)), 8),
    ];
    for (i, want, elem) in expect {
        let len = lens[i];
        if len % elem != 0 {
            return Err(bad(format!("{} section is {len} bytes, not a multiple of {elem}", SECTION_NAMES[i])));
        }
        if let Some(w) = want.filter(|&w| w != len) {
            return Err(bad(format!("{} section is {len} bytes, the dimensions imply {w}", SECTION_NAMES[i])));
        }
    }
    let (want_offsets, want_len) = layout(&lens).ok_or_else(|| bad("section lengths overflow the file length"))?;
    if want_len != file_len {
        return Err(bad(format!("sections end at {want_len}, the file is {file_len} bytes")));
    }
    for i in 0..SECTIONS {
        if offsets[i] != want_offsets[i] {
            return Err(bad(format!(
                "{} section at offset {}, expected {}",
                SECTION_NAMES[i], offsets[i], want_offsets[i]
            )));
        }
        // Zero padding before each section (not covered by section checksums).
        let pad_start = if i == 0 { HEADER_LEN as u64 } else { offsets[i - 1] + lens[i - 1] };
        if bytes[pad_start as usize..offsets[i] as usize].iter().any(|&b| b != 0) {
            return Err(bad(format!("non-zero padding before the {} section", SECTION_NAMES[i])));
        }
    }
    // From here every section is in bounds and 64-byte aligned within a
    // page-aligned mapping, so the views below cannot panic.
    let base = map.as_ptr() as usize;
    if base % ALIGN != 0 {
        return Err(bad("mapping is not 64-byte aligned"));
    }
    let sec = |i: usize| &bytes[offsets[i] as usize..(offsets[i] + lens[i]) as usize];

    if verify_checksums {
        let idx: Vec<usize> = (0..SECTIONS).collect();
        let bad_sections: Vec<usize> = idx.into_par_iter().filter(|&i| checksum(sec(i)) != sums[i].1).collect();
        if let Some(&i) = bad_sections.first() {
            return Err(bad(format!("{} section checksum mismatch (corrupt data)", SECTION_NAMES[i])));
        }
    }

    let mut dict = Vec::with_capacity(dims.dict_len as usize);
    for (k, chunk) in sec(6).chunks_exact(32).enumerate() {
        let repr: [u8; 32] = chunk.try_into().unwrap();
        let s: Option<Scalar> = Scalar::from_repr(repr).into();
        dict.push(s.ok_or_else(|| bad(format!("dictionary entry {k} is not a canonical scalar")))?);
    }
    let arr_u32 =
        |i: usize| Array::<u32>::Mapped { map: map.clone(), offset: offsets[i] as usize, len: (lens[i] / 4) as usize };
    let arr_u64 =
        |i: usize| Array::<u64>::Mapped { map: map.clone(), offset: offsets[i] as usize, len: (lens[i] / 8) as usize };
    let matrix = |k: usize| CsrMatrix { row_ptr: arr_u32(2 * k), words: arr_u32(2 * k + 1), nnz: dims.nnz[k] };
    let bitmap = |i: usize, len: u64, ones: u64| Bitmap { words: arr_u64(i), len: len as usize, ones: ones as usize };
    let pce = Pce {
        num_inputs: dims.num_inputs as usize,
        num_aux: dims.num_aux as usize,
        a: matrix(0),
        b: matrix(1),
        c: matrix(2),
        dict,
        density: Densities {
            a_aux: bitmap(7, dims.num_aux, dims.ones[0]),
            b_input: bitmap(8, dims.num_inputs, dims.ones[1]),
            b_aux: bitmap(9, dims.num_aux, dims.ones[2]),
        },
    };
    debug_assert_eq!(cols as usize, pce.num_inputs + pce.num_aux);
    validate(&pce)?;
    Ok(LoadedPce { pce, circuit_id, fingerprint: fp })
}

/// Rows per validation task.
const ROWS_PER_TASK: usize = 1 << 15;

/// A bitmap being rebuilt by several threads.
struct AtomicBits(Vec<AtomicU64>);

impl AtomicBits {
    fn new(len: usize) -> Self {
        AtomicBits((0..len.div_ceil(64)).map(|_| AtomicU64::new(0)).collect())
    }
    #[inline(always)]
    fn set(&self, i: usize) {
        let (w, bit) = (&self.0[i / 64], 1u64 << (i % 64));
        // Most variables appear several times: read before the locked or.
        if w.load(Ordering::Relaxed) & bit == 0 {
            w.fetch_or(bit, Ordering::Relaxed);
        }
    }
    fn matches(&self, b: &Bitmap) -> bool {
        b.words.len() == self.0.len() && self.0.iter().zip(b.words.iter()).all(|(x, y)| x.load(Ordering::Relaxed) == *y)
    }
}

/// Which density bitmaps a matrix feeds: A its aux, B inputs and aux, C none.
#[derive(Clone, Copy)]
enum Dens<'a> {
    None,
    Aux(&'a AtomicBits),
    Both(&'a AtomicBits, &'a AtomicBits),
}

/// Scans rows `r` of a matrix. Fast path: errors are accumulated in a flag
/// (no early exits, few branches) and the density bits set; when the flag is
/// raised the caller rescans with [`row_error`] for the message.
#[inline(always)]
fn scan_rows<const MODE: u8>(
    rp: &[u32],
    words: &[u32],
    r: std::ops::Range<usize>,
    ni: usize,
    cols: u32,
    dict_len: usize,
    dens: Dens,
) -> (bool, u64) {
    let (mut bad, mut nnz) = (false, 0u64);
    for i in r {
        let (s, e) = (rp[i] as usize, rp[i + 1] as usize);
        if s > e || e > words.len() {
            return (true, nnz);
        }
        let row = &words[s..e];
        let mut k = 0;
        while k < row.len() {
            let (tag, col) = decode(row[k]);
            bad |= col >= cols;
            bad |= tag > TAG_DICT;
            if tag == TAG_DICT {
                k += 1;
                bad |= row.get(k).map_or(true, |&d| d as usize >= dict_len);
            }
            let col = col as usize;
            match (MODE, dens) {
                (1, Dens::Aux(aux)) if col >= ni && col < cols as usize => aux.set(col - ni),
                (2, Dens::Both(inp, aux)) if col < cols as usize => {
                    if col < ni {
                        inp.set(col)
                    } else {
                        aux.set(col - ni)
                    }
                }
                _ => {}
            }
            nnz += 1;
            k += 1;
        }
    }
    (bad, nnz)
}

/// The first error in rows `r`, named.
fn row_error(name: &str, rp: &[u32], words: &[u32], r: std::ops::Range<usize>, cols: usize, dict_len: usize) -> Error {
    for i in r {
        let (s, e) = (rp[i] as usize, rp[i + 1] as usize);
        if s > e || e > words.len() {
            return bad(format!("{name} row {i}: row pointers {s}..{e} not monotone within {} words", words.len()));
        }
        let row = &words[s..e];
        let mut k = 0;
        while k < row.len() {
            let (tag, col) = decode(row[k]);
            if col as usize >= cols {
                return bad(format!("{name} row {i}: column {col} out of {cols} columns"));
            }
            if tag > TAG_DICT {
                return bad(format!("{name} row {i}: invalid coefficient tag {tag}"));
            }
            if tag == TAG_DICT {
                k += 1;
                match row.get(k) {
                    None => return bad(format!("{name} row {i}: dictionary tag on the row's last word")),
                    Some(&d) if d as usize >= dict_len => {
                        return bad(format!("{name} row {i}: dictionary index {d} out of {dict_len}"))
                    }
                    _ => {}
                }
            }
            k += 1;
        }
    }
    bad(format!("{name}: inconsistent rows"))
}

/// Checks one matrix and records its densities.
fn check_matrix(
    name: &str,
    m: &CsrMatrix,
    rows: usize,
    ni: usize,
    cols: usize,
    dict_len: usize,
    dens: Dens,
) -> Result<()> {
    let (rp, words) = (&m.row_ptr[..], &m.words[..]);
    if rp.len() != rows + 1 {
        return Err(bad(format!("{name} has {} row pointers, expected {}", rp.len(), rows + 1)));
    }
    if rp[0] != 0 {
        return Err(bad(format!("{name} row pointers start at {}, not 0", rp[0])));
    }
    if rp[rows] as usize != words.len() {
        return Err(bad(format!("{name} row pointers end at {}, but it has {} words", rp[rows], words.len())));
    }
    let nnz = (0..rows.div_ceil(ROWS_PER_TASK))
        .into_par_iter()
        .map(|t| -> Result<u64> {
            let r = t * ROWS_PER_TASK..((t + 1) * ROWS_PER_TASK).min(rows);
            let c = cols as u32;
            let (is_bad, nnz) = match dens {
                Dens::None => scan_rows::<0>(rp, words, r.clone(), ni, c, dict_len, dens),
                Dens::Aux(_) => scan_rows::<1>(rp, words, r.clone(), ni, c, dict_len, dens),
                Dens::Both(..) => scan_rows::<2>(rp, words, r.clone(), ni, c, dict_len, dens),
            };
            if is_bad {
                return Err(row_error(name, rp, words, r, cols, dict_len));
            }
            Ok(nnz)
        })
        .try_reduce(|| 0, |a, b| Ok(a + b))?;
    if nnz != m.nnz {
        return Err(bad(format!("{name} has {nnz} non-zeros, its header says {}", m.nnz)));
    }
    Ok(())
}

/// Checks everything the evaluator and the prover index with: row pointers
/// (first 0, monotone, last = words), columns (< inputs + aux), coefficient
/// tags (3 is invalid), dictionary indices (< dictionary length, never missing
/// at a row's end), nnz, and the density bitmaps — rebuilt from A and B and
/// compared bit for bit (trailing bits included) with the stored ones, with
/// their population counts. O(words), parallel over rows.
pub fn validate(pce: &Pce) -> Result<()> {
    let (ni, na) = (pce.num_inputs, pce.num_aux);
    let cols = ni.checked_add(na).filter(|&c| c <= MAX_COLS).ok_or_else(|| bad("too many columns"))?;
    let rows = pce.a.rows();
    if pce.a.row_ptr.is_empty() {
        return Err(bad("A has no row pointers"));
    }
    let d = &pce.density;
    for (name, b, len) in [("a_aux", &d.a_aux, na), ("b_input", &d.b_input, ni), ("b_aux", &d.b_aux, na)] {
        if b.len != len || b.words.len() != len.div_ceil(64) {
            return Err(bad(format!(
                "{name} density has {} bits in {} words, expected {len} bits",
                b.len,
                b.words.len()
            )));
        }
        let ones: usize = b.words.iter().map(|w| w.count_ones() as usize).sum();
        if ones != b.ones {
            return Err(bad(format!("{name} density has {ones} bits set, its header says {}", b.ones)));
        }
    }
    let dl = pce.dict.len();
    let (a_aux, b_input, b_aux) = (AtomicBits::new(na), AtomicBits::new(ni), AtomicBits::new(na));
    let (ra, (rb, rc)) = rayon::join(
        || check_matrix("A", &pce.a, rows, ni, cols, dl, Dens::Aux(&a_aux)),
        || {
            rayon::join(
                || check_matrix("B", &pce.b, rows, ni, cols, dl, Dens::Both(&b_input, &b_aux)),
                || check_matrix("C", &pce.c, rows, ni, cols, dl, Dens::None),
            )
        },
    );
    ra?;
    rb?;
    rc?;
    for (name, rebuilt, stored) in
        [("a_aux", &a_aux, &d.a_aux), ("b_input", &b_input, &d.b_input), ("b_aux", &b_aux, &d.b_aux)]
    {
        if !rebuilt.matches(stored) {
            return Err(bad(format!("{name} density does not match the matrices")));
        }
    }
    Ok(())
}
