//! Shared checks: the PCE path against the reference constraint system and
//! bellperson's own prover.
#![allow(dead_code)]

use bellperson::groth16::{create_proof, Parameters};
use bellperson::Circuit;
use blstrs::{Bls12, Scalar};
use cuzk::groth16::{self, dummy_params, proof_bytes};
use cuzk::pce::{evaluate, extract, Pce};
use cuzk::reference::ReferenceCs;
use cuzk::witness::Witness;

/// Fixed randomisers so proofs can be compared byte for byte.
pub fn fixed_rs() -> (Scalar, Scalar) {
    (Scalar::from(0x1234_5678u64), Scalar::from(0x9abc_def0u64))
}

/// a, b, c, densities and assignments of the PCE path equal the reference's.
pub fn assert_eval_parity<C: Circuit<Scalar> + Clone + Send>(pce: &Pce, circuit: &C) -> (Witness, cuzk::pce::Abc) {
    let reference = ReferenceCs::synthesize(circuit.clone()).expect("reference synthesis");
    let w = Witness::generate(circuit.clone()).expect("witness");
    assert_eq!(w.inputs, reference.witness.inputs, "input assignment");
    assert_eq!(w.aux, reference.witness.aux, "aux assignment");
    let abc = evaluate(pce, &w).expect("evaluate");
    assert_eq!(abc.a.len(), reference.abc.a.len(), "constraint count");
    assert!(abc.a == reference.abc.a, "a differs");
    assert!(abc.b == reference.abc.b, "b differs");
    assert!(abc.c == reference.abc.c, "c differs");
    assert_eq!(pce.density.a_aux.to_bits(), reference.a_aux_density, "a_aux density");
    assert_eq!(pce.density.b_input.to_bits(), reference.b_input_density, "b_input density");
    assert_eq!(pce.density.b_aux.to_bits(), reference.b_aux_density, "b_aux density");
    assert_eq!(pce.density.a_aux.ones, reference.a_aux_density.iter().filter(|b| **b).count());
    (w, abc)
}

/// The CPU proof with fixed r, s is byte-identical to bellperson's.
pub fn assert_proof_parity<C: Circuit<Scalar> + Clone + Send>(
    pce: &Pce,
    circuit: &C,
    params: &Parameters<Bls12>,
) -> [u8; 192] {
    let (w, abc) = assert_eval_parity(pce, circuit);
    let (r, s) = fixed_rs();
    let (ours, _) = groth16::prove(pce, &w, abc, params, r, s).expect("cuzk proof");
    let theirs = create_proof(circuit.clone(), params, r, s).expect("bellperson proof");
    assert_eq!(proof_bytes(&ours), proof_bytes(&theirs), "proof bytes differ from bellperson");
    proof_bytes(&ours)
}

/// Extracts from the circuit (and from its blank twin when given) and checks
/// both record the same matrices, then checks evaluation and proof parity.
pub fn full_parity<C: Circuit<Scalar> + Clone + Send>(circuit: &C, blank: Option<C>) -> Pce {
    let pce = extract(circuit.clone()).expect("extract");
    if let Some(blank) = blank {
        let b = extract(blank).expect("extract blank");
        assert_same_pce(&pce, &b);
    }
    let params = dummy_params(&pce, 42);
    assert_proof_parity(&pce, circuit, &params);
    pce
}

pub fn assert_same_pce(x: &Pce, y: &Pce) {
    assert_eq!((x.num_inputs, x.num_aux), (y.num_inputs, y.num_aux));
    for (m, n) in [(&x.a, &y.a), (&x.b, &y.b), (&x.c, &y.c)] {
        assert_eq!(&m.row_ptr[..], &n.row_ptr[..]);
        assert_eq!(&m.words[..], &n.words[..]);
        assert_eq!(m.nnz, n.nnz);
    }
    assert_eq!(x.dict, y.dict);
    assert_eq!(x.density.a_aux.to_bits(), y.density.a_aux.to_bits());
    assert_eq!(x.density.b_input.to_bits(), y.density.b_input.to_bits());
    assert_eq!(x.density.b_aux.to_bits(), y.density.b_aux.to_bits());
}
