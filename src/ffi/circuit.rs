//! Naming a built-in circuit from C: the descriptor converted to a `circuits::Circuit`.

use std::ffi::c_char;

use super::boundary::{arg_bytes, arg_out, arg_ref, arg_str};
use super::status::{cuzk_error, cuzk_status, cuzk_status::*, Failure, FfiResult};
use crate::circuits::{Circuit, Kind};

/// The kinds of circuit a [`cuzk_circuit`] can name (values of its `kind`).
/// 0 is deliberately not a kind, so a zero-initialised descriptor is refused.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cuzk_circuit_kind {
    /// A synthetic benchmark family: `name` is `"sha256-chain"` (boolean-heavy,
    /// like PoRep) or `"mimc-chain"` (arithmetic-heavy); `size` is the target
    /// number of constraints (rows).
    CUZK_CIRCUIT_SYNTHETIC = 1,
    /// Filecoin PoRep C2: `name` is the sector size (`"2KiB"`, `"8MiB"`,
    /// `"512MiB"`, `"32GiB"`, `"64GiB"`), `size` is 0. The PCE is that of one
    /// partition circuit, shared by the seal proofs of that size (`V1_1`,
    /// `V1_1_Feat_SyntheticPoRep`, `V1_2_Feat_NonInteractivePoRep`); a
    /// request's `input` carries the C1 output JSON, which names its seal
    /// proof, and its proof is every partition's, concatenated: what
    /// `seal_commit_phase2` returns for V1_1 and SyntheticPoRep, and what
    /// `seal_commit_phase2_circuit_proofs` returns for NonInteractivePoRep
    /// (13 or 126 partitions; its `seal_commit_phase2` output is their SnarkPack
    /// aggregate). Needs the `porep` feature (else `CUZK_UNSUPPORTED`).
    CUZK_CIRCUIT_POREP = 2,
    /// Filecoin WinningPoSt (`StackedDrgWinning<size>V1`): `name` is the
    /// sector size, `size` 0. A request's `input` is a PoSt input (docs/proofs.md,
    /// "PoSt and SnapDeals": the registered proof, randomness, prover id and the one
    /// sector's vanilla proof); its proof is 192 bytes. Always in the latency
    /// class (`CUZK_PRIORITY_CRITICAL`). Needs the `porep` feature.
    CUZK_CIRCUIT_WINNING_POST = 3,
    /// Filecoin WindowPoSt (`StackedDrgWindow<size>V1_2`, and `V1`): `name`
    /// is the sector size, `size` 0. A request's `input` is a PoSt input
    /// with one partition's vanilla proofs (its index given: 192 bytes of
    /// proof) or every partition's (192 bytes per partition, in order: query
    /// the length with a `(NULL, 0)` proof buffer). Ahead of every PoRep and
    /// synthetic request wherever requests wait. Needs the `porep` feature.
    CUZK_CIRCUIT_WINDOW_POST = 4,
    /// Filecoin SnapDeals (`StackedDrg<size>V1` update): `name` is the sector
    /// size, `size` 0. A request's `input` is a SnapDeals input (docs/proofs.md,
    /// "PoSt and SnapDeals": the registered update proof, comm_r_old, comm_r_new,
    /// comm_d_new and every partition's vanilla proof); its proof is 192
    /// bytes per partition (1 at 2 KiB, 4 at 8 MiB, 16 from 512 MiB).
    /// Needs the `porep` feature.
    CUZK_CIRCUIT_SNAP_DEALS = 5,
}

/// Names one built-in circuit. Read during the call only; nothing is kept.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct cuzk_circuit {
    /// A `cuzk_circuit_kind` value.
    pub kind: u32,
    /// NUL-terminated UTF-8 name within the kind (see `cuzk_circuit_kind`).
    pub name: *const c_char,
    /// Kind-specific size: target constraints for synthetic circuits
    /// (1 ..= 2^30), 0 for PoRep.
    pub size: u64,
}

/// The largest synthetic size accepted (the compact format's column limit).
pub const CUZK_MAX_SYNTHETIC_SIZE: u64 = 1 << 30;
const _: () = assert!(CUZK_MAX_SYNTHETIC_SIZE == crate::circuits::MAX_SYNTHETIC_SIZE);

/// The circuit a descriptor names.
///
/// # Safety
/// `c.name` is NULL or a NUL-terminated string that outlives the call.
pub(crate) unsafe fn circuit_from_c(c: &cuzk_circuit) -> FfiResult<Circuit> {
    let kind = match c.kind {
        k if k == cuzk_circuit_kind::CUZK_CIRCUIT_SYNTHETIC as u32 => Kind::Synthetic,
        k if k == cuzk_circuit_kind::CUZK_CIRCUIT_POREP as u32 => Kind::Porep,
        k if k == cuzk_circuit_kind::CUZK_CIRCUIT_WINNING_POST as u32 => Kind::WinningPost,
        k if k == cuzk_circuit_kind::CUZK_CIRCUIT_WINDOW_POST as u32 => Kind::WindowPost,
        k if k == cuzk_circuit_kind::CUZK_CIRCUIT_SNAP_DEALS as u32 => Kind::SnapDeals,
        k => {
            let known = "1 = synthetic, 2 = PoRep, 3 = WinningPoSt, 4 = WindowPoSt, 5 = SnapDeals";
            return Err(Failure::new(CUZK_UNKNOWN_CIRCUIT, format!("unknown circuit kind {k} ({known})")));
        }
    };
    Ok(Circuit::new(kind, arg_str(c.name, "circuit.name")?, c.size)?)
}

/// Writes to `out` the bytes a proof of `circuit` takes: `CUZK_PROOF_BYTES`
/// for a synthetic circuit and a PoSt partition, that times the number of
/// partitions for PoRep (e.g. 10 × 192 for 32GiB). A WindowPoSt request for
/// every partition, and a NonInteractivePoRep C1 (126 partitions at 32GiB),
/// take 192 per partition: `cuzk_request_proof_len` says how many bytes.
/// `circuit` is read during the call only.
/// Thread-safety: safe from any thread.
#[no_mangle]
pub unsafe extern "C" fn cuzk_proof_len(
    circuit: *const cuzk_circuit,
    out: *mut usize,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let c = circuit_from_c(arg_ref(circuit, "circuit")?)?;
        let out = arg_out(out, "out")?;
        out.write(c.proof_len());
        Ok(())
    })
}

/// Writes to `out` the bytes the proof of a request for `circuit` with the
/// request input `input` (`input_len` bytes) takes: what `cuzk_prove` will
/// write. That is `cuzk_proof_len`'s, except for a NonInteractivePoRep C1
/// (13 or 126 partitions, named by its registered proof) and a WindowPoSt
/// request for every partition (its header's count). The input is read only
/// as far as that needs; `cuzk_prove` validates the rest.
///
/// Errors: `CUZK_NULL_ARGUMENT` (`circuit`, `out`, or `input` NULL with a
/// length), `CUZK_UNKNOWN_CIRCUIT`, `CUZK_INVALID_ARGUMENT` (an input whose
/// proof length cannot be read: not JSON, an unknown seal proof, a truncated
/// PoSt header). `circuit` and `input` are read during the call only.
/// Thread-safety: safe from any thread.
#[no_mangle]
pub unsafe extern "C" fn cuzk_request_proof_len(
    circuit: *const cuzk_circuit,
    input: *const u8,
    input_len: usize,
    out: *mut usize,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let circuit = arg_ref(circuit, "circuit")?;
        let input = arg_bytes(input, input_len, "input")?;
        let out = arg_out(out, "out")?;
        out.write(circuit_from_c(circuit)?.proof_len_for(input)?);
        Ok(())
    })
}
