//! Each device's memory for proofs' working sets. A proof reserves its working set before its
//! first device allocation and waits while the proofs in flight on that device leave no room
//! for it, so concurrent workers never take a device past its memory: a proof never dies of a
//! device OOM the engine could foresee. One that could not fit even alone fails at once.
//! Throughput proofs leave the policy's `critical_room` to critical ones, so a WinningPoSt does not wait
//! for a partition to end on a device whose memory partitions fill. The rule ([`State::admits`])
//! is pure Rust, tested in every build; the rooms are the `cuda` feature's.
#![cfg_attr(not(feature = "cuda"), allow(dead_code))]

#[cfg(feature = "cuda")]
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

#[cfg(feature = "cuda")]
use crate::gpu;
use crate::gpu::Urgency;
#[cfg(feature = "cuda")]
use crate::{Error, Result};

/// Left free on each device for what the estimate does not see (contexts, fragmentation).
#[cfg(feature = "cuda")]
const MARGIN: u64 = 1 << 30;

#[cfg(feature = "cuda")]
#[derive(Default)]
struct Room {
    state: Mutex<State>,
    freed: Condvar,
}

#[derive(Default, Clone)]
struct State {
    /// Working sets reserved by the throughput proofs in flight.
    throughput: u64,
    /// Working sets reserved by the critical proofs in flight.
    critical: u64,
    proofs: usize,
    /// Bytes proofs may take, measured when none was in flight (the SRS and PCE copies of the
    /// next proof already resident).
    room: u64,
}

impl State {
    /// Whether a proof of `urgency` needing `bytes` may start now: a critical one where it
    /// fits, a throughput one where it fits beside `critical_room` (or what critical proofs
    /// hold, if more), or alone. The default room (1 GiB) is a WinningPoSt's working set (2^19
    /// domain: about 0.2 GB) several times over; a larger critical proof may take it and what
    /// throughput proofs leave besides, and waits for them beyond that. A throughput proof
    /// alone on its device may take it too (a card that holds one partition only with it).
    fn admits(&self, bytes: u64, urgency: Urgency, critical_room: u64) -> bool {
        let taken = match urgency {
            Urgency::Critical => self.throughput + self.critical,
            Urgency::Throughput if self.proofs == 0 => 0,
            Urgency::Throughput => self.throughput + self.critical.max(critical_room),
        };
        taken.saturating_add(bytes) <= self.room
    }

    /// The reservations of `urgency`'s proofs.
    fn held(&mut self, urgency: Urgency) -> &mut u64 {
        match urgency {
            Urgency::Critical => &mut self.critical,
            Urgency::Throughput => &mut self.throughput,
        }
    }
}

/// One room per device id, made on first use and kept.
#[cfg(feature = "cuda")]
static ROOMS: Mutex<Vec<Arc<Room>>> = Mutex::new(Vec::new());

#[cfg(feature = "cuda")]
fn room_of(device: usize) -> Arc<Room> {
    let mut rooms = ROOMS.lock().unwrap_or_else(|e| e.into_inner());
    if rooms.len() <= device {
        rooms.resize_with(device + 1, Default::default);
    }
    rooms[device].clone()
}

/// A proof's working set on its device, given back on drop.
#[cfg(feature = "cuda")]
pub(super) struct Reserved {
    room: Arc<Room>,
    bytes: u64,
    urgency: Urgency,
}

#[cfg(feature = "cuda")]
impl Drop for Reserved {
    fn drop(&mut self) {
        let mut st = lock(&self.room);
        *st.held(self.urgency) -= self.bytes;
        st.proofs -= 1;
        drop(st);
        self.room.freed.notify_all();
    }
}

#[cfg(feature = "cuda")]
fn lock(room: &Room) -> MutexGuard<'_, State> {
    room.state.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reserves `bytes` of `device`'s memory for one proof of `urgency`, waiting while the proofs
/// in flight there leave too little ([`State::admits`]). `TooLarge` when the device could not
/// hold it even alone. Throughput proofs leave `critical_room` to critical ones.
#[cfg(feature = "cuda")]
pub(super) fn reserve(device: usize, bytes: u64, urgency: Urgency, critical_room: u64) -> Result<Reserved> {
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
        if st.admits(bytes, urgency, critical_room) {
            break;
        }
        st = room.freed.wait(st).unwrap_or_else(|e| e.into_inner());
    }
    *st.held(urgency) += bytes;
    st.proofs += 1;
    drop(st);
    Ok(Reserved { room, bytes, urgency })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proofs holding room on `device` now, and the bytes they reserved.
    #[cfg(feature = "cuda")]
    fn in_flight(device: usize) -> (usize, u64) {
        let st = lock(&room_of(device)).clone();
        (st.proofs, st.throughput + st.critical)
    }

    /// Throughput proofs leave the critical room to critical ones (or what those hold, if more)
    /// unless alone; a critical proof takes whatever is left; nothing ever takes more than
    /// the room.
    #[test]
    fn throughput_proofs_leave_critical_room() {
        use Urgency::{Critical, Throughput};
        const GB: u64 = 1 << 30;
        const CRITICAL_ROOM: u64 = GB;
        let room = 20 * GB;
        let st = |throughput, critical, proofs| State { throughput, critical, proofs, room };
        // Alone, a throughput proof may take the whole room, critical room included.
        assert!(st(0, 0, 0).admits(room, Throughput, CRITICAL_ROOM));
        assert!(!st(0, 0, 0).admits(room + 1, Throughput, CRITICAL_ROOM));
        // Beside another, it leaves the critical room free.
        assert!(st(10 * GB, 0, 1).admits(9 * GB, Throughput, CRITICAL_ROOM));
        assert!(!st(10 * GB, 0, 1).admits(9 * GB + 1, Throughput, CRITICAL_ROOM));
        // A critical proof takes that room, and more where throughput proofs leave it.
        assert!(st(19 * GB, 0, 2).admits(GB, Critical, CRITICAL_ROOM));
        assert!(!st(19 * GB, 0, 2).admits(GB + 1, Critical, CRITICAL_ROOM));
        assert!(st(10 * GB, 0, 1).admits(10 * GB, Critical, CRITICAL_ROOM));
        // Critical proofs holding more than the critical room count in full against throughput.
        assert!(st(10 * GB, 3 * GB, 2).admits(7 * GB, Throughput, CRITICAL_ROOM));
        assert!(!st(10 * GB, 3 * GB, 2).admits(7 * GB + 1, Throughput, CRITICAL_ROOM));
        assert!(st(10 * GB, GB / 2, 2).admits(9 * GB, Throughput, CRITICAL_ROOM));
        assert!(!st(10 * GB, GB / 2, 2).admits(9 * GB + 1, Throughput, CRITICAL_ROOM));
        assert!(!st(0, 0, 0).admits(u64::MAX, Critical, CRITICAL_ROOM), "no overflow");
    }

    #[cfg(feature = "cuda")]
    #[test]
    fn a_proof_waits_for_room_and_one_that_cannot_fit_fails() {
        const CRITICAL_ROOM: u64 = 1 << 30;
        if gpu::device_count() == 0 {
            eprintln!("a_proof_waits_for_room_and_one_that_cannot_fit_fails: skipped, no CUDA device");
            return;
        }
        assert!(matches!(reserve(0, u64::MAX / 2, Urgency::Throughput, CRITICAL_ROOM), Err(Error::TooLarge(_))));
        assert_eq!(in_flight(0), (0, 0));
        let room = gpu::room(0).unwrap().saturating_sub(MARGIN);
        let half = room / 2 + 1;
        let first = reserve(0, half, Urgency::Throughput, CRITICAL_ROOM).unwrap();
        // A critical proof starts at once in the room the throughput proof leaves to it.
        drop(reserve(0, CRITICAL_ROOM, Urgency::Critical, CRITICAL_ROOM).unwrap());
        std::thread::scope(|s| {
            let second = s.spawn(|| reserve(0, half, Urgency::Throughput, CRITICAL_ROOM).map(drop));
            std::thread::sleep(std::time::Duration::from_millis(200));
            assert!(!second.is_finished(), "two halves and a byte fit on one device");
            assert_eq!(in_flight(0), (1, half));
            drop(first);
            second.join().unwrap().unwrap();
        });
        assert_eq!(in_flight(0), (0, 0));
    }
}
