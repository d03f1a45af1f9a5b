//! The PCE path against bellperson, bit for bit: a, b, c, densities,
//! assignments, and proofs with fixed r, s; random proofs verify.

mod common;

use bellperson::groth16::{create_random_proof, generate_random_parameters};
use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::{Bls12, Scalar};
use common::*;
use cuzk::circuits::{Family, MimcChain, Sha256Chain, Synthetic};
use cuzk::groth16::{self, Backend, Urgency};
use cuzk::params::dummy_params;
use cuzk::params::setup::setup;
use cuzk::pce::{check_satisfied, evaluate, extract};
use cuzk::witness::Witness;
use cuzk::Error;
use ff::{Field, PrimeField};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

#[test]
fn traps_match_bellperson() {
    for n in [0, 1, 40] {
        let pce = full_parity(&traps(n), Some(blank_traps(n)));
        assert_eq!(pce.num_inputs, n + 2, "ONE + circuit inputs + child input");
        assert!(pce.density.b_input.ones >= 1);
    }
}

/// A circuit with no public input beyond the ONE.
#[derive(Clone)]
struct OnlyOne;

impl Circuit<Scalar> for OnlyOne {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let a = cs.alloc(|| "a", || Ok(Scalar::from(3u64)))?;
        let b = cs.alloc(|| "b", || Ok(Scalar::from(9u64)))?;
        cs.enforce(|| "sq", |lc| lc + a, |lc| lc + a, |lc| lc + b);
        Ok(())
    }
}

#[test]
fn single_input_circuit_matches_bellperson() {
    let pce = full_parity(&OnlyOne, None);
    assert_eq!(pce.num_inputs, 1);
}

/// `setup` from the PCE gives bellperson's generator's parameters, byte for byte.
fn setup_matches_bellperson<C: Circuit<Scalar> + Clone>(c: &C, seed: u64) {
    let bytes = |p: &bellperson::groth16::Parameters<Bls12>| {
        let mut v = Vec::new();
        p.write(&mut v).unwrap();
        v
    };
    let theirs = generate_random_parameters::<Bls12, _, _>(c.clone(), &mut ChaCha20Rng::seed_from_u64(seed)).unwrap();
    let ours = setup(&extract(c.clone()).unwrap(), seed).unwrap();
    assert!(bytes(&ours) == bytes(&theirs), "parameters differ from bellperson's");
}

#[test]
fn setup_matches_bellpersons_generator() {
    setup_matches_bellperson(&OnlyOne, 1);
    setup_matches_bellperson(&traps(5), 2);
    setup_matches_bellperson(&Sha256Chain::blank(1), 3);
    setup_matches_bellperson(&MimcChain::blank(5000), 4);
    setup_matches_bellperson(&Synthetic::new(Family::Sha256Chain, 3000, 1).blank(), 5);
}

#[test]
fn setup_refuses_an_unconstrained_variable() {
    #[derive(Clone)]
    struct Loose;
    impl Circuit<Scalar> for Loose {
        fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            cs.alloc(|| "free", || Ok(Scalar::ONE))?;
            Ok(())
        }
    }
    assert!(generate_random_parameters::<Bls12, _, _>(Loose, &mut ChaCha20Rng::seed_from_u64(1)).is_err());
    assert!(matches!(setup(&extract(Loose).unwrap(), 1), Err(Error::Synthesis(_))));
}

#[test]
fn sha256_chain_matches_bellperson() {
    for k in [1, 3] {
        let c = Sha256Chain::random(k, 9);
        let pce = full_parity(&c, Some(Sha256Chain::blank(k)));
        assert_eq!(pce.num_constraints(), Sha256Chain::rows(k));
        // Public inputs from the circuit equal the native SHA-256.
        let w = Witness::generate(c.clone()).unwrap();
        assert_eq!(&w.inputs[1..], &c.public_inputs()[..]);
    }
    assert_eq!(Sha256Chain::k_for(1 << 20), 39);
    assert_eq!(Sha256Chain::k_for(1 << 22), 157);
}

#[test]
fn mimc_chain_matches_bellperson() {
    for rounds in [2, 5, 1000] {
        let c = MimcChain::random(rounds, 3);
        let pce = full_parity(&c, Some(MimcChain::blank(rounds)));
        assert_eq!(pce.num_constraints(), MimcChain::rows(rounds));
        assert!(pce.dict.len() >= rounds, "one dictionary entry per round constant");
        let w = Witness::generate(c.clone()).unwrap();
        assert_eq!(&w.inputs[1..], &c.public_inputs()[..]);
    }
}

#[test]
fn compact_form_is_small() {
    let c = Synthetic::new(Family::Sha256Chain, 1 << 17, 1);
    let pce = extract(c.blank()).unwrap();
    let bpn = pce.bytes_per_nnz();
    assert!(bpn <= 8.0, "{bpn} bytes per non-zero");
}

/// Random proofs with real (generated) parameters verify; a wrong input does not.
#[test]
fn random_proofs_verify() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let circuits: Vec<(Synthetic, Vec<Scalar>)> = [Family::MimcChain, Family::Sha256Chain]
        .into_iter()
        .map(|f| {
            let c = Synthetic::new(f, 600, 11);
            let inputs = c.public_inputs();
            (c, inputs)
        })
        .chain([(Synthetic::new(Family::MimcChain, 3000, 12), vec![])])
        .collect();
    for (c, _) in &circuits[..2] {
        let params = generate_random_parameters::<Bls12, _, _>(c.blank(), &mut rng).unwrap();
        let pce = extract(c.blank()).unwrap();
        let w = Witness::generate(c.clone()).unwrap();
        let abc = evaluate(&pce, &w).unwrap();
        let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
        let (proof, _) = groth16::prove(
            Backend::Cpu,
            Urgency::Throughput,
            &Default::default(),
            &pce,
            &w,
            Some(abc),
            &params,
            (r, s),
        )
        .unwrap();
        let inputs = c.public_inputs();
        groth16::verify(&params.vk, &proof, &inputs).expect("valid proof verifies");
        let mut wrong = inputs.clone();
        wrong[0] += Scalar::ONE;
        assert_eq!(groth16::verify(&params.vk, &proof, &wrong), Err(Error::VerificationFailed));
        // bellperson's own random proof verifies with our verifier call too.
        let theirs = create_random_proof(c.clone(), &params, &mut rng).unwrap();
        groth16::verify(&params.vk, &theirs, &inputs).unwrap();
    }
}

#[test]
fn bad_inputs_are_errors() {
    let c = traps(2);
    let pce = extract(c.clone()).unwrap();
    let w = Witness::generate(c.clone()).unwrap();
    // A witness of the wrong length.
    let mut short = w.clone();
    short.aux.pop();
    assert!(matches!(evaluate(&pce, &short), Err(Error::InvalidInput(_))));
    // Parameters of another circuit's shape.
    let other = extract(traps(5)).unwrap();
    let params = dummy_params(&other, 1);
    let abc = evaluate(&pce, &w).unwrap();
    let (r, s) = fixed_rs();
    assert!(matches!(
        groth16::prove(Backend::Cpu, Urgency::Throughput, &Default::default(), &pce, &w, Some(abc), &params, (r, s)),
        Err(Error::ParamsMismatch(_))
    ));
    // An unsatisfied witness.
    let bad = Traps { corrupt: true, ..c };
    let wb = Witness::generate(bad).unwrap();
    let abc = evaluate(&pce, &wb).unwrap();
    assert!(matches!(check_satisfied(&abc), Err(Error::Unsatisfied { .. })));
    let params = dummy_params(&pce, 1);
    // The CPU backend evaluating a, b, c itself checks them as well.
    assert!(matches!(
        groth16::prove(Backend::Cpu, Urgency::Throughput, &Default::default(), &pce, &wb, None, &params, (r, s)),
        Err(Error::Unsatisfied { .. })
    ));
    // A GPU evaluates them on its device: host a, b, c are refused.
    assert!(matches!(
        groth16::prove(
            Backend::Cuda(0),
            Urgency::Throughput,
            &Default::default(),
            &pce,
            &w,
            Some(evaluate(&pce, &w).unwrap()),
            &params,
            (r, s)
        ),
        Err(Error::InvalidInput(_))
    ));
    // A circuit whose synthesis fails is an error, not a panic.
    let missing = Traps { x: None, ..traps(1) };
    assert!(matches!(Witness::generate(missing), Err(Error::Synthesis(_))));
    // A truncated abc.
    let mut abc = evaluate(&pce, &w).unwrap();
    abc.c.pop();
    assert!(matches!(
        groth16::prove(Backend::Cpu, Urgency::Throughput, &Default::default(), &pce, &w, Some(abc), &params, (r, s)),
        Err(Error::InvalidInput(_))
    ));
}

#[test]
fn identity_delta_is_refused() {
    let c = OnlyOne;
    let pce = extract(c.clone()).unwrap();
    let mut params = dummy_params(&pce, 3);
    params.vk.delta_g1 = <blstrs::G1Affine as group::prime::PrimeCurveAffine>::identity();
    let w = Witness::generate(c).unwrap();
    let abc = evaluate(&pce, &w).unwrap();
    let (r, s) = fixed_rs();
    assert!(matches!(
        groth16::prove(Backend::Cpu, Urgency::Throughput, &Default::default(), &pce, &w, Some(abc), &params, (r, s)),
        Err(Error::IdentityDelta)
    ));
}

#[test]
fn ntt_matches_bellperson_domain() {
    // H from our NTTs equals bellperson's EvaluationDomain pipeline for a random a, b, c.
    use bellperson::domain::EvaluationDomain;
    use ec_gpu_gen::threadpool::Worker;
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    for n in [1usize, 5, 1000, 5000] {
        let v = |rng: &mut ChaCha20Rng| (0..n).map(|_| Scalar::random(&mut *rng)).collect::<Vec<_>>();
        let (a, b, c) = (v(&mut rng), v(&mut rng), v(&mut rng));
        let ours = cuzk::groth16::ntt::compute_h(a.clone(), b.clone(), c.clone()).unwrap();
        let worker = Worker::new();
        let mut da = EvaluationDomain::from_coeffs(a).unwrap();
        let mut db = EvaluationDomain::from_coeffs(b).unwrap();
        let mut dc = EvaluationDomain::from_coeffs(c).unwrap();
        for d in [&mut da, &mut db, &mut dc] {
            d.ifft(&worker, &mut None).unwrap();
            d.coset_fft(&worker, &mut None).unwrap();
        }
        da.mul_assign(&worker, &db);
        da.sub_assign(&worker, &dc);
        da.divide_by_z_on_coset(&worker);
        da.icoset_fft(&worker, &mut None).unwrap();
        let mut theirs = da.into_coeffs();
        theirs.pop();
        assert_eq!(ours, theirs, "n = {n}");
        let _ = Scalar::S;
    }
}
