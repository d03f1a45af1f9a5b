//! SnapDeals requests over sparse sectors (`cuzk::oracles::sparse::make_sparse_snap`) as
//! filecoin-proofs-api's vanilla verifier (`update::verify_partition_proofs`) judges them: all
//! 16 partitions of a 32 GiB and a 64 GiB sector accepted, and by cuzk's parser; a changed
//! new-replica leaf or comm_r_new refused by both.
#![cfg(all(feature = "porep", feature = "oracles"))]

use std::time::Instant;

use cuzk::circuits::porep::PorepSize;
use cuzk::circuits::snap::SnapInput;
use cuzk::circuits::Circuit;
use cuzk::oracles::sparse::make_sparse_snap;
use filecoin_proofs_api::update::verify_partition_proofs;
use filecoin_proofs_api::PartitionProofBytes;

fn filecoin_accepts(i: &SnapInput) -> bool {
    let proofs: Vec<PartitionProofBytes> = i.partitions.iter().cloned().map(PartitionProofBytes).collect();
    verify_partition_proofs(i.proof, &proofs, i.comm_r_old, i.comm_r_new, i.comm_d_new).unwrap_or(false)
}

fn assert_accepted(size: PorepSize) -> SnapInput {
    let t = Instant::now();
    let input = make_sparse_snap(size, 3).expect("a sparse SnapDeals request");
    let made_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    assert!(filecoin_accepts(&input), "filecoin-proofs-api refuses the sparse {size} request");
    let verify_s = t.elapsed().as_secs_f64();
    assert_ne!(input.comm_r_old, input.comm_r_new);
    let statement = Circuit::Snap(size).statement(0, &input.encode()).expect("cuzk parses the request");
    assert_eq!(statement.partitions(), cuzk::circuits::snap::partitions(size));
    eprintln!("sparse snap-{size}: made in {made_s:.2} s, filecoin-proofs-api verified it in {verify_s:.2} s");
    input
}

#[test]
fn snap_32gib_is_accepted() {
    assert_eq!(assert_accepted(PorepSize::GiB32).partitions.len(), 16);
}

#[test]
fn snap_64gib_is_accepted() {
    assert_accepted(PorepSize::GiB64);
}

/// 64 nodes, two runs of one rho each.
#[test]
fn snap_2kib_is_accepted() {
    assert_accepted(PorepSize::KiB2);
}

#[test]
fn a_changed_byte_is_refused() {
    let input = assert_accepted(PorepSize::GiB32);
    // A partition proof ends with its last challenge's new-replica leaf.
    let mut leaf = input.clone();
    let last = leaf.partitions.last_mut().unwrap();
    let at = last.len() - 32;
    last[at] ^= 1;
    let mut comm_r_new = input.clone();
    comm_r_new.comm_r_new[0] ^= 1;
    for (what, bad) in [("a new-replica leaf", leaf), ("comm_r_new", comm_r_new)] {
        assert!(!filecoin_accepts(&bad), "{what}: filecoin-proofs-api accepts a changed request");
        assert!(Circuit::Snap(PorepSize::GiB32).statement(0, &bad.encode()).is_err(), "{what}: cuzk accepts it");
    }
}

#[test]
fn cuzk_bench_writes_a_sparse_request() {
    let out = std::env::temp_dir().join(format!("cuzk-sparse-snap-{}.input", std::process::id()));
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_cuzk-bench"))
        .args(["fixture", "--circuit", "snap-2KiB", "--sparse", "--seed", "3", "--out", out.to_str().unwrap()])
        .output()
        .expect("cuzk-bench runs");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let written = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    assert_eq!(written, make_sparse_snap(PorepSize::KiB2, 3).unwrap().encode());
}
