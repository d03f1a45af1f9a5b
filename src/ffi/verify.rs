//! filecoin-ffi's verification calls (`cuzk_verify_seal`, `cuzk_verify_aggregate_seals`,
//! `cuzk_verify_post`, `cuzk_verify_update`): filecoin-proofs-api's own verifiers on flat C
//! data, so a host that proves with cuzk verifies without filecoin-ffi.
//!
//! Every one reads its verifying key from filecoin-proofs' parameter cache
//! (`FIL_PROOFS_PARAMETER_CACHE`, read once per process; default
//! `/var/tmp/filecoin-proof-parameters`), as filecoin-ffi does: `v28-<id>.vk` beside the
//! `.params` file `cuzk_params_file_name` names (a missing `.vk` is derived from that `.params`
//! file, read whole, and written there; with neither the call fails, nothing is generated).
//! The verdict goes to `valid`: `false` is a proof that does not verify; an error is an input
//! filecoin-proofs refuses.

use std::ffi::c_char;

use super::aggregate::version_of;
use super::boundary::{arg_bytes, arg_out, arg_ref, arg_slice, arg_str};
use super::status::{cuzk_error, cuzk_status, FfiResult};
use crate::circuits::filecoin_verify::{SealedSector, Verification};

/// One sealed sector, as its seal's verifier takes it (`SealVerifyInfo` less the proof).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cuzk_sealed_sector {
    pub comm_r: [u8; 32],
    pub comm_d: [u8; 32],
    pub sector_id: u64,
    /// The ticket (`SealVerifyInfo.Randomness`).
    pub ticket: [u8; 32],
    /// The interactive seed (`SealVerifyInfo.InteractiveRandomness`).
    pub seed: [u8; 32],
}

impl From<&cuzk_sealed_sector> for SealedSector {
    fn from(s: &cuzk_sealed_sector) -> SealedSector {
        SealedSector { comm_r: s.comm_r, comm_d: s.comm_d, sector_id: s.sector_id, ticket: s.ticket, seed: s.seed }
    }
}

/// One challenged sector of a PoSt.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cuzk_post_sector {
    pub sector_id: u64,
    pub comm_r: [u8; 32],
}

/// Runs `v` and writes its verdict to `valid`.
fn verdict(v: Verification<'_>, valid: *mut bool) -> FfiResult<()> {
    let verdict = v.verdict()?;
    // SAFETY: `valid` was checked by `arg_out`.
    unsafe { valid.write(verdict) };
    Ok(())
}

/// Verifies one sector's seal proof (filecoin-proofs-api's `seal::verify_seal`, as
/// filecoin-ffi's `VerifySeal`).
///
/// - `registered_proof`: NUL-terminated, as filecoin-proofs-api names it (e.g.
///   `"StackedDrg32GiBV1_1"`); read during the call.
/// - `prover_id`: the 32-byte prover id; `sector`: the sector; `proof`, `proof_len`: its C2
///   output. All borrowed for the call only.
/// - `valid`: receives the verdict on success.
/// - `err`: NULL or a caller-owned `cuzk_error`, always written.
///
/// Errors: `CUZK_NULL_ARGUMENT`, `CUZK_INVALID_ARGUMENT` (an unknown registered proof,
/// anything filecoin-proofs refuses, a verifying key it cannot find), `CUZK_UNSUPPORTED` (a
/// build without `porep`).
/// Thread-safety: safe from many threads at once.
#[no_mangle]
pub unsafe extern "C" fn cuzk_verify_seal(
    registered_proof: *const c_char,
    prover_id: *const [u8; 32],
    sector: *const cuzk_sealed_sector,
    proof: *const u8,
    proof_len: usize,
    valid: *mut bool,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let proof_name = arg_str(registered_proof, "registered_proof")?;
        let prover_id = *arg_ref(prover_id, "prover_id")?;
        let sector = arg_ref(sector, "sector")?.into();
        let proof = arg_bytes(proof, proof_len, "proof")?;
        let valid = arg_out(valid, "valid")?;
        verdict(Verification::Seal { proof_name, prover_id, sector, proof }, valid)
    })
}

/// Verifies a SnarkPack aggregate of sectors' seals (filecoin-proofs-api's
/// `seal::verify_aggregate_seal_commit_proofs` with each sector's `get_seal_inputs`, as
/// filecoin-ffi's `VerifyAggregateSeals`); the SRS is read from the parameter cache too.
///
/// - `registered_proof`: NUL-terminated, as for `cuzk_verify_seal`.
/// - `version`: a `cuzk_snarkpack_version`.
/// - `prover_id`: the 32-byte prover id of every sector.
/// - `sectors`, `sectors_len`: the sectors, in the aggregate's order (at least one).
/// - `aggregate`, `aggregate_len`: the aggregate. All read during the call only.
/// - `valid`, `err`: as for `cuzk_verify_seal`.
///
/// Errors: as `cuzk_verify_seal`, and `CUZK_INVALID_ARGUMENT` for an unknown version or no
/// sectors. Thread-safety: safe from many threads at once.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuzk_verify_aggregate_seals(
    registered_proof: *const c_char,
    version: u32,
    prover_id: *const [u8; 32],
    sectors: *const cuzk_sealed_sector,
    sectors_len: usize,
    aggregate: *const u8,
    aggregate_len: usize,
    valid: *mut bool,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let proof_name = arg_str(registered_proof, "registered_proof")?;
        let prover_id = *arg_ref(prover_id, "prover_id")?;
        let sectors = arg_slice(sectors, sectors_len, "sectors")?.iter().map(SealedSector::from).collect();
        let aggregate = arg_bytes(aggregate, aggregate_len, "aggregate")?;
        let valid = arg_out(valid, "valid")?;
        let version = version_of(version)?;
        verdict(Verification::AggregateSeals { proof_name, version, prover_id, sectors, aggregate }, valid)
    })
}

/// Verifies a WinningPoSt or a WindowPoSt of every partition (by `registered_proof`'s kind:
/// filecoin-proofs-api's `post::verify_winning_post` or `post::verify_window_post`, as
/// filecoin-ffi's `VerifyWinningPoSt` and `VerifyWindowPoSt`).
///
/// - `registered_proof`: NUL-terminated PoSt proof name (e.g. `"StackedDrgWindow32GiBV1_2"`).
/// - `randomness`, `prover_id`: 32 bytes each.
/// - `sectors`, `sectors_len`: the challenged sectors (a sector id listed twice counts once).
/// - `proof`, `proof_len`: the proof bytes (every partition's, in order). All read during the
///   call only.
/// - `valid`, `err`: as for `cuzk_verify_seal`.
///
/// Errors: as `cuzk_verify_seal`. Thread-safety: safe from many threads at once.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuzk_verify_post(
    registered_proof: *const c_char,
    randomness: *const [u8; 32],
    prover_id: *const [u8; 32],
    sectors: *const cuzk_post_sector,
    sectors_len: usize,
    proof: *const u8,
    proof_len: usize,
    valid: *mut bool,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let proof_name = arg_str(registered_proof, "registered_proof")?;
        let randomness = *arg_ref(randomness, "randomness")?;
        let prover_id = *arg_ref(prover_id, "prover_id")?;
        let sectors = arg_slice(sectors, sectors_len, "sectors")?.iter().map(|s| (s.sector_id, s.comm_r)).collect();
        let proof = arg_bytes(proof, proof_len, "proof")?;
        let valid = arg_out(valid, "valid")?;
        verdict(Verification::PoSt { proof_name, randomness, prover_id, sectors, proof }, valid)
    })
}

/// Verifies a SnapDeals update proof (filecoin-proofs-api's
/// `update::verify_empty_sector_update_proof`, as filecoin-ffi's
/// `SectorUpdate.VerifyUpdateProof`).
///
/// - `registered_proof`: NUL-terminated update proof name (e.g. `"StackedDrg32GiBV1"`).
/// - `comm_r_old`, `comm_r_new`, `comm_d_new`: 32 bytes each.
/// - `proof`, `proof_len`: every partition's proof. All read during the call only.
/// - `valid`, `err`: as for `cuzk_verify_seal`.
///
/// Errors: as `cuzk_verify_seal`. Thread-safety: safe from many threads at once.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuzk_verify_update(
    registered_proof: *const c_char,
    comm_r_old: *const [u8; 32],
    comm_r_new: *const [u8; 32],
    comm_d_new: *const [u8; 32],
    proof: *const u8,
    proof_len: usize,
    valid: *mut bool,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let proof_name = arg_str(registered_proof, "registered_proof")?;
        let comm_r_old = *arg_ref(comm_r_old, "comm_r_old")?;
        let comm_r_new = *arg_ref(comm_r_new, "comm_r_new")?;
        let comm_d_new = *arg_ref(comm_d_new, "comm_d_new")?;
        let proof = arg_bytes(proof, proof_len, "proof")?;
        let valid = arg_out(valid, "valid")?;
        verdict(Verification::Update { proof_name, comm_r_old, comm_r_new, comm_d_new, proof }, valid)
    })
}
