//! The crate's error type: every fallible path returns one of these, never panics.

use std::fmt;

/// What went wrong, with enough detail to act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The caller passed something malformed (wrong length, bad JSON, bad value).
    InvalidInput(String),
    /// No built-in circuit has this kind or name.
    UnknownCircuit(String),
    /// Known, but not in this build (e.g. PoRep without the `porep` feature).
    Unsupported(String),
    /// Proof bytes that do not decode as Groth16 proofs.
    MalformedProof(String),
    /// The circuit's own synthesis failed (e.g. a missing assignment).
    Synthesis(String),
    /// The witness does not satisfy the constraints.
    Unsatisfied { constraint: usize },
    /// Parameters do not match the circuit's shape.
    ParamsMismatch(String),
    /// The verifying key's delta is the identity (a subverted CRS).
    IdentityDelta,
    /// A proof did not verify.
    VerificationFailed,
    /// A file could not be read or written.
    Io(String),
    /// A PCE file is truncated, corrupt, foreign, or for another circuit/version.
    BadPceFile(String),
    /// A `.params` file is truncated, corrupt or not a parameter file.
    BadParamsFile(String),
    /// The circuit is larger than the compact format can hold.
    TooLarge(String),
    /// A GPU operation failed or no device is present.
    Gpu(String),
    /// A request needs more memory than the engine's whole budget.
    OverBudget(String),
    /// The request was cancelled before it ran.
    Cancelled,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidInput(m) => write!(f, "invalid input: {m}"),
            Error::UnknownCircuit(m) | Error::Unsupported(m) | Error::MalformedProof(m) => f.write_str(m),
            Error::Synthesis(m) => write!(f, "circuit synthesis failed: {m}"),
            Error::Unsatisfied { constraint } => {
                write!(f, "witness does not satisfy constraint {constraint}")
            }
            Error::ParamsMismatch(m) => write!(f, "parameters do not match the circuit: {m}"),
            Error::IdentityDelta => write!(f, "verifying key delta is the identity"),
            Error::VerificationFailed => write!(f, "proof did not verify"),
            Error::Io(m) => write!(f, "i/o error: {m}"),
            Error::BadPceFile(m) => write!(f, "bad PCE file: {m}"),
            Error::BadParamsFile(m) => write!(f, "bad parameter file: {m}"),
            Error::TooLarge(m) => write!(f, "circuit too large: {m}"),
            Error::Gpu(m) => write!(f, "gpu error: {m}"),
            Error::OverBudget(m) => write!(f, "over the memory budget: {m}"),
            Error::Cancelled => write!(f, "cancelled"),
        }
    }
}

impl std::error::Error for Error {}

/// The message of a caught panic.
pub(crate) fn panic_text(p: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = p.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = p.downcast_ref::<String>() {
        s
    } else {
        "(non-string panic payload)"
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e.to_string())
    }
}

impl From<bellperson::SynthesisError> for Error {
    fn from(e: bellperson::SynthesisError) -> Self {
        Error::Synthesis(e.to_string())
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;
