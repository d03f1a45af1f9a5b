//! `cuzk_params`: a handle to resident Groth16 parameters (the SRS).

use std::ffi::c_char;
use std::path::Path;
use std::sync::Arc;

use super::boundary::{arg_out, arg_path, arg_ref, copy_out};
use super::circuit::{circuit_from_c, cuzk_circuit};
use super::handles::Handles;
use super::status::{cuzk_error, cuzk_status, cuzk_status::*, Failure, FfiResult};
use crate::circuits::Circuit;
use crate::params::generate_params;
use crate::params::{srs, LoadOptions, Srs};

/// Check that every point is in its subgroup while reading (on every core;
/// points read from the decoded cache are checked too). Parameters already loaded
/// without it have their resident points checked then, once. A flag of
/// `cuzk_params_load`. Without it the points are only checked to be on their
/// curve, as filecoin-proofs trusts its parameter cache.
pub const CUZK_PARAMS_LOAD_CHECKED: u32 = 1;

/// Neither read nor write the decoded cache beside the file
/// (`<file>.cuzk-srs`, as large as the file): decode the file every time. A
/// flag of `cuzk_params_load`.
pub const CUZK_PARAMS_LOAD_NO_CACHE: u32 = 2;

/// Return once the file's layout, size and verifying key are checked (milliseconds), and decode
/// its points (or read their cache) on a library thread: a proof waits for them only after its
/// witness, so the first proof's witness hides the decoding. A bad point (off its curve, at
/// infinity, or with `CUZK_PARAMS_LOAD_CHECKED` outside its subgroup) is then reported by the
/// first proof (`CUZK_BAD_PARAMS_FILE`) or by `cuzk_params_wait`; a later load of the file reads
/// it afresh. The points' bytes count in `cuzk_mem_stats.srs_bytes` from the start. A flag of
/// `cuzk_params_load`.
pub const CUZK_PARAMS_LOAD_BACKGROUND: u32 = 4;

/// A handle to Groth16 parameters kept resident, one instance per file per
/// process (opaque). Immutable: one handle may be used by many threads at
/// once; free it exactly once, after its last use, with `cuzk_params_free`.
pub struct cuzk_params {
    pub(crate) params: Arc<Srs>,
}

/// The live `cuzk_params` handles.
pub(crate) static HANDLES: Handles<cuzk_params> = Handles::new();

/// `CUZK_FILE_NOT_FOUND` for a missing file, distinct from the other I/O errors.
pub(super) fn exists(path: &Path) -> FfiResult<()> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(Failure::new(CUZK_FILE_NOT_FOUND, format!("{}: no such file", path.display())))
        }
        _ => Ok(()),
    }
}

/// Loads (or finds already loaded) the parameters in `path`.
pub fn load_params(path: &Path, o: LoadOptions) -> FfiResult<cuzk_params> {
    exists(path)?;
    let params = srs::load(path, o)?;
    Ok(cuzk_params { params })
}

/// Generates real parameters for `circuit` from its PCE (recorded from its blank
/// form), writes them to `path` and loads them.
pub fn generate(circuit: Circuit, path: &Path, seed: u64) -> FfiResult<cuzk_params> {
    let pce = circuit.extract_pce()?;
    let seed = if seed == 0 { rand::random::<u64>() | 1 } else { seed };
    // Whatever was loaded from this path before is stale now.
    srs::unload(path);
    drop(generate_params(&pce, path, seed, None)?);
    drop(pce);
    load_params(path, LoadOptions::default())
}

/// Loads bellperson/Filecoin Groth16 parameters (a `.params` file) and keeps
/// them resident; loading a file that is already loaded is cheap and shares
/// the instance. The points are decoded on every core; the decoded form is
/// kept beside the file (`<file>.cuzk-srs`, checksummed, used only while it
/// matches the file) so that the next start reads it back at disk speed. The
/// cache is written by a library thread after this returns (it holds the
/// points until it is done, also when the parameters are freed meanwhile); a
/// process that ends first leaves none, or a partial `<file>.tmp<pid>` that
/// is never read. A cache that cannot be written (read-only directory, full
/// disk) only costs the next start its decoding.
///
/// - `path`: NUL-terminated, copied; a regular file (a FIFO or a directory is
///   `CUZK_INVALID_ARGUMENT` at once).
/// - `flags`: 0, or any of `CUZK_PARAMS_LOAD_CHECKED`,
///   `CUZK_PARAMS_LOAD_NO_CACHE` and `CUZK_PARAMS_LOAD_BACKGROUND` (which
///   changes when a bad point is reported: see there).
/// - `out`: on success receives a new handle the caller owns and frees with
///   `cuzk_params_free`; untouched on failure.
/// - `err`: NULL or a caller-owned `cuzk_error`, always written.
///
/// Errors: `CUZK_NULL_ARGUMENT`, `CUZK_INVALID_ARGUMENT`,
/// `CUZK_FILE_NOT_FOUND`, `CUZK_IO`, `CUZK_BAD_PARAMS_FILE` (truncated,
/// corrupt or not a parameter file, with what and where), `CUZK_TOO_LARGE`
/// (the process cannot take the decoded parameters: about the file's size).
///
/// Thread-safety: safe from many threads at once.
#[no_mangle]
pub unsafe extern "C" fn cuzk_params_load(
    path: *const c_char,
    flags: u32,
    out: *mut *mut cuzk_params,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let path = arg_path(path, "path")?;
        let out = arg_out(out, "out")?;
        let known = CUZK_PARAMS_LOAD_CHECKED | CUZK_PARAMS_LOAD_NO_CACHE | CUZK_PARAMS_LOAD_BACKGROUND;
        if flags & !known != 0 {
            return Err(Failure::new(CUZK_INVALID_ARGUMENT, format!("unknown flags {flags:#x}")));
        }
        let h = load_params(
            &path,
            LoadOptions {
                checked: flags & CUZK_PARAMS_LOAD_CHECKED != 0,
                cache: flags & CUZK_PARAMS_LOAD_NO_CACHE == 0,
                background: flags & CUZK_PARAMS_LOAD_BACKGROUND != 0,
            },
        )?;
        out.write(HANDLES.insert(h));
        Ok(())
    })
}

/// Generates real Groth16 parameters for a built-in circuit, writes them to
/// `path` atomically (replacing any file there) and loads them. They are what
/// bellperson's `generate_random_parameters` makes with
/// `ChaCha20Rng::seed_from_u64(seed)`, evaluated from the circuit's recorded
/// matrices: seconds per million constraints on a few cores (bellperson's
/// generator takes minutes). A Filecoin circuit's generated parameters are not
/// Filecoin's: proofs made with them verify only against them.
///
/// For demos and tests only: the trapdoor comes from a 64-bit `seed` (0 = a
/// random seed), so these parameters must never secure anything real.
///
/// Errors: as `cuzk_params_load`, and `CUZK_TOO_LARGE` when the process
/// cannot hold the generation (about 0.8 KB per constraint).
///
/// Ownership as `cuzk_params_load`; `circuit` is read during the call only.
/// Thread-safety: safe from many threads at once, but do not generate into
/// one path from two threads.
#[no_mangle]
pub unsafe extern "C" fn cuzk_params_generate(
    circuit: *const cuzk_circuit,
    path: *const c_char,
    seed: u64,
    out: *mut *mut cuzk_params,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let circuit = circuit_from_c(arg_ref(circuit, "circuit")?)?;
        let path = arg_path(path, "path")?;
        let out = arg_out(out, "out")?;
        let h = generate(circuit, &path, seed)?;
        out.write(HANDLES.insert(h));
        Ok(())
    })
}

/// Writes the file name of `circuit`'s production parameters, as filecoin-proofs names it in
/// its parameter cache (filecoin-proofs' own `parameter_id` of the circuit's parameter cache
/// identifier; what its `cache_params_path` ends in), NUL-terminated: e.g.
/// `v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a3….params`
/// for PoRep at 32GiB, `v28-proof-of-spacetime-fallback-….params` for PoSt,
/// `v28-empty-sector-update-merkletree-….params` for SnapDeals. The directory is the host's to
/// choose (filecoin-ffi's is `FIL_PROOFS_PARAMETER_CACHE`, else
/// `/var/tmp/filecoin-proof-parameters`); the verifying key is the same stem with `.vk`. One
/// file serves every registered proof of a circuit (PoRep's three seal variants; WindowPoSt
/// `V1` and `V1_2`).
///
/// - `circuit`: a Filecoin circuit (PoRep, WinningPoSt, WindowPoSt, SnapDeals); read during the
///   call only.
/// - `out`, `out_cap`: a caller-owned buffer for the name and its NUL; written only on success.
/// - `out_len`: receives the bytes written, the NUL included; on `CUZK_BUFFER_TOO_SMALL` the
///   bytes needed (so `(NULL, 0)` is a size query).
/// - `err`: NULL or a caller-owned `cuzk_error`, always written.
///
/// Errors: `CUZK_NULL_ARGUMENT`, `CUZK_UNKNOWN_CIRCUIT`, `CUZK_INVALID_ARGUMENT` (a synthetic
/// circuit: it has no production parameters), `CUZK_BUFFER_TOO_SMALL`, `CUZK_UNSUPPORTED` (a
/// build without `porep`).
///
/// Thread-safety: safe from any thread.
#[no_mangle]
pub unsafe extern "C" fn cuzk_params_file_name(
    circuit: *const cuzk_circuit,
    out: *mut c_char,
    out_cap: usize,
    out_len: *mut usize,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let circuit = circuit_from_c(arg_ref(circuit, "circuit")?)?;
        let out_len = arg_out(out_len, "out_len")?;
        let mut name = circuit.params_file_name()?.into_bytes();
        name.push(0);
        if out_cap < name.len() {
            out_len.write(name.len());
            return Err(Failure::new(
                CUZK_BUFFER_TOO_SMALL,
                format!("the name takes {} bytes with its NUL, the buffer has {out_cap}", name.len()),
            ));
        }
        let out = arg_out(out, "out")?;
        copy_out(&name, name.len(), out.cast(), out_len)
    })
}

/// Waits until the parameters' points are decoded (at once unless they were
/// loaded with `CUZK_PARAMS_LOAD_BACKGROUND`) and returns how that ended:
/// `CUZK_OK`, or the error the load would have returned without the flag
/// (`CUZK_BAD_PARAMS_FILE` for a bad point, also when the file changed during
/// the decoding; `CUZK_IO`). Not cancellable: the decoding of a 47 GiB file
/// takes seconds to a few tens of seconds.
///
/// `params` is borrowed for the call. Thread-safety: safe from many threads
/// at once.
#[no_mangle]
pub unsafe extern "C" fn cuzk_params_wait(params: *const cuzk_params, err: *mut cuzk_error) -> cuzk_status {
    ffi_boundary!(err, {
        let h = HANDLES.get(params, "params")?;
        h.params.queries()?;
        Ok(())
    })
}

/// Drops the process-wide cache's reference to this handle's parameters (the
/// instance the handle holds, even if its file was renamed, replaced or
/// deleted since), so they are freed once every handle to them is freed too;
/// a later load of the file reads it afresh. The handle itself stays valid
/// (free it with `cuzk_params_free`).
///
/// Thread-safety: safe from many threads at once.
#[no_mangle]
pub unsafe extern "C" fn cuzk_params_unload(params: *const cuzk_params, err: *mut cuzk_error) -> cuzk_status {
    ffi_boundary!(err, {
        let h = HANDLES.get(params, "params")?;
        srs::unload_instance(&h.params);
        Ok(())
    })
}

/// Frees a handle from `cuzk_params_load` or `cuzk_params_generate`. Call once
/// per handle, after its last use. Misuse is safe: NULL, or a handle already
/// freed, is a no-op; calls in flight keep what they use until they return;
/// later calls with it get `CUZK_INVALID_HANDLE`.
/// When it was the last reference to unloaded parameters, their GPU copies
/// are freed too.
#[no_mangle]
pub unsafe extern "C" fn cuzk_params_free(params: *mut cuzk_params) {
    ffi_boundary!(value_on_panic: (), {
        if HANDLES.remove(params) {
            srs::release_unused_device_copies();
        }
    })
}
