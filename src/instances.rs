//! One value per key per process, loaded once and shared: what the PCE registry (one PCE per
//! circuit id) and the parameter cache (one SRS per file) both are.
//!
//! Each key has a cell: the first caller loads while concurrent callers for the same key wait
//! for it and then share the result, so the work is done once; different keys load in
//! parallel; a failed load leaves the cell empty for the next caller. The bytes a value is
//! accounted for stay counted until its last user drops it, not just until it is removed.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};

use once_cell::sync::OnceCell;

use crate::mem::{self, Tracked};
use crate::Result;

struct Entry<V: Send + Sync + 'static> {
    value: Arc<V>,
    /// Handed to `mem` when the entry goes, released with the value's last `Arc`.
    tracked: Option<Vec<Tracked>>,
}

impl<V: Send + Sync + 'static> Drop for Entry<V> {
    fn drop(&mut self) {
        if let Some(t) = self.tracked.take() {
            mem::release_when_dropped(Arc::downgrade(&self.value), t);
        }
    }
}

/// The loaded values by key (see the module doc).
pub(crate) struct Instances<K, V: Send + Sync + 'static> {
    cells: Mutex<HashMap<K, Arc<OnceCell<Entry<V>>>>>,
}

impl<K: Eq + Hash + Clone, V: Send + Sync + 'static> Instances<K, V> {
    pub fn new() -> Self {
        Instances { cells: Mutex::new(HashMap::new()) }
    }

    fn cells(&self) -> MutexGuard<'_, HashMap<K, Arc<OnceCell<Entry<V>>>>> {
        self.cells.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The value of `key`: the loaded one, else what `load` returns with the bytes it accounts.
    pub fn get_or_load(&self, key: &K, load: impl FnOnce() -> Result<(V, Vec<Tracked>)>) -> Result<Arc<V>> {
        let cell = self.cells().entry(key.clone()).or_default().clone();
        let e = cell.get_or_try_init(|| {
            let (value, tracked) = load()?;
            Ok::<_, crate::Error>(Entry { value: Arc::new(value), tracked: Some(tracked) })
        })?;
        Ok(e.value.clone())
    }

    /// The loaded value of `key`, if any (never loads).
    pub fn get(&self, key: &K) -> Option<Arc<V>> {
        let cell = self.cells().get(key)?.clone();
        cell.get().map(|e| e.value.clone())
    }

    /// Drops this map's reference to `key`'s value; false if it was not loaded. The value and
    /// its accounted bytes go when its last user drops its `Arc`.
    pub fn remove(&self, key: &K) -> bool {
        let removed = {
            let mut cells = self.cells();
            match cells.get(key) {
                Some(cell) if cell.get().is_some() => cells.remove(key),
                _ => None,
            }
        };
        let was_loaded = removed.is_some();
        drop(removed);
        mem::sweep();
        was_loaded
    }

    /// Drops this map's reference to `value`, under whatever key it is; false if it is not
    /// (or no longer) this map's. Unlike [`Instances::remove`], it cannot drop another value
    /// that took the same key since.
    pub fn remove_value(&self, value: &Arc<V>) -> bool {
        let removed = {
            let mut cells = self.cells();
            let key = cells
                .iter()
                .find(|(_, c)| c.get().is_some_and(|e| Arc::ptr_eq(&e.value, value)))
                .map(|(k, _)| k.clone());
            key.and_then(|k| cells.remove(&k))
        };
        let was_loaded = removed.is_some();
        drop(removed);
        mem::sweep();
        was_loaded
    }

    /// The keys with a loaded value.
    pub fn loaded(&self) -> Vec<K> {
        self.cells().iter().filter(|(_, c)| c.get().is_some()).map(|(k, _)| k.clone()).collect()
    }
}
