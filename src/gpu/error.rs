//! The GPU layer's error type and the conversion of sppark's.

/// A CUDA or argument error from the GPU layer, with sppark's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuError {
    /// Negated `cudaError_t` for CUDA failures, -1 otherwise.
    pub code: i32,
    pub message: String,
}

impl std::fmt::Display for GpuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GPU error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for GpuError {}

pub type Result<T> = std::result::Result<T, GpuError>;

impl From<GpuError> for crate::Error {
    fn from(e: GpuError) -> Self {
        crate::Error::Gpu(e.to_string())
    }
}

/// `Ok` for sppark's success code, else its code and message.
pub(super) fn check(err: sppark::Error) -> Result<()> {
    if err.code == 0 {
        Ok(())
    } else {
        Err(GpuError { code: err.code, message: String::from(&err) })
    }
}

/// A bad argument, caught before any C call.
pub(super) fn invalid_argument(message: impl Into<String>) -> GpuError {
    GpuError { code: -1, message: message.into() }
}
