//! Status codes and the caller-owned error object.

use std::ffi::c_char;

use crate::Error;

/// The result of every fallible `cuzk_*` call.
///
/// Values are explicit, grouped by hundreds and never reused: a retired code
/// stays here as a comment. 0 is success; 1xx the caller's arguments; 2xx
/// files and the PCE; 3xx Groth16 parameters; 4xx proving and verification;
/// 5xx GPUs; 6xx what the host process shares with the library; 9xx internal
/// errors and panics. The short text of each is
/// `cuzk_status_str`; the detail of one call is its `cuzk_error`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cuzk_status {
    /// Success.
    CUZK_OK = 0,
    /// A required pointer argument was NULL.
    CUZK_NULL_ARGUMENT = 100,
    /// An argument has a bad value: zero or absurd size, path or name not
    /// UTF-8, unknown backend, non-zero reserved field, ...
    CUZK_INVALID_ARGUMENT = 101,
    /// The circuit kind or name is not one this library has built in.
    CUZK_UNKNOWN_CIRCUIT = 102,
    /// The caller's output buffer is too small (the needed length is written
    /// to the length out-param).
    CUZK_BUFFER_TOO_SMALL = 103,
    /// The request names another circuit than the PCE handle holds.
    CUZK_CIRCUIT_MISMATCH = 104,
    /// Known but not available in this build (e.g. PoRep without the `porep`
    /// feature) or not yet wired through the ABI.
    CUZK_UNSUPPORTED = 105,
    /// The circuit is larger than the compact PCE format can hold.
    CUZK_TOO_LARGE = 106,
    /// A handle argument is not a live handle of its type: freed already (on
    /// this or another thread), or never returned by this library for it.
    CUZK_INVALID_HANDLE = 107,
    /// A file could not be read or written (permissions, disk full, ...).
    CUZK_IO = 200,
    /// A file that must exist does not.
    CUZK_FILE_NOT_FOUND = 201,
    /// A PCE file is truncated, corrupt, foreign, or for another circuit or
    /// format version.
    CUZK_BAD_PCE_FILE = 202,
    /// A parameter (`.params`) file could not be decoded.
    CUZK_BAD_PARAMS_FILE = 300,
    /// The parameters do not fit the circuit's shape.
    CUZK_PARAMS_MISMATCH = 301,
    /// The verifying key's delta is the identity (a subverted CRS).
    CUZK_PARAMS_IDENTITY_DELTA = 302,
    /// The circuit's synthesis failed (e.g. a missing assignment).
    CUZK_SYNTHESIS_FAILED = 400,
    /// The witness does not satisfy the constraints.
    CUZK_UNSATISFIED = 401,
    /// A proof did not verify.
    CUZK_VERIFICATION_FAILED = 402,
    /// Proof bytes do not decode as a Groth16 proof.
    CUZK_MALFORMED_PROOF = 403,
    /// The request needs more memory than the engine's whole budget.
    CUZK_OVER_BUDGET = 404,
    /// The request was cancelled before it ran.
    CUZK_CANCELLED = 405,
    /// A GPU operation failed.
    CUZK_GPU = 500,
    /// No CUDA device with the requested id (or a build without `cuda`).
    CUZK_NO_SUCH_DEVICE = 501,
    /// Other Rust code of the process set the `log` crate's logger first: the
    /// library's records go there, not to a `cuzk_set_log_callback` callback.
    CUZK_LOGGER_IN_USE = 600,
    /// A panic inside the library was caught at the boundary; the library is
    /// still usable, but report it: it is a bug.
    CUZK_PANIC = 900,
    /// An internal invariant failed.
    CUZK_INTERNAL = 901,
}

use cuzk_status::*;

/// Every status, for tests and for `cuzk_status_str`.
pub(crate) const ALL_STATUSES: [cuzk_status; 26] = [
    CUZK_OK,
    CUZK_NULL_ARGUMENT,
    CUZK_INVALID_ARGUMENT,
    CUZK_UNKNOWN_CIRCUIT,
    CUZK_BUFFER_TOO_SMALL,
    CUZK_CIRCUIT_MISMATCH,
    CUZK_UNSUPPORTED,
    CUZK_TOO_LARGE,
    CUZK_INVALID_HANDLE,
    CUZK_IO,
    CUZK_FILE_NOT_FOUND,
    CUZK_BAD_PCE_FILE,
    CUZK_BAD_PARAMS_FILE,
    CUZK_PARAMS_MISMATCH,
    CUZK_PARAMS_IDENTITY_DELTA,
    CUZK_SYNTHESIS_FAILED,
    CUZK_UNSATISFIED,
    CUZK_VERIFICATION_FAILED,
    CUZK_MALFORMED_PROOF,
    CUZK_OVER_BUDGET,
    CUZK_CANCELLED,
    CUZK_GPU,
    CUZK_NO_SUCH_DEVICE,
    CUZK_LOGGER_IN_USE,
    CUZK_PANIC,
    CUZK_INTERNAL,
];

impl cuzk_status {
    /// The static text of a status: its C name, then a short meaning.
    pub fn text(self) -> &'static str {
        match self {
            CUZK_OK => "CUZK_OK: success\0",
            CUZK_NULL_ARGUMENT => "CUZK_NULL_ARGUMENT: a required pointer was NULL\0",
            CUZK_INVALID_ARGUMENT => "CUZK_INVALID_ARGUMENT: an argument has a bad value\0",
            CUZK_UNKNOWN_CIRCUIT => "CUZK_UNKNOWN_CIRCUIT: no such built-in circuit\0",
            CUZK_BUFFER_TOO_SMALL => "CUZK_BUFFER_TOO_SMALL: the output buffer is too small\0",
            CUZK_CIRCUIT_MISMATCH => "CUZK_CIRCUIT_MISMATCH: the request names another circuit than the PCE\0",
            CUZK_UNSUPPORTED => "CUZK_UNSUPPORTED: not available in this build\0",
            CUZK_TOO_LARGE => "CUZK_TOO_LARGE: the circuit is too large\0",
            CUZK_INVALID_HANDLE => "CUZK_INVALID_HANDLE: not a live handle (freed, or not made for this)\0",
            CUZK_IO => "CUZK_IO: a file could not be read or written\0",
            CUZK_FILE_NOT_FOUND => "CUZK_FILE_NOT_FOUND: no such file\0",
            CUZK_BAD_PCE_FILE => "CUZK_BAD_PCE_FILE: the PCE file is truncated, corrupt or foreign\0",
            CUZK_BAD_PARAMS_FILE => "CUZK_BAD_PARAMS_FILE: the parameter file does not decode\0",
            CUZK_PARAMS_MISMATCH => "CUZK_PARAMS_MISMATCH: the parameters do not fit the circuit\0",
            CUZK_PARAMS_IDENTITY_DELTA => "CUZK_PARAMS_IDENTITY_DELTA: the verifying key's delta is the identity\0",
            CUZK_SYNTHESIS_FAILED => "CUZK_SYNTHESIS_FAILED: circuit synthesis failed\0",
            CUZK_UNSATISFIED => "CUZK_UNSATISFIED: the witness does not satisfy the constraints\0",
            CUZK_VERIFICATION_FAILED => "CUZK_VERIFICATION_FAILED: the proof did not verify\0",
            CUZK_MALFORMED_PROOF => "CUZK_MALFORMED_PROOF: the proof bytes do not decode\0",
            CUZK_OVER_BUDGET => "CUZK_OVER_BUDGET: the request needs more memory than the whole budget\0",
            CUZK_CANCELLED => "CUZK_CANCELLED: the request was cancelled before it ran\0",
            CUZK_GPU => "CUZK_GPU: a GPU operation failed\0",
            CUZK_NO_SUCH_DEVICE => "CUZK_NO_SUCH_DEVICE: no CUDA device with that id\0",
            CUZK_LOGGER_IN_USE => "CUZK_LOGGER_IN_USE: other code set the process's Rust logger first\0",
            CUZK_PANIC => "CUZK_PANIC: a panic was caught inside the library (a bug)\0",
            CUZK_INTERNAL => "CUZK_INTERNAL: an internal invariant failed\0",
        }
    }

    /// The status with this numeric value, if any.
    pub fn from_u32(v: u32) -> Option<cuzk_status> {
        ALL_STATUSES.into_iter().find(|s| *s as u32 == v)
    }
}

/// Capacity of [`cuzk_error::message`], the terminating NUL included.
pub const CUZK_ERROR_MESSAGE_LEN: usize = 1024;

/// The detail of one call's outcome, in memory the caller owns.
///
/// Pass a pointer to one (stack or heap, no initialisation needed) as the
/// last argument of a fallible call, or NULL to discard the detail. When
/// non-NULL it is always written before the call returns: `status` equals the
/// returned status and `message` holds a NUL-terminated UTF-8 text (empty on
/// success), truncated at a character boundary to fit. The library keeps no
/// pointer to it. Use one per call in flight (it is not shared state).
#[repr(C)]
pub struct cuzk_error {
    /// The status the call returned.
    pub status: cuzk_status,
    /// Zero; keeps `message` 8-byte aligned.
    pub _reserved: u32,
    /// What went wrong, NUL-terminated UTF-8 (empty on success).
    pub message: [c_char; CUZK_ERROR_MESSAGE_LEN],
}

/// A failed call: the status to return and the detail for `cuzk_error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub status: cuzk_status,
    pub message: String,
}

impl Failure {
    pub fn new(status: cuzk_status, message: impl Into<String>) -> Failure {
        Failure { status, message: message.into() }
    }
}

/// Shorthand for the result of a safe shell.
pub type FfiResult<T> = std::result::Result<T, Failure>;

/// The status of each crate error (context-free; callers that know better,
/// e.g. that an I/O error came from a parameter file, map it themselves).
pub fn status_of(e: &Error) -> cuzk_status {
    match e {
        Error::InvalidInput(_) => CUZK_INVALID_ARGUMENT,
        Error::UnknownCircuit(_) => CUZK_UNKNOWN_CIRCUIT,
        Error::Unsupported(_) => CUZK_UNSUPPORTED,
        Error::MalformedProof(_) => CUZK_MALFORMED_PROOF,
        Error::Synthesis(_) => CUZK_SYNTHESIS_FAILED,
        Error::Unsatisfied { .. } => CUZK_UNSATISFIED,
        Error::ParamsMismatch(_) => CUZK_PARAMS_MISMATCH,
        Error::IdentityDelta => CUZK_PARAMS_IDENTITY_DELTA,
        Error::VerificationFailed => CUZK_VERIFICATION_FAILED,
        Error::Io(_) => CUZK_IO,
        Error::BadPceFile(_) => CUZK_BAD_PCE_FILE,
        Error::BadParamsFile(_) => CUZK_BAD_PARAMS_FILE,
        Error::TooLarge(_) => CUZK_TOO_LARGE,
        Error::Gpu(_) => CUZK_GPU,
        Error::OverBudget(_) => CUZK_OVER_BUDGET,
        Error::Cancelled => CUZK_CANCELLED,
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure { status: status_of(&e), message: e.to_string() }
    }
}

/// Writes `status` and `message` into `*err` (when non-NULL), truncating the
/// message at a UTF-8 character boundary.
///
/// # Safety
/// `err` is NULL or points to writable memory of `cuzk_error`'s size.
pub(crate) unsafe fn write_error(err: *mut cuzk_error, status: cuzk_status, message: &str) {
    if err.is_null() {
        return;
    }
    let mut n = message.len().min(CUZK_ERROR_MESSAGE_LEN - 1);
    while !message.is_char_boundary(n) {
        n -= 1;
    }
    // Raw writes, no reference: the caller's struct may be uninitialised.
    std::ptr::addr_of_mut!((*err).status).write(status);
    std::ptr::addr_of_mut!((*err)._reserved).write(0);
    let dst = std::ptr::addr_of_mut!((*err).message).cast::<u8>();
    std::ptr::copy_nonoverlapping(message.as_ptr(), dst, n);
    dst.add(n).write(0);
}

/// The static text of a status code, e.g. `"CUZK_NULL_ARGUMENT: a required
/// pointer was NULL"`; an unknown code gives `"unknown cuzk_status"`.
///
/// Takes a plain `uint32_t` so any value is safe to pass. Ownership: returns a
/// pointer to a static NUL-terminated string; never free it. Thread-safety:
/// safe from any thread.
#[no_mangle]
pub extern "C" fn cuzk_status_str(status: u32) -> *const c_char {
    ffi_boundary!(value_on_panic: c"CUZK_PANIC".as_ptr(), {
        match cuzk_status::from_u32(status) {
            Some(s) => s.text().as_ptr().cast(),
            None => c"unknown cuzk_status".as_ptr(),
        }
    })
}
