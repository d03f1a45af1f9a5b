//! `cuzk-bench`: benchmarks and demos. Human tables on stdout, `--json FILE`
//! for machines (keys documented in docs/bench-json.md).

mod aggregate;
mod extract;
mod fixture;
mod gpu_check;
mod gpu_scaling;
mod gpu_timings;
mod latency;
mod logcap;
mod params;
mod pce_bench;
mod pipeline;
mod plot;
mod prove;
mod report;
mod sharing;
mod soak;
mod synth_only;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use cuzk::circuits::{Circuit, Synthetic};

#[derive(Parser)]
#[command(name = "cuzk-bench", version, about = "cuzk benchmarks: PCE vs old path, pipelines, proving")]
struct Cli {
    #[command(subcommand)]
    cmd: Command,
}

/// The circuit every subcommand takes.
#[derive(Args, Clone)]
pub struct CircuitArgs {
    /// sha256-chain | mimc-chain | porep-<sector size> (porep-2KiB, ..., porep-64GiB) |
    /// winning-post-<sector size> | window-post-<sector size>
    #[arg(long, default_value = "sha256-chain")]
    pub circuit: String,
    /// Synthetic circuits: target constraint count (rows, input rows included); accepts 2^N.
    #[arg(long, default_value = "2^20", value_parser = parse_size)]
    pub size: usize,
    /// Witness seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

impl CircuitArgs {
    /// The named circuit.
    pub fn circuit(&self) -> anyhow_like::Result<Circuit> {
        Ok(Circuit::parse(&self.circuit, self.size as u64)?)
    }

    /// A synthetic circuit's instance with witness seed `seed + seed_offset`.
    pub fn instance(&self, seed_offset: u64) -> anyhow_like::Result<Synthetic> {
        match self.circuit()? {
            Circuit::Synthetic { family, size } => Ok(Synthetic::new(family, size, self.seed + seed_offset)),
            #[cfg(feature = "porep")]
            Circuit::Porep(_) | Circuit::Post(_) | Circuit::Snap(_) => {
                Err(format!("{}: this command takes a synthetic circuit", self.circuit).into())
            }
        }
    }
}

fn parse_size(s: &str) -> Result<usize, String> {
    match s.strip_prefix("2^") {
        Some(e) => e.parse::<u32>().map(|e| 1usize << e).map_err(|e| e.to_string()),
        None => s.replace('_', "").parse().map_err(|e: std::num::ParseIntError| e.to_string()),
    }
}

#[derive(Subcommand)]
enum Command {
    /// Old path (bellperson-style synthesis) vs PCE path on one circuit, validated bit for bit.
    PceBench(pce_bench::Opts),
    /// Witness generation and SpMV alone, per-phase timings.
    SynthOnly(synth_only::Opts),
    /// End-to-end proofs with per-stage timings.
    Prove(prove::Opts),
    /// N proofs through J concurrent pipelines with RSS per stage and the predicted peak.
    PcePipeline(pipeline::Opts),
    /// GPU vs CPU proofs byte for byte, and VRAM flatness (needs a GPU).
    GpuCheck(gpu_check::Opts),
    /// The backend stage alone on one GPU, then on several of one host at once.
    GpuScaling(gpu_scaling::Opts),
    /// GPU layer timings: primitives, wide-window MSMs, interference, a proof's GPU steps
    /// (needs a GPU; cuda builds).
    GpuTimings(gpu_timings::Opts),
    /// Critical (WinningPoSt-sized) proofs' latency under a throughput load, and what they cost it.
    Latency(latency::Opts),
    /// Writes a .params file (real, or --dummy for timing only).
    Params(params::Opts),
    /// Extracts a circuit's PCE, saves it and loads it back (e.g. porep-32g).
    Extract(extract::Opts),
    /// Save, load (best of N, with and without checksums), validation and fingerprint times of a .pce file.
    PceFile(pce_bench::FileOpts),
    /// Makes a real PoRep C1 output (JSON) to prove: `fixture --circuit porep-<sector>`.
    C1(fixture::C1Opts),
    /// Makes a real request input of a PoRep or PoSt circuit (a sector sealed here).
    Fixture(fixture::Opts),
    /// SnarkPack aggregation of N proofs by cuzk and by bellperson, same inputs, one run.
    Aggregate(aggregate::Opts),
    /// Thousands of verified proofs through the C ABI with cancels, unloads and trims: RSS,
    /// VRAM, threads and file descriptors must stay flat.
    Soak(soak::Opts),
}

/// Errors are printed and turn into a non-zero exit status.
pub mod anyhow_like {
    pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;
}

fn main() {
    let cli = Cli::parse();
    logcap::install();
    let res = match cli.cmd {
        Command::PceBench(o) => pce_bench::run(o),
        Command::SynthOnly(o) => synth_only::run(o),
        Command::Prove(o) => prove::run(o),
        Command::PcePipeline(o) => pipeline::run(o),
        Command::GpuCheck(o) => gpu_check::run(o),
        Command::GpuScaling(o) => gpu_scaling::run(o),
        Command::GpuTimings(o) => gpu_timings::run(o),
        Command::Latency(o) => latency::run(o),
        Command::Params(o) => params::run(o),
        Command::Extract(o) => extract::run(o),
        Command::PceFile(o) => pce_bench::run_file(o),
        Command::C1(o) => fixture::run_c1(o),
        Command::Fixture(o) => fixture::run(o),
        Command::Soak(o) => soak::run(o),
        Command::Aggregate(o) => aggregate::run(o),
    };
    if let Err(e) = res {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
