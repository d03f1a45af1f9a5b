//! The copies of a PCE that backends make on devices, kept with the PCE so that they live as
//! long as it does and no longer: unloaded and no proof left holding it, its device copies go
//! too. Type-erased: the PCE knows nothing of GPUs.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::Result;

type Copy = Arc<dyn Any + Send + Sync>;

/// A PCE's device copies, by device id.
#[derive(Default)]
pub struct DeviceCopies(Mutex<HashMap<u32, Copy>>);

impl DeviceCopies {
    fn copies(&self) -> MutexGuard<'_, HashMap<u32, Copy>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The copy on `device`, made by `make` if there is none. The copies stay locked while
    /// `make` runs: concurrent first proofs on one device make one copy.
    pub fn get_or_make<T: Any + Send + Sync>(&self, device: u32, make: impl FnOnce() -> Result<T>) -> Result<Arc<T>> {
        let mut copies = self.copies();
        if let Some(Ok(copy)) = copies.get(&device).map(|c| c.clone().downcast::<T>()) {
            return Ok(copy);
        }
        let copy = Arc::new(make()?);
        copies.insert(device, copy.clone());
        Ok(copy)
    }

    /// Drops the copies no proof is using now (the next proof on their device makes them
    /// again); returns how many.
    pub fn drop_unused(&self) -> usize {
        let mut copies = self.copies();
        let before = copies.len();
        copies.retain(|_, c| Arc::strong_count(c) > 1);
        before - copies.len()
    }

    /// Devices with a copy.
    pub fn devices(&self) -> Vec<u32> {
        let mut d: Vec<u32> = self.copies().keys().copied().collect();
        d.sort_unstable();
        d
    }
}

impl std::fmt::Debug for DeviceCopies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceCopies(on {:?})", self.devices())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_copy_per_device_until_unused_ones_are_dropped() {
        let copies = DeviceCopies::default();
        let made = std::sync::atomic::AtomicUsize::new(0);
        let make = |v: u64| {
            made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(v)
        };
        let a = copies.get_or_make(0, || make(7)).unwrap();
        assert_eq!(*copies.get_or_make(0, || make(8)).unwrap(), 7, "made twice");
        assert!(copies.get_or_make(1, || Err::<u64, _>(crate::Error::Gpu("no".into()))).is_err());
        copies.get_or_make(2, || make(9)).unwrap();
        assert_eq!(copies.devices(), vec![0, 2], "a failed make leaves nothing");
        assert_eq!(copies.drop_unused(), 1, "device 2's copy is unused");
        assert_eq!(copies.devices(), vec![0]);
        drop(a);
        assert_eq!(copies.drop_unused(), 1);
        assert_eq!(made.into_inner(), 2);
    }
}
