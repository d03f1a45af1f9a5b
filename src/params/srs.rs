//! Groth16 parameters (the SRS) loaded once per file and kept resident.
//!
//! An `Instances` map keyed by the canonical path, so two spellings of one
//! file share one copy. Concurrent loads of one file read it once. The points are accounted as
//! [`Owner::Srs`] for as long as any user holds the `Arc`.
//!
//! A load in the background returns once the file's layout and verifying key are checked; its
//! queries are decoded by a thread of their own, and a prover waits for them only when its
//! backend stage needs them ([`Srs::wait_for`]), so the decoding runs beside the first proof's
//! witness.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use bellperson::groth16::{Parameters, VerifyingKey};
use blstrs::{Bls12, G1Affine, G2Affine};
use once_cell::sync::Lazy;

use super::file::{self as params_file, decode_params_until, in_subgroups, read_params_until};
use crate::instances::Instances;
use crate::mem::{Owner, Tracked};
use crate::{Error, Result};

/// One parameter set per canonical path.
static PARAMS: Lazy<Instances<PathBuf, Srs>> = Lazy::new(Instances::new);

/// Bytes the points of `p` take in memory (points × their in-memory sizes).
pub fn params_bytes(p: &Parameters<Bls12>) -> u64 {
    let g1 = std::mem::size_of::<G1Affine>() as u64;
    let g2 = std::mem::size_of::<G2Affine>() as u64;
    let n1 = p.h.len() + p.l.len() + p.a.len() + p.b_g1.len() + p.vk.ic.len();
    // vk: alpha, beta, delta in G1; beta, gamma, delta in G2.
    (n1 as u64 + 3) * g1 + (p.b_g2.len() as u64 + 3) * g2
}

/// The queries of a parameter set, set once by whoever decodes them.
#[derive(Default)]
struct Decoded {
    value: OnceLock<Result<Parameters<Bls12>>>,
    /// Wakes [`Srs::wait_for`] when `value` is set.
    lock: Mutex<()>,
    done: Condvar,
}

impl Decoded {
    fn set(&self, r: Result<Parameters<Bls12>>) {
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self.value.set(r);
        self.done.notify_all();
    }
}

/// Groth16 parameters as provers hold them: the verifying key at once, the queries once
/// decoded (at once unless loaded in the background).
pub struct Srs {
    vk: VerifyingKey<Bls12>,
    /// Every point was (or is being) checked to be in its subgroup.
    checked: AtomicBool,
    decoded: Arc<Decoded>,
    /// Set when the last holder drops it: stops its decoding and its cache writer, whose work
    /// nobody would use.
    stop: Arc<AtomicBool>,
    /// The bytes the points take, accounted from the start of the load (the decoding thread
    /// allocates them whole); given back with the instance, or once a failed decoding is seen.
    accounted: Mutex<Option<Tracked>>,
}

impl Srs {
    /// Parameters already in memory; their bytes are accounted as the SRS's when `accounted`.
    fn decoded(p: Parameters<Bls12>, checked: bool, accounted: bool, stop: Arc<AtomicBool>) -> Srs {
        let accounted = Mutex::new(accounted.then(|| Tracked::new(Owner::Srs, params_bytes(&p))));
        let (decoded, vk) = (Decoded::default(), p.vk.clone());
        decoded.set(Ok(p));
        Srs { vk, checked: checked.into(), decoded: Arc::new(decoded), stop, accounted }
    }

    /// Parameters the caller made (dummy or generated ones, a test's): ready at once, not
    /// accounted as a loaded file's.
    pub fn in_memory(p: Parameters<Bls12>) -> Srs {
        Srs::decoded(p, false, false, Arc::default())
    }

    /// A file's parameters decoded now (through the cache with `cache`).
    fn read(path: &Path, checked: bool, cache: bool) -> Result<Srs> {
        let stop = Arc::new(AtomicBool::new(false));
        let p = match cache {
            true => read_params_until(path, checked, &stop)?,
            false => decode_params_until(path, checked, &stop)?,
        };
        Ok(Srs::decoded(p, checked, true, stop))
    }

    /// The file's head checked now; its queries decoded (or read from the cache, with `cache`)
    /// by a thread of their own. The points' bytes are accounted from the start.
    fn in_background(path: PathBuf, checked: bool, cache: bool) -> Result<Srs> {
        let head = params_file::read_head(&path)?;
        let decoded = Arc::new(Decoded::default());
        let accounted = Mutex::new(Some(Tracked::new(Owner::Srs, head.decoded_bytes)));
        let stop = Arc::new(AtomicBool::new(false));
        let (theirs, vk, what) = (decoded.clone(), head.vk.clone(), path.display().to_string());
        let their_stop = stop.clone();
        std::thread::Builder::new()
            .name("cuzk-srs-decode".into())
            .spawn(move || {
                let bad = |m: &str| Error::BadParamsFile(format!("{}: {m}", path.display()));
                // Waiters must hear how it ended, also if the decoder panicked.
                let r = std::panic::catch_unwind(AssertUnwindSafe(|| match cache {
                    true => read_params_until(&path, checked, &their_stop),
                    false => decode_params_until(&path, checked, &their_stop),
                }))
                .unwrap_or_else(|_| Err(bad("the decoder panicked")));
                // The file may have been replaced since its head was read.
                theirs.set(r.and_then(|p| if p.vk == vk { Ok(p) } else { Err(bad("changed while it was loaded")) }));
            })
            .map_err(|e| Error::Io(format!("starting the thread that decodes {what}: {e}")))?;
        Ok(Srs { vk: head.vk, checked: checked.into(), decoded, stop, accounted })
    }

    /// Parameters whose queries come when the test calls the function returned with them.
    #[cfg(test)]
    pub(crate) fn pending(vk: VerifyingKey<Bls12>) -> (Srs, impl FnOnce(Result<Parameters<Bls12>>)) {
        let decoded = Arc::new(Decoded::default());
        let theirs = decoded.clone();
        let srs = Srs { vk, checked: false.into(), decoded, stop: Arc::default(), accounted: Mutex::new(None) };
        (srs, move |r| theirs.set(r))
    }

    /// The verifying key (there from the start).
    pub fn vk(&self) -> &VerifyingKey<Bls12> {
        &self.vk
    }

    /// The decoded parameters, waiting up to `timeout` for them: `None` while they are still
    /// being decoded; the decoding's error (e.g. `BadParamsFile` for a point off its curve) if
    /// it failed.
    pub fn wait_for(&self, timeout: Duration) -> Option<Result<&Parameters<Bls12>>> {
        let d = &self.decoded;
        if d.value.get().is_none() {
            let guard = d.lock.lock().unwrap_or_else(|e| e.into_inner());
            let _ = d.done.wait_timeout_while(guard, timeout, |_| d.value.get().is_none());
        }
        let r = d.value.get()?;
        if r.is_err() {
            drop(self.accounted.lock().unwrap_or_else(|e| e.into_inner()).take());
        }
        Some(r.as_ref().map_err(Clone::clone))
    }

    /// The decoded parameters, waiting as long as their decoding takes.
    pub fn queries(&self) -> Result<&Parameters<Bls12>> {
        loop {
            if let Some(r) = self.wait_for(Duration::from_secs(3600)) {
                return r;
            }
        }
    }

    /// Decoding has ended in an error.
    fn failed(&self) -> bool {
        self.wait_for(Duration::ZERO).is_some_and(|r| r.is_err())
    }
}

impl Drop for Srs {
    fn drop(&mut self) {
        self.stop.store(true, SeqCst);
    }
}

fn canonical(path: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(path).map_err(|e| Error::Io(format!("{}: {e}", path.display())))
}

/// How [`load`] reads a file it has not loaded yet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Check every point's subgroup (also when they were loaded before without it: then their
    /// resident points are checked, once).
    pub checked: bool,
    /// Read and keep the decoded form beside the file ([`super::read_params`]), else decode the
    /// file alone ([`super::decode_params`]).
    pub cache: bool,
    /// Return once the file's layout and key are checked; decode the queries in the background
    /// (a bad point is then reported by the first proof, or by [`Srs::queries`]).
    pub background: bool,
}

/// The parameters in `path`, read on first use and shared afterwards (see [`LoadOptions`]). An
/// instance whose background decoding failed is dropped and the file read afresh.
pub fn load(path: &Path, o: LoadOptions) -> Result<Arc<Srs>> {
    let key = canonical(path)?;
    let get = || {
        PARAMS.get_or_load(&key, || {
            let srs = match o.background {
                true => Srs::in_background(key.clone(), o.checked, o.cache)?,
                false => Srs::read(&key, o.checked, o.cache)?,
            };
            Ok((srs, Vec::new()))
        })
    };
    let mut srs = get()?;
    // A load that is not in the background returns decoded parameters, also when it finds an
    // instance still decoding in the background.
    if srs.failed() || (!o.background && srs.queries().is_err()) {
        PARAMS.remove_value(&srs);
        srs = get()?;
        if !o.background {
            srs.queries()?;
        }
    }
    if o.checked && !srs.checked.load(SeqCst) {
        if !in_subgroups(srs.queries()?) {
            return Err(Error::BadParamsFile(format!("{}: a point is outside its subgroup", key.display())));
        }
        srs.checked.store(true, SeqCst);
    }
    Ok(srs)
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
pub fn unload_instance(params: &Arc<Srs>) -> bool {
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
    crate::groth16::cuda::evict_unloaded();
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::circuits::{Family, Synthetic};
    use blstrs::Fp;
    use ff::Field;

    /// A point on G1's curve (y² = x³ + 4) outside its prime-order subgroup.
    pub(in crate::params) fn off_subgroup_point() -> G1Affine {
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

    fn opts(checked: bool, background: bool) -> LoadOptions {
        LoadOptions { checked, cache: false, background }
    }

    fn written(dir: &Path, name: &str, p: &Parameters<Bls12>) -> PathBuf {
        let path = dir.join(name);
        let mut bytes = Vec::new();
        p.write(&mut bytes).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        path
    }

    /// A checked load of parameters already loaded unchecked checks their points then, once:
    /// it is not served the unchecked instance as it is.
    #[test]
    fn a_checked_load_checks_an_instance_loaded_unchecked() {
        let pce = crate::pce::extract(Synthetic::new(Family::MimcChain, 300, 1).blank()).unwrap();
        let mut params = crate::params::dummy_params(&pce, 4);
        Arc::make_mut(&mut params.h)[0] = off_subgroup_point();
        let dir = std::env::temp_dir().join(format!("cuzk-srs-checked-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = written(&dir, "bad.params", &params);

        for background in [false, true] {
            let unchecked = load(&path, opts(false, background)).expect("on the curve: an unchecked load takes it");
            assert!(matches!(load(&path, opts(true, background)), Err(Error::BadParamsFile(_))));
            assert!(unload(&path));
            // A fresh checked load refuses them: at once, or (in the background) when a prover
            // asks for the queries.
            match load(&path, opts(true, background)) {
                Err(Error::BadParamsFile(_)) => assert!(!background),
                Ok(srs) => assert!(background && matches!(srs.queries(), Err(Error::BadParamsFile(_)))),
                Err(e) => panic!("{e}"),
            }
            unload(&path);
            drop(unchecked);
        }

        // Good parameters: checked once, then served as they are.
        let good = written(&dir, "good.params", &crate::params::dummy_params(&pce, 5));
        let p = load(&good, opts(false, false)).unwrap();
        assert!(!p.checked.load(SeqCst));
        assert!(Arc::ptr_eq(&load(&good, opts(true, false)).unwrap(), &p));
        assert!(p.checked.load(SeqCst));
        unload(&good);
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A load in the background returns with the verifying key and refuses a bad layout at once;
    /// its queries, when a prover waits for them, equal the decoder's, or are the decoder's error
    /// for a bad point, and a later load of the mended file reads it afresh.
    #[test]
    fn a_background_load_gives_the_decoders_queries_or_its_error() {
        let pce = crate::pce::extract(Synthetic::new(Family::MimcChain, 300, 1).blank()).unwrap();
        let params = crate::params::dummy_params(&pce, 6);
        let dir = std::env::temp_dir().join(format!("cuzk-srs-background-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = written(&dir, "p.params", &params);
        let bytes = std::fs::read(&path).unwrap();

        let srs = load(&path, opts(false, true)).unwrap();
        assert!(*srs.vk() == params.vk);
        assert!(*srs.queries().unwrap() == params);
        assert!(srs.wait_for(Duration::ZERO).is_some_and(|r| r.is_ok()));
        assert!(unload(&path));

        // Truncated: refused by the load itself.
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        assert!(matches!(load(&path, opts(false, true)), Err(Error::BadParamsFile(_))));

        // A point off its curve (the last byte of the last G2 point's y): found by the decoder.
        let mut off = bytes.clone();
        *off.last_mut().unwrap() ^= 1;
        std::fs::write(&path, &off).unwrap();
        let bad = load(&path, opts(false, true)).expect("the layout and key are good");
        match bad.queries() {
            Err(Error::BadParamsFile(m)) => assert!(m.contains("not a valid curve point"), "{m}"),
            other => panic!("{:?}", other.map(|_| ())),
        }
        // Mended: the failed instance is not served again.
        std::fs::write(&path, &bytes).unwrap();
        let again = load(&path, opts(false, true)).unwrap();
        assert!(!Arc::ptr_eq(&again, &bad));
        assert!(*again.queries().unwrap() == params);
        unload(&path);
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// Parameters dropped by their last holder stop being decoded in the background, and a
    /// foreground load's cache stops being written: no thread works for parameters nobody holds.
    #[test]
    fn work_for_dropped_parameters_stops() {
        let pce = crate::pce::extract(Synthetic::new(Family::MimcChain, 100_000, 1).blank()).unwrap();
        let dir = std::env::temp_dir().join(format!("cuzk-srs-stop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = written(&dir, "p.params", &crate::params::dummy_params(&pce, 7));
        let cache = LoadOptions { checked: false, cache: true, background: true };

        let srs = load(&path, cache).unwrap();
        let decoded = srs.decoded.clone();
        assert!(unload(&path));
        drop(srs);
        let guard = decoded.lock.lock().unwrap();
        let _ = decoded.done.wait_timeout_while(guard, Duration::from_secs(120), |_| decoded.value.get().is_none());
        match decoded.value.get() {
            Some(Err(Error::BadParamsFile(m))) => assert!(m.contains("stopped"), "{m}"),
            other => panic!("the decoding went on: {:?}", other.map(|r| r.as_ref().map(|_| ()))),
        }

        drop(load(&path, LoadOptions { background: false, ..cache }).unwrap());
        assert!(unload(&path));
        crate::params::wait_for_cache_writes();
        assert!(!crate::params::cache_path(&path).exists(), "the cache writer went on");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "nothing but the parameters");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A load that is not in the background, of a file still decoding in the background, returns
    /// the decoded parameters: it waits for them instead of handing out the undecoded instance.
    #[test]
    fn a_foreground_load_waits_for_a_background_decoding() {
        let pce = crate::pce::extract(Synthetic::new(Family::MimcChain, 100_000, 1).blank()).unwrap();
        let dir = std::env::temp_dir().join(format!("cuzk-srs-foreground-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let params = crate::params::dummy_params(&pce, 11);
        let path = written(&dir, "p.params", &params);
        let background = load(&path, opts(false, true)).unwrap();
        let foreground = load(&path, opts(false, false)).unwrap();
        assert!(Arc::ptr_eq(&background, &foreground), "one instance");
        assert!(foreground.wait_for(Duration::ZERO).is_some_and(|r| r.is_ok_and(|p| *p == params)));
        unload(&path);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
