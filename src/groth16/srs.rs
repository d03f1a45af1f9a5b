//! Groth16 parameters (the SRS) loaded once per file and kept resident.
//!
//! An [`Instances`] map keyed by the canonical path, so two spellings of one
//! file share one copy. Concurrent loads of one file read it once. The points are accounted as
//! [`Owner::Srs`] for as long as any user holds the `Arc`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bellperson::groth16::Parameters;
use blstrs::{Bls12, G1Affine, G2Affine};
use once_cell::sync::Lazy;

use super::{decode_params, read_params};
use crate::instances::Instances;
use crate::mem::{Owner, Tracked};
use crate::{Error, Result};

/// One parameter set per canonical path.
static PARAMS: Lazy<Instances<PathBuf, Parameters<Bls12>>> = Lazy::new(Instances::new);

/// Bytes the points of `p` take in memory (points × their in-memory sizes).
pub fn params_bytes(p: &Parameters<Bls12>) -> u64 {
    let g1 = std::mem::size_of::<G1Affine>() as u64;
    let g2 = std::mem::size_of::<G2Affine>() as u64;
    let n1 = p.h.len() + p.l.len() + p.a.len() + p.b_g1.len() + p.vk.ic.len();
    // vk: alpha, beta, delta in G1; beta, gamma, delta in G2.
    (n1 as u64 + 3) * g1 + (p.b_g2.len() as u64 + 3) * g2
}

fn canonical(path: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(path).map_err(|e| Error::Io(format!("{}: {e}", path.display())))
}

/// The parameters in `path`, read on first use and shared afterwards:
/// `checked` checks every point's subgroup; `cache` reads and keeps the decoded
/// form beside the file ([`read_params`]), else the file is decoded alone
/// ([`decode_params`]).
pub fn load(path: &Path, checked: bool, cache: bool) -> Result<Arc<Parameters<Bls12>>> {
    let key = canonical(path)?;
    PARAMS.get_or_load(&key, || {
        let params = if cache { read_params(&key, checked)? } else { decode_params(&key, checked)? };
        let tracked = Tracked::new(Owner::Srs, params_bytes(&params));
        Ok((params, vec![tracked]))
    })
}

/// Drops the cache's reference to the parameters of `path`; false if they were
/// not loaded. Freed when the last user drops its `Arc`; their device copies
/// too, at once if nobody else holds them, else at the next
/// [`release_unused_device_copies`] (or the next CUDA proof).
pub fn unload(path: &Path) -> bool {
    let Ok(key) = canonical(path) else { return false };
    let was_loaded = PARAMS.remove(&key);
    release_unused_device_copies();
    was_loaded
}

/// Drops the cache's reference to `params` itself, wherever it was loaded
/// from (the file may have been renamed, replaced or deleted since); false if
/// they are not (or no longer) loaded. Their memory and device copies go as
/// with [`unload`].
pub fn unload_instance(params: &Arc<Parameters<Bls12>>) -> bool {
    let was_loaded = PARAMS.remove_value(params);
    release_unused_device_copies();
    was_loaded
}

/// Frees the GPU copies (CUDA backend) of parameter sets whose last `Arc` is
/// gone (unloaded from this cache, and every handle and proof done with
/// them). A no-op without the `cuda` feature. Cheap when there is nothing to
/// free, but it waits while another thread uploads parameters to a device.
pub fn release_unused_device_copies() {
    #[cfg(feature = "cuda")]
    super::cuda::evict_unloaded();
}
