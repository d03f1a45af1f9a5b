//! The bytes of a loaded `.pce` file, which a PCE's arrays view: read into a 64-byte aligned
//! buffer, or mapped. The ground floor of the PCE's storage: it knows nothing of the format.

use std::ops::Deref;

use memmap2::Mmap;

/// Every section of a `.pce` file starts at a multiple of this: each array is then aligned
/// for its type, and for cache lines, in a 64-byte aligned buffer or a page-aligned mapping.
pub const ALIGN: usize = 64;

/// 64 bytes aligned to 64: the unit of a read file's buffer, so that every
/// section (at a 64-byte offset) is aligned for its type and cache lines.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Line([u8; ALIGN]);

// SAFETY: `Line` is `repr(C)` over a byte array whose size equals its
// alignment, so it has no padding, and any bit pattern (zero included) is a
// valid value.
unsafe impl bytemuck::Zeroable for Line {}
// SAFETY: as above; `Line` is also `Copy` and `'static`.
unsafe impl bytemuck::Pod for Line {}

/// The bytes of a `.pce` file that a loaded PCE's arrays view
/// ([`super::matrix::Array::File`]): read into memory or mapped.
pub struct FileBytes(Held);

enum Held {
    /// Read into memory: `len` bytes at the start of `lines`.
    Read { lines: Vec<Line>, len: usize },
    /// Mapped (page aligned).
    Mapped(Mmap),
}

impl FileBytes {
    /// `len` bytes read into `lines`.
    pub(super) fn read(lines: Vec<Line>, len: usize) -> FileBytes {
        FileBytes(Held::Read { lines, len })
    }

    /// A mapping of the whole file.
    pub(super) fn mapped(map: Mmap) -> FileBytes {
        FileBytes(Held::Mapped(map))
    }

    /// A 64-byte aligned copy of `bytes`, held as a read file is: loads
    /// without the filesystem (tests, fuzzing).
    pub fn copy_of(bytes: &[u8]) -> FileBytes {
        let mut lines: Vec<Line> = bytemuck::zeroed_vec(bytes.len().div_ceil(ALIGN));
        bytemuck::cast_slice_mut::<Line, u8>(&mut lines)[..bytes.len()].copy_from_slice(bytes);
        FileBytes(Held::Read { lines, len: bytes.len() })
    }

    /// Whether the bytes are a mapping of the file (else they are in memory).
    pub fn is_mapped(&self) -> bool {
        matches!(self.0, Held::Mapped(_))
    }
}

impl Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Held::Read { lines, len } => &bytemuck::cast_slice(lines)[..*len],
            Held::Mapped(map) => map,
        }
    }
}
