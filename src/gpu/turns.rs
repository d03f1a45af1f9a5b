//! Turns on a device. A critical backend stage (a WinningPoSt) holds a [`Turn`] for its whole
//! length; a throughput stage on the same device waits at its next step boundary (H, each
//! MSM) while one does, for at most the policy's `max_yield` per step
//! ([`super::SharingPolicy`]), so the critical stage's kernels do
//! not queue behind a long partition's and the partition still makes progress. Inside a
//! step, cuzk's MSM driver on the throughput lane waits the same way before each of its
//! kernels ([`critical_running`]: `cuda/msm_wide.cuh`), so a critical stage shares its device
//! with at most one short kernel of each partition. A critical
//! request [`Ahead`] of its stage (making its witness, waiting for its worker) already makes
//! throughput MSMs cut short pieces, so that the piece it finds running when it reaches its
//! device is short too. Process-wide: the stages of every engine on a device share its turns.
//! Pure Rust, in every build.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How a backend stage shares its device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Urgency {
    /// Steps wait while a critical stage runs on the device.
    Throughput,
    /// Never waits for throughput stages' steps; they wait for it.
    Critical,
}

/// Device ids with turns: CUDA device ids are below 64 (`cuda/lanes.cu`). A critical stage on
/// a larger id makes nothing wait.
const MAX_DEVICES: usize = 64;

/// Critical stages running, per device id: read by throughput steps here and by cuzk's MSM
/// driver in C++ ([`critical_running`]).
static RUNNING: [AtomicU32; MAX_DEVICES] = [const { AtomicU32::new(0) }; MAX_DEVICES];
/// Held to wait for [`ENDED`], and by a critical stage's end before it notifies.
static WAITING: Mutex<()> = Mutex::new(());
static ENDED: Condvar = Condvar::new();

fn count(device: usize) -> u32 {
    RUNNING.get(device).map_or(0, |c| c.load(Ordering::SeqCst))
}

/// The count of critical stages running on `device`, for code that waits outside Rust (cuzk's
/// MSM driver polls it before each kernel it launches on the throughput lane, for at most
/// the policy's `max_yield`); `None` past [`MAX_DEVICES`]. A static: valid for the process.
#[cfg(feature = "cuda")]
pub(super) fn critical_running(device: usize) -> Option<&'static AtomicU32> {
    RUNNING.get(device)
}

/// Critical requests on their way to a device, any device: made and not yet past their backend
/// stage.
static AHEAD: AtomicUsize = AtomicUsize::new(0);

/// A critical request on its way to a device, from its admission to the end of its backend
/// stage (the device is not known until its worker is). Throughput MSMs cut short pieces
/// while one exists ([`Turn::short_pieces`]).
pub struct Ahead(());

impl Ahead {
    /// Announces a critical request.
    pub fn announce() -> Ahead {
        AHEAD.fetch_add(1, Ordering::SeqCst);
        Ahead(())
    }
}

impl Drop for Ahead {
    fn drop(&mut self) {
        AHEAD.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A backend stage's place on device `device`; a critical one's ends when it drops.
pub struct Turn {
    device: usize,
    urgency: Urgency,
    max_yield: Duration,
}

impl Turn {
    /// Starts a stage on `device` whose throughput steps give way to critical stages for at
    /// most `max_yield` each.
    pub fn begin(device: usize, urgency: Urgency, max_yield: Duration) -> Turn {
        if urgency == Urgency::Critical {
            if let Some(c) = RUNNING.get(device) {
                c.fetch_add(1, Ordering::SeqCst);
            }
        }
        Turn { device, urgency, max_yield }
    }

    /// Before each step: a throughput stage waits while a critical stage runs on its device (at
    /// most its `max_yield`); a critical one goes on.
    pub fn step(&self) {
        if self.urgency == Urgency::Critical {
            return;
        }
        let start = Instant::now();
        let mut waiting = WAITING.lock().unwrap_or_else(|e| e.into_inner());
        while count(self.device) > 0 {
            let Some(left) = self.max_yield.checked_sub(start.elapsed()) else { return };
            waiting = ENDED.wait_timeout(waiting, left).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// Whether a throughput stage's next MSM piece should be a short one: a critical request
    /// is on its way ([`Ahead`]). Never for a critical stage, whose MSMs are not cut.
    pub fn short_pieces(&self) -> bool {
        self.urgency == Urgency::Throughput && AHEAD.load(Ordering::SeqCst) > 0
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if self.urgency == Urgency::Critical {
            if let Some(c) = RUNNING.get(self.device) {
                c.fetch_sub(1, Ordering::SeqCst);
                // A step that saw the count above zero waits under the lock: taking it here
                // means the step is either still to check or already waiting.
                drop(WAITING.lock().unwrap_or_else(|e| e.into_inner()));
                ENDED.notify_all();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX_YIELD: Duration = Duration::from_secs(1);

    /// A throughput step waits for the critical stage on its device, not for one on another
    /// device, and not for longer than `MAX_YIELD`.
    #[test]
    fn throughput_steps_wait_for_critical_stages_on_their_device() {
        // Device ids no other test uses (no machine here has 60 GPUs).
        let (mine, other) = (60, 61);
        let critical = Turn::begin(mine, Urgency::Critical, MAX_YIELD);
        let start = Instant::now();
        Turn::begin(other, Urgency::Throughput, MAX_YIELD).step();
        Turn::begin(mine, Urgency::Critical, MAX_YIELD).step();
        assert!(start.elapsed() < MAX_YIELD / 2, "nothing to wait for");
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let t = Instant::now();
                Turn::begin(mine, Urgency::Throughput, MAX_YIELD).step();
                t.elapsed()
            });
            std::thread::sleep(Duration::from_millis(200));
            drop(critical);
            let waited = waiter.join().unwrap();
            assert!(waited >= Duration::from_millis(150) && waited < MAX_YIELD, "{waited:?}");
        });
        let _flood = Turn::begin(mine, Urgency::Critical, MAX_YIELD);
        let t = Instant::now();
        Turn::begin(mine, Urgency::Throughput, MAX_YIELD).step();
        assert!(t.elapsed() >= MAX_YIELD, "a step waits at most MAX_YIELD, but that long");
    }

    /// Throughput pieces are short while a critical request is announced; a critical stage's
    /// never are. (Other tests' critical requests may be ahead too, so the count's return to
    /// zero is not asserted here.)
    #[test]
    fn pieces_are_short_while_a_critical_request_is_ahead() {
        let throughput = Turn::begin(62, Urgency::Throughput, MAX_YIELD);
        let critical = Turn::begin(63, Urgency::Critical, MAX_YIELD);
        let _ahead = Ahead::announce();
        assert!(throughput.short_pieces() && !critical.short_pieces());
    }
}
