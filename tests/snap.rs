//! SnapDeals through the PCE path, on a 2 KiB sector sealed and updated here, with real
//! parameters generated here from the PCE (the 1.7M-row circuit: under a minute on 2 cores):
//! - the CPU proof with fixed r, s is byte-identical to `bellperson::groth16::create_proof` on
//!   filecoin-proofs' own partition circuit, verifies, and filecoin-proofs-api's own
//!   `verify_empty_sector_update_proof` accepts it (the verifying key written where it looks);
//!   with dummy parameters of the same shape the proof is refused;
//! - malformed and mismatched inputs get clear errors.
#![cfg(feature = "porep")]

mod common;

use std::path::Path;
use std::sync::OnceLock;

use bellperson::groth16::Parameters;
use blstrs::{Bls12, Scalar};
use cuzk::circuits::porep::PorepSize;
use cuzk::circuits::snap::{self, SnapInput};
use cuzk::circuits::{Circuit, ProofClass};
use cuzk::engine::{self, CancelToken, Engine, EngineConfig, Priority, ProveOptions, Request};
use cuzk::groth16::Backend;
use cuzk::params::{dummy_params, Srs};

fn scratch() -> &'static Path {
    common::filecoin_scratch("snap")
}

fn input() -> &'static SnapInput {
    static I: OnceLock<SnapInput> = OnceLock::new();
    I.get_or_init(|| {
        cuzk::oracles::snap::make_snap_input(PorepSize::KiB2, scratch(), 5).expect("seal and update a 2 KiB sector")
    })
}

const SNAP: Circuit = Circuit::Snap(PorepSize::KiB2);

#[test]
fn snap_deals_matches_bellperson_and_filecoin_verifies_it() {
    let bytes = input().encode();
    let statement = SNAP.statement(0, &bytes).unwrap();
    assert_eq!((statement.partitions(), statement.class()), (1, ProofClass::Throughput));
    let pce = SNAP.extract_pce().unwrap();
    eprintln!("snap-2KiB: {} constraints, {} inputs, {} nnz", pce.num_constraints(), pce.num_inputs, pce.nnz());
    assert_eq!(pce.num_inputs, 5, "ONE + k_and_h_select, comm_r_old, comm_d_new, comm_r_new");
    let id = snap::param_cache_identifier(PorepSize::KiB2).unwrap();
    let params = common::real_params(&pce, "snap-2k.params", &scratch().join("snap.params"), 9);
    params.vk.write(std::fs::File::create(scratch().join("params").join(format!("v28-{id}.vk"))).unwrap()).unwrap();
    let (r, s) = (Scalar::from(5u64), Scalar::from(6u64));
    let engine = Engine::new(EngineConfig { devices: Some(vec![]), ..EngineConfig::default() }).unwrap();
    let prove = |params: &Parameters<Bls12>| {
        engine.prove(Request {
            pce: &pce,
            params: &Srs::in_memory(params.clone()),
            statement: &statement,
            opts: ProveOptions { backend: Backend::Cpu, verify: true, randomness: Some(vec![(r, s)]) },
            priority: Priority::default(),
            cancel: CancelToken::new(),
            observer: None,
        })
    };
    let (proofs, _) = prove(&params).unwrap();
    let ours = engine::proof_bytes(&proofs);
    let theirs = bellperson::groth16::create_proof(statement.instance(0).unwrap(), &params, r, s).unwrap();
    assert_eq!(ours, cuzk::groth16::proof_bytes(&theirs), "byte-identical to bellperson");
    assert!(
        cuzk::oracles::snap::filecoin_verify(&bytes, &ours).unwrap(),
        "filecoin-proofs' verify_empty_sector_update_proof accepts it"
    );
    let mut other = ours.clone();
    other[5] ^= 1;
    assert!(!matches!(cuzk::oracles::snap::filecoin_verify(&bytes, &other), Ok(true)), "a changed proof is refused");
    assert!(
        matches!(prove(&dummy_params(&pce, 3)), Err(cuzk::Error::VerificationFailed)),
        "dummy parameters cannot verify"
    );
}

#[test]
fn bad_inputs_are_refused_clearly() {
    let good = input();
    let err = |c: Circuit, i: &SnapInput| c.statement(0, &i.encode()).unwrap_err().to_string();
    assert!(err(Circuit::Snap(PorepSize::MiB8), good).contains("circuit is snap-8MiB"));
    let none = SnapInput { partitions: vec![], ..good.clone() };
    assert!(err(SNAP, &none).contains("0 partition proofs"));
    let two = SnapInput { partitions: vec![good.partitions[0].clone(); 2], ..good.clone() };
    assert!(err(SNAP, &two).contains("2 partition proofs"));
    let swapped = SnapInput { comm_r_new: good.comm_r_old, ..good.clone() };
    assert!(err(SNAP, &swapped).contains("do not verify"));
    let noncanonical = SnapInput { comm_d_new: [0xff; 32], ..good.clone() };
    assert!(err(SNAP, &noncanonical).contains("not a canonical"));
    let cut = SnapInput { partitions: vec![good.partitions[0][..200].to_vec()], ..good.clone() };
    assert!(err(SNAP, &cut).contains("does not decode"));
    let mut flipped = good.clone();
    let n = flipped.partitions[0].len();
    flipped.partitions[0][n - 100] ^= 1;
    assert!(err(SNAP, &flipped).contains("SnapDeals input"));
    assert!(SNAP.statement(0, b"CUZKPOST").is_err());
}
