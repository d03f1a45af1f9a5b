//! The GPU layer's error type and the conversion of sppark's.

/// A CUDA or argument error from the GPU layer, with sppark's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuError {
    /// Negated `cudaError_t` for CUDA failures, [`GpuError::ARGUMENT`] for a bad argument
    /// caught before any C call, -1 otherwise.
    pub code: i32,
    pub message: String,
}

impl GpuError {
    /// The code of a bad argument: the caller's error, not the device's.
    pub const ARGUMENT: i32 = i32::MIN;
}

impl std::fmt::Display for GpuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GPU error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for GpuError {}

pub type Result<T> = std::result::Result<T, GpuError>;

/// A bad argument is `InvalidInput` (it says nothing of the device's health); anything else is
/// a device error.
impl From<GpuError> for crate::Error {
    fn from(e: GpuError) -> Self {
        match e.code {
            GpuError::ARGUMENT => crate::Error::InvalidInput(e.message),
            _ => crate::Error::Gpu(e.to_string()),
        }
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
    GpuError { code: GpuError::ARGUMENT, message: message.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_errors_are_not_device_errors() {
        let e: crate::Error = invalid_argument("lg_domain 29 outside 1..=28").into();
        assert_eq!(e, crate::Error::InvalidInput("lg_domain 29 outside 1..=28".into()));
        let e: crate::Error = GpuError { code: -2, message: "out of memory".into() }.into();
        assert!(matches!(e, crate::Error::Gpu(_)));
    }
}
