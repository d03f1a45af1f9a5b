//! Output helpers: aligned tables, progress bars, JSON files, byte formatting.

use std::path::Path;
use std::time::Instant;

use cuzk::groth16::ProveTimings;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

/// A spinner with a label while `f` runs, then the elapsed seconds.
pub fn stage<T>(label: &str, f: impl FnOnce() -> T) -> (T, f64) {
    let bar = ProgressBar::new_spinner();
    bar.set_style(ProgressStyle::with_template("{spinner} {msg} {elapsed}").unwrap());
    bar.set_message(label.to_string());
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let start = Instant::now();
    let out = f();
    let secs = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    (out, secs)
}

/// Prints `rows` of (name, value) aligned.
pub fn table(title: &str, rows: &[(&str, String)]) {
    println!("\n{title}");
    let w = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in rows {
        println!("  {k:<w$}  {v}");
    }
}

pub fn gib(bytes: u64) -> String {
    format!("{:.3} GiB", bytes as f64 / (1u64 << 30) as f64)
}

pub fn write_json(path: Option<&Path>, value: &serde_json::Value) -> crate::anyhow_like::Result<()> {
    if let Some(p) = path {
        std::fs::write(p, serde_json::to_vec_pretty(value)?)?;
        println!("\njson: {}", p.display());
    }
    Ok(())
}

/// Streaming copy bandwidth (bytes read + written per second) of a 1 GiB
/// buffer over all threads: the ceiling a memory-bound SpMV is measured against.
pub fn memory_bandwidth() -> f64 {
    use rayon::prelude::*;
    const N: usize = 1 << 27; // u64s = 1 GiB
    let src: Vec<u64> = (0..N as u64).into_par_iter().collect();
    let mut dst = vec![0u64; N];
    let mut best = 0f64;
    for _ in 0..3 {
        let start = Instant::now();
        dst.par_chunks_mut(1 << 16).zip(src.par_chunks(1 << 16)).for_each(|(d, s)| d.copy_from_slice(s));
        best = best.max(2.0 * (N * 8) as f64 / start.elapsed().as_secs_f64());
    }
    std::hint::black_box(&dst);
    best
}

/// A backend stage's steps per proof, from their sums over `n` proofs.
pub fn steps_line(sum: &ProveTimings, n: u64) -> String {
    let p = |x: f64| x / n.max(1) as f64;
    let g = &sum.gpu;
    format!(
        "stage {:.4} s = H {:.4} (witness upload {:.4}, SpMV {:.4}, NTT {:.4}) + MSM H {:.4} + L {:.4} + A {:.4} + B1 {:.4} + B2 {:.4} (select {:.4}) + assembly {:.4}",
        p(sum.total()), p(sum.h), p(g.witness_upload), p(g.spmv), p(g.h_ntt), p(sum.msm_h),
        p(sum.msm_l), p(sum.msm_a), p(sum.msm_b_g1), p(sum.msm_b_g2), p(g.select), p(sum.assembly)
    )
}

/// [`steps_line`] as JSON (seconds per proof).
pub fn steps_json(sum: &ProveTimings, n: u64) -> serde_json::Value {
    let p = |x: f64| x / n.max(1) as f64;
    json!({
        "stage": p(sum.total()), "h": p(sum.h), "witness_upload": p(sum.gpu.witness_upload),
        "gpu_spmv": p(sum.gpu.spmv), "h_ntt": p(sum.gpu.h_ntt), "msm_h": p(sum.msm_h), "msm_l": p(sum.msm_l),
        "msm_a": p(sum.msm_a), "msm_b_g1": p(sum.msm_b_g1), "msm_b_g2": p(sum.msm_b_g2),
        "select": p(sum.gpu.select), "assembly": p(sum.assembly),
    })
}
