//! Fuzzes the PoRep C1 parser (`seal_commit_phase1` output, JSON): any byte string is either
//! refused with `Error::InvalidInput` or parses into a C1 with the partition count of its
//! sector size and seal variant, whose every partition's public inputs can be computed. Seeds: a real 2 KiB C1 (`cuzk-bench c1 --sector 2KiB --out FILE`).
#![no_main]

use cuzk::circuits::porep::{PorepC1, PorepSize};
use cuzk::Error;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match PorepC1::parse(data) {
        Err(Error::InvalidInput(_)) => {}
        Err(e) => panic!("unexpected error kind: {e:?}"),
        Ok(c1) => {
            let size = PorepSize::ALL.into_iter().find(|&s| PorepC1::parse_for(data, s).is_ok()).expect("a C1 has a size");
            assert_eq!(c1.num_partitions(), c1.variant().partitions(size));
            for k in 0..c1.num_partitions() {
                c1.public_inputs(k).expect("a parsed C1's public inputs");
            }
        }
    }
});
