//! Every `cuzk-bench` subcommand on a tiny circuit: it succeeds and its JSON
//! has every documented key with a sane value.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn bench(args: &[&str]) -> Value {
    let dir = std::env::temp_dir().join(format!("cuzk-bench-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join(format!("{}.json", args[0]));
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk-bench"))
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("cuzk-bench runs");
    assert!(
        out.status.success(),
        "{args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("cuzk-bench-test-{}-{name}", std::process::id()))
}

fn positive(v: &Value, key: &str) -> f64 {
    let x = v[key].as_f64().unwrap_or_else(|| panic!("{key} missing in {v}"));
    assert!(x > 0.0, "{key} = {x}");
    x
}

#[test]
fn pce_bench_json() {
    let pce = tmp("a.pce");
    let with_pce = |flag: &'static str| {
        ["pce-bench", "--circuit", "sha256-chain", "--size", "2^12", "--no-membw", flag, pce.to_str().unwrap()]
    };
    let v = bench(&with_pce("--save-pce"));
    for k in [
        "constraints",
        "nnz",
        "pce_bytes",
        "bytes_per_nnz",
        "extract_s",
        "old_synth_s",
        "pce_synth_s",
        "witness_s",
        "spmv_s",
        "speedup",
    ] {
        positive(&v, k);
    }
    assert_eq!(v["circuit"], "sha256-chain");
    assert_eq!(v["validated"], true);
    assert_eq!(v["mismatches"], 0);
    assert!(positive(&v, "bytes_per_nnz") < 9.0);
    // The saved file is used as is; a corrupt one is refused with a non-zero exit.
    let again = bench(&with_pce("--load-pce"));
    assert_eq!(again["validated"], true);
    let mut bytes = std::fs::read(&pce).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&pce, bytes).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk-bench")).args(with_pce("--load-pce")).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad PCE file"), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_file(&pce);
}

#[test]
fn synth_only_json() {
    let v = bench(&["synth-only", "--circuit", "mimc-chain", "--size", "2^12", "-i", "2"]);
    for k in ["constraints", "nnz", "witness_min_s", "witness_median_s", "spmv_min_s", "spmv_median_s", "spmv_gb_per_s"]
    {
        positive(&v, k);
    }
    assert_eq!(v["iterations"], 2);
}

/// Proofs with dummy parameters are made, not verified, and the JSON says so.
#[test]
fn pipeline_with_dummy_params_counts_proofs_done() {
    let v =
        bench(&["pce-pipeline", "--circuit", "mimc-chain", "--size", "2^10", "-n", "2", "-j", "1", "--dummy-params"]);
    assert_eq!(v["dummy_params"], true);
    assert_eq!(v["proofs_done"], 2);
    assert!(v["proofs_verified"].is_null(), "{}", v["proofs_verified"]);
}

#[test]
fn prove_json() {
    let v = bench(&["prove", "--circuit", "mimc-chain", "--size", "2^12", "--backend", "cpu", "--compare-bellperson"]);
    assert_eq!(v["backend"], "Cpu");
    positive(&v, "constraints");
    positive(&v, "total_s");
    for k in ["witness_s", "spmv_s", "h_s", "msm_h_s", "msm_l_s", "msm_a_s", "msm_b_g1_s", "msm_b_g2_s", "total_s"] {
        positive(&v["stages"], k);
    }
    assert_eq!(v["verified"], false, "dummy parameters cannot verify");
    assert_eq!(v["bellperson"]["identical"], true);
}

#[test]
fn pipeline_json_and_extract() {
    let params = tmp("p.params");
    let plot = tmp("plot.svg");
    let v = bench(&[
        "pce-pipeline",
        "--circuit",
        "mimc-chain",
        "--size",
        "2^10",
        "-n",
        "3",
        "-j",
        "2",
        "--compare-old",
        "--params",
        params.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert_eq!(v["proofs"], 3);
    assert_eq!(v["parallel"], 2);
    assert_eq!(v["proofs_verified"], 3);
    assert_eq!(v["proofs_done"], 3);
    for k in ["peak_rss_bytes", "baseline_rss_bytes", "final_rss_bytes", "predicted_peak_bytes", "footprint_bytes"] {
        positive(&v, k);
    }
    let stages = v["stages"].as_array().unwrap();
    assert!(stages.iter().any(|s| s["label"] == "start"));
    assert!(stages.iter().all(|s| s["rss_bytes"].as_u64().unwrap() > 0 && s["t_s"].as_f64().unwrap() >= 0.0));
    assert!(v["old"]["proofs_verified"] == 3);
    let devices = v["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 1);
    assert_eq!(devices[0]["device"], "Cpu");
    assert_eq!(devices[0]["proofs"], 3);
    assert!(devices[0]["busy_fraction"].as_f64().unwrap() > 0.0);
    assert!(std::fs::read_to_string(&plot).unwrap().starts_with("<svg"));

    let pce = tmp("e.pce");
    let e = bench(&["extract", "--circuit", "mimc-chain", "--size", "2^10", "--out", pce.to_str().unwrap()]);
    assert_eq!(e["fingerprint_equal"], true);
    positive(&e, "file_bytes");
    for p in [params, plot, pce] {
        let _ = std::fs::remove_file(Path::new(&p));
    }
}

#[test]
fn params_load_json() {
    let file = tmp("load.params");
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk-bench"))
        .args(["params", "--circuit", "mimc-chain", "--size", "2000", "--dummy", "--out"])
        .arg(&file)
        .output()
        .expect("cuzk-bench runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for checked in [false, true] {
        let mut args = vec!["params", "--load", file.to_str().unwrap()];
        if checked {
            args.push("--checked");
        }
        let v = bench(&args);
        for k in [
            "bytes",
            "load_s",
            "gb_per_s",
            "decode_s",
            "first_load_s",
            "cache_write_s",
            "cache_bytes",
            "bellperson_read_s",
            "speedup",
        ] {
            positive(&v, k);
        }
        assert_eq!((v["identical"].as_bool(), v["checked"].as_bool()), (Some(true), Some(checked)), "{v}");
    }
    let _ = std::fs::remove_file(cuzk::params::cache_path(&file));
    std::fs::remove_file(&file).unwrap();
}

/// The soak on the CPU, small: every call OK, cancelled or a lost race with a free; the
/// process flat from the first sample to the last (the command fails otherwise).
#[test]
fn soak_json() {
    let dir = tmp("soak");
    let v = bench(&[
        "soak",
        "--backend",
        "cpu",
        "--circuits",
        "mimc-chain:2^8,sha256-chain:2^10",
        "-n",
        "120",
        "--threads",
        "3",
        "--checkpoint",
        "40",
        "--unload-every",
        "17",
        "--trim-every",
        "11",
        "--cancel-share",
        "0.1",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!((v["errors"].as_u64(), v["all_flat"].as_bool()), (Some(0), Some(true)), "{v}");
    let (ok, cancelled, lost) =
        (v["verified"].as_u64().unwrap(), v["cancelled"].as_u64().unwrap(), v["lost_races"].as_u64().unwrap());
    assert_eq!(ok + cancelled + lost, 120, "{v}");
    assert!(ok >= 90 && v["unloads"].as_u64() == Some(7), "{v}");
    assert_eq!(v["samples"].as_array().map(Vec::len), Some(3), "{v}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A WindowPoSt of a sector sealed on the spot, with real parameters made here: cuzk's
/// verification and filecoin-proofs' own both accept it.
#[test]
fn prove_post_json() {
    let params = tmp("window.params");
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk-bench"))
        .args(["params", "--circuit", "window-post-2KiB", "--out"])
        .arg(&params)
        .output()
        .expect("cuzk-bench runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = bench(&["prove", "--circuit", "window-post-2KiB", "--params", params.to_str().unwrap()]);
    assert_eq!((v["verified"].as_bool(), v["filecoin_verified"].as_bool()), (Some(true), Some(true)), "{v}");
    std::fs::remove_file(&params).unwrap();
}
