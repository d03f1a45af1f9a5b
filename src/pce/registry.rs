//! The process-wide PCE registry: one instance per circuit id, shared by every
//! pipeline through an `Arc`.
//!
//! An `Instances` map: the first caller loads (or extracts, saves and loads)
//! while concurrent callers for the same id wait and then share the result, so
//! the work is done once. Different ids load in parallel. A failed load leaves
//! the id empty (the next caller retries).
//!
//! Accounting: while an instance lives, its heap bytes (the whole PCE when its
//! file was read into memory or could not be saved; the dictionary alone when
//! the file is mapped) count as [`Owner::Pce`] and its mapped file as
//! [`Owner::PceMapped`]; its witness program, loaded or recorded, is counted
//! the same way by its own slot. [`unload`] drops the registry's reference; the
//! memory and the counters go when the last user drops its `Arc`.

use std::path::Path;
use std::sync::Arc;

use once_cell::sync::Lazy;

use super::file::{self, Access};
use super::system::Pce;
use crate::instances::Instances;
use crate::mem::{Owner, Tracked};
use crate::{Error, Result};

/// One PCE per circuit id.
static PCES: Lazy<Instances<String, Pce>> = Lazy::new(Instances::new);

/// Bytes of a PCE that live in mapped files.
fn mapped_bytes(pce: &Pce) -> usize {
    pce.byte_len() - pce.heap_bytes().min(pce.byte_len())
}

/// The PCE with its heap and mapped bytes accounted.
fn entry(pce: Pce) -> (Pce, Vec<Tracked>) {
    let heap = Tracked::new(Owner::Pce, pce.heap_bytes());
    let mapped = Tracked::new(Owner::PceMapped, mapped_bytes(&pce));
    (pce, vec![heap, mapped])
}

fn load_entry(
    circuit_id: &str,
    path: &Path,
    verify_checksums: bool,
    access: Access,
    extract: impl FnOnce() -> Result<Pce>,
) -> Result<(Pce, Vec<Tracked>)> {
    let exists = path.try_exists().map_err(|e| Error::Io(format!("checking {}: {e}", path.display())))?;
    if exists {
        // A file for another circuit (or a stale version) is an error, never
        // silently re-extracted over: the operator must look at it.
        let loaded = file::load(path, Some(circuit_id), verify_checksums, access)?;
        return Ok(entry(loaded.pce));
    }
    let pce = extract()?;
    match file::save(&pce, circuit_id, path) {
        Ok(()) => {
            // Load it back as the next start will (compact, and checked as
            // written); the extracted copy is freed first.
            drop(pce);
            crate::mem::trim();
            let loaded = file::load(path, Some(circuit_id), verify_checksums, access)?;
            Ok(entry(loaded.pce))
        }
        Err(e) => {
            // Unwritable directory, full disk: the PCE is still good; use it
            // from the heap (accounted as such) rather than fail the node.
            log::warn!("could not save the PCE of {circuit_id} to {}: {e}; keeping it in memory", path.display());
            Ok(entry(pce))
        }
    }
}

/// The PCE of `circuit_id`: the loaded instance if there is one, else loaded
/// from `path` (read into memory or mapped: `access`, see [`Access`]), else
/// (file missing) `extract`ed, saved to `path` and loaded back from it. A
/// witness program `extract` records into the PCE is saved with it, so no
/// process that loads the file records it again.
/// Concurrent calls for one id do the work once and share the instance.
/// `path` and `access` only matter to the first load of an id;
/// `verify_checksums` also checks an instance loaded before without it (once).
pub fn load_or_extract(
    circuit_id: &str,
    path: &Path,
    verify_checksums: bool,
    access: Access,
    extract: impl FnOnce() -> Result<Pce>,
) -> Result<Arc<Pce>> {
    let pce =
        PCES.get_or_load(&circuit_id.to_string(), || load_entry(circuit_id, path, verify_checksums, access, extract))?;
    if verify_checksums {
        file::ensure_verified(&pce)?;
    }
    Ok(pce)
}

/// The loaded instance of `circuit_id`, if any (never loads).
pub fn get(circuit_id: &str) -> Option<Arc<Pce>> {
    PCES.get(&circuit_id.to_string())
}

/// Drops the registry's reference to `circuit_id`; false if it was not
/// loaded. The memory is freed when the last user drops its `Arc`.
pub fn unload(circuit_id: &str) -> bool {
    PCES.remove(&circuit_id.to_string())
}

/// Drops the registry's reference to `pce` itself; false if it is not (or no
/// longer) loaded. A newer instance of its circuit, loaded since it was
/// unloaded, stays. The memory is freed when the last user drops its `Arc`.
pub fn unload_instance(pce: &Arc<Pce>) -> bool {
    PCES.remove_value(pce)
}

/// Ids of the loaded instances, sorted.
pub fn loaded() -> Vec<String> {
    let mut ids = PCES.loaded();
    ids.sort();
    ids
}

/// Drops the device copies of the loaded PCEs that no proof is using now (the next proof on
/// a device makes its copy again): `cuzk_mem_trim`. An unloaded PCE's copies go with it.
pub fn drop_unused_device_copies() {
    for id in PCES.loaded() {
        if let Some(pce) = PCES.get(&id) {
            pce.device_copies.drop_unused();
        }
    }
}
