//! The aggregate against bellperson's own `aggregate_proofs` on the same proofs and SRS, byte
//! for byte; the SRS reader against damaged files.

use std::path::{Path, PathBuf};

use bellperson::groth16::aggregate::{aggregate_proofs, setup_fake_srs, AggregateVersion, GenericSRS};
use bellperson::groth16::Proof;
use blstrs::{Bls12, G1Projective, G2Projective};
use group::{Curve, Group};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;

use super::*;

fn fake_srs(size: usize, seed: u64) -> GenericSRS<Bls12> {
    setup_fake_srs::<Bls12, _>(&mut ChaCha20Rng::seed_from_u64(seed), size)
}

fn write_srs(srs: &GenericSRS<Bls12>, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cuzk-aggregate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    srs.write(&mut std::fs::File::create(&path).unwrap()).unwrap();
    path
}

/// Random points in the places of A, B, C: aggregation does not look at what they prove.
fn random_proofs(n: usize, seed: u64) -> Vec<Proof<Bls12>> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| Proof {
            a: G1Projective::random(&mut rng).to_affine(),
            b: G2Projective::random(&mut rng).to_affine(),
            c: G1Projective::random(&mut rng).to_affine(),
        })
        .collect()
}

fn bellperson_bytes(srs: &GenericSRS<Bls12>, include: &[u8], proofs: &[Proof<Bls12>], v: AggregateVersion) -> Vec<u8> {
    let (pk, _) = srs.specialize(proofs.len());
    let mut out = Vec::new();
    aggregate_proofs::<Bls12>(&pk, include, proofs, v).unwrap().write(&mut out).unwrap();
    out
}

#[test]
fn aggregates_as_bellperson_does() {
    let generic = fake_srs(64, 7);
    let path = write_srs(&generic, "parity.srs");
    let srs = AggregationSrs::load(&path, 64).unwrap();
    for (n, seed) in [(2, 1), (8, 2), (64, 3)] {
        let proofs = random_proofs(n, seed);
        let include = [seed as u8; 32];
        for (ours, theirs) in [(Version::V1, AggregateVersion::V1), (Version::V2, AggregateVersion::V2)] {
            let got = aggregate(&srs, &include, &proofs, ours).unwrap();
            assert_eq!(got.len(), aggregate_len(n));
            assert!(got == bellperson_bytes(&generic, &include, &proofs, theirs), "{n} proofs, {ours:?}");
        }
    }
    // A smaller SRS prefix gives the same bytes for what it can hold.
    let small = AggregationSrs::load(&path, 8).unwrap();
    let proofs = random_proofs(8, 9);
    assert_eq!(
        aggregate(&small, b"x", &proofs, Version::V2).unwrap(),
        aggregate(&srs, b"x", &proofs, Version::V2).unwrap()
    );
}

#[test]
fn a_generated_srs_has_bellpersons_structure() {
    // Its powers pair up across the groups: e(g^αⁱ⁺¹, h) = e(g^αⁱ, h^α), the check a KZG
    // opening relies on; and an aggregate made with it is bellperson's with the same SRS.
    let path = std::env::temp_dir().join(format!("cuzk-aggregate-{}", std::process::id())).join("generated.srs");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    srs::generate(&path, 4, 11).unwrap();
    let ours = AggregationSrs::load(&path, 4).unwrap();
    let (g, h) = (&ours.g_alpha, &ours.h_alpha);
    for i in 0..3 {
        assert_eq!(
            ops::pairing_products(&[(&g[i + 1..i + 2], &h[..1], 0)], 1)[0],
            ops::pairing_products(&[(&g[i..i + 1], &h[1..2], 0)], 1)[0]
        );
    }
    let generic = GenericSRS::<Bls12>::read(&mut std::fs::File::open(&path).unwrap()).unwrap();
    let proofs = random_proofs(4, 12);
    assert!(
        aggregate(&ours, b"g", &proofs, Version::V1).unwrap()
            == bellperson_bytes(&generic, b"g", &proofs, AggregateVersion::V1)
    );
}

#[test]
fn refuses_what_it_cannot_aggregate() {
    let path = write_srs(&fake_srs(4, 8), "small.srs");
    let srs = AggregationSrs::load(&path, 4).unwrap();
    for n in [0, 1, 3, 8] {
        assert!(matches!(aggregate(&srs, b"", &random_proofs(n, 4), Version::V2), Err(Error::InvalidInput(_))), "{n}");
    }
    for max in [0, 1, 3, 8, srs::MAX_PROOFS * 2] {
        assert!(matches!(AggregationSrs::load(&path, max), Err(Error::InvalidInput(_))), "{max}");
    }
}

fn load_err(bytes: &[u8], name: &str) -> Error {
    let path = std::env::temp_dir().join(format!("cuzk-aggregate-{}", std::process::id())).join(name);
    std::fs::write(&path, bytes).unwrap();
    match AggregationSrs::load(Path::new(&path), 2) {
        Err(e) => e,
        Ok(_) => panic!("{name} was accepted"),
    }
}

#[test]
fn refuses_damaged_srs_files() {
    let path = write_srs(&fake_srs(2, 9), "good.srs");
    let good = std::fs::read(&path).unwrap();
    // Truncated, extended, a count too large, a count past the end, a point off the curve.
    assert!(matches!(load_err(&good[..good.len() - 1], "short.srs"), Error::BadParamsFile(_)));
    assert!(matches!(load_err(&[&good[..], &[0]].concat(), "long.srs"), Error::BadParamsFile(_)));
    assert!(matches!(load_err(&[0xff; 4], "huge.srs"), Error::BadParamsFile(_)));
    assert!(matches!(load_err(&good[..2], "stub.srs"), Error::BadParamsFile(_)));
    let mut bent = good.clone();
    bent[4 + 48 + 10] ^= 0x40;
    assert!(matches!(load_err(&bent, "bent.srs"), Error::BadParamsFile(_)));
    // A directory or a missing file is not an SRS.
    assert!(AggregationSrs::load(&std::env::temp_dir(), 2).is_err());
    assert!(matches!(AggregationSrs::load(Path::new("/nonexistent/x.srs"), 2), Err(Error::Io(_))));
}
