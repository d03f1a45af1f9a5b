//! The 1024-byte header of a `.pce` file: where each field sits, how the
//! sections are laid out after it, and the one [`Header`] type that `save`
//! writes and `load` reads (the file as a whole: [`super::file`]).
//!
//! ```text
//! offset  size  field
//!      0     8  magic  b"CUZKPCE\0"
//!      8     4  format version: 1, or 2 for a file with its witness program
//!     12     4  header length (1024)
//!     16     8  file length
//!     24     8  num_inputs (the ONE included)
//!     32     8  num_aux
//!     40     8  num_constraints (rows of A, B and C)
//!     48    24  nnz of A, B, C
//!     72     8  dictionary length
//!     80    24  population counts of the a_aux, b_input, b_aux bitmaps
//!    104     4  section count (10; 11 in version 2)
//!    108     4  circuit id length (≤ 256)
//!    112    32  fingerprint
//!    144   256  circuit id, UTF-8, zero padded
//!    400   480  10 sections × {offset u64, byte length u64, blake3 checksum [32]}
//!    880    48  version 2: the witness program's section, the same way; version 1: zero
//!    928    64  reserved, zero
//!    992    32  blake3 of bytes 0..992 (the header checksum)
//!   1024     …  sections, each at a 64-byte aligned offset, zero padding between;
//!               version 2: the witness program's last (its own layout:
//!               `src/pce/program/stored.rs`)
//! ```
//!
//! The offsets are the constants of [`at`]; the fingerprint is
//! [`fingerprint_of`] the dimensions and the ten sections' lengths and
//! checksums: it names the constraint system, the same whether a file carries
//! a witness program or not. The header checksum covers the program's section
//! checksum too: it is the identity of the file as a whole.
//!
//! A PCE saved without a witness program is written as version 1, which
//! builds older than the program's section read as well.

use super::matrix::MAX_COLS;
use super::system::Pce;
use crate::Result;

/// A `.pce` file, or a PCE, that breaks the format's rules.
pub(super) fn bad_file(msg: impl Into<String>) -> crate::Error {
    crate::Error::BadPceFile(msg.into())
}

/// The first eight bytes of every `.pce` file.
pub const MAGIC: [u8; 8] = *b"CUZKPCE\0";
/// The format version of a file with its witness program; one without is version 1. This
/// build reads both.
pub const FORMAT_VERSION: u32 = 2;
/// The format version of a file without a witness program.
const VERSION_WITHOUT_PROGRAM: u32 = 1;
/// Bytes before the first section.
pub const HEADER_LEN: usize = 1024;
pub use super::bytes::ALIGN;
/// Longest circuit id.
pub const MAX_ID_LEN: usize = 256;
/// Number of sections every file has; a version-2 file has its witness program's after them.
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

/// Section indices: A, B, C (`k` = 0, 1, 2) are row pointers at `2k`, words
/// at `2k + 1`; then the dictionary and the three density bitmaps.
pub(crate) mod sec {
    pub const fn row_ptr(k: usize) -> usize {
        2 * k
    }
    pub const fn words(k: usize) -> usize {
        2 * k + 1
    }
    pub const DICT: usize = 6;
    pub const A_AUX: usize = 7;
    pub const B_INPUT: usize = 8;
    pub const B_AUX: usize = 9;
}

/// Byte offsets of the header's fields (all little-endian).
mod at {
    use super::{SECTIONS, SECTION_ENTRY};
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 8;
    pub const HEADER_LEN: usize = 12;
    pub const FILE_LEN: usize = 16;
    pub const NUM_INPUTS: usize = 24;
    pub const NUM_AUX: usize = 32;
    pub const NUM_CONSTRAINTS: usize = 40;
    /// nnz of A, B, C: three u64.
    pub const NNZ: usize = 48;
    pub const DICT_LEN: usize = 72;
    /// Population counts of a_aux, b_input, b_aux: three u64.
    pub const ONES: usize = 80;
    pub const SECTION_COUNT: usize = 104;
    pub const ID_LEN: usize = 108;
    pub const FINGERPRINT: usize = 112;
    /// `MAX_ID_LEN` bytes, zero padded.
    pub const CIRCUIT_ID: usize = 144;
    /// `SECTIONS` entries of `SECTION_ENTRY` bytes.
    pub const SECTION_TABLE: usize = 400;
    /// The witness program's entry (version 2; zero in version 1).
    pub const PROGRAM_ENTRY: usize = SECTION_TABLE + SECTIONS * SECTION_ENTRY;
    /// Zero up to the checksum.
    pub const RESERVED: usize = PROGRAM_ENTRY + SECTION_ENTRY;
    /// blake3 of every byte before it.
    pub const CHECKSUM: usize = 992;
}

/// Bytes of a section table entry: offset u64, byte length u64, blake3 `[u8; 32]`.
const SECTION_ENTRY: usize = 48;
const FINGERPRINT_CONTEXT: &str = "cuzk pce fingerprint v1";

// The fields follow one another with no gap, as in the table above.
const _: () = {
    assert!(at::MAGIC + 8 == at::VERSION && at::VERSION + 4 == at::HEADER_LEN);
    assert!(at::HEADER_LEN + 4 == at::FILE_LEN && at::FILE_LEN + 8 == at::NUM_INPUTS);
    assert!(at::NUM_INPUTS + 8 == at::NUM_AUX && at::NUM_AUX + 8 == at::NUM_CONSTRAINTS);
    assert!(at::NUM_CONSTRAINTS + 8 == at::NNZ && at::NNZ + 24 == at::DICT_LEN && at::DICT_LEN + 8 == at::ONES);
    assert!(at::ONES + 24 == at::SECTION_COUNT && at::SECTION_COUNT + 4 == at::ID_LEN);
    assert!(at::ID_LEN + 4 == at::FINGERPRINT && at::FINGERPRINT + 32 == at::CIRCUIT_ID);
    assert!(at::CIRCUIT_ID + MAX_ID_LEN == at::SECTION_TABLE && at::PROGRAM_ENTRY == 880 && at::RESERVED == 928);
    assert!(at::RESERVED <= at::CHECKSUM && at::CHECKSUM + 32 == HEADER_LEN);
};

/// The dimensions the header carries besides the sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dims {
    pub num_inputs: u64,
    pub num_aux: u64,
    pub num_constraints: u64,
    /// Non-zeros of A, B, C.
    pub nnz: [u64; 3],
    pub dict_len: u64,
    /// Bits set in a_aux, b_input, b_aux.
    pub ones: [u64; 3],
}

impl Dims {
    pub fn of(pce: &Pce) -> Dims {
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

/// A section's byte length and blake3: the content the fingerprint covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SectionSum {
    pub len: u64,
    pub checksum: [u8; 32],
}

/// The fingerprint from the dimensions and the section checksums.
pub(crate) fn fingerprint_of(dims: &Dims, sections: &[SectionSum; SECTIONS]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key(FINGERPRINT_CONTEXT);
    for v in [dims.num_inputs, dims.num_aux, dims.num_constraints, dims.dict_len]
        .into_iter()
        .chain(dims.nnz)
        .chain(dims.ones)
    {
        h.update(&v.to_le_bytes());
    }
    for s in sections {
        h.update(&s.len.to_le_bytes());
        h.update(&s.checksum);
    }
    *h.finalize().as_bytes()
}

/// The first `ALIGN` boundary at or after `end`.
fn aligned(end: u64) -> Option<u64> {
    Some(end.checked_add(ALIGN as u64 - 1)? & !(ALIGN as u64 - 1))
}

/// Offsets of the sections given their byte lengths, and where the last one
/// ends: each section at the first `ALIGN` boundary after the previous one.
pub(crate) fn layout(lens: &[u64; SECTIONS]) -> Option<([u64; SECTIONS], u64)> {
    let mut offsets = [0u64; SECTIONS];
    let mut end = HEADER_LEN as u64;
    for (i, &len) in lens.iter().enumerate() {
        offsets[i] = aligned(end)?;
        end = offsets[i].checked_add(len)?;
    }
    Some((offsets, end))
}

/// A version-2 file's witness program section: where it is, its length and checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProgramSection {
    pub offset: u64,
    pub sum: SectionSum,
}

/// The header checksum of `file`, whose header [`Header::read`] accepted: the identity of the
/// file as a whole (it covers every section's checksum, the witness program's included).
pub(crate) fn identity(file: &[u8]) -> [u8; 32] {
    file[at::CHECKSUM..HEADER_LEN].try_into().unwrap()
}

/// Everything a `.pce` header says. Magic, version and header length are
/// constants of the format, written by [`Header::encode`] and checked by
/// [`Header::read`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Header {
    pub file_len: u64,
    pub dims: Dims,
    pub circuit_id: String,
    pub fingerprint: [u8; 32],
    pub offsets: [u64; SECTIONS],
    pub sections: [SectionSum; SECTIONS],
    /// The witness program's section (version 2), after the others.
    pub program: Option<ProgramSection>,
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

impl Header {
    /// The header of a file holding content `dims`/`sections` for
    /// `circuit_id` (1 to `MAX_ID_LEN` bytes), laid out by [`layout`], and
    /// the witness program's section `program` after them (version 2) if
    /// there is one; `None` if the file length overflows.
    pub fn new(
        circuit_id: &str,
        dims: Dims,
        sections: [SectionSum; SECTIONS],
        program: Option<SectionSum>,
    ) -> Option<Header> {
        let (offsets, end) = layout(&sections.map(|s| s.len))?;
        let (program, file_len) = match program {
            Some(sum) => {
                let offset = aligned(end)?;
                (Some(ProgramSection { offset, sum }), offset.checked_add(sum.len)?)
            }
            None => (None, end),
        };
        let fingerprint = fingerprint_of(&dims, &sections);
        Some(Header { file_len, dims, circuit_id: circuit_id.to_string(), fingerprint, offsets, sections, program })
    }

    fn version(&self) -> u32 {
        match self.program {
            Some(_) => FORMAT_VERSION,
            None => VERSION_WITHOUT_PROGRAM,
        }
    }

    /// Entries of the section table: 10, and the witness program's.
    fn section_count(version: u32) -> usize {
        SECTIONS + (version == FORMAT_VERSION) as usize
    }

    /// The header's bytes, its checksum last.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let (d, id) = (&self.dims, self.circuit_id.as_bytes());
        let mut h = [0u8; HEADER_LEN];
        h[at::MAGIC..at::MAGIC + 8].copy_from_slice(&MAGIC);
        put_u32(&mut h, at::VERSION, self.version());
        put_u32(&mut h, at::HEADER_LEN, HEADER_LEN as u32);
        put_u64(&mut h, at::FILE_LEN, self.file_len);
        put_u64(&mut h, at::NUM_INPUTS, d.num_inputs);
        put_u64(&mut h, at::NUM_AUX, d.num_aux);
        put_u64(&mut h, at::NUM_CONSTRAINTS, d.num_constraints);
        for i in 0..3 {
            put_u64(&mut h, at::NNZ + 8 * i, d.nnz[i]);
            put_u64(&mut h, at::ONES + 8 * i, d.ones[i]);
        }
        put_u64(&mut h, at::DICT_LEN, d.dict_len);
        put_u32(&mut h, at::SECTION_COUNT, Header::section_count(self.version()) as u32);
        put_u32(&mut h, at::ID_LEN, id.len() as u32);
        h[at::FINGERPRINT..at::FINGERPRINT + 32].copy_from_slice(&self.fingerprint);
        h[at::CIRCUIT_ID..at::CIRCUIT_ID + id.len()].copy_from_slice(id);
        for (i, s) in self.sections.iter().enumerate() {
            let e = at::SECTION_TABLE + i * SECTION_ENTRY;
            put_u64(&mut h, e, self.offsets[i]);
            put_u64(&mut h, e + 8, s.len);
            h[e + 16..e + 48].copy_from_slice(&s.checksum);
        }
        if let Some(p) = &self.program {
            put_u64(&mut h, at::PROGRAM_ENTRY, p.offset);
            put_u64(&mut h, at::PROGRAM_ENTRY + 8, p.sum.len);
            h[at::PROGRAM_ENTRY + 16..at::PROGRAM_ENTRY + 48].copy_from_slice(&p.sum.checksum);
        }
        let sum = blake3::hash(&h[..at::CHECKSUM]);
        h[at::CHECKSUM..].copy_from_slice(sum.as_bytes());
        h
    }

    /// Reads the header at the start of `file` (a whole file's bytes):
    /// magic, version, the header checksum, the file length against
    /// `file.len()`, the section count, and a UTF-8 circuit id with zero
    /// padding and reserved bytes. What the fields say about the layout is
    /// checked by [`Header::check_consistent`].
    pub fn read(file: &[u8]) -> Result<Header> {
        if file.len() < at::VERSION + 4 {
            return Err(bad_file(format!("truncated: {} bytes, not even a magic and version", file.len())));
        }
        if file[at::MAGIC..at::MAGIC + 8] != MAGIC {
            return Err(bad_file(format!("not a cuzk PCE file: magic {:02x?}", &file[at::MAGIC..at::MAGIC + 8])));
        }
        let version = get_u32(file, at::VERSION);
        if version != FORMAT_VERSION && version != VERSION_WITHOUT_PROGRAM {
            return Err(bad_file(format!(
                "format version {version}, this build reads versions {VERSION_WITHOUT_PROGRAM} and {FORMAT_VERSION}"
            )));
        }
        if file.len() < HEADER_LEN {
            return Err(bad_file(format!(
                "truncated: {} bytes, shorter than the {HEADER_LEN}-byte header",
                file.len()
            )));
        }
        let h = &file[..HEADER_LEN];
        if blake3::hash(&h[..at::CHECKSUM]).as_bytes() != &h[at::CHECKSUM..] {
            return Err(bad_file("header checksum mismatch (corrupt header)"));
        }
        let header_len = get_u32(h, at::HEADER_LEN);
        if header_len as usize != HEADER_LEN {
            return Err(bad_file(format!("header length {header_len}, expected {HEADER_LEN}")));
        }
        let file_len = get_u64(h, at::FILE_LEN);
        if file_len != file.len() as u64 {
            return Err(bad_file(format!(
                "file is {} bytes, its header says {file_len} ({})",
                file.len(),
                if (file.len() as u64) < file_len { "truncated" } else { "trailing bytes" }
            )));
        }
        let nsec = get_u32(h, at::SECTION_COUNT);
        let want = Header::section_count(version);
        if nsec as usize != want {
            return Err(bad_file(format!("{nsec} sections, version {version} has {want}")));
        }
        let id_len = get_u32(h, at::ID_LEN) as usize;
        if id_len == 0 || id_len > MAX_ID_LEN {
            return Err(bad_file(format!("circuit id length {id_len} out of 1..={MAX_ID_LEN}")));
        }
        let id_end = at::CIRCUIT_ID + id_len;
        let reserved = at::SECTION_TABLE + want * SECTION_ENTRY;
        if h[id_end..at::SECTION_TABLE].iter().any(|&b| b != 0) || h[reserved..at::CHECKSUM].iter().any(|&b| b != 0) {
            return Err(bad_file("non-zero padding or reserved bytes in the header"));
        }
        let circuit_id = std::str::from_utf8(&h[at::CIRCUIT_ID..id_end])
            .map_err(|_| bad_file("circuit id is not UTF-8"))?
            .to_string();
        let u64s = |first: usize| [0, 1, 2].map(|i| get_u64(h, first + 8 * i));
        let dims = Dims {
            num_inputs: get_u64(h, at::NUM_INPUTS),
            num_aux: get_u64(h, at::NUM_AUX),
            num_constraints: get_u64(h, at::NUM_CONSTRAINTS),
            nnz: u64s(at::NNZ),
            dict_len: get_u64(h, at::DICT_LEN),
            ones: u64s(at::ONES),
        };
        let entry = |i: usize| at::SECTION_TABLE + i * SECTION_ENTRY;
        let offsets = std::array::from_fn(|i| get_u64(h, entry(i)));
        let sections = std::array::from_fn(|i| SectionSum {
            len: get_u64(h, entry(i) + 8),
            checksum: h[entry(i) + 16..entry(i) + 48].try_into().unwrap(),
        });
        let program = (want > SECTIONS).then(|| ProgramSection {
            offset: get_u64(h, at::PROGRAM_ENTRY),
            sum: SectionSum {
                len: get_u64(h, at::PROGRAM_ENTRY + 8),
                checksum: h[at::PROGRAM_ENTRY + 16..at::PROGRAM_ENTRY + 48].try_into().unwrap(),
            },
        });
        let fingerprint = h[at::FINGERPRINT..at::FINGERPRINT + 32].try_into().unwrap();
        Ok(Header { file_len, dims, circuit_id, fingerprint, offsets, sections, program })
    }

    /// Checks that the fields agree with one another and with `file` (the
    /// bytes [`Header::read`] read): the fingerprint with the dimensions and
    /// checksums, each section's length with the dimensions, the offsets and
    /// file length with [`layout`], and the padding between sections is zero.
    /// After this every section lies in the file at an `ALIGN`ed offset.
    pub fn check_consistent(&self, file: &[u8]) -> Result<()> {
        let dims = &self.dims;
        if fingerprint_of(dims, &self.sections) != self.fingerprint {
            return Err(bad_file("fingerprint does not match the header's dimensions and checksums"));
        }
        if dims.num_inputs == 0 {
            return Err(bad_file("no inputs: a PCE always has the ONE input"));
        }
        if dims.num_inputs.checked_add(dims.num_aux).is_none_or(|c| c > MAX_COLS as u64) {
            return Err(bad_file(format!(
                "{} inputs + {} aux exceed {MAX_COLS} columns",
                dims.num_inputs, dims.num_aux
            )));
        }
        let rp_len = dims
            .num_constraints
            .checked_add(1)
            .and_then(|r| r.checked_mul(4))
            .ok_or_else(|| bad_file(format!("{} constraints overflow", dims.num_constraints)))?;
        let bitmap_len = |n: u64| n.div_ceil(64) * 8;
        let dict_bytes = dims
            .dict_len
            .checked_mul(32)
            .ok_or_else(|| bad_file(format!("dictionary length {} overflows", dims.dict_len)))?;
        // (exact byte length if the dimensions fix it, element size), by section.
        let expect: [(Option<u64>, u64); SECTIONS] = [
            (Some(rp_len), 4),
            (None, 4),
            (Some(rp_len), 4),
            (None, 4),
            (Some(rp_len), 4),
            (None, 4),
            (Some(dict_bytes), 32),
            (Some(bitmap_len(dims.num_aux)), 8),
            (Some(bitmap_len(dims.num_inputs)), 8),
            (Some(bitmap_len(dims.num_aux)), 8),
        ];
        for (i, (want, elem)) in expect.into_iter().enumerate() {
            let len = self.sections[i].len;
            if !len.is_multiple_of(elem) {
                return Err(bad_file(format!("{} section is {len} bytes, not a multiple of {elem}", SECTION_NAMES[i])));
            }
            if let Some(w) = want.filter(|&w| w != len) {
                return Err(bad_file(format!("{} section is {len} bytes, the dimensions imply {w}", SECTION_NAMES[i])));
            }
        }
        let lens = self.sections.map(|s| s.len);
        let overflow = || bad_file("section lengths overflow the file length");
        let (want_offsets, end) = layout(&lens).ok_or_else(overflow)?;
        let want_len = match &self.program {
            Some(p) => {
                let want = aligned(end).ok_or_else(overflow)?;
                if p.offset != want {
                    return Err(bad_file(format!("witness program section at offset {}, expected {want}", p.offset)));
                }
                p.offset.checked_add(p.sum.len).ok_or_else(overflow)?
            }
            None => end,
        };
        if want_len != self.file_len {
            return Err(bad_file(format!("sections end at {want_len}, the file is {} bytes", self.file_len)));
        }
        for i in 0..SECTIONS {
            if self.offsets[i] != want_offsets[i] {
                return Err(bad_file(format!(
                    "{} section at offset {}, expected {}",
                    SECTION_NAMES[i], self.offsets[i], want_offsets[i]
                )));
            }
            // Zero padding before each section (not covered by section checksums).
            let pad_start = if i == 0 { HEADER_LEN } else { self.section_range(i - 1).end };
            if file[pad_start..self.offsets[i] as usize].iter().any(|&b| b != 0) {
                return Err(bad_file(format!("non-zero padding before the {} section", SECTION_NAMES[i])));
            }
        }
        if let Some(p) = &self.program {
            if file[end as usize..p.offset as usize].iter().any(|&b| b != 0) {
                return Err(bad_file("non-zero padding before the witness program section"));
            }
        }
        Ok(())
    }

    /// The byte range of section `i` in the file.
    pub fn section_range(&self, i: usize) -> std::ops::Range<usize> {
        self.offsets[i] as usize..(self.offsets[i] + self.sections[i].len) as usize
    }

    /// The byte range of the witness program's section, if the file has one.
    pub fn program_range(&self) -> Option<std::ops::Range<usize>> {
        self.program.map(|p| p.offset as usize..(p.offset + p.sum.len) as usize)
    }
}
