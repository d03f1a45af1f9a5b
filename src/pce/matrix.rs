//! The compact CSR matrix of a PCE.
//!
//! One `u32` word per non-zero: the low 30 bits are the column (inputs first,
//! then aux), the top 2 bits say what the coefficient is. ±1 — 69% of a real
//! PoRep circuit's non-zeros — cost that one word and no multiplication; any
//! other coefficient is followed by a second word indexing a dictionary of the
//! distinct coefficients shared by A, B and C. Row pointers count words.

use std::ops::Deref;
use std::sync::Arc;

use super::bytes::FileBytes;

/// Bits of a word holding the column.
pub const COL_BITS: u32 = 30;
/// Largest number of columns (inputs + aux) a PCE can hold.
pub const MAX_COLS: usize = 1 << COL_BITS;
/// Mask of the column bits.
pub const COL_MASK: u32 = (1 << COL_BITS) - 1;
/// Coefficient tags (the top two bits of a word); 3 is invalid.
pub const TAG_PLUS_ONE: u32 = 0;
pub const TAG_MINUS_ONE: u32 = 1;
/// The next word of the row is an index into the dictionary.
pub const TAG_DICT: u32 = 2;

/// The `(tag, column)` of a matrix word. The one decoder of the format: it
/// inlines into the evaluator's inner loop, so it must stay this cheap.
#[inline(always)]
pub fn decode(word: u32) -> (u32, u32) {
    (word >> COL_BITS, word & COL_MASK)
}

/// The word of `col` (< [`MAX_COLS`]) with coefficient tag `tag`.
#[inline(always)]
pub fn encode(tag: u32, col: u32) -> u32 {
    tag << COL_BITS | col
}

/// A read-only array: owned, or a view into the bytes of a validated `.pce`
/// file (read into memory or mapped, shared by the PCE's arrays).
pub enum Array<T: bytemuck::Pod> {
    Owned(Vec<T>),
    File { bytes: Arc<FileBytes>, offset: usize, len: usize },
}

impl<T: bytemuck::Pod> Deref for Array<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Array::Owned(v) => v,
            // The loader checked bounds and alignment before building this view.
            Array::File { bytes, offset, len } => {
                bytemuck::cast_slice(&bytes[*offset..*offset + *len * std::mem::size_of::<T>()])
            }
        }
    }
}

impl<T: bytemuck::Pod> From<Vec<T>> for Array<T> {
    fn from(v: Vec<T>) -> Self {
        Array::Owned(v)
    }
}

impl<T: bytemuck::Pod> Array<T> {
    /// Bytes this array holds in anonymous memory: its own, or its part of
    /// a file read into memory (0 for a view of a mapped file).
    pub fn heap_bytes(&self) -> usize {
        match self {
            Array::Owned(v) => v.capacity() * std::mem::size_of::<T>(),
            Array::File { bytes, .. } if bytes.is_mapped() => 0,
            Array::File { .. } => self.byte_len(),
        }
    }
    /// Bytes of the array's contents, wherever they live.
    pub fn byte_len(&self) -> usize {
        self.len() * std::mem::size_of::<T>()
    }
}

impl<T: bytemuck::Pod + std::fmt::Debug> std::fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Array(len {})", self.len())
    }
}

/// One of A, B, C in compact CSR form.
#[derive(Debug)]
pub struct CsrMatrix {
    /// `rows + 1` word offsets; row `i` is `words[row_ptr[i]..row_ptr[i + 1]]`.
    pub row_ptr: Array<u32>,
    /// Tagged column words, with dictionary indices after `TAG_DICT` words.
    pub words: Array<u32>,
    /// Number of non-zero coefficients (≤ words).
    pub nnz: u64,
}

impl CsrMatrix {
    pub fn rows(&self) -> usize {
        self.row_ptr.len().saturating_sub(1)
    }

    /// The words of row `i`.
    #[inline(always)]
    pub fn row(&self, i: usize) -> &[u32] {
        &self.words[self.row_ptr[i] as usize..self.row_ptr[i + 1] as usize]
    }

    pub fn heap_bytes(&self) -> usize {
        self.row_ptr.heap_bytes() + self.words.heap_bytes()
    }

    pub fn byte_len(&self) -> usize {
        self.row_ptr.byte_len() + self.words.byte_len()
    }
}
