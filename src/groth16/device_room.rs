//! Each device's memory for proofs' working sets. A proof reserves its working set before its
//! first device allocation and waits while the proofs in flight on that device leave no room
//! for it, so concurrent workers never take a device past its memory: a proof never dies of a
//! device OOM the engine could foresee. One that could not fit even alone fails at once.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::gpu;
use crate::{Error, Result};

/// Left free on each device for what the estimate does not see (contexts, fragmentation).
const MARGIN: u64 = 1 << 30;

#[derive(Default)]
struct Room {
    state: Mutex<State>,
    freed: Condvar,
}

#[derive(Default, Clone)]
struct State {
    /// Working sets reserved by the proofs in flight.
    reserved: u64,
    proofs: usize,
    /// Bytes proofs may take, measured when none was in flight (the SRS and PCE copies of the
    /// next proof already resident).
    room: u64,
}

/// One room per device id, made on first use and kept.
static ROOMS: Mutex<Vec<Arc<Room>>> = Mutex::new(Vec::new());

fn room_of(device: usize) -> Arc<Room> {
    let mut rooms = ROOMS.lock().unwrap_or_else(|e| e.into_inner());
    if rooms.len() <= device {
        rooms.resize_with(device + 1, Default::default);
    }
    rooms[device].clone()
}

/// A proof's working set on its device, given back on drop.
pub(super) struct Reserved {
    room: Arc<Room>,
    bytes: u64,
}

impl Drop for Reserved {
    fn drop(&mut self) {
        let mut st = lock(&self.room);
        st.reserved -= self.bytes;
        st.proofs -= 1;
        drop(st);
        self.room.freed.notify_all();
    }
}

fn lock(room: &Room) -> MutexGuard<'_, State> {
    room.state.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reserves `bytes` of `device`'s memory for one proof, waiting while the proofs in flight
/// there leave too little. `TooLarge` when the device could not hold it even alone.
pub(super) fn reserve(device: usize, bytes: u64) -> Result<Reserved> {
    let room = room_of(device);
    let mut st = lock(&room);
    loop {
        if st.proofs == 0 {
            st.room = gpu::room(device)?.saturating_sub(MARGIN);
            if bytes > st.room {
                return Err(Error::TooLarge(format!(
                    "a proof needs {bytes} bytes of device memory, device {device} has {} beside its resident \
                     parameters and PCEs",
                    st.room
                )));
            }
        }
        if st.reserved + bytes <= st.room {
            break;
        }
        st = room.freed.wait(st).unwrap_or_else(|e| e.into_inner());
    }
    st.reserved += bytes;
    st.proofs += 1;
    drop(st);
    Ok(Reserved { room, bytes })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proofs holding room on `device` now, and the bytes they reserved.
    fn in_flight(device: usize) -> (usize, u64) {
        let st = lock(&room_of(device)).clone();
        (st.proofs, st.reserved)
    }

    #[test]
    fn a_proof_waits_for_room_and_one_that_cannot_fit_fails() {
        if gpu::device_count() == 0 {
            eprintln!("a_proof_waits_for_room_and_one_that_cannot_fit_fails: skipped, no CUDA device");
            return;
        }
        assert!(matches!(reserve(0, u64::MAX / 2), Err(Error::TooLarge(_))));
        assert_eq!(in_flight(0), (0, 0));
        let half = gpu::room(0).unwrap().saturating_sub(MARGIN) / 2 + 1;
        let first = reserve(0, half).unwrap();
        std::thread::scope(|s| {
            let second = s.spawn(|| reserve(0, half).map(drop));
            std::thread::sleep(std::time::Duration::from_millis(200));
            assert!(!second.is_finished(), "two halves and a byte fit on one device");
            assert_eq!(in_flight(0), (1, half));
            drop(first);
            second.join().unwrap().unwrap();
        });
        assert_eq!(in_flight(0), (0, 0));
    }
}
