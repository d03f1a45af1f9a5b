//! Groth16 parameters (the SRS) loaded once per file and kept resident.
//!
//! An [`Instances`] map keyed by the canonical path, so two spellings of one
//! file share one copy. Concurrent loads of one file read it once. The points are accounted as
//! [`Owner::Srs`] for as long as any user holds the `Arc`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use bellperson::groth16::Parameters;
use blstrs::{Bls12, G1Affine, G2Affine};
use once_cell::sync::Lazy;
use rayon::prelude::*;

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

/// Parameter sets every point of which was subgroup-checked, by their H query (the `Weak` pins
/// its address while the set lives).
static CHECKED: Mutex<Vec<Weak<Vec<G1Affine>>>> = Mutex::new(Vec::new());

fn checked_sets() -> std::sync::MutexGuard<'static, Vec<Weak<Vec<G1Affine>>>> {
    let mut sets = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
    sets.retain(|w| w.strong_count() > 0);
    sets
}

fn was_checked(p: &Parameters<Bls12>) -> bool {
    checked_sets().iter().any(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(&p.h)))
}

/// Checks, on every core, that every point of `p` is in its prime-order subgroup (the
/// decoder already refused points off the curve or at infinity).
fn check_subgroups(p: &Parameters<Bls12>, path: &Path) -> Result<()> {
    let g1s = [&p.h, &p.l, &p.a, &p.b_g1].into_iter().all(|q| q.par_iter().all(|x| bool::from(x.is_torsion_free())));
    let g2s = p.b_g2.par_iter().all(|x| bool::from(x.is_torsion_free()));
    let vk = &p.vk;
    let vk_g1 = [vk.alpha_g1, vk.beta_g1, vk.delta_g1].iter().chain(&vk.ic).all(|x| bool::from(x.is_torsion_free()));
    let vk_g2 = [vk.beta_g2, vk.gamma_g2, vk.delta_g2].iter().all(|x| bool::from(x.is_torsion_free()));
    match g1s && g2s && vk_g1 && vk_g2 {
        true => Ok(()),
        false => Err(Error::BadParamsFile(format!("{}: a point is outside its subgroup", path.display()))),
    }
}

/// The parameters in `path`, read on first use and shared afterwards:
/// `checked` checks every point's subgroup (also when they were loaded
/// before without it: then their resident points are checked, once); `cache`
/// reads and keeps the decoded form beside the file ([`read_params`]), else
/// the file is decoded alone ([`decode_params`]).
pub fn load(path: &Path, checked: bool, cache: bool) -> Result<Arc<Parameters<Bls12>>> {
    let key = canonical(path)?;
    let params = PARAMS.get_or_load(&key, || {
        let params = if cache { read_params(&key, checked)? } else { decode_params(&key, checked)? };
        if checked {
            checked_sets().push(Arc::downgrade(&params.h));
        }
        let tracked = Tracked::new(Owner::Srs, params_bytes(&params));
        Ok((params, vec![tracked]))
    })?;
    if checked && !was_checked(&params) {
        check_subgroups(&params, &key)?;
        checked_sets().push(Arc::downgrade(&params.h));
    }
    Ok(params)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::{Family, Synthetic};
    use blstrs::Fp;
    use ff::Field;

    /// A point on G1's curve (y² = x³ + 4) outside its prime-order subgroup.
    fn off_subgroup_point() -> G1Affine {
        (1u64..)
            .find_map(|k| {
                let x = Fp::from(k);
                let y = Option::<Fp>::from((x.square() * x + Fp::from(4u64)).sqrt())?;
                let mut bytes = [0u8; 96];
                bytes[..48].copy_from_slice(&x.to_bytes_be());
                bytes[48..].copy_from_slice(&y.to_bytes_be());
                let p = Option::<G1Affine>::from(G1Affine::from_uncompressed_unchecked(&bytes))?;
                (!bool::from(p.is_torsion_free())).then_some(p)
            })
            .expect("such points are most of the curve")
    }

    /// A checked load of parameters already loaded unchecked checks their points then, once:
    /// it is not served the unchecked instance as it is.
    #[test]
    fn a_checked_load_checks_an_instance_loaded_unchecked() {
        let pce = crate::pce::extract(Synthetic::new(Family::MimcChain, 300, 1).blank()).unwrap();
        let mut params = super::super::dummy_params(&pce, 4);
        Arc::make_mut(&mut params.h)[0] = off_subgroup_point();
        let dir = std::env::temp_dir().join(format!("cuzk-srs-checked-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.params");
        let mut bytes = Vec::new();
        params.write(&mut bytes).unwrap();
        std::fs::write(&path, &bytes).unwrap();

        let unchecked = load(&path, false, false).expect("on the curve: an unchecked load takes it");
        assert!(matches!(load(&path, true, false), Err(Error::BadParamsFile(_))));
        assert!(unload(&path));
        assert!(matches!(load(&path, true, false), Err(Error::BadParamsFile(_))), "and so does a fresh one");
        drop(unchecked);

        // Good parameters: checked once, then served as they are.
        let good = dir.join("good.params");
        let mut bytes = Vec::new();
        super::super::dummy_params(&pce, 5).write(&mut bytes).unwrap();
        std::fs::write(&good, &bytes).unwrap();
        let p = load(&good, false, false).unwrap();
        assert!(!was_checked(&p));
        assert!(Arc::ptr_eq(&load(&good, true, false).unwrap(), &p));
        assert!(was_checked(&p));
        unload(&good);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
