//! PoSt requests over sparse sectors (`cuzk::oracles::sparse::make_sparse_post`) as
//! filecoin-proofs judges them, through its public API: the vanilla-proof partitioning and
//! verification `generate_winning_post_with_vanilla` and `generate_window_post_with_vanilla` run
//! before they prove (`partition_vanilla_proofs`, which verifies every partition), at 32 GiB
//! (WinningPoSt; WindowPoSt with a full partition of 2,349 sectors) and 64 GiB (its SectorShapeTop2
//! trees); cuzk's parser
//! takes them; a changed leaf or comm_c is refused by both.
#![cfg(all(feature = "porep", feature = "oracles"))]

use std::time::Instant;

use cuzk::circuits::porep::PorepSize;
use cuzk::circuits::post::{PostInput, PostKind, PostType};
use cuzk::circuits::Circuit;
use cuzk::oracles::sparse::make_sparse_post;
use filecoin_hashers::Domain;
use filecoin_proofs::constants::{
    DefaultTreeDomain, DefaultTreeHasher, SectorShapeBase, SectorShapeSub8, SectorShapeTop2,
};
use filecoin_proofs::parameters::{window_post_setup_params, winning_post_setup_params};
use filecoin_proofs::{partition_vanilla_proofs, FallbackPoStSectorProof, PoStType};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_post::fallback::{self, FallbackPoSt, PublicSector};

/// filecoin-proofs' verdict on a request's vanilla proofs, reached as its
/// `generate_*_post_with_vanilla` reach it.
fn filecoin_accepts(input: &PostInput) -> bool {
    match PostType::of_registered_proof(input.proof).size {
        PorepSize::GiB32 => accepts::<SectorShapeSub8>(input),
        PorepSize::GiB64 => accepts::<SectorShapeTop2>(input),
        _ => accepts::<SectorShapeBase>(input),
    }
}

fn accepts<Tree: 'static + MerkleTreeTrait<Hasher = DefaultTreeHasher>>(input: &PostInput) -> bool {
    let config = input.proof.as_v1_config();
    let Ok(vanilla) = input
        .vanilla
        .iter()
        .map(|b| bincode::deserialize::<FallbackPoStSectorProof<Tree>>(b))
        .collect::<Result<Vec<_>, _>>()
    else {
        return false;
    };
    let (setup, partitions) = match config.typ {
        PoStType::Winning => (winning_post_setup_params(&config).unwrap(), 1),
        _ => (window_post_setup_params(&config), vanilla.len().div_ceil(config.sector_count)),
    };
    let pp = FallbackPoSt::<Tree>::setup(&setup).unwrap();
    let pub_in = fallback::PublicInputs {
        randomness: DefaultTreeDomain::try_from_bytes(&input.randomness).unwrap(),
        prover_id: DefaultTreeDomain::try_from_bytes(&input.prover_id).unwrap(),
        sectors: vanilla.iter().map(|v| PublicSector { id: v.sector_id, comm_r: v.comm_r }).collect(),
        k: None,
    };
    partition_vanilla_proofs(&config, &pp, &pub_in, partitions, &vanilla).is_ok()
}

fn assert_accepted(typ: PostType, sectors: u64) -> PostInput {
    let t = Instant::now();
    let input = make_sparse_post(typ, sectors, 5).expect("a sparse PoSt request");
    let made_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    assert!(filecoin_accepts(&input), "filecoin-proofs refuses the sparse {typ} request");
    let verify_s = t.elapsed().as_secs_f64();
    let statement = Circuit::Post(typ).statement(0, &input.encode()).expect("cuzk parses the request");
    assert_eq!(statement.partitions(), typ.partitions_for(sectors as usize));
    eprintln!("sparse {typ}, {sectors} sectors: made in {made_s:.2} s, filecoin-proofs verified it in {verify_s:.2} s");
    input
}

fn window(size: PorepSize) -> PostType {
    PostType { kind: PostKind::Window, size }
}

#[test]
fn winning_32gib_is_accepted() {
    assert_accepted(PostType { kind: PostKind::Winning, size: PorepSize::GiB32 }, 1);
}

#[test]
fn window_32gib_full_partition_is_accepted() {
    let typ = window(PorepSize::GiB32);
    assert_eq!(typ.sectors_per_partition(), 2349);
    assert_accepted(typ, 2349);
}

#[test]
fn window_64gib_is_accepted() {
    assert_accepted(window(PorepSize::GiB64), 3);
}

/// The last sector's vanilla proof with one byte's low bit flipped, `from_end` bytes before its
/// end: it ends with its last inclusion proof's leaf, comm_c and comm_r_last, 32 bytes each.
fn changed(input: &PostInput, from_end: usize) -> PostInput {
    let mut bad = input.clone();
    let last = bad.vanilla.last_mut().unwrap();
    let at = last.len() - from_end;
    last[at] ^= 1;
    bad
}

#[test]
fn a_changed_byte_is_refused() {
    let typ = window(PorepSize::GiB32);
    let input = assert_accepted(typ, 3);
    // (Its comm_r_last field is not read: the verifier takes the inclusion proofs' root.)
    for (what, from_end) in [("the last leaf", 96), ("comm_c", 64)] {
        let bad = changed(&input, from_end);
        assert!(!filecoin_accepts(&bad), "{what}: filecoin-proofs accepts a changed request");
        assert!(Circuit::Post(typ).statement(0, &bad.encode()).is_err(), "{what}: cuzk accepts a changed request");
    }
}

#[test]
fn a_winning_post_proves_one_sector() {
    assert!(make_sparse_post(PostType { kind: PostKind::Winning, size: PorepSize::GiB32 }, 2, 1).is_err());
    assert!(make_sparse_post(window(PorepSize::GiB32), 0, 1).is_err());
}

#[test]
fn cuzk_bench_writes_a_sparse_request() {
    let out = std::env::temp_dir().join(format!("cuzk-sparse-post-{}.input", std::process::id()));
    let args = ["fixture", "--circuit", "window-post-2KiB", "--sparse", "--sectors", "3", "--seed", "5", "--out"];
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_cuzk-bench"))
        .args(args)
        .arg(&out)
        .output()
        .expect("cuzk-bench runs");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let written = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    assert_eq!(written, make_sparse_post(window(PorepSize::KiB2), 3, 5).unwrap().encode());
}
