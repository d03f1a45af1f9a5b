//! Filecoin PoRep C2 through the PCE path, on a freshly sealed 2 KiB sector.
//!
//! CI tests (2 KiB only, a few minutes on 2 cores):
//! - the PCE path's a, b, c, densities, inputs and aux equal the reference evaluation of
//!   bellperson's own synthesis, for every partition, and the witnesses made with the challenges
//!   synthesized in parallel and replayed from the witness program equal the sequential one,
//!   and the program saved with the PCE at extraction is split by challenge as a C1's is;
//! - the public inputs (reference inputs[1..]) equal `generate_public_inputs`;
//! - the CPU proof with fixed r, s is byte-identical to `bellperson::groth16::create_proof` on the
//!   same circuit and (structurally valid, unsound) parameters;
//! - malformed, truncated and mismatched C1 outputs get clear errors.
//!
//! Opt-in (`cargo test --test porep -- --ignored`): with `CUZK_POREP_PARAMS=/path/to/v28-…2k….params`
//! (real parameters of the 2 KiB V1_1 circuit), prove and verify for real.
#![cfg(feature = "porep")]

use std::sync::OnceLock;
use std::time::Instant;

use bellperson::groth16::Parameters;
use blstrs::{Bls12, Scalar};
use cuzk::circuits::porep::{self, PorepC1, PorepSize};
use cuzk::circuits::WitnessSource;
use cuzk::circuits::{Circuit, Statement};
use cuzk::engine::{self, CancelToken, Engine, EngineConfig, Priority, ProveOptions, Request};
use cuzk::groth16::Backend;
use cuzk::oracles::reference::ReferenceCs;
use cuzk::params::Srs;
use cuzk::pce::{self, Pce};
use cuzk::witness::{Witness, WitnessBuffer};
use cuzk::Error;

/// One 2 KiB C1 per test process, sealed under the cargo-provided temp dir.
fn c1_bytes() -> &'static [u8] {
    static C1: OnceLock<Vec<u8>> = OnceLock::new();
    C1.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cuzk-porep-{}", std::process::id()));
        let t = Instant::now();
        let bytes = cuzk::oracles::porep::make_c1(PorepSize::KiB2, porep::SealVariant::Interactive, &dir, 7)
            .map(|c1| c1.bytes)
            .expect("make 2 KiB C1");
        eprintln!("made 2 KiB C1 ({} bytes) in {:.2?}", bytes.len(), t.elapsed());
        let _ = std::fs::remove_dir_all(&dir);
        bytes
    })
}

/// What a 2 KiB request proves: the C1 above, parsed.
fn statement() -> Statement {
    Circuit::Porep(PorepSize::KiB2).statement(0, c1_bytes()).expect("parse C1")
}

/// Proves the C1 above through a CPU engine, as `cuzk_prove` does: `seal_commit_phase2`'s bytes.
fn prove(pce: &Pce, params: &Parameters<Bls12>, opts: ProveOptions) -> cuzk::Result<Vec<u8>> {
    let engine = Engine::new(EngineConfig { devices: Some(vec![]), ..EngineConfig::default() })?;
    let statement = statement();
    let (proofs, _) = engine.prove(Request {
        pce,
        params: &Srs::in_memory(params.clone()),
        statement: &statement,
        opts: ProveOptions { backend: Backend::Cpu, ..opts },
        priority: Priority::default(),
        cancel: CancelToken::new(),
        observer: None,
    })?;
    Ok(engine::proof_bytes(&proofs))
}

fn c1() -> &'static PorepC1 {
    static C: OnceLock<PorepC1> = OnceLock::new();
    C.get_or_init(|| PorepC1::parse_for(c1_bytes(), PorepSize::KiB2).expect("parse C1"))
}

/// The 2 KiB PCE, recorded from the blank circuit (no C1).
fn pce_2k() -> &'static Pce {
    static P: OnceLock<Pce> = OnceLock::new();
    P.get_or_init(|| {
        let t = Instant::now();
        let p = porep::extract_pce(PorepSize::KiB2).expect("extract 2 KiB PCE");
        eprintln!(
            "2 KiB PCE: {} constraints, {} inputs, {} aux, {} nnz, {:.2} B/nnz, extracted in {:.2?}",
            p.num_constraints(),
            p.num_inputs,
            p.num_aux,
            p.nnz(),
            p.bytes_per_nnz(),
            t.elapsed()
        );
        p
    })
}

fn expect_invalid(r: cuzk::Result<PorepC1>, needle: &str) -> String {
    match r {
        Err(Error::InvalidInput(m)) => {
            assert!(m.to_lowercase().contains(&needle.to_lowercase()), "error {m:?} does not mention {needle:?}");
            m
        }
        Err(e) => panic!("expected InvalidInput mentioning {needle:?}, got {e:?}"),
        Ok(c) => panic!("expected an error mentioning {needle:?}, parsed {c:?}"),
    }
}

#[test]
fn sizes_ids_and_names() {
    let mut ids = Vec::new();
    for size in PorepSize::ALL {
        assert_eq!(PorepSize::from_name(size.short_name()).unwrap(), size);
        assert_eq!(PorepSize::from_name(size.label()).unwrap(), size);
        assert_eq!(
            PorepSize::from_registered_proof(size.registered_proof()).unwrap(),
            (size, porep::SealVariant::Interactive)
        );
        assert_eq!(PorepSize::from_sector_bytes(size.sector_bytes()).unwrap(), size);
        let id = porep::circuit_id(size).unwrap();
        assert!(id.starts_with(&format!("porep-{}-v1_1-stacked-proof-of-replication-", size.short_name())), "{id}");
        ids.push(id);
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 5, "circuit ids must differ per size");
    // The production parameter files (storage-proofs-core 19.1 parameters.json), smallest first.
    let production = [
        "poseidon_hasher-8-0-0-sha256_hasher-032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f",
        "poseidon_hasher-8-0-0-sha256_hasher-ecd683648512ab1765faa2a5f14bab48f676e633467f0aa8aad4b55dcb0652bb",
        "poseidon_hasher-8-0-0-sha256_hasher-6babf46ce344ae495d558e7770a585b2382d54f225af8ed0397b8be7c3fcd472",
        "poseidon_hasher-8-8-0-sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820",
        "poseidon_hasher-8-8-2-sha256_hasher-96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2",
    ];
    for (size, tail) in PorepSize::ALL.into_iter().zip(production) {
        let want = format!("v28-stacked-proof-of-replication-merkletree-{tail}.params");
        assert_eq!(porep::params_file_name(size).unwrap(), want, "{size}");
    }
    let id2k = porep::param_cache_identifier(PorepSize::KiB2).unwrap();
    assert_eq!(porep::params_file_name(PorepSize::KiB2).unwrap(), format!("v28-{id2k}.params"));
    assert_eq!(PorepSize::GiB32.partitions(), 10);
    assert_eq!(PorepSize::KiB2.partitions(), 1);
    assert!(PorepSize::from_name("4k").is_err());
    assert!(PorepSize::from_registered_proof(filecoin_proofs_api::RegisteredSealProof::StackedDrg2KiBV1).is_err());
}

#[test]
fn pce_path_equals_reference_for_every_partition() {
    let c1 = c1();
    let pce = pce_2k();
    assert_eq!(c1.num_partitions(), 1);
    for k in 0..c1.num_partitions() {
        let t = Instant::now();
        let reference = ReferenceCs::synthesize(c1.circuit(k).unwrap()).unwrap();
        let t_ref = t.elapsed();
        let t = Instant::now();
        let w = Witness::generate(c1.circuit(k).unwrap()).unwrap();
        let t_wit = t.elapsed();
        let buf = || WitnessBuffer::new(pce.num_inputs, pce.num_aux);
        let t = Instant::now();
        let parallel = c1.circuit(k).unwrap().gadget_witness(buf()).unwrap();
        let t_par = t.elapsed();
        let program = c1.circuit(k).unwrap().program(pce).expect("a witness program");
        assert!(program.is_split(), "one part per challenge");
        let t = Instant::now();
        let replayed = c1.circuit(k).unwrap().witness(pce, buf()).unwrap();
        let t_prog = t.elapsed();
        let t = Instant::now();
        let abc = pce::evaluate(pce, &w).unwrap();
        let t_eval = t.elapsed();
        eprintln!(
            "partition {k}: reference synthesis {t_ref:.2?}, witness {t_wit:.2?} (challenges in parallel {t_par:.2?}, \
             witness program {t_prog:.2?}, {} free values), SpMV {t_eval:.2?}",
            program.free().len()
        );
        assert!(parallel == w, "the challenge-parallel witness differs from the sequential one");
        assert!(replayed == w, "the witness program's witness differs from the gadgets'");
        // What the C1 gives is all the program takes: 5 commitments, then per challenge (two
        // here) 425 values: data leaf, 6 comm_d path steps, 14 parents' columns and paths,
        // 64 challenge bits, two paths of the challenge's own column.
        assert_eq!(program.free().len(), 5 + 2 * 425);

        assert_eq!(w.inputs.len(), pce.num_inputs);
        assert_eq!(w.aux.len(), pce.num_aux);
        assert!(w.inputs == reference.witness.inputs, "inputs differ");
        assert!(w.aux == reference.witness.aux, "aux differ");
        assert_eq!(abc.a.len(), reference.abc.a.len());
        assert!(abc.a == reference.abc.a, "a differs");
        assert!(abc.b == reference.abc.b, "b differs");
        assert!(abc.c == reference.abc.c, "c differs");
        assert!(pce.density.a_aux.to_bits() == reference.a_aux_density, "A aux density differs");
        assert!(pce.density.b_input.to_bits() == reference.b_input_density, "B input density differs");
        assert!(pce.density.b_aux.to_bits() == reference.b_aux_density, "B aux density differs");

        // The CS inputs are [ONE] ++ the verifier's public inputs.
        assert_eq!(reference.witness.inputs[0], Scalar::from(1u64));
        let public = c1.public_inputs(k).unwrap();
        assert_eq!(public.len() + 1, reference.witness.inputs.len());
        assert!(reference.witness.inputs[1..] == public[..], "public inputs differ from generate_public_inputs");
    }
}

/// The PCE extracted and saved by `Circuit::load_pce` carries its witness program, recorded
/// with the layout of the blank circuit: split by challenge, as a C1's partition records it,
/// and replaying the gadgets' witness.
#[test]
fn the_program_saved_at_extraction_is_split_by_challenge() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cuzk-porep-pce-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pce = Circuit::Porep(PorepSize::KiB2).load_pce(&dir.join("2k.pce"), true, pce::Access::Read).unwrap();
    let saved = pce.program(|| panic!("loaded with its file, not recorded")).expect("a witness program");
    let recorded = c1().circuit(0).unwrap().program(pce_2k()).expect("a witness program");
    assert!(saved.is_split() && recorded.is_split());
    assert_eq!((saved.steps(), saved.free()), (recorded.steps(), recorded.free()));
    let w = c1().circuit(0).unwrap().witness(&pce, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
    assert!(w == Witness::generate(c1().circuit(0).unwrap()).unwrap());
    assert_eq!(pce.program.trusted(), Some(true));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cpu_proof_is_byte_identical_to_bellperson() {
    let c1 = c1();
    let pce = pce_2k();
    let params = cuzk::params::dummy_params(pce, 42);
    let n = c1.num_partitions();
    let rs: Vec<(Scalar, Scalar)> =
        (0..n).map(|k| (Scalar::from(1000 + k as u64), Scalar::from(2000 + k as u64))).collect();

    let t = Instant::now();
    let opts = ProveOptions { verify: false, randomness: Some(rs.clone()), ..ProveOptions::default() };
    let ours = prove(pce, &params, opts).unwrap();
    eprintln!("cuzk PCE path through the engine, {n} partition(s): {:.2?}", t.elapsed());
    assert_eq!(ours.len(), n * cuzk::groth16::PROOF_BYTES);

    let t = Instant::now();
    let mut theirs = Vec::new();
    for (k, &(r, s)) in rs.iter().enumerate() {
        let p = bellperson::groth16::create_proof(c1.circuit(k).unwrap(), &params, r, s).unwrap();
        p.write(&mut theirs).unwrap();
    }
    eprintln!("bellperson create_proof, {n} partition(s): {:.2?}", t.elapsed());
    assert!(ours == theirs, "cuzk proof bytes differ from bellperson's");

    // Structurally valid but unsound parameters: the verifier must say no, not crash.
    let statement = statement();
    assert_eq!(engine::verify(&params.vk, &statement, &ours), Err(Error::VerificationFailed));
    assert!(matches!(engine::verify(&params.vk, &statement, &ours[..100]), Err(Error::InvalidInput(_))));
    let mut garbled = ours.clone();
    garbled[..48].fill(0xff);
    assert!(matches!(engine::verify(&params.vk, &statement, &garbled), Err(Error::MalformedProof(_))));
    // The engine's refusal of what it proved with unsound parameters (verification is on by
    // default) is tested in tests/snap.rs, on a smaller circuit: one more 2 KiB PoRep proof here
    // would take half a minute.
}

#[test]
fn pce_of_another_circuit_is_refused() {
    // A PCE of some other circuit (a tiny synthetic one) must not be used for a 2 KiB C1.
    let other = cuzk::circuits::Synthetic::new(cuzk::circuits::Family::MimcChain, 64, 1);
    let pce = pce::extract(other.blank()).unwrap();
    let params = cuzk::params::dummy_params(&pce, 1);
    match prove(&pce, &params, ProveOptions::default()) {
        Err(Error::InvalidInput(m)) => assert!(m.contains("another circuit"), "{m}"),
        other => panic!("expected a PCE mismatch error, got {other:?}"),
    }
}

fn edit(f: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let mut v: serde_json::Value = serde_json::from_slice(c1_bytes()).unwrap();
    f(&mut v);
    serde_json::to_vec(&v).unwrap()
}

/// The first array of 32 numbers (a hash) in `v`.
fn first_hash(v: &mut serde_json::Value) -> Option<&mut Vec<serde_json::Value>> {
    let is_hash = matches!(v, serde_json::Value::Array(a) if a.len() == 32 && a.iter().all(|x| x.is_u64()));
    if is_hash {
        return v.as_array_mut();
    }
    match v {
        serde_json::Value::Array(a) => a.iter_mut().find_map(first_hash),
        serde_json::Value::Object(o) => o.values_mut().find_map(first_hash),
        _ => None,
    }
}

/// The siblings of the first Merkle path step in `v` (an object with `hashes`).
fn first_path_step(v: &mut serde_json::Value) -> Option<&mut serde_json::Value> {
    if v.get("hashes").is_some_and(|h| h.is_array()) {
        return Some(v);
    }
    match v {
        serde_json::Value::Array(a) => a.iter_mut().find_map(first_path_step),
        serde_json::Value::Object(o) => o.values_mut().find_map(first_path_step),
        _ => None,
    }
}

fn retag(v: &mut serde_json::Value, tag: &str) {
    let vp = v["vanilla_proofs"].as_object_mut().unwrap();
    let (_, inner) = vp.iter().next().map(|(k, x)| (k.clone(), x.clone())).unwrap();
    vp.clear();
    vp.insert(tag.to_string(), inner);
}

#[test]
fn bad_c1_inputs_get_clear_errors() {
    let good = c1_bytes();
    assert!(PorepC1::parse(good).is_ok());

    expect_invalid(PorepC1::parse(b""), "empty");
    expect_invalid(PorepC1::parse(b"  \n"), "empty");
    expect_invalid(PorepC1::parse(&good[..good.len() / 2]), "truncated");
    expect_invalid(PorepC1::parse(&good[..good.len() - 1]), "truncated");
    expect_invalid(PorepC1::parse(b"{\"registered_proof\": }"), "malformed");
    expect_invalid(PorepC1::parse(b"\x00\x01garbage"), "malformed");
    expect_invalid(PorepC1::parse(b"\"hello\""), "not a SealCommitPhase1Output");
    expect_invalid(PorepC1::parse(b"{}"), "registered_proof");

    // Unknown, old-version and unsupported proof types.
    let m = expect_invalid(
        PorepC1::parse(&edit(|v| v["registered_proof"] = "StackedDrg4KiBV1_1".into())),
        "unknown registered proof",
    );
    assert!(m.contains("StackedDrg4KiBV1_1"), "{m}");
    expect_invalid(PorepC1::parse(&edit(|v| v["registered_proof"] = "StackedDrg2KiBV1".into())), "pre-V1_1");
    expect_invalid(PorepC1::parse(&edit(|v| v["registered_proof"] = 5.into())), "must be a string");
    // A hash in a Merkle path that is not a field element (Filecoin's Poseidon would panic on it;
    // found by fuzz/fuzz_targets/c1_parse.rs).
    let m = expect_invalid(
        PorepC1::parse(&edit(|v| {
            let path = &mut v["vanilla_proofs"]["StackedDrg2KiBV1"][0][0]["comm_r_last_proof"];
            let hash = first_hash(path).expect("a hash in comm_r_last's proof");
            hash[31] = 0xff.into();
        })),
        "not a canonical BLS12-381 scalar",
    );
    assert!(m.contains("vanilla_proofs"), "{m}");
    // A Merkle path step with a sibling too many (Poseidon has no arity 9).
    expect_invalid(
        PorepC1::parse(&edit(|v| {
            let path = &mut v["vanilla_proofs"]["StackedDrg2KiBV1"][0][0]["comm_r_last_proof"];
            let step = first_path_step(path).expect("a path step in comm_r_last's proof");
            let hashes = step["hashes"].as_array_mut().unwrap();
            let extra = hashes[0].clone();
            hashes.push(extra);
        })),
        "siblings",
    );
    // A step's index past its siblings (Filecoin's Merkle hasher panics inserting the node
    // there; found by fuzz/fuzz_targets/c1_parse.rs).
    let m = expect_invalid(
        PorepC1::parse(&edit(|v| {
            let path = &mut v["vanilla_proofs"]["StackedDrg2KiBV1"][0][0]["comm_r_last_proof"];
            let step = first_path_step(path).expect("a path step in comm_r_last's proof");
            step["index"] = 8.into();
        })),
        "past its",
    );
    assert!(m.contains("index 8"), "{m}");

    // A C1 for another size than requested (e.g. sent to a PCE of another size).
    let m = expect_invalid(PorepC1::parse_for(good, PorepSize::GiB32), "32GiB");
    assert!(m.contains("2KiB"), "{m}");

    // Registered proof and vanilla proofs disagree.
    expect_invalid(PorepC1::parse(&edit(|v| v["registered_proof"] = "StackedDrg8MiBV1_1".into())), "tagged for 2KiB");
    // Both claim 8 MiB but the proofs are 2 KiB proofs (same tree type): Merkle path lengths.
    expect_invalid(
        PorepC1::parse(&edit(|v| {
            v["registered_proof"] = "StackedDrg8MiBV1_1".into();
            retag(v, "StackedDrg8MiBV1");
        })),
        "another sector size",
    );
    // Both claim 32 GiB: a different tree shape.
    expect_invalid(
        PorepC1::parse(&edit(|v| {
            v["registered_proof"] = "StackedDrg32GiBV1_1".into();
            retag(v, "StackedDrg32GiBV1");
        })),
        "C1 output",
    );

    // Commitments and seed.
    expect_invalid(
        PorepC1::parse(&edit(|v| v["comm_r"] = serde_json::to_value(vec![0u8; 32]).unwrap())),
        "comm_r is all zero",
    );
    expect_invalid(
        PorepC1::parse(&edit(|v| v["seed"] = serde_json::to_value(vec![0u8; 32]).unwrap())),
        "seed is all zero",
    );
    expect_invalid(
        PorepC1::parse(&edit(|v| v["comm_d"] = serde_json::to_value(vec![255u8; 32]).unwrap())),
        "canonical",
    );
    expect_invalid(
        PorepC1::parse(&edit(|v| v["comm_r"] = serde_json::to_value(vec![1u8; 31]).unwrap())),
        "not a SealCommitPhase1Output",
    );
    // A valid-looking but wrong comm_r / seed: the vanilla proofs no longer verify.
    expect_invalid(
        PorepC1::parse(&edit(|v| {
            let x = v["comm_r"][3].as_u64().unwrap();
            v["comm_r"][3] = ((x + 1) % 256).into();
        })),
        "do not verify",
    );
    expect_invalid(
        PorepC1::parse(&edit(|v| {
            let x = v["seed"][5].as_u64().unwrap();
            v["seed"][5] = ((x + 1) % 256).into();
        })),
        "do not verify",
    );
    // Missing partitions / challenges.
    expect_invalid(
        PorepC1::parse(&edit(|v| {
            let vp = v["vanilla_proofs"]["StackedDrg2KiBV1"].as_array_mut().unwrap();
            vp.clear();
        })),
        "partitions",
    );
    expect_invalid(
        PorepC1::parse(&edit(|v| {
            let p0 = v["vanilla_proofs"]["StackedDrg2KiBV1"][0].as_array_mut().unwrap();
            p0.pop();
        })),
        "challenge proofs",
    );

    // Out-of-range partition.
    let c1 = c1();
    assert!(matches!(c1.circuit(c1.num_partitions()), Err(Error::InvalidInput(_))));
    assert!(matches!(c1.public_inputs(99), Err(Error::InvalidInput(_))));
}

/// Real parameters: `CUZK_POREP_PARAMS=/path/v28-stacked-proof-of-replication-…-032d3138….params
/// cargo test --release --test porep -- --ignored --nocapture`.
#[test]
#[ignore = "needs CUZK_POREP_PARAMS pointing at the real 2 KiB PoRep parameters"]
fn real_params_prove_and_verify() {
    let path = std::env::var_os("CUZK_POREP_PARAMS").expect("set CUZK_POREP_PARAMS to the 2 KiB .params file");
    let path = std::path::PathBuf::from(path);
    let want = porep::params_file_name(PorepSize::KiB2).unwrap();
    if path.file_name().and_then(|n| n.to_str()) != Some(want.as_str()) {
        eprintln!("note: {} is not named {want}", path.display());
    }
    let t = Instant::now();
    let params = cuzk::params::read_params(&path, false).unwrap();
    eprintln!("read parameters in {:.2?}", t.elapsed());
    let pce = pce_2k();
    let t = Instant::now();
    let proof = prove(pce, &params, ProveOptions::default()).unwrap();
    eprintln!("proved + verified {} partition(s) in {:.2?}", c1().num_partitions(), t.elapsed());
    let statement = statement();
    engine::verify(&params.vk, &statement, &proof).unwrap();
    let vk_path = path.with_extension("vk");
    if vk_path.exists() {
        let vk = porep::read_verifying_key(&vk_path).unwrap();
        engine::verify(&vk, &statement, &proof).unwrap();
        eprintln!("verified against {}", vk_path.display());
    }
    // A corrupted proof must fail.
    let mut bad = proof.clone();
    bad[0] ^= 1;
    assert!(engine::verify(&params.vk, &statement, &bad).is_err());
}

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Records the PCE of a large PoRep from its blank circuit and reports time, peak RSS, nnz and
/// bytes/nnz. `CUZK_POREP_EXTRACT=32g cargo test --test porep -- --ignored extract_large --nocapture`
/// (default 32g). Needs ~6 GB of RAM for 32 GiB and minutes of CPU.
#[test]
#[ignore = "minutes of CPU and several GB of RAM; opt-in"]
fn extract_large_pce() {
    let size = PorepSize::from_name(&std::env::var("CUZK_POREP_EXTRACT").unwrap_or_else(|_| "32g".into())).unwrap();
    let hwm0 = vm_hwm_kib();
    let t = Instant::now();
    let p = porep::extract_pce(size).unwrap();
    let secs = t.elapsed().as_secs_f64();
    let hwm = vm_hwm_kib();
    println!(
        "{size} PoRep PCE ({}): {} constraints, {} inputs, {} aux, nnz A/B/C {}/{}/{} = {}, dict {}, \
         {} bytes = {:.3} B/nnz; extraction {secs:.1} s; VmHWM {:.2} GiB (before {:.2} GiB)",
        porep::circuit_id(size).unwrap(),
        p.num_constraints(),
        p.num_inputs,
        p.num_aux,
        p.a.nnz,
        p.b.nnz,
        p.c.nnz,
        p.nnz(),
        p.dict.len(),
        p.byte_len(),
        p.bytes_per_nnz(),
        hwm as f64 / (1u64 << 20) as f64,
        hwm0 as f64 / (1u64 << 20) as f64,
    );
}
