//! The C ABI: every `extern "C"` function of `libcuzk.a`, each a thin shell
//! over a safe Rust function. `include/cuzk.h` is generated from this module
//! by a pinned cbindgen (see `cbindgen.toml` and `scripts/gen-header.sh`).
//!
//! Conventions (docs/api.md):
//! - every fallible function returns a [`cuzk_status`] and writes its results
//!   through out-params only on success;
//! - error detail goes into a caller-owned [`cuzk_error`] passed to the call
//!   (never a thread-local: goroutines migrate between OS threads);
//! - every entry runs inside `ffi_boundary!`: a panic comes back as
//!   `CUZK_PANIC`, never unwinds into the host;
//! - every pointer is checked (NULL → `CUZK_NULL_ARGUMENT`), `(NULL, 0)` is an
//!   empty slice, and no host pointer is kept after a call returns;
//! - handles ([`cuzk_pce`], [`cuzk_params`], [`cuzk_engine`], [`cuzk_cancel`], [`cuzk_agg_srs`]) are tokens
//!   looked up in a table per type (`handles.rs`), each holding an `Arc` to a shared
//!   instance: a freed, foreign or forged handle is `CUZK_INVALID_HANDLE`, a call holds what
//!   it uses until it returns, and `*_free` of NULL or of a freed handle is a no-op.

#![allow(non_camel_case_types)]
// Every `extern "C"` fn here dereferences caller pointers after checking them;
// their contracts are in the doc comments (and the header), not in Rust's
// `unsafe fn` marker, which C cannot see.
#![allow(clippy::missing_safety_doc)]

#[macro_use]
mod boundary;
mod aggregate;
mod cancel;
mod circuit;
mod device;
mod engine;
mod handles;
mod log;
mod mem;
mod params;
mod pce;
mod prove;
mod status;
#[cfg(test)]
mod tests;
mod verify;

use std::ffi::c_char;

pub use self::log::*;
pub use aggregate::*;
pub use cancel::*;
pub use circuit::{cuzk_circuit, cuzk_circuit_kind, cuzk_proof_len, cuzk_request_proof_len, CUZK_MAX_SYNTHETIC_SIZE};
pub use device::*;
pub use engine::*;
pub use mem::*;
pub use params::*;
pub use pce::*;
pub use prove::*;
pub use status::*;
pub use verify::*;

/// The library version, `"MAJOR.MINOR.PATCH"` (equal to `CUZK_VERSION` in the
/// header it was built with).
///
/// Ownership: returns a pointer to a static NUL-terminated string; never free
/// it. Thread-safety: safe from any thread.
#[no_mangle]
pub extern "C" fn cuzk_version() -> *const c_char {
    ffi_boundary!(value_on_panic: std::ptr::null(), {
        concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
    })
}

/// Test-only: panics inside the library, to check that a panic comes back as
/// `CUZK_PANIC` (with the panic message in `err`) instead of aborting the
/// host. Never useful in production; always present so the shipped library is
/// the one tested.
///
/// Ownership: `err` may be NULL; it is written before return. Thread-safety:
/// safe from any thread (the panic is caught on the calling thread).
#[no_mangle]
pub unsafe extern "C" fn cuzk_debug_panic(err: *mut cuzk_error) -> cuzk_status {
    ffi_boundary!(err, { panic!("cuzk_debug_panic: deliberate test panic") })
}
