//! `cuzk_aggregate`: SnarkPack aggregation of sectors' seal proofs, and `cuzk_agg_srs`, a
//! handle to the aggregation SRS it needs.

use std::ffi::c_char;
use std::sync::Arc;

#[cfg(feature = "porep")]
use super::boundary::{arg_bytes, arg_str};
use super::boundary::{arg_out, arg_path, arg_slice, copy_out};
use super::handles::Handles;
use super::status::{cuzk_error, cuzk_status, cuzk_status::*, Failure, FfiResult};
use crate::aggregate::srs::load_shared;
use crate::aggregate::{AggregationSrs, Version};

/// The SnarkPack transcript versions (`cuzk_aggregate`'s `version`), as filecoin-proofs-api's
/// `RegisteredAggregationProof` names them. 0 is deliberately not one.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cuzk_snarkpack_version {
    /// `SnarkPackV1`.
    CUZK_SNARKPACK_V1 = 1,
    /// `SnarkPackV2`: what lotus and NonInteractivePoRep use.
    CUZK_SNARKPACK_V2 = 2,
}

/// A handle to an aggregation SRS read for up to a number of proofs (opaque). Immutable: one
/// handle may be used by many threads at once; free it exactly once with `cuzk_agg_srs_free`.
pub struct cuzk_agg_srs {
    pub(super) srs: Arc<AggregationSrs>,
}

pub(super) static HANDLES: Handles<cuzk_agg_srs> = Handles::new();

/// One sector's part of an aggregate. Read during the call only.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cuzk_seal_proof {
    /// The sector's C2 output: every partition's 192-byte proof (what `cuzk_prove` writes for
    /// its C1, and `seal_commit_phase2` for V1_1 and SyntheticPoRep).
    pub proof: *const u8,
    pub proof_len: usize,
    /// The sector's comm_r and interactive seed, as in its C1 output (the seed is not used for
    /// NonInteractivePoRep).
    pub comm_r: [u8; 32],
    pub seed: [u8; 32],
}

/// Reads the aggregation SRS (filecoin-proofs' `v28-fil-inner-product-v1.srs`, bellperson's
/// `GenericSRS` layout) for aggregates of up to `max_proofs` Groth16 proofs: the first
/// `2·max_proofs` powers in G1 and `max_proofs` in G2 of each secret, decoded on every core and
/// checked in their subgroups (about 0.3 s and 6 MB for 8192 proofs). A second load of the same
/// unchanged file for the same `max_proofs` while a handle to it lives shares that instance.
/// The points count in `cuzk_mem_stats.srs_bytes`.
///
/// - `path`: NUL-terminated, copied; a regular file.
/// - `max_proofs`: a power of two, 2 ..= 2^19; `cuzk_aggregate_len`'s `proofs` of the largest
///   aggregate to make (8192 holds 65 NonInteractivePoRep seals of 32GiB).
/// - `out`: on success receives a new handle the caller owns and frees with
///   `cuzk_agg_srs_free`; untouched on failure.
/// - `err`: NULL or a caller-owned `cuzk_error`, always written.
///
/// Errors: `CUZK_NULL_ARGUMENT`, `CUZK_INVALID_ARGUMENT` (a bad `max_proofs`, a file with too
/// few powers for it, not a regular file), `CUZK_FILE_NOT_FOUND`, `CUZK_IO`,
/// `CUZK_BAD_PARAMS_FILE` (truncated, a size its counts do not explain, a point that does not
/// decode), `CUZK_TOO_LARGE`.
///
/// Thread-safety: safe from many threads at once.
#[no_mangle]
pub unsafe extern "C" fn cuzk_agg_srs_load(
    path: *const c_char,
    max_proofs: u32,
    out: *mut *mut cuzk_agg_srs,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let path = arg_path(path, "path")?;
        let out = arg_out(out, "out")?;
        super::params::exists(&path)?;
        hand_out(out, &path, max_proofs)
    })
}

/// Writes to `path` (atomically, replacing any file there) an aggregation SRS for up to
/// `max_proofs` proofs with secrets derived from `seed` (what bellperson's
/// `setup_fake_srs(rng, max_proofs)` lays out) and loads it as `cuzk_agg_srs_load` does.
///
/// For demos and tests only: whoever knows the 64-bit seed can forge aggregates. Filecoin's
/// aggregates need Filecoin's SRS file.
///
/// Errors: as `cuzk_agg_srs_load`. Ownership as there.
/// Thread-safety: safe from many threads at once, but do not generate into one path from two.
#[no_mangle]
pub unsafe extern "C" fn cuzk_agg_srs_generate(
    path: *const c_char,
    max_proofs: u32,
    seed: u64,
    out: *mut *mut cuzk_agg_srs,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let path = arg_path(path, "path")?;
        let out = arg_out(out, "out")?;
        crate::aggregate::srs::generate(&path, max_proofs as usize, seed)?;
        hand_out(out, &path, max_proofs)
    })
}

/// Loads (or shares) the SRS prefix of `path` for `max_proofs` and writes a new handle to it.
///
/// # Safety
/// `out` was checked by `arg_out`.
unsafe fn hand_out(out: *mut *mut cuzk_agg_srs, path: &std::path::Path, max_proofs: u32) -> FfiResult<()> {
    let srs = load_shared(path, max_proofs as usize)?;
    out.write(HANDLES.insert(cuzk_agg_srs { srs }));
    Ok(())
}

/// Frees a handle from `cuzk_agg_srs_load` or `cuzk_agg_srs_generate`; the points go with the last handle to them. NULL,
/// or a handle already freed, is a no-op; calls in flight keep what they use until they return.
#[no_mangle]
pub unsafe extern "C" fn cuzk_agg_srs_free(srs: *mut cuzk_agg_srs) {
    ffi_boundary!(value_on_panic: (), {
        HANDLES.remove(srs);
    })
}

pub(super) fn version_of(v: u32) -> FfiResult<Version> {
    match v {
        v if v == cuzk_snarkpack_version::CUZK_SNARKPACK_V1 as u32 => Ok(Version::V1),
        v if v == cuzk_snarkpack_version::CUZK_SNARKPACK_V2 as u32 => Ok(Version::V2),
        v => Err(Failure::new(CUZK_INVALID_ARGUMENT, format!("SnarkPack version {v} (1 or 2)"))),
    }
}

/// Writes to `proofs` how many Groth16 proofs an aggregate of `seals` sectors sealed with the
/// registered seal proof `registered_proof` holds (every partition of each, padded to a power
/// of two, at least 2: what the SRS must be loaded for), and to `bytes` the aggregate's length.
/// Either out-pointer may be NULL.
///
/// - `registered_proof`: NUL-terminated, as a C1 output spells it (e.g.
///   `"StackedDrg32GiBV1_2_Feat_NonInteractivePoRep"`).
///
/// Errors: `CUZK_NULL_ARGUMENT`, `CUZK_INVALID_ARGUMENT` (an unknown or unsupported registered
/// proof, 0 seals, more than 65 NonInteractivePoRep seals, more than 2^19 proofs: what
/// `cuzk_aggregate` refuses), `CUZK_UNSUPPORTED` (a build without `porep`).
/// Thread-safety: safe from any thread.
#[no_mangle]
pub unsafe extern "C" fn cuzk_aggregate_len(
    registered_proof: *const c_char,
    seals: usize,
    proofs: *mut usize,
    bytes: *mut usize,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let proofs = super::boundary::arg_opt_out(proofs, "proofs")?;
        let bytes = super::boundary::arg_opt_out(bytes, "bytes")?;
        let n = padded_count(registered_proof, seals)?;
        if let Some(p) = proofs {
            p.write(n);
        }
        if let Some(b) = bytes {
            b.write(crate::aggregate::aggregate_len(n));
        }
        Ok(())
    })
}

#[cfg(feature = "porep")]
unsafe fn padded_count(registered_proof: *const c_char, seals: usize) -> FfiResult<usize> {
    use crate::aggregate::seal;
    let rp = seal::registered_proof(arg_str(registered_proof, "registered_proof")?)?;
    Ok(seal::padded_count(rp, seals)?)
}

#[cfg(not(feature = "porep"))]
unsafe fn padded_count(_: *const c_char, _: usize) -> FfiResult<usize> {
    Err(Failure::new(CUZK_UNSUPPORTED, "seal aggregation needs the porep feature".to_string()))
}

/// Aggregates the seal proofs of `seals_len` sectors sealed with `registered_proof` into one
/// SnarkPack proof: the bytes filecoin-proofs' `aggregate_seal_commit_proofs` returns for the
/// same registered proof, version, comm_rs, seeds, C2 outputs and SRS, which its
/// `verify_aggregate_seal_commit_proofs` checks. The pairings and MSMs run on the calling
/// thread's rayon pool (the global one: every core).
///
/// - `srs`: borrowed for the call; loaded for at least `cuzk_aggregate_len`'s `proofs`.
/// - `registered_proof`: NUL-terminated, as in the sectors' C1 outputs.
/// - `seals`, `seals_len`: the sectors in the order their verifier lists them, each proof
///   `partitions × 192` bytes; read during the call only. At most 65 NonInteractivePoRep seals
///   (FIP-0092).
/// - `version`: a `cuzk_snarkpack_version`.
/// - `out`, `out_cap`: a caller-owned buffer of at least `cuzk_aggregate_len`'s `bytes`;
///   written only on success.
/// - `out_len`: receives the bytes written; on `CUZK_BUFFER_TOO_SMALL` the bytes needed
///   (checked before any work, so `(NULL, 0)` is a size query).
/// - `err`: NULL or a caller-owned `cuzk_error`, always written.
///
/// Errors: `CUZK_NULL_ARGUMENT`, `CUZK_INVALID_HANDLE`, `CUZK_INVALID_ARGUMENT` (unknown
/// registered proof or version, a proof of the wrong length, too many seals, an SRS loaded for
/// too few proofs), `CUZK_MALFORMED_PROOF` (a point that does not decode, or at infinity),
/// `CUZK_BUFFER_TOO_SMALL`, `CUZK_UNSUPPORTED` (a build without `porep`), `CUZK_INTERNAL` (an
/// aggregate of another length than announced: nothing is written). The proofs are not
/// verified here: an aggregate of a bad proof fails its verification.
///
/// Thread-safety: safe from many threads at once, with the same or different handles.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuzk_aggregate(
    srs: *const cuzk_agg_srs,
    registered_proof: *const c_char,
    seals: *const cuzk_seal_proof,
    seals_len: usize,
    version: u32,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let srs = HANDLES.get(srs, "srs")?;
        let seals = arg_slice(seals, seals_len, "seals")?;
        let out_len = arg_out(out_len, "out_len")?;
        let version = version_of(version)?;
        let needed = crate::aggregate::aggregate_len(padded_count(registered_proof, seals.len())?);
        if out_cap < needed {
            out_len.write(needed);
            return Err(Failure::new(
                CUZK_BUFFER_TOO_SMALL,
                format!("the aggregate takes {needed} bytes, the buffer has {out_cap}"),
            ));
        }
        if out.is_null() {
            return Err(Failure::new(CUZK_NULL_ARGUMENT, "out is NULL".to_string()));
        }
        let bytes = aggregate_seals(&srs.srs, registered_proof, seals, version)?;
        copy_out(&bytes, needed, out, out_len)
    })
}

#[cfg(feature = "porep")]
unsafe fn aggregate_seals(
    srs: &AggregationSrs,
    registered_proof: *const c_char,
    seals: &[cuzk_seal_proof],
    version: Version,
) -> FfiResult<Vec<u8>> {
    use crate::aggregate::seal;
    let rp = seal::registered_proof(arg_str(registered_proof, "registered_proof")?)?;
    let seals = seals
        .iter()
        .enumerate()
        .map(|(i, s)| {
            Ok(seal::SealProof {
                comm_r: s.comm_r,
                seed: s.seed,
                proof: arg_bytes(s.proof, s.proof_len, &format!("seals[{i}].proof"))?,
            })
        })
        .collect::<FfiResult<Vec<_>>>()?;
    Ok(seal::aggregate_seals(srs, rp, &seals, version)?)
}

#[cfg(not(feature = "porep"))]
unsafe fn aggregate_seals(
    _: &AggregationSrs,
    _: *const c_char,
    _: &[cuzk_seal_proof],
    _: Version,
) -> FfiResult<Vec<u8>> {
    Err(Failure::new(CUZK_UNSUPPORTED, "seal aggregation needs the porep feature".to_string()))
}
