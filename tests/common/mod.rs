//! Shared checks: the PCE path against the reference constraint system and
//! bellperson's own prover.
#![allow(dead_code)]

use bellperson::groth16::{create_proof, Parameters};
use bellperson::{Circuit, ConstraintSystem, LinearCombination, SynthesisError};
use blstrs::{Bls12, Scalar};
use cuzk::groth16::{self, proof_bytes};
use cuzk::oracles::reference::ReferenceCs;
use cuzk::params::dummy_params;
use cuzk::pce::{evaluate, extract, Pce};
use cuzk::witness::Witness;
use ff::Field;

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
    let (ours, _) = groth16::prove(
        groth16::Backend::Cpu,
        groth16::Urgency::Throughput,
        &Default::default(),
        pce,
        &w,
        Some(abc),
        params,
        (r, s),
    )
    .expect("cuzk proof");
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

/// A circuit made of the traps: inputs allocated between enforces, zero and
/// repeated coefficients, large constants, empty linear combinations, an
/// extensible sub-circuit, and `n_inputs` public inputs.
#[derive(Clone)]
pub struct Traps {
    pub n_inputs: usize,
    pub x: Option<Scalar>,
    /// Breaks one constraint when set.
    pub corrupt: bool,
}

pub fn val(v: Option<Scalar>) -> Result<Scalar, SynthesisError> {
    v.ok_or(SynthesisError::AssignmentMissing)
}

/// A sub-circuit with its own input, synthesized into a fresh `CS::new()` and
/// appended with `extend` (as Filecoin's PoSt does) when the CS allows it.
pub fn sub_circuit<CS: ConstraintSystem<Scalar>>(cs: &mut CS, x: Option<Scalar>) -> Result<(), SynthesisError> {
    let sq = x.map(|x| x.square());
    let a = cs.alloc(|| "a", || val(x))?;
    let b = cs.alloc(|| "b", || val(sq))?;
    cs.enforce(|| "a*a", |lc| lc + a, |lc| lc + a, |lc| lc + b);
    let inp = cs.alloc_input(|| "child input", || val(sq.map(|s| s + Scalar::ONE)))?;
    cs.enforce(|| "b+1", |lc| lc + b + CS::one(), |lc| lc + CS::one(), |lc| lc + inp);
    Ok(())
}

impl Circuit<Scalar> for Traps {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = self.x;
        let big = -Scalar::from(2u64).pow_vartime([200u64]);
        let p_minus_1 = -Scalar::ONE;
        let v = cs.alloc(|| "v", || val(x))?;
        // Repeated variable in one LC (merged to 3·v - v = 2v) and a zero coefficient.
        let two_v = cs.alloc(|| "2v", || val(x.map(|x| x.double())))?;
        cs.enforce(
            || "repeat",
            |lc| lc + v + v + (Scalar::from(3u64), v) - (Scalar::from(3u64), v) + (Scalar::ZERO, two_v),
            |lc| lc + CS::one(),
            |lc| lc + two_v,
        );
        // A coefficient that cancels to zero: v - v in A.
        cs.enforce(|| "cancel", |lc| lc + v - v, |lc| lc + v, |lc| lc);
        // Empty linear combinations: 0 · 0 = 0.
        cs.enforce(|| "empty", |lc| lc, |lc| lc, |lc| lc);
        // Inputs allocated between enforces.
        let mut last = v;
        for i in 0..self.n_inputs {
            let value = x.map(|x| x + Scalar::from(i as u64));
            let inp = cs.alloc_input(|| "input", || val(value))?;
            let aux = cs.alloc(|| "aux", || val(value.map(|v| v * big)))?;
            cs.enforce(|| "big", |lc| lc + inp, |lc| lc + (big, CS::one()), |lc| lc + aux);
            cs.enforce(
                || "link",
                |lc| lc + inp - last,
                |lc| lc + CS::one(),
                |lc| {
                    lc + (Scalar::from(i as u64), CS::one())
                        - (if i == 0 { Scalar::ZERO } else { Scalar::from(i as u64 - 1) }, CS::one())
                },
            );
            last = inp;
        }
        // Large constants: (p−1)·v · 1 = w.
        let w = cs.alloc(
            || "w",
            || {
                let w = val(x.map(|x| x * p_minus_1))?;
                Ok(if self.corrupt { w + Scalar::ONE } else { w })
            },
        )?;
        cs.enforce(|| "p-1", |lc| lc + (p_minus_1, v), |lc| lc + CS::one(), |lc| lc + w);
        // An input used in B, so b_input density has more than the ONE.
        let lc_sum = LinearCombination::zero() + w + (Scalar::from(7u64), v);
        let y = cs.alloc(|| "y", || val(x.map(|x| x * p_minus_1 + Scalar::from(7u64) * x)))?;
        cs.enforce(|| "sum", |_| lc_sum, |lc| lc + CS::one(), |lc| lc + y);
        if CS::is_extensible() {
            let mut child = CS::new();
            child.alloc_input(|| "temp one", || Ok(Scalar::ONE))?;
            sub_circuit(&mut child, x)?;
            cs.extend(&child);
        } else {
            sub_circuit(cs, x)?;
        }
        Ok(())
    }
}

pub fn traps(n_inputs: usize) -> Traps {
    Traps { n_inputs, x: Some(Scalar::from(0xdead_beefu64)), corrupt: false }
}

pub fn blank_traps(n_inputs: usize) -> Traps {
    Traps { n_inputs, x: None, corrupt: false }
}

/// A scratch directory for a test process's Filecoin fixtures, with filecoin-proofs'
/// parameter cache (`params/`) and parent cache in it. filecoin-proofs reads those settings
/// once per process, so every test calls this before anything reaches filecoin-proofs.
pub fn filecoin_scratch(tag: &str) -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cuzk-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(d.join("params")).unwrap();
        std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", d.join("params"));
        std::env::set_var("FIL_PROOFS_PARENT_CACHE", d.join("parents"));
        d
    })
}

/// Real parameters for `pce`, written to `path`: the test command's fixture `name`
/// (`$CUZK_TEST_FIXTURES/name`, which `scripts/test.sh` makes before the Rust tests) copied
/// there when it is this circuit's, else generated from `seed` (minutes on 2 cores for a 2 KiB
/// PoRep partition, so the fixture is made once for all the tests). The fixture is decoded
/// without writing a decoded cache beside it.
pub fn real_params(pce: &Pce, name: &str, path: &std::path::Path, seed: u64) -> Parameters<Bls12> {
    if let Some(fixture) = std::env::var_os("CUZK_TEST_FIXTURES").map(|d| std::path::Path::new(&d).join(name)) {
        if let Ok(params) = cuzk::params::decode_params(&fixture, false) {
            if groth16::check_shape(pce, &params).is_ok() {
                std::fs::copy(&fixture, path).unwrap();
                return params;
            }
        }
        eprintln!("{}: not this circuit's parameters; generating them", fixture.display());
    }
    cuzk::params::generate_params(pce, path, seed, None).unwrap()
}
