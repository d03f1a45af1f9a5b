//! The one way the library opens the files it reads and writes.
//!
//! - Reading: regular files only, refused at once otherwise (a FIFO would block the caller
//!   until some writer appears). A symlink to a regular file is read.
//! - Writing: a file is made whole beside its target and renamed over it. The temporary file is
//!   created exclusively (`O_EXCL`: a planted symlink or file at its name is never followed or
//!   reused), in the target's directory (so the rename is atomic), removed on every error path,
//!   and swept by the next write or load of that target if its writer died. The rename replaces
//!   whatever is at the target, a symlink included, without following it. A large write first
//!   checks that the file system keeps room to spare after it.

use std::ffi::OsString;
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// What a temporary file's name adds to its target's: `<name>.cuzk-tmp.<pid>.<n>`.
const TMP_TAG: &str = ".cuzk-tmp.";
static TMP_COUNTER: AtomicUsize = AtomicUsize::new(0);

/// Writes below this size skip the free-space check.
const LARGE_WRITE: u64 = 64 << 20;
/// What a large write must leave free: 1 GiB, or 1% of a smaller file system.
const KEEP_FREE: u64 = 1 << 30;

fn io(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::Io(format!("{what} {}: {e}", path.display()))
}

fn split(path: &Path) -> Result<(PathBuf, OsString)> {
    let name = path.file_name().ok_or_else(|| Error::InvalidInput(format!("{}: no file name", path.display())))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name.to_os_string()))
}

/// Removes a temporary file unless it was renamed into place.
struct Temp {
    path: PathBuf,
    kept: bool,
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Writes `path` whole: `write` fills a new temporary file beside it (`len`: the bytes it will
/// write, for the free-space check), which is synced and renamed over `path`, and the directory
/// synced. On any error (`write`'s included) the temporary file is removed and `path` is as
/// it was.
pub fn write_atomically(path: &Path, len: u64, write: impl FnOnce(&mut File) -> std::io::Result<()>) -> Result<()> {
    let (dir, name) = split(path)?;
    sweep_temps(path);
    if len >= LARGE_WRITE {
        check_room_on_disk(&dir, len)?;
    }
    let mut tmp_name = name;
    tmp_name.push(format!("{TMP_TAG}{}.{}", std::process::id(), TMP_COUNTER.fetch_add(1, Ordering::Relaxed)));
    let tmp = dir.join(tmp_name);
    let mut f = create_new(&tmp).map_err(|e| io("creating", &tmp, e))?;
    let mut guard = Temp { path: tmp, kept: false };
    write(&mut f).map_err(|e| io("writing", &guard.path, e))?;
    f.sync_all().map_err(|e| io("fsync of", &guard.path, e))?;
    drop(f);
    std::fs::rename(&guard.path, path).map_err(|e| io("renaming onto", path, e))?;
    guard.kept = true;
    // Make the rename itself durable.
    File::open(&dir).and_then(|d| d.sync_all()).map_err(|e| io("fsync of directory", &dir, e))
}

/// A new file at `path`: an error if anything is there already, a symlink included.
fn create_new(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new().write(true).create_new(true).custom_flags(libc::O_NOFOLLOW).open(path)
}

/// Removes the temporary files of `path` whose writing process is gone (a writer killed
/// mid-write leaves one as large as what it wrote). Those of live processes, this one's
/// included, are left to their writers.
pub fn sweep_temps(path: &Path) {
    let Ok((dir, name)) = split(path) else { return };
    let Ok(entries) = std::fs::read_dir(&dir) else { return };
    let mut prefix = name.as_bytes().to_vec();
    prefix.extend_from_slice(TMP_TAG.as_bytes());
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(rest) = file_name.as_bytes().strip_prefix(prefix.as_slice()) else { continue };
        let Some(pid) = std::str::from_utf8(rest).ok().and_then(|r| r.split('.').next()?.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if pid > 0 && pid as u32 != std::process::id() && !process_alive(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn process_alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 sends nothing; it only asks whether `pid` exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// `Io` unless the file system of `dir` has room for `len` more bytes and still keeps
/// 1 GiB (or 1% of a smaller one) free: a node's disk is shared with its sealing and
/// chain data.
fn check_room_on_disk(dir: &Path, len: u64) -> Result<()> {
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| Error::InvalidInput(format!("{}: a NUL in the path", dir.display())))?;
    let mut s = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c` is a NUL-terminated path; `s` is written by statvfs when it returns 0.
    if unsafe { libc::statvfs(c.as_ptr(), s.as_mut_ptr()) } != 0 {
        return Err(io("checking the free space of", dir, std::io::Error::last_os_error()));
    }
    // SAFETY: statvfs returned 0, so it filled `s`.
    let s = unsafe { s.assume_init() };
    // The fields are u64 on 64-bit Linux, narrower elsewhere.
    #[allow(clippy::unnecessary_cast)]
    let (unit, bavail, blocks) = (s.f_frsize as u64, s.f_bavail as u64, s.f_blocks as u64);
    let free = bavail.saturating_mul(unit);
    let keep = KEEP_FREE.min(blocks.saturating_mul(unit) / 100);
    match free.checked_sub(keep).is_some_and(|room| room >= len) {
        true => Ok(()),
        false => Err(Error::Io(format!(
            "{}: {len} bytes to write, {free} bytes free, {keep} to keep free: not enough free space",
            dir.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("cuzk-files-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn a_fifo_or_a_symlink_to_one_is_refused_at_once() {
        let d = dir("fifo");
        let fifo = d.join("p.fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        std::os::unix::fs::symlink(&fifo, d.join("link")).unwrap();
        for p in [fifo, d.join("link"), d.clone()] {
            assert!(matches!(open_regular(&p), Err(Error::InvalidInput(_))), "{}", p.display());
        }
        std::fs::remove_dir_all(d).unwrap();
    }

    /// A symlink planted at a temporary file's name is neither followed nor reused, a symlink at
    /// the target is replaced (not written through), and a failed write leaves nothing behind.
    #[test]
    fn writes_follow_no_symlink_and_leave_no_temporary_file() {
        let d = dir("write");
        let victim = d.join("victim");
        std::fs::write(&victim, b"untouched").unwrap();
        let planted = d.join(format!("out{TMP_TAG}1.0"));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        assert!(create_new(&planted).is_err());
        std::fs::remove_file(&planted).unwrap();

        let target = d.join("out");
        std::os::unix::fs::symlink(&victim, &target).unwrap();
        write_atomically(&target, 5, |f| f.write_all(b"hello")).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"untouched");
        assert!(!std::fs::symlink_metadata(&target).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"hello");

        let failed = write_atomically(&target, 5, |f| {
            f.write_all(b"half")?;
            Err(std::io::Error::other("the writer failed"))
        });
        assert!(matches!(failed, Err(Error::Io(m)) if m.contains("the writer failed")));
        assert_eq!(std::fs::read(&target).unwrap(), b"hello");
        assert_eq!(names(&d), ["out", "victim"]);
        std::fs::remove_dir_all(d).unwrap();
    }

    /// A temporary file left by a killed writer is swept by the next write of its target; one
    /// of a live process is not.
    #[test]
    fn a_dead_writers_temporary_file_is_swept() {
        let d = dir("sweep");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = d.join(format!("out{TMP_TAG}{dead}.0"));
        let live = d.join(format!("out{TMP_TAG}{}.999999", std::process::id()));
        let other = d.join(format!("other{TMP_TAG}{dead}.0"));
        for p in [&stale, &live, &other] {
            std::fs::write(p, b"partial").unwrap();
        }
        write_atomically(&d.join("out"), 1, |f| f.write_all(b"x")).unwrap();
        assert!(!stale.exists() && live.exists() && other.exists());
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_write_larger_than_the_free_space_is_refused_before_it_starts() {
        let d = dir("room");
        let target = d.join("huge");
        let r = write_atomically(&target, u64::MAX / 2, |_| panic!("nothing may be written"));
        assert!(matches!(r, Err(Error::Io(m)) if m.contains("not enough free space")));
        assert!(names(&d).is_empty());
        check_room_on_disk(&d, 1 << 20).unwrap();
        std::fs::remove_dir_all(d).unwrap();
    }
}
