//! Fuzzes the `.pce` loader: any byte string is either refused with
//! `Error::BadPceFile` or yields a PCE that validates, re-saves to a file
//! loading back to the same fingerprint, and evaluates without panicking.
//!
//! Checksums are skipped (a fuzzer cannot forge blake3), so the structural
//! validation alone must stand between the bytes and the evaluator. The seed
//! corpus (`fuzz/seed.sh`) holds valid files with their checksums, and the
//! loader is also called with checksums on.
#![no_main]

use blstrs::Scalar;
use cuzk::pce::{evaluate, file};
use cuzk::witness::Witness;
use cuzk::Error;
use ff::Field;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    for verify in [false, true] {
        match file::load_from(file::FileBytes::copy_of(data), None, verify) {
            Err(Error::BadPceFile(_)) => {}
            Err(e) => panic!("unexpected error kind: {e:?}"),
            Ok(l) => {
                let pce = &l.pce;
                file::validate(pce).expect("a loaded PCE validates");
                if verify {
                    // Checksums verified: the content is what the header names.
                    assert_eq!(file::fingerprint(pce), l.fingerprint, "fingerprint of loaded content");
                }
                // Evaluate against an arbitrary witness of the right shape
                // (bounded so a huge declared size cannot exhaust memory).
                if pce.num_inputs + pce.num_aux <= 1 << 16 {
                    let w = Witness {
                        inputs: (0..pce.num_inputs).map(|i| Scalar::from(i as u64 + 1)).collect(),
                        aux: (0..pce.num_aux).map(|i| Scalar::from(i as u64 * 7 + 2).double()).collect(),
                    };
                    let abc = evaluate(pce, &w).expect("evaluate");
                    assert_eq!(abc.a.len(), pce.num_constraints());
                }
            }
        }
    }
});
