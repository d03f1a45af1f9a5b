//! The verification calls' C boundary (`cuzk_verify_*`): NULL and unknown inputs refused, and
//! a verifying key missing from `FIL_PROOFS_PARAMETER_CACHE` (no `.vk`, no `.params` beside
//! it) an error with nothing generated there. Their verdicts on real proofs are checked by
//! go-bindings/filecoin's tests on the 2 KiB fixtures (true, and false on altered inputs).
#![cfg(feature = "porep")]

use std::ptr::null;

use cuzk::ffi::cuzk_status::*;
use cuzk::ffi::{
    cuzk_error, cuzk_post_sector, cuzk_status, cuzk_verify_aggregate_seals, cuzk_verify_post, cuzk_verify_update,
    CUZK_ERROR_MESSAGE_LEN,
};

fn blank() -> cuzk_error {
    cuzk_error { status: CUZK_INTERNAL, _reserved: 0, message: [0; CUZK_ERROR_MESSAGE_LEN] }
}

#[test]
fn verify_calls_refuse_bad_input_and_missing_keys() {
    let cache = std::env::temp_dir().join(format!("cuzk-verify-ffi-{}", std::process::id()));
    std::fs::create_dir_all(&cache).unwrap();
    // Before filecoin-proofs first reads its settings (once per process).
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &cache);
    let (z, proof) = ([0u8; 32], [0u8; 192]);
    let update = c"StackedDrg2KiBV1";
    let call = |name: &std::ffi::CStr, old: *const [u8; 32]| -> (cuzk_status, bool) {
        let (mut valid, mut err) = (true, blank());
        let s = unsafe {
            cuzk_verify_update(name.as_ptr(), old, &z, &z, proof.as_ptr(), proof.len(), &mut valid, &mut err)
        };
        assert_eq!(err.status, s);
        (s, valid)
    };
    assert_eq!(call(update, null()), (CUZK_NULL_ARGUMENT, true));
    assert_eq!(call(c"StackedDrg3KiBV1", &z), (CUZK_INVALID_ARGUMENT, true));
    assert_eq!(call(update, &z), (CUZK_INVALID_ARGUMENT, true), "no key, no verdict");

    let (mut valid, mut err) = (true, blank());
    let s = unsafe {
        cuzk_verify_post(
            c"StackedDrgWinning2KiBV1".as_ptr(),
            &z,
            &z,
            null::<cuzk_post_sector>(),
            0,
            proof.as_ptr(),
            192,
            &mut valid,
            &mut err,
        )
    };
    assert_eq!((s, valid), (CUZK_INVALID_ARGUMENT, true), "no sectors");
    let s = unsafe {
        cuzk_verify_aggregate_seals(
            c"StackedDrg2KiBV1_1".as_ptr(),
            3,
            &z,
            null(),
            0,
            proof.as_ptr(),
            192,
            &mut valid,
            &mut err,
        )
    };
    assert_eq!((s, valid), (CUZK_INVALID_ARGUMENT, true), "SnarkPack 3");

    let made: Vec<_> = std::fs::read_dir(&cache).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(made.is_empty(), "the verifier wrote {made:?}");
    std::fs::remove_dir_all(&cache).unwrap();
}
