//! Cancellation tokens: made, triggered from any thread, freed.

use super::boundary::arg_out;
use super::handles::Handles;
use super::status::{cuzk_error, cuzk_status};
use crate::engine::CancelToken;

/// A cancellation token (opaque). Pass it to `cuzk_prove`; `cuzk_cancel_trigger`
/// from any thread makes a request that is still waiting (for budget or a
/// device, or between stages) return `CUZK_CANCELLED`, holding no memory.
/// A stage already running finishes first. One token may serve several calls.
pub struct cuzk_cancel {
    pub(crate) token: CancelToken,
}

/// The live `cuzk_cancel` handles.
pub(crate) static CANCELS: Handles<cuzk_cancel> = Handles::new();

/// Creates a cancellation token. `out` receives a handle the caller owns and
/// frees with `cuzk_cancel_free`.
#[no_mangle]
pub unsafe extern "C" fn cuzk_cancel_new(out: *mut *mut cuzk_cancel, err: *mut cuzk_error) -> cuzk_status {
    ffi_boundary!(err, {
        let out = arg_out(out, "out")?;
        out.write(CANCELS.insert(cuzk_cancel { token: CancelToken::new() }));
        Ok(())
    })
}

/// Cancels every request given this token that has not finished: those
/// waiting return `CUZK_CANCELLED` promptly (within ~20 ms), those in a stage
/// when it ends. Irreversible. Thread-safety: safe from any thread, at any
/// time before `cuzk_cancel_free`, also while `cuzk_prove` runs with it.
#[no_mangle]
pub unsafe extern "C" fn cuzk_cancel_trigger(cancel: *const cuzk_cancel, err: *mut cuzk_error) -> cuzk_status {
    ffi_boundary!(err, {
        CANCELS.get(cancel, "cancel")?.token.cancel();
        Ok(())
    })
}

/// Frees a token. Calls in flight with it keep it until they return. NULL,
/// or a token already freed, is a no-op; later calls with it (a trigger
/// too) get `CUZK_INVALID_HANDLE`.
#[no_mangle]
pub unsafe extern "C" fn cuzk_cancel_free(cancel: *mut cuzk_cancel) {
    ffi_boundary!(value_on_panic: (), {
        CANCELS.remove(cancel);
    })
}
