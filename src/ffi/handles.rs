//! Handles as tokens. A handle the library gives a host is not the address of anything: it is
//! a number, never reused in the process, that a table per handle type maps to the value. Every
//! call looks its handles up and holds what it finds (an `Arc`) until it returns, so a handle
//! freed on another thread, freed twice, never made, or of another type is
//! `CUZK_INVALID_HANDLE`, never a use after free, and a call in flight keeps what it uses
//! alive whatever the host frees meanwhile.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::status::cuzk_status::{CUZK_INVALID_HANDLE, CUZK_NULL_ARGUMENT};
use super::status::{Failure, FfiResult};

/// Tokens start far above every user-space address (bit 62 on 64-bit targets): no host
/// pointer equals one, and a Go runtime holding one sees a pointer outside its heap.
const BASE: usize = 1 << (usize::BITS - 2);
/// Token spacing: tokens look like aligned pointers to hosts that check.
const STEP: usize = 16;

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// The live handles of one type.
pub(crate) struct Handles<T> {
    table: Mutex<BTreeMap<usize, Arc<T>>>,
}

impl<T> Handles<T> {
    pub const fn new() -> Self {
        Handles { table: Mutex::new(BTreeMap::new()) }
    }

    fn table(&self) -> MutexGuard<'_, BTreeMap<usize, Arc<T>>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new handle for `value`.
    pub fn insert(&self, value: T) -> *mut T {
        let token = BASE + STEP * NEXT.fetch_add(1, Ordering::Relaxed);
        self.table().insert(token, Arc::new(value));
        std::ptr::without_provenance_mut(token)
    }

    /// What handle `p` stands for, held for the caller; `CUZK_NULL_ARGUMENT` for NULL,
    /// `CUZK_INVALID_HANDLE` for anything that is not a live handle of this type.
    pub fn get(&self, p: *const T, name: &str) -> FfiResult<Arc<T>> {
        self.get_opt(p, name)?.ok_or_else(|| Failure::new(CUZK_NULL_ARGUMENT, format!("{name} is NULL")))
    }

    /// As [`Handles::get`], with `None` for NULL.
    pub fn get_opt(&self, p: *const T, name: &str) -> FfiResult<Option<Arc<T>>> {
        if p.is_null() {
            return Ok(None);
        }
        match self.table().get(&p.addr()) {
            Some(v) => Ok(Some(v.clone())),
            None => Err(Failure::new(
                CUZK_INVALID_HANDLE,
                format!("{name} is not a live handle (freed already, or not one this library made for it)"),
            )),
        }
    }

    /// Ends handle `p`: its value goes once no call holds it. NULL or a handle that is not
    /// live does nothing (a second free is harmless) and returns false.
    pub fn remove(&self, p: *mut T) -> bool {
        let removed = self.table().remove(&p.addr());
        removed.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_never_reused_and_freed_ones_are_refused() {
        let t: Handles<u32> = Handles::new();
        let other: Handles<u32> = Handles::new();
        let a = t.insert(7);
        assert!(a.addr() >= BASE && a.addr().is_multiple_of(STEP));
        let held = t.get(a, "a").unwrap();
        assert!(t.remove(a));
        assert_eq!(*held, 7, "a holder keeps the value past the free");
        let b = t.insert(8);
        assert_ne!(a, b, "a freed token is not reused");
        for (p, status) in [
            (a, CUZK_INVALID_HANDLE),
            (std::ptr::null_mut(), CUZK_NULL_ARGUMENT),
            (std::ptr::without_provenance_mut(0x1000), CUZK_INVALID_HANDLE),
        ] {
            assert_eq!(t.get(p, "a").err().map(|f| f.status), Some(status));
        }
        assert_eq!(other.get(b, "b").err().map(|f| f.status), Some(CUZK_INVALID_HANDLE), "another type's table");
        assert!(!t.remove(a), "a second free does nothing");
        assert!(!t.remove(std::ptr::null_mut()));
        assert_eq!(t.get_opt(std::ptr::null(), "a").unwrap(), None);
        assert_eq!(*t.get(b, "b").unwrap(), 8);
    }
}
