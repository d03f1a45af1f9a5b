//! A witness program as the last section of its `.pce` file (format version 2), so that a
//! process loads it instead of recording it.
//!
//! ```text
//! offset  size  field (little-endian, from the section's start, itself 64-byte aligned)
//!      0     4  section version (1)
//!      4     4  zero
//!      8     8  num_inputs (the PCE's)
//!     16     8  num_aux (the PCE's)
//!     24     8  steps
//!     32     8  group words
//!     40     8  free columns
//!     48     8  parts (0: not split)
//!     56     8  the split's prefix inputs (0 when not split)
//!     64     8  the split's prefix aux (0 when not split)
//!     72    56  zero
//!    128     …  the arrays, each at the next 64-byte boundary, zero padding between:
//!               steps [u32 row, u32 kind << 30 | argument], group words u32, free columns u32,
//!               boolean columns u64 (⌈(inputs + aux) / 64⌉ words), part ends u64 (parts + 1,
//!               when split)
//! ```
//!
//! The section ends where its last array does. The coefficients' integer forms are not
//! stored: they are made from the PCE's dictionary. Loaded, the arrays are views of the file's
//! bytes (read or mapped, as the matrices are), checked by [`check`] before use.

use std::convert::Infallible;
use std::io::Write;
use std::ops::Range;
use std::sync::Arc;

use super::check::check;
use super::{int_coefs, Layout, Program, Split};
use crate::pce::bytes::{FileBytes, ALIGN};
use crate::pce::header::bad_file;
use crate::pce::matrix::Array;
use crate::pce::Pce;
use crate::Result;

/// The section's layout version: what its fields and steps mean.
const VERSION: u32 = 1;
/// Bytes before the first array.
const HEAD_LEN: usize = 128;
/// Arrays: steps, group words, free columns, boolean columns, part ends.
const ARRAYS: usize = 5;
const ARRAY_NAMES: [&str; ARRAYS] = ["steps", "group words", "free columns", "boolean columns", "part ends"];

/// Byte offsets of the head's fields.
mod at {
    pub const VERSION: usize = 0;
    pub const NUM_INPUTS: usize = 8;
    pub const NUM_AUX: usize = 16;
    pub const STEPS: usize = 24;
    pub const GROUP_WORDS: usize = 32;
    pub const FREE: usize = 40;
    pub const PARTS: usize = 48;
    pub const PREFIX_INPUTS: usize = 56;
    pub const PREFIX_AUX: usize = 64;
    pub const RESERVED: usize = 72;
}

/// The counts the head holds.
struct Counts {
    num_inputs: u64,
    num_aux: u64,
    steps: u64,
    group_words: u64,
    free: u64,
    parts: u64,
    prefix_inputs: u64,
    prefix_aux: u64,
}

impl Counts {
    fn of(p: &Program) -> Counts {
        let l = p.split.as_ref().map_or(Layout { prefix_inputs: 0, prefix_aux: 0, parts: 0 }, |s| s.layout);
        Counts {
            num_inputs: p.num_inputs as u64,
            num_aux: p.num_aux as u64,
            steps: p.steps.len() as u64,
            group_words: p.groups.len() as u64,
            free: p.free.len() as u64,
            parts: l.parts as u64,
            prefix_inputs: l.prefix_inputs as u64,
            prefix_aux: l.prefix_aux as u64,
        }
    }

    fn fields(&self) -> [(usize, u64); 8] {
        [
            (at::NUM_INPUTS, self.num_inputs),
            (at::NUM_AUX, self.num_aux),
            (at::STEPS, self.steps),
            (at::GROUP_WORDS, self.group_words),
            (at::FREE, self.free),
            (at::PARTS, self.parts),
            (at::PREFIX_INPUTS, self.prefix_inputs),
            (at::PREFIX_AUX, self.prefix_aux),
        ]
    }

    /// Each array's byte range in the section (the last one's end is the section's length);
    /// `None` on overflow.
    fn layout(&self) -> Option<[Range<u64>; ARRAYS]> {
        let columns = self.num_inputs.checked_add(self.num_aux)?;
        let ends = match self.parts {
            0 => 0,
            parts => parts.checked_add(1)?,
        };
        let lens = [
            self.steps.checked_mul(8)?,
            self.group_words.checked_mul(4)?,
            self.free.checked_mul(4)?,
            columns.div_ceil(64) * 8,
            ends.checked_mul(8)?,
        ];
        let mut end = HEAD_LEN as u64;
        let mut ranges: [Range<u64>; ARRAYS] = Default::default();
        for (range, len) in ranges.iter_mut().zip(lens) {
            let start = end.checked_add(ALIGN as u64 - 1)? & !(ALIGN as u64 - 1);
            end = start.checked_add(len)?;
            *range = start..end;
        }
        Some(ranges)
    }
}

fn get_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// A program as its section's bytes: the head, and the arrays in place.
pub(crate) struct Stored<'a> {
    program: &'a Program,
    head: [u8; HEAD_LEN],
    ends: Vec<u64>,
    ranges: [Range<u64>; ARRAYS],
}

impl<'a> Stored<'a> {
    /// `p`'s section, once [`check`]ed against `pce` (the PCE it is saved with).
    pub fn of(p: &'a Program, pce: &Pce) -> Result<Stored<'a>> {
        check(p, pce)?;
        let counts = Counts::of(p);
        let ranges = counts.layout().ok_or_else(|| bad_file("witness program too large"))?;
        let mut head = [0u8; HEAD_LEN];
        head[at::VERSION..at::VERSION + 4].copy_from_slice(&VERSION.to_le_bytes());
        for (at, v) in counts.fields() {
            head[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        let ends = p.split.as_ref().map_or(Vec::new(), |s| s.ends.iter().map(|&e| e as u64).collect());
        Ok(Stored { program: p, head, ends, ranges })
    }

    /// Bytes of the section.
    pub fn len(&self) -> u64 {
        self.ranges[ARRAYS - 1].end
    }

    fn arrays(&self) -> [&[u8]; ARRAYS] {
        let p = self.program;
        [
            bytemuck::cast_slice(&p.steps[..]),
            bytemuck::cast_slice(&p.groups[..]),
            bytemuck::cast_slice(&p.free[..]),
            bytemuck::cast_slice(&p.is_bit[..]),
            bytemuck::cast_slice(&self.ends),
        ]
    }

    /// Every byte of the section, in order, to `out`.
    fn each_piece<E>(&self, mut out: impl FnMut(&[u8]) -> std::result::Result<(), E>) -> std::result::Result<(), E> {
        let zeros = [0u8; ALIGN];
        out(&self.head)?;
        let mut pos = HEAD_LEN as u64;
        for (array, range) in self.arrays().into_iter().zip(&self.ranges) {
            out(&zeros[..(range.start - pos) as usize])?;
            out(array)?;
            pos = range.end;
        }
        Ok(())
    }

    /// blake3 of the section's bytes.
    pub fn checksum(&self) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        let _: std::result::Result<(), Infallible> = self.each_piece(|piece| {
            match piece.len() >= 1 << 20 {
                true => h.update_rayon(piece),
                false => h.update(piece),
            };
            Ok(())
        });
        *h.finalize().as_bytes()
    }

    /// Writes the section (straight from the arrays: no copy).
    pub fn write(&self, w: &mut impl Write) -> std::io::Result<()> {
        self.each_piece(|piece| w.write_all(piece))
    }
}

/// The view of `r` (an array's range in the section at `at`) of a loaded file's bytes: 64-byte
/// aligned, as the section is, and holding whole `T`s (its length is a count of them).
fn view<T: bytemuck::Pod>(bytes: &Arc<FileBytes>, at: usize, r: &Range<usize>) -> Array<T> {
    Array::File { bytes: bytes.clone(), offset: at + r.start, len: r.len() / std::mem::size_of::<T>() }
}

/// The program stored in `range` of a loaded file's `bytes` (its checksum already checked),
/// for `pce`, the PCE of that file: its head and layout checked, its arrays viewing `bytes`,
/// the whole [`check`]ed. Anything amiss is `BadPceFile`.
pub(crate) fn load(bytes: &Arc<FileBytes>, range: Range<usize>, pce: &Pce) -> Result<Program> {
    let s = &bytes[range.clone()];
    if s.len() < HEAD_LEN {
        return Err(bad_file(format!("witness program section of {} bytes, shorter than its head", s.len())));
    }
    let version = u32::from_le_bytes(s[at::VERSION..at::VERSION + 4].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(bad_file(format!("witness program section version {version}, this build reads {VERSION}")));
    }
    if s[at::VERSION + 4..at::NUM_INPUTS].iter().chain(&s[at::RESERVED..HEAD_LEN]).any(|&b| b != 0) {
        return Err(bad_file("non-zero reserved bytes in the witness program's head"));
    }
    let counts = Counts {
        num_inputs: get_u64(s, at::NUM_INPUTS),
        num_aux: get_u64(s, at::NUM_AUX),
        steps: get_u64(s, at::STEPS),
        group_words: get_u64(s, at::GROUP_WORDS),
        free: get_u64(s, at::FREE),
        parts: get_u64(s, at::PARTS),
        prefix_inputs: get_u64(s, at::PREFIX_INPUTS),
        prefix_aux: get_u64(s, at::PREFIX_AUX),
    };
    if (counts.num_inputs, counts.num_aux) != (pce.num_inputs as u64, pce.num_aux as u64) {
        return Err(bad_file("the witness program is another circuit's: its inputs and aux differ"));
    }
    let ranges = match counts.layout() {
        Some(r) if r[ARRAYS - 1].end == s.len() as u64 => r.map(|r| r.start as usize..r.end as usize),
        _ => return Err(bad_file(format!("witness program section is {} bytes, its counts disagree", s.len()))),
    };
    let mut pos = HEAD_LEN;
    for (name, r) in ARRAY_NAMES.iter().zip(&ranges) {
        if s[pos..r.start].iter().any(|&b| b != 0) {
            return Err(bad_file(format!("non-zero padding before the witness program's {name}")));
        }
        pos = r.end;
    }
    let ends = s[ranges[4].clone()].chunks_exact(8).map(|e| u64::from_le_bytes(e.try_into().expect("8 bytes")));
    let split = match counts.parts {
        0 if counts.prefix_inputs == 0 && counts.prefix_aux == 0 => None,
        0 => return Err(bad_file("witness program: a prefix without parts")),
        parts => {
            let size = |v: u64| usize::try_from(v).map_err(|_| bad_file("witness program: a count overflows"));
            let layout = Layout {
                prefix_inputs: size(counts.prefix_inputs)?,
                prefix_aux: size(counts.prefix_aux)?,
                parts: size(parts)?,
            };
            let ends = ends.map(size).collect::<Result<Vec<usize>>>()?;
            Some(Split { layout, ends })
        }
    };
    let (coefs, small) = int_coefs(&pce.dict);
    let program = Program {
        num_inputs: pce.num_inputs,
        num_aux: pce.num_aux,
        steps: view(bytes, range.start, &ranges[0]),
        groups: view(bytes, range.start, &ranges[1]),
        free: view(bytes, range.start, &ranges[2]),
        is_bit: view(bytes, range.start, &ranges[3]),
        coefs,
        small,
        split,
    };
    check(&program, pce)?;
    Ok(program)
}
