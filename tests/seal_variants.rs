//! The seal proof variants filecoin-proofs-api 19.1 registers besides V1_1: SyntheticPoRep
//! and NonInteractivePoRep (13 partitions at 2 KiB), on 2 KiB sectors sealed here with each,
//! through one PCE and one set of real parameters generated here (the variants share the
//! partition circuit):
//! - a C1 of each parses as its variant with its partition count, and the request's proof
//!   length says so before anything is proven;
//! - every partition is proven and verified through the engine, and filecoin-proofs-api's
//!   own `verify_seal` accepts the result (for NonInteractivePoRep: its SnarkPack v2 aggregate,
//!   made as `seal_commit_phase2` makes it, with a test aggregation SRS); a changed proof is
//!   refused;
//! - a C1 relabelled as another variant is refused (its challenges are not that variant's).
#![cfg(feature = "porep")]

mod common;

use std::path::Path;
use std::sync::OnceLock;

use bellperson::groth16::aggregate::setup_fake_srs;
use bellperson::groth16::Parameters;
use blstrs::Bls12;
use cuzk::circuits::porep::{self, PorepC1, PorepSize, SealVariant, SealedC1};
use cuzk::circuits::Circuit;
use cuzk::engine::{self, CancelToken, Engine, EngineConfig, Priority, ProveOptions, Request};
use cuzk::groth16::params::generate_params;
use cuzk::groth16::{Backend, Srs, PROOF_BYTES};
use cuzk::pce::Pce;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

const POREP_2K: Circuit = Circuit::Porep(PorepSize::KiB2);

fn scratch() -> &'static Path {
    common::filecoin_scratch("seal-variants")
}

/// The 2 KiB partition circuit's PCE and real parameters, their verifying key and a test
/// aggregation SRS (16 proofs: 13 partitions padded to a power of two) where filecoin-proofs
/// looks for them.
fn ready() -> &'static (Pce, Parameters<Bls12>) {
    static R: OnceLock<(Pce, Parameters<Bls12>)> = OnceLock::new();
    R.get_or_init(|| {
        let dir = scratch().join("params");
        let pce = POREP_2K.extract_pce().unwrap();
        let name = porep::params_file_name(PorepSize::KiB2).unwrap();
        let params = generate_params(&pce, &dir.join(&name), 21).unwrap();
        params.vk.write(std::fs::File::create(dir.join(name.replace(".params", ".vk"))).unwrap()).unwrap();
        let srs = setup_fake_srs::<Bls12, _>(&mut ChaCha20Rng::seed_from_u64(4), 16);
        srs.write(&mut std::fs::File::create(dir.join("v28-fil-inner-product-v1.srs")).unwrap()).unwrap();
        (pce, params)
    })
}

fn sealed(variant: SealVariant) -> SealedC1 {
    porep::make_c1(PorepSize::KiB2, variant, scratch(), 3).expect("seal a 2 KiB sector")
}

fn prove(c1: &[u8]) -> cuzk::Result<Vec<u8>> {
    let (pce, params) = ready();
    let statement = POREP_2K.statement(0, c1)?;
    let engine = Engine::new(EngineConfig { devices: Some(vec![]), ..EngineConfig::default() })?;
    let (proofs, _) = engine.prove(Request {
        pce,
        params: &Srs::in_memory(params.clone()),
        statement: &statement,
        opts: ProveOptions { backend: Backend::Cpu, ..ProveOptions::default() },
        priority: Priority::default(),
        cancel: CancelToken::new(),
        observer: None,
    })?;
    Ok(engine::proof_bytes(&proofs))
}

fn proves_and_filecoin_verifies(variant: SealVariant, partitions: usize) {
    let c1 = sealed(variant);
    let parsed = PorepC1::parse(&c1.bytes).unwrap();
    assert_eq!((parsed.variant(), parsed.num_partitions()), (variant, partitions));
    assert_eq!(POREP_2K.proof_len_for(&c1.bytes).unwrap(), partitions * PROOF_BYTES);
    let proof = prove(&c1.bytes).unwrap();
    assert_eq!(proof.len(), partitions * PROOF_BYTES);
    assert!(c1.filecoin_verify(&proof).unwrap(), "filecoin-proofs' verify_seal accepts the {variant:?} proof");
    let mut changed = proof.clone();
    changed[PROOF_BYTES * (partitions - 1) + 7] ^= 1;
    assert!(!matches!(c1.filecoin_verify(&changed), Ok(true)), "a changed proof is refused");
}

#[test]
fn synthetic_porep_proves_and_filecoin_verifies() {
    proves_and_filecoin_verifies(SealVariant::Synthetic, 1);
}

#[test]
fn non_interactive_porep_proves_its_13_partitions_and_filecoin_verifies() {
    proves_and_filecoin_verifies(SealVariant::NonInteractive, 13);
}

#[test]
fn variants_share_the_circuit_and_a_relabelled_c1_is_refused() {
    for size in PorepSize::ALL {
        let counts = SealVariant::ALL.map(|v| v.partitions(size));
        let big = matches!(size, PorepSize::GiB32 | PorepSize::GiB64);
        assert_eq!(counts, if big { [10, 10, 126] } else { [1, 1, 13] }, "{size}");
        for v in SealVariant::ALL {
            assert_eq!(PorepSize::from_registered_proof(size.registered_proof_of(v)).unwrap(), (size, v));
        }
    }
    let c1 = sealed(SealVariant::Interactive);
    let mut json: serde_json::Value = serde_json::from_slice(&c1.bytes).unwrap();
    for other in ["StackedDrg2KiBV1_1_Feat_SyntheticPoRep", "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep"] {
        json["registered_proof"] = other.into();
        let err = PorepC1::parse(&serde_json::to_vec(&json).unwrap()).unwrap_err().to_string();
        assert!(err.contains("do not verify") || err.contains("partitions"), "{other}: {err}");
    }
}
