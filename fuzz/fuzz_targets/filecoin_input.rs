//! Fuzzes the PoSt and SnapDeals request parsers: the first byte picks the circuit (2 KiB
//! WinningPoSt, WindowPoSt or SnapDeals), the rest is the request input. Any byte string is
//! either refused with `Error::InvalidInput` or parses into a statement whose every partition's
//! circuit and public inputs can be built. Seeds: the 2 KiB fixtures (`cuzk-bench fixture
//! --circuit winning-post-2KiB|window-post-2KiB|snap-2KiB --out FILE`, with the circuit's byte
//! 0, 1 or 2 in front).
#![no_main]

use cuzk::circuits::Circuit;
use cuzk::Error;
use libfuzzer_sys::fuzz_target;

const CIRCUITS: [&str; 3] = ["winning-post-2KiB", "window-post-2KiB", "snap-2KiB"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, input)) = data.split_first() else { return };
    let circuit = Circuit::parse(CIRCUITS[pick as usize % CIRCUITS.len()], 0).expect("a built-in circuit");
    match circuit.statement(0, input) {
        Err(Error::InvalidInput(_)) => {}
        Err(e) => panic!("unexpected error kind: {e:?}"),
        Ok(s) => {
            assert!(s.partitions() >= 1);
            assert_eq!(circuit.proof_len_for(input).expect("a parsed input's proof length"), 192 * s.partitions());
            for k in 0..s.partitions() {
                s.instance(k).expect("a parsed request's circuit");
                s.public_inputs(k).expect("a parsed request's public inputs");
            }
        }
    }
});
