//! The engine options for experiments, flattened into every command that builds an engine:
//! the GPU sharing policy's MSM window and pieces (`EngineConfig::sharing`) and the witness
//! program (`EngineConfig::witness_program`). The library's `SharingPolicy::check` is the one
//! judge of the values, at parse time and again when applied.

use clap::Args;
use cuzk::engine::EngineConfig;
use cuzk::gpu::SharingPolicy;
use serde_json::json;

/// `--no-witness-program`: also taken alone by the commands that make witnesses without an
/// engine (`synth-only`, `pce-bench`).
#[derive(Args, Clone, Copy, Debug, Default)]
pub struct WitnessArgs {
    /// Make every witness by the circuit's gadgets, not by its witness program (the comparison
    /// point).
    #[arg(long)]
    pub no_witness_program: bool,
}

impl WitnessArgs {
    /// Whether witnesses may be replayed from a witness program.
    pub fn program(&self) -> bool {
        !self.no_witness_program
    }
}

/// The engine options for experiments (the defaults are the measured best).
#[derive(Args, Clone, Copy, Debug, Default)]
#[command(next_help_heading = "Engine options for experiments")]
pub struct SharingArgs {
    /// The Pippenger window of long MSMs over device scalars: 0 (sppark's msm_t) or 10 to 26
    /// bits [default: by length]
    #[arg(long, value_name = "BITS", value_parser = window_bits)]
    pub msm_window_bits: Option<u32>,
    /// Throughput MSMs run in pieces of at most 2^N points (23 to 30) [default: 26]
    #[arg(long, value_name = "N", value_parser = piece_max_lg)]
    pub msm_piece_max_lg: Option<u32>,
    /// The longest piece while a critical request is in the engine: 2^N points (23 to 30)
    /// [default: 23]
    #[arg(long, value_name = "N", value_parser = piece_ahead_lg)]
    pub msm_piece_ahead_lg: Option<u32>,
    #[command(flatten)]
    pub witness: WitnessArgs,
}

impl SharingArgs {
    /// The sharing policy: the defaults with the flags given; `InvalidInput` for a value out
    /// of range.
    pub fn policy(&self) -> cuzk::Result<SharingPolicy> {
        let d = SharingPolicy::default();
        let p = SharingPolicy {
            window_bits: self.msm_window_bits.or(d.window_bits),
            piece_max_lg: self.msm_piece_max_lg.unwrap_or(d.piece_max_lg),
            piece_ahead_lg: self.msm_piece_ahead_lg.unwrap_or(d.piece_ahead_lg),
            ..d
        };
        p.check()?;
        Ok(p)
    }

    /// `config` with these options.
    pub fn apply(&self, config: EngineConfig) -> cuzk::Result<EngineConfig> {
        Ok(EngineConfig { sharing: self.policy()?, witness_program: self.witness.program(), ..config })
    }

    /// The options in effect, for the JSON output (`msm_window_bits` null: by length).
    pub fn json(&self) -> serde_json::Value {
        let p = self.policy().unwrap_or_default();
        json!({
            "msm_window_bits": p.window_bits,
            "msm_piece_max_lg": p.piece_max_lg,
            "msm_piece_ahead_lg": p.piece_ahead_lg,
            "witness_program": self.witness.program(),
        })
    }
}

/// Parses a number and has the library judge it as the one field `set` fills.
fn checked(s: &str, set: impl FnOnce(&mut SharingPolicy, u32)) -> Result<u32, String> {
    let v: u32 = s.parse().map_err(|e: std::num::ParseIntError| e.to_string())?;
    let mut p = SharingPolicy::default();
    set(&mut p, v);
    p.check().map_err(|e| e.to_string())?;
    Ok(v)
}

fn window_bits(s: &str) -> Result<u32, String> {
    checked(s, |p, v| p.window_bits = Some(v))
}

fn piece_max_lg(s: &str) -> Result<u32, String> {
    checked(s, |p, v| p.piece_max_lg = v)
}

fn piece_ahead_lg(s: &str) -> Result<u32, String> {
    checked(s, |p, v| p.piece_ahead_lg = v)
}
