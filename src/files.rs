//! Opening the files the library reads (PCE and parameter files): regular files only, refused
//! at once otherwise — a FIFO would block the caller until some writer appears.

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::{Error, Result};

/// `path` opened for reading, if it is a regular file (`InvalidInput` for a FIFO, a device or
/// a directory; `Io` when it cannot be opened).
pub(crate) fn open_regular(path: &Path) -> Result<File> {
    // Non-blocking, so that opening a FIFO returns at once and is refused below.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::Io(format!("opening {}: {e}", path.display())))?;
    let meta = file.metadata().map_err(|e| Error::Io(format!("reading the metadata of {}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(Error::InvalidInput(format!("{}: not a regular file", path.display())));
    }
    Ok(file)
}
