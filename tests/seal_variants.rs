//! The seal proof variants filecoin-proofs-api 19.1 registers besides V1_1: SyntheticPoRep
//! and NonInteractivePoRep (13 partitions at 2 KiB), on 2 KiB sectors sealed here with each,
//! through one PCE and one set of real parameters generated here (the variants share the
//! partition circuit):
//! - a C1 of each parses as its variant with its partition count, and the request's proof
//!   length says so before anything is proven;
//! - a C1 relabelled as another variant is refused (its challenges are not that variant's);
//! - seal proofs aggregated through the C ABI (`cuzk_aggregate`) are the bytes filecoin-proofs'
//!   `aggregate_seal_commit_proofs` makes: two interactive seals (2 proofs) with v1 and v2,
//!   which its `verify_aggregate_seal_commit_proofs` accepts and refuses with a changed proof;
//!   two NonInteractivePoRep seals (26 partitions, padded to 32; FIP-0092) with SnarkPack v2,
//!   the interactive seals' proofs standing in for their partitions' (aggregation reads the
//!   proofs' points, it does not verify them).
//!
//! The variants' proofs are the Go tests' (`go-bindings/filecoin`, on scripts/test.sh's
//! fixtures, through the C ABI and this engine): `TestSealCommitPhase2` proves a SyntheticPoRep
//! C1, `TestNonInteractive` a NonInteractivePoRep one's 13 partitions (minutes on two cores:
//! once per CI run), and filecoin-proofs' `verify_seal` accepts the proof and the aggregate,
//! and refuses them changed.
#![cfg(feature = "porep")]

mod common;

use std::path::Path;
use std::sync::OnceLock;

use bellperson::groth16::aggregate::setup_fake_srs;
use bellperson::groth16::Parameters;
use blstrs::Bls12;
use cuzk::circuits::porep::{self, PorepC1, PorepSize, SealVariant};
use cuzk::circuits::Circuit;
use cuzk::engine::{self, CancelToken, Engine, EngineConfig, Priority, ProveOptions, Request};
use cuzk::groth16::{Backend, PROOF_BYTES};
use cuzk::oracles::porep::SealedC1;
use cuzk::params::Srs;
use cuzk::pce::Pce;
use filecoin_proofs_api::seal::{self, SealCommitPhase1Output, SealCommitPhase2Output};
use filecoin_proofs_api::RegisteredAggregationProof;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

const POREP_2K: Circuit = Circuit::Porep(PorepSize::KiB2);

fn scratch() -> &'static Path {
    common::filecoin_scratch("seal-variants")
}

/// The 2 KiB partition circuit's PCE and real parameters, their verifying key and a test
/// aggregation SRS (32 proofs: two non-interactive seals' 26 partitions padded to a power of
/// two) where filecoin-proofs looks for them.
fn ready() -> &'static (Pce, Parameters<Bls12>) {
    static R: OnceLock<(Pce, Parameters<Bls12>)> = OnceLock::new();
    R.get_or_init(|| {
        let dir = scratch().join("params");
        let pce = POREP_2K.extract_pce().unwrap();
        let name = porep::params_file_name(PorepSize::KiB2).unwrap();
        let params = common::real_params(&pce, "porep-2k.params", &dir.join(&name), 21);
        params.vk.write(std::fs::File::create(dir.join(name.replace(".params", ".vk"))).unwrap()).unwrap();
        let srs = setup_fake_srs::<Bls12, _>(&mut ChaCha20Rng::seed_from_u64(4), 32);
        srs.write(&mut std::fs::File::create(dir.join("v28-fil-inner-product-v1.srs")).unwrap()).unwrap();
        (pce, params)
    })
}

fn sealed(variant: SealVariant) -> SealedC1 {
    cuzk::oracles::porep::make_c1(PorepSize::KiB2, variant, scratch(), 3).expect("seal a 2 KiB sector")
}

/// A 2 KiB non-interactive seal, made once for the tests that use it.
fn non_interactive() -> &'static SealedC1 {
    static NI: OnceLock<SealedC1> = OnceLock::new();
    NI.get_or_init(|| sealed(SealVariant::NonInteractive))
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

#[test]
fn a_c1_of_each_variant_parses_as_it() {
    for (c1, variant, partitions) in [
        (&sealed(SealVariant::Synthetic), SealVariant::Synthetic, 1),
        (non_interactive(), SealVariant::NonInteractive, 13),
    ] {
        let parsed = PorepC1::parse(&c1.bytes).unwrap();
        assert_eq!((parsed.variant(), parsed.num_partitions()), (variant, partitions));
        assert_eq!(POREP_2K.proof_len_for(&c1.bytes).unwrap(), partitions * PROOF_BYTES);
    }
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

/// `cuzk_aggregate` of the sectors' proofs, through the C ABI, with the test SRS loaded for `n`.
fn cuzk_aggregate(seals: &[(SealCommitPhase1Output, Vec<u8>)], version: u32) -> Vec<u8> {
    use cuzk::ffi::*;
    let rp = serde_json::to_value(seals[0].0.registered_proof).unwrap();
    let rp = std::ffi::CString::new(rp.as_str().unwrap()).unwrap();
    let path = std::ffi::CString::new(scratch().join("params/v28-fil-inner-product-v1.srs").to_str().unwrap()).unwrap();
    let c: Vec<cuzk_seal_proof> = seals
        .iter()
        .map(|(c1, p)| cuzk_seal_proof { proof: p.as_ptr(), proof_len: p.len(), comm_r: c1.comm_r, seed: c1.seed })
        .collect();
    // SAFETY: a cuzk_error is plain data; all zeros is a valid one.
    let mut err: cuzk_error = unsafe { std::mem::zeroed() };
    let msg = |e: &cuzk_error| unsafe { std::ffi::CStr::from_ptr(e.message.as_ptr()) }.to_string_lossy().into_owned();
    unsafe {
        let (mut n, mut len) = (0usize, 0usize);
        assert_eq!(
            cuzk_aggregate_len(rp.as_ptr(), c.len(), &mut n, &mut len, &mut err),
            cuzk_status::CUZK_OK,
            "{}",
            msg(&err)
        );
        let mut srs = std::ptr::null_mut();
        assert_eq!(
            cuzk_agg_srs_load(path.as_ptr(), n as u32, &mut srs, &mut err),
            cuzk_status::CUZK_OK,
            "{}",
            msg(&err)
        );
        let mut out = vec![0u8; len];
        let mut written = 0;
        let st = cuzk_aggregate(
            srs,
            rp.as_ptr(),
            c.as_ptr(),
            c.len(),
            version,
            out.as_mut_ptr(),
            len,
            &mut written,
            &mut err,
        );
        assert_eq!(st, cuzk_status::CUZK_OK, "{}", msg(&err));
        assert_eq!(written, len);
        cuzk_agg_srs_free(srs);
        out
    }
}

/// A sealed sector, its C1 as filecoin-proofs reads it, and its proof.
type Seal = (SealedC1, SealCommitPhase1Output, Vec<u8>);

fn with_c1(c1: SealedC1, proof: Vec<u8>) -> Seal {
    let parsed = serde_json::from_slice(&c1.bytes).unwrap();
    (c1, parsed, proof)
}

/// filecoin-proofs' aggregate of the same seals, and its verdict on `aggregate`.
fn filecoin_aggregate(seals: &[Seal], agg: RegisteredAggregationProof) -> Vec<u8> {
    let rp = seals[0].1.registered_proof;
    let outputs: Vec<SealCommitPhase2Output> =
        seals.iter().map(|s| SealCommitPhase2Output { proof: s.2.clone() }).collect();
    let comm_rs: Vec<[u8; 32]> = seals.iter().map(|s| s.1.comm_r).collect();
    let seeds: Vec<[u8; 32]> = seals.iter().map(|s| s.1.seed).collect();
    seal::aggregate_seal_commit_proofs(rp, agg, &comm_rs, &seeds, &outputs).unwrap()
}

fn filecoin_verifies(seals: &[Seal], agg: RegisteredAggregationProof, aggregate: Vec<u8>) -> bool {
    let rp = seals[0].1.registered_proof;
    let comm_rs: Vec<[u8; 32]> = seals.iter().map(|s| s.1.comm_r).collect();
    let seeds: Vec<[u8; 32]> = seals.iter().map(|s| s.1.seed).collect();
    let mut inputs = Vec::new();
    for (sealed, c1, _) in seals {
        inputs.extend(
            seal::get_seal_inputs(rp, c1.comm_r, c1.comm_d, sealed.prover_id, sealed.sector_id, c1.ticket, c1.seed)
                .unwrap(),
        );
    }
    matches!(seal::verify_aggregate_seal_commit_proofs(rp, agg, aggregate, &comm_rs, &seeds, inputs), Ok(true))
}

#[test]
fn aggregates_are_filecoin_proofs_own_and_verify() {
    use cuzk::ffi::cuzk_snarkpack_version::*;
    let pairs = |seals: &[Seal]| -> Vec<(SealCommitPhase1Output, Vec<u8>)> {
        seals.iter().map(|s| (s.1.clone(), s.2.clone())).collect()
    };
    let interactive: Vec<Seal> = (10..12)
        .map(|seed| {
            let c1 = cuzk::oracles::porep::make_c1(PorepSize::KiB2, SealVariant::Interactive, scratch(), seed).unwrap();
            let proof = prove(&c1.bytes).unwrap();
            with_c1(c1, proof)
        })
        .collect();
    let versions = [
        (CUZK_SNARKPACK_V1, RegisteredAggregationProof::SnarkPackV1),
        (CUZK_SNARKPACK_V2, RegisteredAggregationProof::SnarkPackV2),
    ];
    for (ours, theirs) in versions {
        let aggregate = cuzk_aggregate(&pairs(&interactive), ours as u32);
        assert!(aggregate == filecoin_aggregate(&interactive, theirs), "{theirs:?}: filecoin-proofs' bytes");
        assert!(filecoin_verifies(&interactive, theirs, aggregate), "{theirs:?}: verifies");
    }
    // The second seal's (valid) proof in the first one's place makes an aggregate that is refused.
    let mut changed = pairs(&interactive);
    changed[0].1 = changed[1].1.clone();
    let bad = cuzk_aggregate(&changed, CUZK_SNARKPACK_V2 as u32);
    assert!(!filecoin_verifies(&interactive, RegisteredAggregationProof::SnarkPackV2, bad), "a changed proof");

    // FIP-0092: several NonInteractivePoRep seals in one aggregate (here one sealed twice), their
    // 13 partitions' proofs the interactive ones in turn.
    let stand_ins: Vec<u8> = (0..13).flat_map(|k| interactive[k % 2].2.clone()).collect();
    let ni = with_c1(non_interactive().clone(), stand_ins);
    let seals = [ni.clone(), ni];
    let aggregate = cuzk_aggregate(&pairs(&seals), CUZK_SNARKPACK_V2 as u32);
    let theirs = filecoin_aggregate(&seals, RegisteredAggregationProof::SnarkPackV2);
    assert!(aggregate == theirs, "two NonInteractivePoRep seals: filecoin-proofs' bytes");
}
