//! `gpu-check`: the GPU backend against the CPU backend, byte for byte, with
//! fixed (r, s), on every synthetic family at several sizes; VRAM before and
//! after a run of consecutive proofs. Needs a GPU (a `cuda` build).

use blstrs::Scalar;
use clap::Args;
use cuzk::circuits::{Circuit, Family};
use cuzk::engine::{CancelToken, Engine, Priority, ProveOptions, Request, Timings};
use cuzk::gpu;
use cuzk::groth16::Backend;
use cuzk::params::{dummy_params, Srs};
use cuzk::pce::Pce;
use serde_json::json;

use crate::anyhow_like::Result;
use crate::report::{stage, write_json};

#[derive(Args)]
pub struct Opts {
    /// Sizes (rows) to check, e.g. 2^16,2^22.
    #[arg(long, value_delimiter = ',', value_parser = crate::parse_size, default_value = "2^16,2^20,2^22")]
    pub sizes: Vec<usize>,
    /// CUDA device.
    #[arg(long, default_value_t = 0)]
    pub device: u32,
    /// Consecutive GPU proofs for the VRAM-flatness check (on the smallest size).
    #[arg(long, default_value_t = 50)]
    pub repeat: usize,
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub sharing: crate::sharing::SharingArgs,
}

fn free_vram(device: u32) -> u64 {
    gpu::device_memory(device).map(|(free, _)| free).unwrap_or(0)
}

/// One proof of `circuit` with witness `seed` on `engine`: its bytes and timings.
fn prove(
    engine: &Engine,
    circuit: &Circuit,
    seed: u64,
    pce: &Pce,
    params: &Srs,
    opts: &ProveOptions,
) -> Result<(Vec<u8>, Timings)> {
    let statement = circuit.statement(seed, &[])?;
    let (proofs, t) = engine.prove(Request {
        pce,
        params,
        statement: &statement,
        opts: opts.clone(),
        priority: Priority::default(),
        cancel: CancelToken::new(),
        observer: None,
    })?;
    Ok((cuzk::engine::proof_bytes(&proofs), t))
}

pub fn run(o: Opts) -> Result<()> {
    if gpu::device_count() == 0 {
        return Err("no CUDA device (or built without --features cuda)".into());
    }
    let fixed = vec![(Scalar::from(0x5eedu64), Scalar::from(0xc0ffeeu64))];
    let cpu_engine = crate::prove::engine_for(Backend::Cpu, &o.sharing)?;
    let gpu_engine = crate::prove::engine_for(Backend::Cuda(o.device), &o.sharing)?;
    let mut results = Vec::new();
    let mut all_equal = true;
    for &size in &o.sizes {
        for family in Family::ALL {
            let c = Circuit::Synthetic { family, size };
            let pce = c.extract_pce()?;
            let params = Srs::in_memory(dummy_params(&pce, 5));
            let opts = |backend| ProveOptions { backend, verify: false, randomness: Some(fixed.clone()) };
            let (cpu, _) = stage("cpu proof", || prove(&cpu_engine, &c, 3, &pce, &params, &opts(Backend::Cpu)));
            let cpu = cpu?;
            let (gpu, _) =
                stage("gpu proof", || prove(&gpu_engine, &c, 3, &pce, &params, &opts(Backend::Cuda(o.device))));
            let (gpu, tg) = gpu?;
            let equal = cpu.0 == gpu;
            all_equal &= equal;
            println!(
                "{:<13} rows {:>9} domain 2^{:<2}  cpu {:>8.3} s  gpu {:>8.3} s (H {:.3}, MSM H {:.3} L {:.3} A {:.3} B1 {:.3} B2 {:.3})  identical: {equal}",
                family.name(), pce.num_constraints(), pce.domain_size().trailing_zeros(),
                cpu.1.prove.total(), tg.prove.total(), tg.prove.h, tg.prove.msm_h, tg.prove.msm_l, tg.prove.msm_a, tg.prove.msm_b_g1, tg.prove.msm_b_g2
            );
            results.push(json!({"family": family.name(), "rows": pce.num_constraints(), "identical": equal,
                "cpu_prove_s": cpu.1.prove.total(), "gpu_prove_s": tg.prove.total()}));
        }
    }
    // VRAM flat over consecutive proofs.
    let c = Circuit::Synthetic { family: Family::Sha256Chain, size: o.sizes[0] };
    let pce = c.extract_pce()?;
    let params = Srs::in_memory(dummy_params(&pce, 6));
    let opts = ProveOptions { backend: Backend::Cuda(o.device), verify: false, randomness: None };
    prove(&gpu_engine, &c, 4, &pce, &params, &opts)?; // uploads the SRS
    let before = free_vram(o.device);
    for _ in 0..o.repeat {
        prove(&gpu_engine, &c, 4, &pce, &params, &opts)?;
    }
    let after = free_vram(o.device);
    println!(
        "VRAM free before/after {} proofs: {before} / {after} bytes (delta {})",
        o.repeat,
        before as i64 - after as i64
    );
    write_json(
        o.json.as_deref(),
        &json!({"checks": results, "all_identical": all_equal,
        "vram_free_before": before, "vram_free_after": after, "repeat": o.repeat,
        "engine_options": o.sharing.json()}),
    )?;
    if !all_equal {
        return Err("GPU proofs differ from CPU proofs".into());
    }
    Ok(())
}
