//! The witness program against the gadgets, on sha256-chain.

use blstrs::Scalar;
use ff::Field;

use crate::circuits::Sha256Chain;
use crate::pce::extract;
use crate::witness::{Witness, WitnessBuffer};
use crate::Error;

#[test]
fn sha256_chain_replays_the_gadgets_witness() {
    for k in [1, 3] {
        let c = Sha256Chain::random(k, 5);
        let pce = extract(Sha256Chain::blank(k)).unwrap();
        let p = pce.program(|| None).unwrap();
        assert_eq!(p.free().len(), k * 512);
        let want = Witness::generate(c.clone()).unwrap();
        let got = p.run(&pce, c.free_values(), WitnessBuffer::new(0, 0)).unwrap();
        assert_eq!(got, want);
    }
}

/// Too few or too many free values, or another circuit's PCE, is an error.
#[test]
fn a_program_refuses_values_that_do_not_fit() {
    let c = Sha256Chain::random(1, 2);
    let pce = extract(Sha256Chain::blank(1)).unwrap();
    let p = pce.program(|| None).unwrap();
    let run = |values: Vec<Scalar>| p.run(&pce, values, WitnessBuffer::new(0, 0));
    let values: Vec<Scalar> = c.free_values().collect();
    assert!(matches!(run(values[1..].to_vec()), Err(Error::Synthesis(_))));
    assert!(matches!(run([&values[..], &[Scalar::ONE]].concat()), Err(Error::Synthesis(_))));
    let other = extract(Sha256Chain::blank(2)).unwrap();
    assert!(matches!(p.run(&other, values, WitnessBuffer::new(0, 0)), Err(Error::InvalidInput(_))));
}

/// A message bit that is not a bit gives a witness the constraints refuse.
#[test]
fn a_non_boolean_free_value_gives_an_unsatisfied_witness() {
    let c = Sha256Chain::random(1, 3);
    let pce = extract(Sha256Chain::blank(1)).unwrap();
    let mut values: Vec<Scalar> = c.free_values().collect();
    values[7] = Scalar::from(2u64);
    let w = pce.program(|| None).unwrap().run(&pce, values, WitnessBuffer::new(0, 0)).unwrap();
    let abc = crate::pce::evaluate(&pce, &w).unwrap();
    assert!(matches!(crate::pce::check_satisfied(&abc), Err(Error::Unsatisfied { .. })));
}

/// A program whose witness disagrees with the gadgets' (here: one value changed) is dropped
/// at its first witness; the gadgets make the PCE's witnesses from then on.
#[test]
fn a_program_that_disagrees_is_dropped() {
    use bellperson::Circuit;
    let c = Sha256Chain::random(1, 4);
    let pce = extract(Sha256Chain::blank(1)).unwrap();
    let p = pce.program(|| None).unwrap();
    let mut w = p.run(&pce, c.free_values(), WitnessBuffer::new(0, 0)).unwrap();
    w.aux[100] += Scalar::ONE;
    let gadgets = || crate::witness::digest_of(|cs| c.clone().synthesize(cs));
    assert_eq!(pce.vouch(w, gadgets).unwrap(), None);
    assert!(pce.program(|| None).is_none());
    let w = c.clone().witness(&pce, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
    assert_eq!(w, Witness::generate(c).unwrap());
}

/// The witness of a sha256-chain instance is the program's, and equal to the gadgets'.
#[test]
fn sha256_chain_instances_use_the_program() {
    use crate::circuits::{Family, Synthetic, WitnessSource};
    let s = Synthetic::new(Family::Sha256Chain, 1 << 16, 9);
    let pce = extract(s.blank()).unwrap();
    let w = s.clone().witness(&pce, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
    assert_eq!(pce.program.trusted(), Some(true), "recorded and checked by the first witness");
    assert_eq!(w, Witness::generate(s).unwrap());
}
