//! The panic boundary every entry runs inside, and the pointer checks every
//! entry makes before touching caller memory.

use std::any::Any;
use std::ffi::{c_char, CStr};
use std::path::PathBuf;

use super::status::{cuzk_error, cuzk_status, write_error, Failure, FfiResult};
use cuzk_status::*;

/// Runs an entry's body under `catch_unwind`.
///
/// - `ffi_boundary!(err, { ... })`: the body returns `FfiResult<()>` (it may
///   use `?` and `return`); the macro writes `err` (a `*mut cuzk_error`, may be
///   NULL) and evaluates to the `cuzk_status`. A panic becomes `CUZK_PANIC`
///   with the panic message.
/// - `ffi_boundary!(value_on_panic: v, { ... })`: for entries that return a
///   value instead of a status (`cuzk_version`, `*_free`): a panic gives `v`.
macro_rules! ffi_boundary {
    (value_on_panic: $on_panic:expr, $body:block) => {{
        match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| $body)) {
            Ok(v) => v,
            Err(payload) => {
                $crate::ffi::boundary::drop_payload(payload);
                $on_panic
            }
        }
    }};
    ($err:expr, $body:block) => {{
        let err_out: *mut $crate::ffi::cuzk_error = $err;
        let outcome =
            ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| -> $crate::ffi::FfiResult<()> { $body }));
        $crate::ffi::boundary::finish(err_out, outcome)
    }};
}

/// Turns an entry's outcome into its status and writes the error detail.
pub(crate) fn finish(err: *mut cuzk_error, outcome: std::thread::Result<FfiResult<()>>) -> cuzk_status {
    let (status, message) = match outcome {
        Ok(Ok(())) => (CUZK_OK, String::new()),
        Ok(Err(f)) => (f.status, f.message),
        Err(payload) => {
            let m = format!("panic inside cuzk: {}", payload_text(&*payload));
            drop_payload(payload);
            (CUZK_PANIC, m)
        }
    };
    // SAFETY: the entry's contract: `err` is NULL or a writable cuzk_error.
    unsafe { write_error(err, status, &message) };
    status
}

fn payload_text(p: &(dyn Any + Send)) -> &str {
    crate::error::panic_text(p)
}

/// Drops a panic payload; a payload whose destructor panics again is leaked
/// rather than allowed to unwind into the host.
pub(crate) fn drop_payload(p: Box<dyn Any + Send>) {
    if let Err(again) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(p))) {
        std::mem::forget(again);
    }
}

fn null(name: &str) -> Failure {
    Failure::new(CUZK_NULL_ARGUMENT, format!("{name} is NULL"))
}

fn misaligned(name: &str) -> Failure {
    Failure::new(CUZK_INVALID_ARGUMENT, format!("{name} is not aligned for its type"))
}

/// A shared reference to a caller's input.
///
/// # Safety
/// `p` is NULL or points to a valid `T` that outlives the call.
pub(crate) unsafe fn arg_ref<'a, T>(p: *const T, name: &str) -> FfiResult<&'a T> {
    if p.is_null() {
        return Err(null(name));
    }
    if !p.is_aligned() {
        return Err(misaligned(name));
    }
    Ok(&*p)
}

/// A caller's out-param, checked but not read (it may be uninitialised):
/// write it with `ptr.write(value)`.
pub(crate) fn arg_out<T>(p: *mut T, name: &str) -> FfiResult<*mut T> {
    if p.is_null() {
        return Err(null(name));
    }
    if !p.is_aligned() {
        return Err(misaligned(name));
    }
    Ok(p)
}

/// A caller's optional out-param: `None` for NULL, else checked as
/// [`arg_out`] does.
pub(crate) fn arg_opt_out<T>(p: *mut T, name: &str) -> FfiResult<Option<*mut T>> {
    if p.is_null() {
        return Ok(None);
    }
    arg_out(p, name).map(Some)
}

/// A caller's optional input: `None` for NULL, else checked as [`arg_ref`]
/// does.
///
/// # Safety
/// As [`arg_ref`].
pub(crate) unsafe fn arg_opt_ref<'a, T>(p: *const T, name: &str) -> FfiResult<Option<&'a T>> {
    if p.is_null() {
        return Ok(None);
    }
    arg_ref(p, name).map(Some)
}

/// A caller's byte slice; `(NULL, 0)` is the empty slice.
///
/// # Safety
/// Unless `len == 0`, `p` points to `len` readable bytes that outlive the call.
pub(crate) unsafe fn arg_bytes<'a>(p: *const u8, len: usize, name: &str) -> FfiResult<&'a [u8]> {
    arg_slice(p, len, name)
}

/// A caller's array of `len` values; `(NULL, 0)` is the empty slice.
///
/// # Safety
/// Unless `len == 0`, `p` points to `len` readable, initialised `T`s that
/// outlive the call.
pub(crate) unsafe fn arg_slice<'a, T>(p: *const T, len: usize, name: &str) -> FfiResult<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(null(name));
    }
    if len > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return Err(Failure::new(CUZK_INVALID_ARGUMENT, format!("{name}: length {len} is impossible")));
    }
    if !p.is_aligned() {
        return Err(misaligned(name));
    }
    Ok(std::slice::from_raw_parts(p, len))
}

/// Copies a call's result into the caller's buffer, which was checked before the work to hold
/// `announced` bytes (what the call's size query gives), and writes its length to `len`. A
/// result of another length is `CUZK_INTERNAL` with nothing written: never a write past the
/// buffer, whatever the size query got wrong.
///
/// # Safety
/// `out` points to at least `announced` writable bytes; `len` was checked by [`arg_out`].
pub(crate) unsafe fn copy_out(bytes: &[u8], announced: usize, out: *mut u8, len: *mut usize) -> FfiResult<()> {
    if bytes.len() != announced {
        return Err(Failure::new(
            CUZK_INTERNAL,
            format!("the result has {} bytes where {announced} were announced", bytes.len()),
        ));
    }
    std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len());
    len.write(bytes.len());
    Ok(())
}

/// A caller's NUL-terminated UTF-8 string.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that outlives the call.
pub(crate) unsafe fn arg_str<'a>(p: *const c_char, name: &str) -> FfiResult<&'a str> {
    if p.is_null() {
        return Err(null(name));
    }
    CStr::from_ptr(p).to_str().map_err(|e| Failure::new(CUZK_INVALID_ARGUMENT, format!("{name} is not UTF-8: {e}")))
}

/// A caller's NUL-terminated path (any bytes but NUL; copied).
///
/// # Safety
/// As [`arg_str`].
pub(crate) unsafe fn arg_path(p: *const c_char, name: &str) -> FfiResult<PathBuf> {
    if p.is_null() {
        return Err(null(name));
    }
    let bytes = CStr::from_ptr(p).to_bytes();
    if bytes.is_empty() {
        return Err(Failure::new(CUZK_INVALID_ARGUMENT, format!("{name} is empty")));
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
    }
    #[cfg(not(unix))]
    {
        std::str::from_utf8(bytes)
            .map(PathBuf::from)
            .map_err(|e| Failure::new(CUZK_INVALID_ARGUMENT, format!("{name} is not UTF-8: {e}")))
    }
}

/// Writes `text` NUL-terminated into a fixed `c_char` array, truncated at a
/// character boundary.
pub(crate) fn copy_to_chars(text: &str, dst: &mut [c_char]) {
    if dst.is_empty() {
        return;
    }
    let mut n = text.len().min(dst.len() - 1);
    while !text.is_char_boundary(n) {
        n -= 1;
    }
    for (d, s) in dst.iter_mut().zip(text.as_bytes()[..n].iter()) {
        *d = *s as c_char;
    }
    dst[n] = 0;
}
