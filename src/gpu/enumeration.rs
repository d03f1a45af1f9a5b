//! What CUDA device enumeration's raw results mean. Pure Rust: enumeration runs in `cuda`
//! builds, its judgement is tested in every build.

/// cudaGetDeviceCount's "no device" and "no driver (or too old)": a machine without GPUs.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))] // enumeration runs in `cuda` builds; tested in all
const NO_DEVICE: [i32; 2] = [100, 35];

/// What enumeration's raw results mean: `n` GPUs sppark registers, cudaGetDeviceCount's error
/// code, the ordinal of the first of those GPUs in prohibited compute mode (-1: none).
/// sppark's registry opens every GPU at once and fails on one it cannot open (each retry
/// leaking the threads of those it opened), so then no GPU is used, and this says why.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(super) fn judge_enumeration(n: usize, count_err: i32, prohibited: i32) -> std::result::Result<usize, String> {
    match (count_err, prohibited) {
        (0, -1) => Ok(n),
        (0, ordinal) => Err(format!(
            "CUDA device {ordinal} is in prohibited compute mode: no context can be made on it, so no GPU is \
             used (hide it with CUDA_VISIBLE_DEVICES, or change its mode)"
        )),
        (e, _) if NO_DEVICE.contains(&e) => Ok(0),
        (e, _) => Err(format!("enumerating CUDA devices failed (cudaGetDeviceCount error {e}): no GPU is used")),
    }
}

#[cfg(test)]
mod tests {
    use super::judge_enumeration;

    #[test]
    fn enumeration_failures_are_reported_not_taken_for_no_gpu() {
        assert_eq!(judge_enumeration(2, 0, -1), Ok(2));
        assert_eq!(judge_enumeration(0, 100, -1), Ok(0), "no device");
        assert_eq!(judge_enumeration(0, 35, -1), Ok(0), "no driver");
        let e = judge_enumeration(2, 0, 1).unwrap_err();
        assert!(e.contains("device 1 is in prohibited compute mode"), "{e}");
        let e = judge_enumeration(0, 3, -1).unwrap_err();
        assert!(e.contains("cudaGetDeviceCount error 3"), "{e}");
    }
}
