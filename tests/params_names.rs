//! The production parameter file names (`Circuit::params_file_name`, `cuzk_params_file_name`):
//! for every registered seal and PoSt proof of filecoin-proofs-api, the name its own
//! `cache_params_path` ends in; together with the update circuits', every `.params` file of
//! filecoin-proofs' parameters.json that a registered proof uses.
#![cfg(feature = "porep")]

use std::collections::BTreeSet;
use std::ffi::{c_char, CStr};
use std::ptr::null_mut;

use cuzk::circuits::porep::{PorepSize, SealVariant};
use cuzk::circuits::post::PostType;
use cuzk::circuits::{snap, Circuit};
use cuzk::ffi::{cuzk_circuit, cuzk_circuit_kind, cuzk_error, cuzk_params_file_name, cuzk_status};
use filecoin_proofs_api::{RegisteredPoStProof, RegisteredUpdateProof};
use storage_proofs_core::parameter_cache::PARAMETERS;

/// filecoin-proofs-api's registered proof spelled `name`.
fn registered<T: serde::de::DeserializeOwned>(name: String) -> T {
    serde_json::from_value(serde_json::Value::String(name.clone())).unwrap_or_else(|_| panic!("no proof {name}"))
}

fn file_name(path: std::path::PathBuf) -> String {
    path.file_name().unwrap().to_str().unwrap().to_owned()
}

#[test]
fn every_registered_proof_names_filecoin_proofs_file() {
    let mut names = BTreeSet::new();
    for size in PorepSize::ALL {
        let label = size.label();
        let porep = Circuit::Porep(size).params_file_name().unwrap();
        for variant in SealVariant::ALL {
            let rp = size.registered_proof_of(variant);
            assert_eq!(porep, file_name(rp.cache_params_path().unwrap()), "{rp:?}");
        }
        for name in [
            format!("StackedDrgWinning{label}V1"),
            format!("StackedDrgWindow{label}V1"),
            format!("StackedDrgWindow{label}V1_2"),
        ] {
            let rp: RegisteredPoStProof = registered(name);
            let ours = Circuit::Post(PostType::of_registered_proof(rp)).params_file_name().unwrap();
            assert_eq!(ours, file_name(rp.cache_params_path().unwrap()), "{rp:?}");
            names.insert(ours);
        }
        // The update proofs' `cache_params_path` names their seal's file (filecoin-proofs-api
        // delegates it to the PoRep config); filecoin-proofs reads the update circuit's own,
        // which parameters.json lists (checked below).
        let rp: RegisteredUpdateProof = registered(format!("StackedDrg{label}V1"));
        assert_eq!(snap::registered_proof(size), rp);
        let ours = Circuit::Snap(size).params_file_name().unwrap();
        assert!(ours.starts_with("v28-empty-sector-update-merkletree-"), "{ours}");
        names.insert(ours);
        names.insert(porep);
    }
    // Five sizes: PoRep, WinningPoSt, WindowPoSt (V1 and V1_2 share it), SnapDeals.
    assert_eq!(names.len(), 20);
    // parameters.json's .params files, less the Poseidon update circuit no registered proof uses.
    let listed: BTreeSet<String> = PARAMETERS
        .keys()
        .filter(|k| k.ends_with(".params") && !k.contains("empty-sector-update-poseidon"))
        .cloned()
        .collect();
    assert_eq!(names, listed);
    assert!(names.contains(
        "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-\
         82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820.params"
    ));
    assert!(Circuit::parse("sha256-chain", 1000).unwrap().params_file_name().is_err());
}

fn new_err() -> cuzk_error {
    cuzk_error { status: cuzk_status::CUZK_INTERNAL, _reserved: 0, message: [1; cuzk::ffi::CUZK_ERROR_MESSAGE_LEN] }
}

/// `cuzk_params_file_name`: a size query, a short buffer, the name, and the refusals.
#[test]
#[allow(unsafe_code)]
fn c_abi_copies_the_name_out() {
    use cuzk_status::*;
    let circuit =
        |kind: cuzk_circuit_kind, name: &CStr, size| cuzk_circuit { kind: kind as u32, name: name.as_ptr(), size };
    let window = circuit(cuzk_circuit_kind::CUZK_CIRCUIT_WINDOW_POST, c"32GiB", 0);
    let want = Circuit::parse("window-post-32GiB", 0).unwrap().params_file_name().unwrap();
    let mut err = new_err();
    let mut len = 0usize;
    // SAFETY (every call): the pointers are NULL or point to live values of their types, the
    // buffer holds `cap` bytes.
    let call = |c: *const cuzk_circuit, out: *mut c_char, cap: usize, len: *mut usize, err: &mut cuzk_error| unsafe {
        cuzk_params_file_name(c, out, cap, len, err)
    };
    assert_eq!(call(&window, null_mut(), 0, &mut len, &mut err), CUZK_BUFFER_TOO_SMALL);
    assert_eq!(len, want.len() + 1);
    let mut buf = vec![7 as c_char; len];
    assert_eq!(call(&window, buf.as_mut_ptr(), len - 1, &mut len, &mut err), CUZK_BUFFER_TOO_SMALL);
    assert!(buf.iter().all(|&b| b == 7), "nothing written on failure");
    assert_eq!(call(&window, buf.as_mut_ptr(), buf.len(), &mut len, &mut err), CUZK_OK);
    assert_eq!(len, want.len() + 1);
    // SAFETY: the library NUL-terminated the name inside `buf`.
    assert_eq!(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap(), want);
    assert_eq!(err.status, CUZK_OK);

    let synthetic = circuit(cuzk_circuit_kind::CUZK_CIRCUIT_SYNTHETIC, c"sha256-chain", 1000);
    assert_eq!(call(&synthetic, buf.as_mut_ptr(), buf.len(), &mut len, &mut err), CUZK_INVALID_ARGUMENT);
    let unknown = circuit(cuzk_circuit_kind::CUZK_CIRCUIT_POREP, c"4KiB", 0);
    assert_eq!(call(&unknown, buf.as_mut_ptr(), buf.len(), &mut len, &mut err), CUZK_UNKNOWN_CIRCUIT);
    assert_eq!(call(std::ptr::null(), buf.as_mut_ptr(), buf.len(), &mut len, &mut err), CUZK_NULL_ARGUMENT);
    assert_eq!(call(&window, buf.as_mut_ptr(), buf.len(), null_mut(), &mut err), CUZK_NULL_ARGUMENT);
    assert_eq!(call(&window, null_mut(), buf.len(), &mut len, &mut err), CUZK_NULL_ARGUMENT);
}
