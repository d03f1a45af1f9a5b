//! The process-wide PCE registry: one instance per circuit id, shared by every
//! pipeline through an `Arc`.
//!
//! Each id has a slot (`OnceCell`): the first caller loads (or extracts, saves
//! and loads) while concurrent callers for the same id block on the slot and
//! then share the result, so the work is done once. Different ids load in
//! parallel. A failed load leaves the slot empty (the next caller retries).
//!
//! Accounting: while an instance lives, its heap bytes (the dictionary, or the
//! whole PCE when it could not be saved) count as [`Owner::Pce`] and its mapped
//! file as [`Owner::PceMapped`]. [`unload`] drops the registry's reference; the
//! memory and the counters go when the last user drops its `Arc`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use once_cell::sync::{Lazy, OnceCell};

use super::file;
use super::matrix::Pce;
use crate::mem::{self, Owner, Tracked};
use crate::{Error, Result};

struct Entry {
    pce: Arc<Pce>,
    /// Heap and mapped bytes; handed to `mem` when the entry goes.
    tracked: Option<(Tracked, Tracked)>,
}

impl Drop for Entry {
    fn drop(&mut self) {
        if let Some(t) = self.tracked.take() {
            mem::release_when_dropped(Arc::downgrade(&self.pce), t);
        }
    }
}

type Slot = Arc<OnceCell<Entry>>;

static SLOTS: Lazy<Mutex<HashMap<String, Slot>>> = Lazy::new(|| Mutex::new(HashMap::new()));

fn slots() -> std::sync::MutexGuard<'static, HashMap<String, Slot>> {
    SLOTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Bytes of a PCE that live in mapped files.
fn mapped_bytes(pce: &Pce) -> usize {
    pce.byte_len() - pce.heap_bytes().min(pce.byte_len())
}

fn entry(pce: Pce) -> Entry {
    let heap = Tracked::new(Owner::Pce, pce.heap_bytes());
    let mapped = Tracked::new(Owner::PceMapped, mapped_bytes(&pce));
    Entry { pce: Arc::new(pce), tracked: Some((heap, mapped)) }
}

fn load_entry(
    circuit_id: &str,
    path: &Path,
    verify_checksums: bool,
    extract: impl FnOnce() -> Result<Pce>,
) -> Result<Entry> {
    let exists = path.try_exists().map_err(|e| Error::Io(format!("checking {}: {e}", path.display())))?;
    if exists {
        // A file for another circuit (or a stale version) is an error, never
        // silently re-extracted over: the operator must look at it.
        let loaded = file::load(path, Some(circuit_id), verify_checksums)?;
        return Ok(entry(loaded.pce));
    }
    let pce = extract()?;
    match file::save(&pce, circuit_id, path) {
        Ok(()) => {
            // Map it back so the heap copy is freed and the pages are shared.
            drop(pce);
            crate::mem::trim();
            let loaded = file::load(path, Some(circuit_id), verify_checksums)?;
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
/// from `path`, else (file missing) `extract`ed, saved to `path` and mapped
/// back. Concurrent calls for one id do the work once and share the instance.
/// `path` is only consulted on the first load of an id.
pub fn load_or_extract(
    circuit_id: &str,
    path: &Path,
    verify_checksums: bool,
    extract: impl FnOnce() -> Result<Pce>,
) -> Result<Arc<Pce>> {
    let slot = slots().entry(circuit_id.to_string()).or_default().clone();
    // Blocks while another thread initialises this id; a failure leaves the
    // slot empty for the next caller.
    let e = slot.get_or_try_init(|| load_entry(circuit_id, path, verify_checksums, extract))?;
    Ok(e.pce.clone())
}

/// The loaded instance of `circuit_id`, if any (never loads).
pub fn get(circuit_id: &str) -> Option<Arc<Pce>> {
    let slot = slots().get(circuit_id)?.clone();
    slot.get().map(|e| e.pce.clone())
}

/// Drops the registry's reference to `circuit_id`; false if it was not
/// loaded. The memory is freed when the last user drops its `Arc`.
pub fn unload(circuit_id: &str) -> bool {
    let removed = {
        let mut s = slots();
        match s.get(circuit_id) {
            Some(slot) if slot.get().is_some() => s.remove(circuit_id),
            _ => None,
        }
    };
    let was_loaded = removed.is_some();
    drop(removed);
    mem::sweep();
    was_loaded
}

/// Ids of the loaded instances, sorted.
pub fn loaded() -> Vec<String> {
    let mut ids: Vec<String> = slots().iter().filter(|(_, s)| s.get().is_some()).map(|(k, _)| k.clone()).collect();
    ids.sort();
    ids
}
