//! The verdict on a `.pce` file's witness program, kept beside the file as
//! `<file>.vouched`: the first process whose witness replayed from that program was checked
//! against the circuit's gadgets writes it, and every later process that loads the same file
//! takes it instead of checking again.
//!
//! ```text
//! offset  size  field
//!      0     8  magic  b"CUZKVCH\0"
//!      8     4  version (1)
//!     12     4  verdict: 1 agreed with the gadgets, 0 disagreed
//!     16    32  the .pce file's header checksum (its identity: it covers every section's
//!               checksum, the witness program's included)
//!     48    32  blake3 of bytes 0..48
//! ```
//!
//! A sidecar of another length, version or file, or a damaged one, is ignored: the program is
//! then checked as if there were none. Like the `.pce` file itself, it is trusted as far as
//! the directory that holds it.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::Result;

const MAGIC: [u8; 8] = *b"CUZKVCH\0";
const VERSION: u32 = 1;
const LEN: usize = 80;
const AGREED: u32 = 1;
const DISAGREED: u32 = 0;

/// Where the verdict on one loaded `.pce` file's program is kept, and that file's identity.
#[derive(Debug)]
pub(crate) struct Sidecar {
    path: PathBuf,
    file: [u8; 32],
}

impl Sidecar {
    /// The sidecar of the `.pce` file at `pce_path`, whose header checksum is `file`.
    pub fn of(pce_path: &Path, file: [u8; 32]) -> Sidecar {
        let mut path = pce_path.as_os_str().to_owned();
        path.push(".vouched");
        Sidecar { path: path.into(), file }
    }

    /// The verdict it holds for this file: `Some(agreed)`, or `None` when there is no sidecar
    /// or it is not this file's (another file's, damaged, of another length or version).
    pub fn read(&self) -> Option<bool> {
        let mut b = Vec::with_capacity(LEN + 1);
        let f = crate::files::open_regular(&self.path).ok()?;
        f.take(LEN as u64 + 1).read_to_end(&mut b).ok()?;
        let sealed = b.len() == LEN && b[48..LEN] == *blake3::hash(&b[..48]).as_bytes();
        let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
        if !sealed || b[..8] != MAGIC || u32_at(8) != VERSION || b[16..48] != self.file {
            log::debug!("{}: not a verdict on this file; ignored", self.path.display());
            return None;
        }
        match u32_at(12) {
            AGREED => Some(true),
            DISAGREED => Some(false),
            _ => None,
        }
    }

    /// Records `agreed` for this file (atomically, [`crate::files::write_atomically`]).
    pub fn write(&self, agreed: bool) -> Result<()> {
        let mut b = [0u8; LEN];
        b[..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&VERSION.to_le_bytes());
        b[12..16].copy_from_slice(&(if agreed { AGREED } else { DISAGREED }).to_le_bytes());
        b[16..48].copy_from_slice(&self.file);
        let sum = blake3::hash(&b[..48]);
        b[48..].copy_from_slice(sum.as_bytes());
        crate::files::write_atomically(&self.path, LEN as u64, |f| std::io::Write::write_all(f, &b))
    }
}
