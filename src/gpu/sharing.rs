//! How throughput work shares a GPU with critical work, and which Pippenger window long MSMs
//! take: one policy per engine (`EngineConfig::sharing`), passed down to every backend stage.
//! Pure Rust, every build.

use std::time::Duration;

use crate::{Error, Result};

/// The one GPU sharing policy of an engine. The defaults are the measured best on an H100 and
/// H200 (BENCHMARKS.md); a host changes them only to experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharingPolicy {
    /// The Pippenger window of every MSM over device scalars of more than 2^17 points (in G1
    /// on the throughput lane, those not mostly bits): `None`, by length (13 bits up to 2^20
    /// points, 16 up to 2^23, 20 above); `Some(0)`, sppark's `msm_t`; `Some(10..=26)`, cuzk's
    /// driver with that window.
    pub window_bits: Option<u32>,
    /// A throughput MSM of more than 2^23 points runs in pieces of half its length, at most
    /// 2^`piece_max_lg` points (23 to 30), a step of its stage's turn before each.
    pub piece_max_lg: u32,
    /// The longest piece while a critical request is in the engine: 2^`piece_ahead_lg` points
    /// (23 to 30).
    pub piece_ahead_lg: u32,
    /// Device bytes throughput proofs leave to critical ones on each device (and the SRS
    /// placement leaves too).
    pub critical_room: u64,
    /// How long a throughput step, and cuzk's MSM driver within one MSM, gives way to critical
    /// stages on its device at most: a flood of critical proofs slows partitions, never stops
    /// them.
    pub max_yield: Duration,
}

/// The shortest MSM piece, and the bound on the piece lengths' logs.
pub const PIECE_LG: std::ops::RangeInclusive<u32> = 23..=30;

impl Default for SharingPolicy {
    fn default() -> Self {
        SharingPolicy {
            window_bits: None,
            piece_max_lg: 26,
            piece_ahead_lg: 23,
            critical_room: 1 << 30,
            max_yield: Duration::from_secs(1),
        }
    }
}

impl SharingPolicy {
    /// `InvalidInput` for a value out of its range.
    pub fn check(&self) -> Result<()> {
        if let Some(bits) = self.window_bits.filter(|&b| b != 0 && !(10..=26).contains(&b)) {
            return Err(Error::InvalidInput(format!("a window of {bits} bits: 0 (sppark's) or 10 to 26")));
        }
        for (name, lg) in [("piece_max_lg", self.piece_max_lg), ("piece_ahead_lg", self.piece_ahead_lg)] {
            if !PIECE_LG.contains(&lg) {
                return Err(Error::InvalidInput(format!("{name} {lg}: MSM pieces are 2^23 to 2^30 points")));
            }
        }
        if self.max_yield > Duration::from_secs(60) {
            return Err(Error::InvalidInput(format!("a maximum yield of {:?}: at most 60 s", self.max_yield)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_out_of_range_are_refused() {
        assert!(SharingPolicy::default().check().is_ok());
        let p = SharingPolicy::default;
        for bad in [
            SharingPolicy { window_bits: Some(9), ..p() },
            SharingPolicy { window_bits: Some(27), ..p() },
            SharingPolicy { piece_max_lg: 22, ..p() },
            SharingPolicy { piece_ahead_lg: 31, ..p() },
            SharingPolicy { max_yield: Duration::from_secs(61), ..p() },
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
        assert!(SharingPolicy { window_bits: Some(0), ..p() }.check().is_ok());
    }
}
