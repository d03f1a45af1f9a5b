//! `aggregate`: SnarkPack aggregation by cuzk and by its reference in one run, on the same
//! inputs, with the bytes compared:
//! - `--proofs N`: N proofs, against bellperson's `aggregate_proofs` (what filecoin-proofs
//!   calls), its SRS specialized beforehand as filecoin-proofs caches it;
//! - `--seals S --registered-proof RP`: S seal proofs of RP (every partition), against
//!   filecoin-proofs-api's `aggregate_seal_commit_proofs` itself, called twice: the first call
//!   reads and specializes the SRS, the second finds it in filecoin-proofs' cache.
//!
//! The SRS is a generated one (`setup_fake_srs`) unless `--srs` names a file; the proofs are
//! random points (aggregation does not look at what they prove; the seal mode's verifying key,
//! which filecoin-proofs reads but aggregation does not use, is made of generators).

use std::path::PathBuf;

use bellperson::groth16::aggregate::{aggregate_proofs, setup_fake_srs, AggregateVersion, GenericSRS};
use bellperson::groth16::Proof;
use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use clap::Args;
use cuzk::aggregate::{aggregate, AggregationSrs, Version};
use cuzk::groth16::msm::{msm_g1, msm_g2};
use ff::Field;
use group::{Curve, Group};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use serde_json::json;

use crate::anyhow_like::Result;
use crate::report::{stage, table, write_json};

#[derive(Args)]
pub struct Opts {
    /// Proofs to aggregate (a power of two; 8192 is 65 NonInteractivePoRep C2s at 32GiB, padded).
    #[arg(long, default_value_t = 1024)]
    pub proofs: usize,
    /// Seal proofs to aggregate through filecoin-proofs-api (with --registered-proof).
    #[arg(long)]
    pub seals: Option<usize>,
    /// The seals' registered proof, e.g. StackedDrg32GiBV1_2_Feat_NonInteractivePoRep.
    #[arg(long, default_value = "StackedDrg32GiBV1_2_Feat_NonInteractivePoRep")]
    pub registered_proof: String,
    /// SnarkPack version: 1 or 2.
    #[arg(long, default_value_t = 2)]
    pub version: u8,
    /// An aggregation SRS file (bellperson's layout); else one is generated and written to a
    /// temporary file.
    #[arg(long)]
    pub srs: Option<PathBuf>,
    /// Aggregations of each prover (the best is reported).
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(mut o: Opts) -> Result<()> {
    if let Some(seals) = o.seals {
        let rp = cuzk::aggregate::seal::registered_proof(&o.registered_proof)?;
        o.proofs = cuzk::aggregate::seal::padded_count(rp, seals)?;
    }
    let n = o.proofs;
    let (ours_v, theirs_v) = match o.version {
        1 => (Version::V1, AggregateVersion::V1),
        2 => (Version::V2, AggregateVersion::V2),
        v => return Err(format!("--version {v}: 1 or 2").into()),
    };
    let (path, generated) = match &o.srs {
        Some(p) => (p.clone(), None),
        None => {
            let (srs, gen_s) =
                stage("generating an SRS", || setup_fake_srs::<Bls12, _>(&mut ChaCha20Rng::seed_from_u64(1), n.max(2)));
            let p = std::env::temp_dir().join(format!("cuzk-bench-aggregate-{}.srs", std::process::id()));
            srs.write(&mut std::io::BufWriter::new(std::fs::File::create(&p)?))?;
            (p, Some((srs, gen_s)))
        }
    };
    let (srs, load_s) = stage("loading the SRS (cuzk)", || AggregationSrs::load(&path, n));
    let srs = srs?;
    if let Some(seals) = o.seals {
        drop(generated);
        return seals::run(&o, seals, &path, &srs, load_s);
    }
    let (generic, bp_read_s) = match generated {
        Some((g, _)) => (g, None),
        None => {
            let (g, s) =
                stage("loading the SRS (bellperson)", || GenericSRS::<Bls12>::read(&mut std::fs::File::open(&path)?));
            (g?, Some(s))
        }
    };
    let ((pk, _), specialize_s) = stage("specializing the SRS (bellperson)", || generic.specialize(n));
    drop(generic);
    let proofs = random_proofs(n);
    let include = [7u8; 32];
    let (mut ours_s, mut theirs_s) = (f64::MAX, f64::MAX);
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..o.repeat.max(1) {
        let (b, s) = stage("aggregating (bellperson)", || -> Result<Vec<u8>> {
            let mut out = Vec::new();
            aggregate_proofs::<Bls12>(&pk, &include, &proofs, theirs_v)?.write(&mut out)?;
            Ok(out)
        });
        theirs = b?;
        theirs_s = theirs_s.min(s);
        let (b, s) = stage("aggregating (cuzk)", || aggregate(&srs, &include, &proofs, ours_v));
        ours = b?;
        ours_s = ours_s.min(s);
    }
    if o.srs.is_none() {
        let _ = std::fs::remove_file(&path);
    }
    // The MSMs an aggregate of n makes, alone: the w opening's two over 2n − 1 G1 points, the v
    // opening's two over n − 1 G2 points, agg_c and the z_c of every round (n G1 points each).
    let g1: Vec<G1Affine> = proofs.iter().flat_map(|p| [p.a, p.c]).collect();
    let g2: Vec<G2Affine> = proofs.iter().map(|p| p.b).collect();
    let k: Vec<Scalar> = (0..2 * n as u64).map(Scalar::from).map(|x| x.pow_vartime([u64::MAX, 7])).collect();
    let ((), msm_s) = stage("the aggregate's MSMs alone", || {
        for _ in 0..2 {
            std::hint::black_box(msm_g1(&g1[..2 * n - 1], &k[..2 * n - 1]));
            std::hint::black_box(msm_g2(&g2[..n - 1], &k[..n - 1]));
            std::hint::black_box(msm_g1(&g1[..n], &k[..n]));
        }
    });
    let same = ours == theirs;
    table(
        &format!("aggregate {n} proofs, SnarkPack v{}, {} threads", o.version, rayon::current_num_threads()),
        &[
            ("cuzk SRS load", format!("{load_s:.3} s ({} MB held)", srs.bytes() >> 20)),
            ("bellperson SRS specialize", format!("{specialize_s:.3} s")),
            ("bellperson aggregate_proofs", format!("{theirs_s:.3} s")),
            ("cuzk aggregate", format!("{ours_s:.3} s")),
            ("of which its MSMs (timed alone)", format!("{msm_s:.3} s")),
            ("speedup", format!("{:.2}x", theirs_s / ours_s)),
            ("aggregate bytes, identical", format!("{}, {same}", ours.len())),
        ],
    );
    write_json(
        o.json.as_deref(),
        &json!({"proofs": n, "version": o.version, "threads": rayon::current_num_threads(),
            "srs_load_s": load_s, "bellperson_srs_read_s": bp_read_s, "bellperson_specialize_s": specialize_s,
            "bellperson_aggregate_s": theirs_s, "cuzk_aggregate_s": ours_s, "msm_s": msm_s, "speedup": theirs_s / ours_s,
            "aggregate_bytes": ours.len(), "identical": same}),
    )?;
    if !same {
        return Err("cuzk's aggregate differs from bellperson's".into());
    }
    Ok(())
}

/// `n` proofs of random points.
fn random_proofs(n: usize) -> Vec<Proof<Bls12>> {
    (0..n as u64)
        .into_par_iter()
        .map(|i| {
            let mut rng = ChaCha20Rng::seed_from_u64(i);
            Proof {
                a: G1Projective::random(&mut rng).to_affine(),
                b: G2Projective::random(&mut rng).to_affine(),
                c: G1Projective::random(&mut rng).to_affine(),
            }
        })
        .collect()
}

#[cfg(feature = "porep")]
mod seals {
    use std::path::Path;

    use bellperson::groth16::VerifyingKey;
    use blstrs::{G1Affine, G2Affine};
    use cuzk::aggregate::seal::{aggregate_seals, registered_proof, SealProof};
    use cuzk::aggregate::{AggregationSrs, Version};
    use cuzk::circuits::porep::{params_file_name, PorepSize};
    use filecoin_proofs_api::seal::{aggregate_seal_commit_proofs, SealCommitPhase2Output};
    use filecoin_proofs_api::RegisteredAggregationProof;
    use group::prime::PrimeCurveAffine;
    use group::GroupEncoding;
    use serde_json::json;

    use super::{random_proofs, Opts};
    use crate::anyhow_like::Result;
    use crate::report::{stage, table, write_json};

    /// cuzk's `aggregate_seals` and filecoin-proofs-api's `aggregate_seal_commit_proofs` on the
    /// same `seals` seal proofs, SRS file `srs_path` placed where filecoin-proofs reads it.
    pub fn run(o: &Opts, seals: usize, srs_path: &Path, srs: &AggregationSrs, load_s: f64) -> Result<()> {
        let rp = registered_proof(&o.registered_proof)?;
        let (size, _) = PorepSize::from_registered_proof(rp)?;
        let partitions = usize::from(rp.partitions());
        // filecoin-proofs reads the SRS and the verifying key from its parameter cache, a
        // directory of our own here (set before its settings are first read).
        let cache = std::env::temp_dir().join(format!("cuzk-bench-aggregate-cache-{}", std::process::id()));
        std::fs::create_dir_all(&cache)?;
        std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &cache);
        std::fs::copy(srs_path, cache.join("v28-fil-inner-product-v1.srs"))?;
        let vk = VerifyingKey::<blstrs::Bls12> {
            alpha_g1: G1Affine::generator(),
            beta_g1: G1Affine::generator(),
            beta_g2: G2Affine::generator(),
            gamma_g2: G2Affine::generator(),
            delta_g1: G1Affine::generator(),
            delta_g2: G2Affine::generator(),
            ic: vec![G1Affine::generator(); 2],
        };
        vk.write(std::fs::File::create(cache.join(params_file_name(size)?.replace(".params", ".vk")))?)?;

        let proofs = random_proofs(seals * partitions);
        let outputs: Vec<SealCommitPhase2Output> = proofs
            .chunks(partitions)
            .map(|c| SealCommitPhase2Output {
                proof: c
                    .iter()
                    .flat_map(|p| [p.a.to_bytes().as_ref(), p.b.to_bytes().as_ref(), p.c.to_bytes().as_ref()].concat())
                    .collect(),
            })
            .collect();
        drop(proofs);
        let comm_rs: Vec<[u8; 32]> = (0..seals).map(|i| [(i % 251) as u8 + 1; 32]).collect();
        let seeds: Vec<[u8; 32]> = (0..seals).map(|i| [(i % 241) as u8 + 2; 32]).collect();
        let (ours_v, theirs_v) = match o.version {
            1 => (Version::V1, RegisteredAggregationProof::SnarkPackV1),
            _ => (Version::V2, RegisteredAggregationProof::SnarkPackV2),
        };
        let filecoin = || aggregate_seal_commit_proofs(rp, theirs_v, &comm_rs, &seeds, &outputs);
        let (first, first_s) = stage("aggregating (filecoin-proofs, first call: SRS read)", filecoin);
        let first = first.map_err(|e| format!("aggregate_seal_commit_proofs: {e:#}"))?;
        let (mut theirs_s, mut ours_s, mut ours) = (f64::MAX, f64::MAX, Vec::new());
        for _ in 0..o.repeat.max(1) {
            let (b, s) = stage("aggregating (filecoin-proofs, SRS cached)", filecoin);
            let b = b.map_err(|e| format!("aggregate_seal_commit_proofs: {e:#}"))?;
            if b != first {
                return Err("filecoin-proofs made two different aggregates of the same inputs".into());
            }
            theirs_s = theirs_s.min(s);
            let input: Vec<SealProof> = outputs
                .iter()
                .zip(comm_rs.iter().zip(&seeds))
                .map(|(out, (comm_r, seed))| SealProof { comm_r: *comm_r, seed: *seed, proof: &out.proof })
                .collect();
            let (b, s) = stage("aggregating (cuzk)", || aggregate_seals(srs, rp, &input, ours_v));
            ours = b?;
            ours_s = ours_s.min(s);
        }
        let _ = std::fs::remove_dir_all(&cache);
        let same = ours == first;
        let n = srs.max_proofs();
        table(
            &format!(
                "aggregate {seals} seals of {rp:?} ({n} proofs), SnarkPack v{}, {} threads",
                o.version,
                rayon::current_num_threads()
            ),
            &[
                ("cuzk SRS load", format!("{load_s:.3} s")),
                ("filecoin-proofs, first call (SRS read)", format!("{first_s:.3} s")),
                ("filecoin-proofs, SRS cached", format!("{theirs_s:.3} s")),
                ("cuzk aggregate_seals", format!("{ours_s:.3} s")),
                ("speedup (cached SRS)", format!("{:.2}x", theirs_s / ours_s)),
                ("aggregate bytes, identical", format!("{}, {same}", ours.len())),
            ],
        );
        write_json(
            o.json.as_deref(),
            &json!({"seals": seals, "registered_proof": o.registered_proof, "proofs": n, "version": o.version,
                "threads": rayon::current_num_threads(), "srs_load_s": load_s, "filecoin_first_s": first_s,
                "filecoin_cached_s": theirs_s, "cuzk_aggregate_s": ours_s, "speedup": theirs_s / ours_s,
                "aggregate_bytes": ours.len(), "identical": same}),
        )?;
        if !same {
            return Err("cuzk's aggregate differs from filecoin-proofs'".into());
        }
        Ok(())
    }
}

#[cfg(not(feature = "porep"))]
mod seals {
    pub fn run(_: &super::Opts, _: usize, _: &std::path::Path, _: &super::AggregationSrs, _: f64) -> super::Result<()> {
        Err("--seals needs the porep feature".into())
    }
}
