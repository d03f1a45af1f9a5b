//! `cuzk_pce`: a handle to the process-wide PCE of one circuit.

use std::ffi::c_char;
use std::path::Path;
use std::sync::Arc;

use super::boundary::{arg_out, arg_path, arg_ref, copy_to_chars};
use super::circuit::{circuit_from_c, cuzk_circuit};
use super::handles::Handles;
use super::status::{cuzk_error, cuzk_status, cuzk_status::*, Failure, FfiResult};
use crate::circuits::Circuit;
use crate::pce::{registry, Access, Pce};
use crate::Error;

/// Skip the per-section checksums when loading an existing PCE file (bounds
/// and structure are still validated). Without it, a PCE already loaded with
/// it has its file's checksums checked then, once. A flag of `cuzk_pce_load`.
pub const CUZK_PCE_LOAD_SKIP_CHECKSUMS: u32 = 1;

/// Map the PCE file and use it in place instead of reading it into memory. A
/// flag of `cuzk_pce_load`.
///
/// The pages are then shared with the page cache (and with other processes
/// mapping the file) and reclaimable under memory pressure; they count as
/// `pce_mapped_bytes` instead of `pce_bytes`. The hazard: while the PCE is
/// loaded the file must stay exactly as it was (replace it only by renaming
/// a new file over it). Truncating it, or an I/O error when a reclaimed page
/// is read again, raises SIGBUS inside `cuzk_prove`, which kills the host
/// process; rewriting it in place (`cp other.pce this.pce`) changes the
/// matrices under the prover after they were validated.
pub const CUZK_PCE_LOAD_MAP: u32 = 2;

/// Capacity of [`cuzk_pce_info::circuit_id`], the terminating NUL included.
pub const CUZK_CIRCUIT_ID_LEN: usize = 256;

/// A handle to the single in-process PCE of one circuit (opaque).
///
/// It holds a reference to the shared instance: the PCE stays in memory while
/// any handle (or the process-wide registry) holds it. Immutable: one handle
/// may be used by many threads at once; free it exactly once, after its last
/// use, with `cuzk_pce_free`.
pub struct cuzk_pce {
    pub(crate) pce: Arc<Pce>,
    pub(crate) id: String,
}

/// The live `cuzk_pce` handles.
pub(crate) static HANDLES: Handles<cuzk_pce> = Handles::new();

/// What a PCE holds (filled by `cuzk_pce_info`).
#[repr(C)]
pub struct cuzk_pce_info {
    /// Constraints (rows), bellperson's input rows included.
    pub num_constraints: u64,
    /// Public inputs, the ONE included.
    pub num_inputs: u64,
    /// Private (aux) variables.
    pub num_aux: u64,
    /// Non-zero coefficients of A, B and C together.
    pub nnz: u64,
    /// Bytes of the compact form, wherever they live.
    pub bytes: u64,
    /// Of those, bytes in anonymous memory: all of them when read from the
    /// file (the default) or extracted, the dictionary alone when mapped
    /// (`CUZK_PCE_LOAD_MAP`).
    pub heap_bytes: u64,
    /// An opaque id of the in-memory instance: equal for every handle that
    /// shares one instance (e.g. two loads of one circuit).
    pub instance: u64,
    /// The circuit id (names the R1CS), NUL-terminated.
    pub circuit_id: [c_char; CUZK_CIRCUIT_ID_LEN],
}

/// Loads a circuit's PCE into the process-wide registry (one instance per circuit).
pub fn load_pce(circuit: Circuit, path: &Path, verify_checksums: bool, access: Access) -> FfiResult<cuzk_pce> {
    let pce = circuit.load_pce(path, verify_checksums, access).map_err(|e| match e {
        Error::Io(m) => Failure::new(CUZK_IO, format!("PCE file {}: {m}", path.display())),
        other => other.into(),
    })?;
    Ok(cuzk_pce { pce, id: circuit.circuit_id()? })
}

/// Loads the PCE of a built-in circuit, or, when `path` does not exist yet,
/// extracts it from the circuit, saves it there atomically and loads it back.
/// Loading a circuit that is already loaded is cheap and gives a new handle to
/// the same instance (`cuzk_pce_info().instance` is equal); `path` and
/// `flags` then change nothing.
///
/// By default the file is read into memory: once loaded, the PCE no longer
/// depends on it, and the file may be rewritten, replaced or removed.
/// `CUZK_PCE_LOAD_MAP` maps it instead, with the hazard its doc states.
///
/// - `circuit`: read during the call only.
/// - `path`: NUL-terminated file path, copied; its directory must exist.
/// - `flags`: 0, or `CUZK_PCE_LOAD_SKIP_CHECKSUMS` and/or `CUZK_PCE_LOAD_MAP`.
/// - `out`: on success receives a new handle the caller owns and frees with
///   `cuzk_pce_free`; untouched on failure.
/// - `err`: NULL or a caller-owned `cuzk_error`, always written.
///
/// Errors: `CUZK_NULL_ARGUMENT`, `CUZK_UNKNOWN_CIRCUIT`,
/// `CUZK_INVALID_ARGUMENT`, `CUZK_BAD_PCE_FILE` (truncated, corrupt, or for
/// another circuit), `CUZK_IO`, `CUZK_TOO_LARGE` (above the size limit, or
/// more than the process can take: reading the file, or extracting the PCE),
/// `CUZK_UNSUPPORTED`.
///
/// Thread-safety: safe from many threads at once; concurrent loads of one
/// circuit wait for a single load.
#[no_mangle]
pub unsafe extern "C" fn cuzk_pce_load(
    circuit: *const cuzk_circuit,
    path: *const c_char,
    flags: u32,
    out: *mut *mut cuzk_pce,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let circuit = circuit_from_c(arg_ref(circuit, "circuit")?)?;
        let path = arg_path(path, "path")?;
        let out = arg_out(out, "out")?;
        if flags & !(CUZK_PCE_LOAD_SKIP_CHECKSUMS | CUZK_PCE_LOAD_MAP) != 0 {
            return Err(Failure::new(CUZK_INVALID_ARGUMENT, format!("unknown flags {flags:#x}")));
        }
        let access = if flags & CUZK_PCE_LOAD_MAP != 0 { Access::Map } else { Access::Read };
        let handle = load_pce(circuit, &path, flags & CUZK_PCE_LOAD_SKIP_CHECKSUMS == 0, access)?;
        out.write(HANDLES.insert(handle));
        Ok(())
    })
}

/// Fills `out` with the sizes and id of a loaded PCE.
///
/// `pce` is borrowed for the call; `out` is caller-owned and written only on
/// success. Thread-safety: safe from many threads at once.
#[no_mangle]
pub unsafe extern "C" fn cuzk_pce_info(
    pce: *const cuzk_pce,
    out: *mut cuzk_pce_info,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let h = HANDLES.get(pce, "pce")?;
        let out = arg_out(out, "out")?;
        let p = &h.pce;
        let mut info = cuzk_pce_info {
            num_constraints: p.num_constraints() as u64,
            num_inputs: p.num_inputs as u64,
            num_aux: p.num_aux as u64,
            nnz: p.nnz(),
            bytes: p.byte_len() as u64,
            heap_bytes: p.heap_bytes() as u64,
            instance: Arc::as_ptr(p) as usize as u64,
            circuit_id: [0; CUZK_CIRCUIT_ID_LEN],
        };
        copy_to_chars(&h.id, &mut info.circuit_id);
        out.write(info);
        Ok(())
    })
}

/// Drops the process-wide registry's reference to this handle's PCE (the
/// instance the handle holds: through a handle from before an earlier
/// unload, a newer instance of its circuit stays loaded), so its memory is
/// freed once every handle to it is freed too; a later `cuzk_pce_load` loads
/// it afresh. The handle itself stays valid (free it with `cuzk_pce_free`).
///
/// Thread-safety: safe from many threads at once; proofs in flight keep their
/// own reference.
#[no_mangle]
pub unsafe extern "C" fn cuzk_pce_unload(pce: *const cuzk_pce, err: *mut cuzk_error) -> cuzk_status {
    ffi_boundary!(err, {
        let h = HANDLES.get(pce, "pce")?;
        registry::unload_instance(&h.pce);
        Ok(())
    })
}

/// Frees a handle from `cuzk_pce_load`. The shared PCE itself is freed only
/// when no handle, no call in flight and no registry entry holds it.
///
/// Call once per handle, after its last use. Misuse is safe: NULL, or a handle
/// already freed, is a no-op; calls in flight on other threads keep what they
/// use until they return; later calls with it get `CUZK_INVALID_HANDLE`.
#[no_mangle]
pub unsafe extern "C" fn cuzk_pce_free(pce: *mut cuzk_pce) {
    ffi_boundary!(value_on_panic: (), {
        HANDLES.remove(pce);
    })
}
