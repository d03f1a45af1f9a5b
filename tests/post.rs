//! WinningPoSt and WindowPoSt through the PCE path, on a 2 KiB sector sealed here, with real
//! parameters generated here, checked by filecoin-proofs-api's own verifiers:
//! - each proof (CPU, fixed r and s) is byte-identical to `bellperson::groth16::create_proof`
//!   on filecoin-proofs' own partition circuit, and verifies with `verify_winning_post` /
//!   `verify_window_post` (the verifying key written where filecoin-proofs looks for it);
//! - a WindowPoSt of three sectors is two partitions; proving partition 1 alone gives the same
//!   bytes as its slot in the whole proof, as `generate_single_window_post_with_vanilla` and
//!   `merge_window_post_partition_proofs` do;
//! - the shapes: the 2 KiB and 32 GiB WinningPoSt circuits' constraint counts;
//! - malformed and mismatched inputs get clear errors.
#![cfg(feature = "porep")]

mod common;

use std::path::Path;
use std::sync::OnceLock;

use bellperson::groth16::Parameters;
use blstrs::{Bls12, Scalar};
use cuzk::circuits::porep::PorepSize;
use cuzk::circuits::post::{self, PostInput, PostKind, PostType};
use cuzk::circuits::{Circuit, ProofClass, Statement};
use cuzk::engine::{self, CancelToken, Engine, EngineConfig, Priority, ProveOptions, Request};
use cuzk::groth16::Backend;
use cuzk::oracles::post::{filecoin_verify, PostFixture};
use cuzk::params::Srs;
use cuzk::pce::Pce;
use cuzk::Error;
use filecoin_proofs_api::post as api;

const WINNING: PostType = PostType { kind: PostKind::Winning, size: PorepSize::KiB2 };
const WINDOW: PostType = PostType { kind: PostKind::Window, size: PorepSize::KiB2 };

fn scratch() -> &'static Path {
    common::filecoin_scratch("post")
}

fn fixture() -> &'static PostFixture {
    static F: OnceLock<PostFixture> = OnceLock::new();
    F.get_or_init(|| PostFixture::new(WINNING, scratch(), 11).expect("seal a 2 KiB sector"))
}

/// The circuit's PCE and real parameters, the verifying key written as filecoin-proofs names it.
fn ready(t: PostType) -> (Pce, Parameters<Bls12>) {
    let dir = scratch().join("params");
    let pce = Circuit::Post(t).extract_pce().unwrap();
    let id = post::param_cache_identifier(t).unwrap();
    let fixture = match t.kind {
        PostKind::Winning => "winning-post-2k.params",
        PostKind::Window => "window-post-2k.params",
    };
    let params = common::real_params(&pce, fixture, &dir.join(format!("v28-{id}.params")), 5);
    params.vk.write(std::fs::File::create(dir.join(format!("v28-{id}.vk"))).unwrap()).unwrap();
    (pce, params)
}

fn fixed(k: u64) -> (Scalar, Scalar) {
    (Scalar::from(1000 + k), Scalar::from(2000 + k))
}

/// Proves `input` on a CPU engine (verified by cuzk against the statement's public inputs),
/// with fixed r, s per partition from `first`.
fn prove(t: PostType, pce: &Pce, params: &Parameters<Bls12>, input: &[u8], first: u64) -> cuzk::Result<Vec<u8>> {
    let engine = Engine::new(EngineConfig { devices: Some(vec![]), ..EngineConfig::default() })?;
    let statement = Circuit::Post(t).statement(0, input)?;
    let rs = (0..statement.partitions() as u64).map(|k| fixed(first + k)).collect();
    let (proofs, _) = engine.prove(Request {
        pce,
        params: &Srs::in_memory(params.clone()),
        statement: &statement,
        opts: ProveOptions { backend: Backend::Cpu, verify: true, randomness: Some(rs) },
        priority: Priority::default(),
        cancel: CancelToken::new(),
        observer: None,
    })?;
    Ok(engine::proof_bytes(&proofs))
}

/// bellperson's own proof of each partition with the same r, s.
fn bellperson_bytes(statement: &Statement, params: &Parameters<Bls12>, first: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for k in 0..statement.partitions() {
        let (r, s) = fixed(first + k as u64);
        let p = bellperson::groth16::create_proof(statement.instance(k).unwrap(), params, r, s).unwrap();
        p.write(&mut out).unwrap();
    }
    out
}

#[test]
fn winning_post_matches_bellperson_and_filecoin_verifies_it() {
    let f = fixture();
    let (pce, params) = ready(WINNING);
    let input = f.input(WINNING, &[42], None, 3).unwrap();
    let bytes = input.encode();
    let proof = prove(WINNING, &pce, &params, &bytes, 0).unwrap();
    assert_eq!(proof.len(), 192);
    let statement = Circuit::Post(WINNING).statement(0, &bytes).unwrap();
    assert_eq!(statement.class(), ProofClass::Critical, "a WinningPoSt is always in the latency class");
    assert_eq!(proof, bellperson_bytes(&statement, &params, 0), "byte-identical to bellperson");
    let ok = api::verify_winning_post(&input.randomness, &proof, &f.replicas(WINNING, &[42]), input.prover_id);
    assert!(ok.expect("filecoin-proofs verifies"), "filecoin-proofs' verify_winning_post accepts it");
    assert_eq!(filecoin_verify(&bytes, &proof).unwrap(), Some(true), "the bench's check agrees");
    let other = f.input(WINNING, &[42], None, 4).unwrap();
    let wrong = api::verify_winning_post(&other.randomness, &proof, &f.replicas(WINNING, &[42]), input.prover_id);
    assert!(!wrong.unwrap(), "other randomness does not verify");
}

#[test]
fn window_post_partitions_match_bellperson_and_filecoin_verifies_them() {
    let f = fixture();
    let (pce, params) = ready(WINDOW);
    let sectors = [7, 5, 9];
    let input = f.input(WINDOW, &sectors, None, 8).unwrap();
    let bytes = input.encode();
    assert_eq!(Circuit::Post(WINDOW).proof_len_for(&bytes).unwrap(), 384);
    let whole = prove(WINDOW, &pce, &params, &bytes, 0).unwrap();
    let statement = Circuit::Post(WINDOW).statement(0, &bytes).unwrap();
    assert_eq!((statement.partitions(), statement.class()), (2, ProofClass::Deadline));
    assert_eq!(whole, bellperson_bytes(&statement, &params, 0), "byte-identical to bellperson");
    let replicas = f.replicas(WINDOW, &sectors);
    let ok = api::verify_window_post(&input.randomness, &[(input.proof, &whole)], &replicas, input.prover_id);
    assert!(ok.expect("filecoin-proofs verifies"), "filecoin-proofs' verify_window_post accepts it");
    assert_eq!(filecoin_verify(&bytes, &whole).unwrap(), Some(true), "the bench's check agrees");
    assert!(!matches!(filecoin_verify(&bytes, &whole[..192]), Ok(Some(true))), "one partition is not the whole");

    // Partition 1 alone (sectors sorted by id: [5, 7], then [9]), as a node proves it.
    let single = PostInput { partition: Some(1), vanilla: input.vanilla[2..].to_vec(), ..input.clone() };
    let part = prove(WINDOW, &pce, &params, &single.encode(), 1).unwrap();
    assert_eq!(part, whole[192..], "partition 1 alone = its slot in the whole proof");
}

#[test]
fn bad_inputs_are_refused_clearly() {
    let f = fixture();
    let good = f.input(WINDOW, &[1, 2], None, 9).unwrap();
    let statement = |t: PostType, i: &PostInput| Circuit::Post(t).statement(0, &i.encode()).unwrap_err().to_string();
    assert!(statement(WINNING, &good).contains("circuit is winning-post-2KiB"));
    let big = PostType { size: PorepSize::MiB8, ..WINDOW };
    assert!(statement(big, &good).contains("circuit is window-post-8MiB"));
    let dup = PostInput { vanilla: vec![good.vanilla[0].clone(), good.vanilla[0].clone()], ..good.clone() };
    assert!(statement(WINDOW, &dup).contains("two vanilla proofs"));
    let mut corrupt = good.clone();
    let last = corrupt.vanilla[1].len() - 40;
    corrupt.vanilla[1][last] ^= 1;
    assert!(statement(WINDOW, &corrupt).contains("PoSt input"));
    let mut noncanonical = good.clone();
    noncanonical.randomness = [0xff; 32];
    assert!(statement(WINDOW, &noncanonical).contains("randomness is not a canonical"));
    let cut = PostInput { vanilla: vec![good.vanilla[0][..100].to_vec()], ..good.clone() };
    assert!(statement(WINDOW, &cut).contains("does not decode"));
    // The first path step's index (after sector id, comm_r, the sector and proof counts, the
    // proof's tag, root, leaf, the path's length and 7 siblings) past its siblings: Filecoin's
    // hasher would panic on it (found by fuzzing).
    let mut step = good.clone();
    step.vanilla[0][364..372].copy_from_slice(&9u64.to_le_bytes());
    assert!(statement(WINDOW, &step).contains("not of this tree"));
    let far = PostInput { partition: Some(5000), ..good.clone() };
    assert!(statement(WINDOW, &far).contains("out of range"));
    let too_many = PostInput { partition: Some(0), vanilla: vec![good.vanilla[0].clone(); 3], ..good.clone() };
    assert!(statement(WINDOW, &too_many).contains("at most 2 sectors"));
    let none = PostInput { vanilla: vec![], ..good.clone() };
    assert!(statement(WINDOW, &none).contains("no vanilla proofs"));
    assert!(matches!(Circuit::Post(WINDOW).statement(1, &good.encode()), Err(Error::InvalidInput(_))));
    assert!(matches!(Circuit::Post(WINDOW).statement(0, b"junk"), Err(Error::InvalidInput(_))));
}

/// One WindowPoSt partition at the last index a deadline has, as a host may ask for it: its
/// request holds its own sectors alone (none for the 2,999 partitions before it), and its public
/// inputs are partition 0's (V1_2's challenges do not depend on the index). One index further
/// is refused before any vanilla proof is decoded.
#[test]
fn the_last_partition_of_a_deadline_alone() {
    let f = fixture();
    let at = |k: u64| f.input(WINDOW, &[1, 2], Some(k), 9).unwrap();
    let statement = |i: &PostInput| Circuit::Post(WINDOW).statement(0, &i.encode());
    let last = statement(&at(2999)).unwrap();
    assert_eq!(last.partitions(), 1);
    assert_eq!(last.public_inputs(0).unwrap(), statement(&at(0)).unwrap().public_inputs(0).unwrap());
    let past = PostInput { vanilla: vec![b"junk".to_vec()], ..at(3000) };
    assert!(statement(&past).unwrap_err().to_string().contains("out of range"));
}

/// Rows of a blank circuit as bellperson's `BenchCS` counts them (no input rows), without
/// recording the matrices.
fn bench_rows(c: Circuit) -> usize {
    use bellperson::util_cs::bench_cs::BenchCS;
    let mut cs = BenchCS::<Scalar>::new();
    bellperson::Circuit::synthesize(c.blank().unwrap(), &mut cs).unwrap();
    cs.num_constraints()
}

/// The 32 GiB counts filecoin-proofs publishes: a SnapDeals partition (81,049,499) here; a
/// WindowPoSt partition (125,279,217) in `window_post_32gib_rows` (minutes on 2 cores).
#[test]
fn snap_deals_32gib_rows() {
    scratch();
    assert_eq!(bench_rows(Circuit::Snap(PorepSize::GiB32)), 81_049_499);
}

#[test]
#[ignore = "minutes on 2 cores: cargo test --release --test post -- --ignored"]
fn window_post_32gib_rows() {
    scratch();
    assert_eq!(bench_rows(Circuit::Post(PostType { kind: PostKind::Window, size: PorepSize::GiB32 })), 125_279_217);
}

#[test]
fn circuit_shapes() {
    scratch();
    // The blank circuits' rows (bellperson's input rows included) and inputs (the ONE included).
    for (t, rows, inputs) in [
        (WINNING, None, 133),
        (WINDOW, None, 23),
        (PostType { kind: PostKind::Winning, size: PorepSize::GiB32 }, Some(370_590 + 133), 133),
    ] {
        let pce = Circuit::Post(t).extract_pce().unwrap();
        eprintln!(
            "{t}: {} constraints, {} inputs, {} aux, {} nnz",
            pce.num_constraints(),
            pce.num_inputs,
            pce.num_aux,
            pce.nnz()
        );
        assert_eq!(pce.num_inputs, inputs, "{t}");
        if let Some(rows) = rows {
            assert_eq!(pce.num_constraints(), rows, "{t}");
        }
    }
}
