//! The devices' backend-stage workers: a request takes a worker of its device, or with `Auto`
//! of whichever healthy device frees one first; per-device counters for the stats. Each device
//! also has one express worker that only critical requests take, so their backend stage starts
//! at once even while every other worker runs a long partition.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::{CancelToken, Priority};
use crate::groth16::Backend;
use crate::{gpu, Error, Result};

/// How many device errors in a row take a device out of `Auto` rotation.
const FAILURES_TO_SIDELINE: u32 = 3;

/// How long a sidelined device stays out before `Auto` requests probe it again (the cause —
/// another process's memory, a transient error — may be gone by then).
pub(super) const COOL_DOWN: Duration = Duration::from_secs(60);

/// One device's (or the CPU's) backend-stage workers and counters.
#[derive(Default)]
struct Lane {
    free: usize,
    /// The express worker is taken.
    express_taken: bool,
    proofs: u64,
    failures: u64,
    failures_in_a_row: u32,
    /// When the last device error came.
    failed_at: Option<Instant>,
    /// Seconds with at least one backend stage running, closed intervals.
    busy: f64,
    busy_since: Option<Instant>,
}

impl Lane {
    /// In `Auto` rotation: fewer than [`FAILURES_TO_SIDELINE`] device errors in a row, or the
    /// last one `cool_down` ago (a probe: a success brings it back, a failure starts another
    /// cool-down).
    fn healthy(&self, cool_down: Duration) -> bool {
        self.failures_in_a_row < FAILURES_TO_SIDELINE || self.failed_at.is_some_and(|t| t.elapsed() >= cool_down)
    }

    /// Workers running a backend stage now, the express one included.
    fn in_use(&self, workers: usize) -> usize {
        workers - self.free + usize::from(self.express_taken)
    }

    /// Takes a worker (the express one only when `express`), starting the busy clock when it
    /// is the first in use.
    fn take(&mut self, workers: usize, express: bool) {
        if self.in_use(workers) == 0 {
            self.busy_since = Some(Instant::now());
        }
        if express {
            self.express_taken = true;
        } else {
            self.free -= 1;
        }
    }

    fn give_back(&mut self, workers: usize, express: bool) {
        if express {
            self.express_taken = false;
        } else {
            self.free += 1;
        }
        if self.in_use(workers) == 0 {
            if let Some(t) = self.busy_since.take() {
                self.busy += t.elapsed().as_secs_f64();
            }
        }
    }
}

/// What one of the engine's devices has done so far.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceStats {
    pub backend: Backend,
    /// Throughput workers (each device also has one express worker for critical requests).
    pub workers: usize,
    /// Workers running a backend stage now, the express one included.
    pub in_use: usize,
    /// Backend stages that succeeded / failed.
    pub proofs: u64,
    pub failures: u64,
    /// Wall seconds with at least one backend stage running (the union of
    /// their intervals, so busy / wall is the device's busy fraction).
    pub busy_seconds: f64,
    /// False once it failed `FAILURES_TO_SIDELINE` times in a row with a
    /// device error: `Auto` requests avoid it for `COOL_DOWN`, then probe it
    /// again (a request naming it still goes there; a success brings it back).
    pub healthy: bool,
    /// Device memory (cudaMemGetInfo) now; 0 for the CPU.
    pub vram_free: u64,
    pub vram_total: u64,
}

/// The devices' workers behind one lock, so a request can wait for whichever
/// device frees a worker first.
pub(super) struct Lanes {
    pub(super) backends: Vec<Backend>,
    workers: usize,
    /// [`COOL_DOWN`] (shorter in tests).
    pub(super) cool_down: Duration,
    state: Mutex<State>,
    freed: Condvar,
}

#[derive(Default)]
struct State {
    lanes: Vec<Lane>,
    /// Requests waiting for a worker, in no order: a freed worker goes to the first in line
    /// (priority, then arrival) that may use it.
    waiting: Vec<Waiter>,
    tickets: u64,
}

struct Waiter {
    priority: Priority,
    ticket: u64,
    allowed: Vec<usize>,
    /// An `Auto` request: it uses only healthy lanes.
    auto: bool,
}

impl Waiter {
    /// Ahead of `other` in line.
    fn before(&self, other: &Waiter) -> bool {
        (self.priority, std::cmp::Reverse(self.ticket)) > (other.priority, std::cmp::Reverse(other.ticket))
    }
}

/// A backend-stage worker of lane `index`, given back on drop.
pub(super) struct Worker<'a> {
    lanes: &'a Lanes,
    index: usize,
    express: bool,
}

impl Lanes {
    /// `workers` per backend; each backend listed once.
    pub(super) fn new(backends: Vec<Backend>, workers: usize) -> Result<Lanes> {
        for (i, b) in backends.iter().enumerate() {
            if backends[..i].contains(b) {
                return Err(Error::InvalidInput(format!("{b:?} is listed twice")));
            }
        }
        Ok(Lanes {
            state: Mutex::new(State {
                lanes: backends.iter().map(|_| Lane { free: workers, ..Lane::default() }).collect(),
                ..State::default()
            }),
            backends,
            workers,
            cool_down: COOL_DOWN,
            freed: Condvar::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a worker of the wanted device, or with `Auto` of whichever
    /// healthy device (other than `avoid`) has one free first. Workers go to
    /// waiting requests in line: by `priority`, then arrival. A critical
    /// request takes a free throughput worker if there is one, else the
    /// device's express worker.
    pub(super) fn acquire(
        &self,
        want: Backend,
        avoid: Option<Backend>,
        priority: Priority,
        cancel: &CancelToken,
    ) -> Result<Worker<'_>> {
        let allowed: Vec<usize> = match want {
            Backend::Auto => (0..self.backends.len()).filter(|&i| Some(self.backends[i]) != avoid).collect(),
            b => vec![self.index_of(b)?],
        };
        let mut st = self.lock();
        st.tickets += 1;
        let me = Waiter { priority, ticket: st.tickets, allowed, auto: want == Backend::Auto };
        let outcome = loop {
            if let Err(e) = cancel.check() {
                break Err(e);
            }
            let usable_by =
                |w: &Waiter, i: usize| w.allowed.contains(&i) && (!w.auto || st.lanes[i].healthy(self.cool_down));
            let usable: Vec<usize> = me.allowed.iter().copied().filter(|&i| usable_by(&me, i)).collect();
            if usable.is_empty() {
                break Err(Error::Gpu(format!("no healthy device left among {:?}", self.backends)));
            }
            // A free worker no one ahead in line may take; most free first, ties to the first listed.
            let mine = |i: usize| !st.waiting.iter().any(|w| w.before(&me) && usable_by(w, i));
            let free = usable
                .iter()
                .copied()
                .filter(|&i| st.lanes[i].free > 0 && mine(i))
                .min_by_key(|&i| std::cmp::Reverse(st.lanes[i].free));
            let express = || usable.iter().copied().find(|&i| !st.lanes[i].express_taken);
            let taken = match free {
                Some(i) => Some((i, false)),
                None if priority.is_critical() => express().map(|i| (i, true)),
                None => None,
            };
            if let Some((index, express)) = taken {
                st.lanes[index].take(self.workers, express);
                break Ok(Worker { lanes: self, index, express });
            }
            if !st.waiting.iter().any(|w| w.ticket == me.ticket) {
                st.waiting.push(Waiter { allowed: me.allowed.clone(), ..me });
            }
            st = self.freed.wait_timeout(st, std::time::Duration::from_millis(20)).unwrap_or_else(|e| e.into_inner()).0;
        };
        st.waiting.retain(|w| w.ticket != me.ticket);
        drop(st);
        // Whoever was behind this request in line may go now.
        self.freed.notify_all();
        outcome
    }

    /// Backend workers over every device (the express ones not counted).
    pub(super) fn workers(&self) -> usize {
        self.workers * self.backends.len()
    }

    pub(super) fn index_of(&self, b: Backend) -> Result<usize> {
        self.backends.iter().position(|&x| x == b).ok_or_else(|| {
            Error::InvalidInput(format!("{b:?} is not one of this engine's devices {:?}", self.backends))
        })
    }

    /// Counts a backend outcome; only device errors count against its health.
    pub(super) fn record<T>(&self, index: usize, outcome: &Result<T>) {
        let lane = &mut self.lock().lanes[index];
        match outcome {
            Ok(_) => {
                lane.proofs += 1;
                lane.failures_in_a_row = 0;
            }
            Err(e) => {
                lane.failures += 1;
                if matches!(e, Error::Gpu(_)) {
                    lane.failures_in_a_row += 1;
                    lane.failed_at = Some(Instant::now());
                }
            }
        }
    }

    /// Each device's counters, and its memory now ([`gpu::device_memory`]).
    pub(super) fn stats(&self) -> Vec<DeviceStats> {
        self.stats_with(|backend| match backend {
            Backend::Cuda(id) => gpu::device_memory(id).unwrap_or((0, 0)),
            _ => (0, 0),
        })
    }

    /// Each device's counters, read under the lock, then each device's (free, total) memory
    /// from `memory` with the lock released: a device query (cudaMemGetInfo makes a context on
    /// first use; a wedged driver may never return) never holds up the workers, who take the
    /// lock for every worker taken and given back.
    pub(super) fn stats_with(&self, memory: impl Fn(Backend) -> (u64, u64)) -> Vec<DeviceStats> {
        let counters: Vec<DeviceStats> = {
            let st = self.lock();
            self.backends
                .iter()
                .zip(st.lanes.iter())
                .map(|(&backend, lane)| DeviceStats {
                    backend,
                    workers: self.workers,
                    in_use: lane.in_use(self.workers),
                    proofs: lane.proofs,
                    failures: lane.failures,
                    busy_seconds: lane.busy + lane.busy_since.map_or(0.0, |t| t.elapsed().as_secs_f64()),
                    healthy: lane.healthy(self.cool_down),
                    vram_free: 0,
                    vram_total: 0,
                })
                .collect()
        };
        counters
            .into_iter()
            .map(|d| {
                let (vram_free, vram_total) = memory(d.backend);
                DeviceStats { vram_free, vram_total, ..d }
            })
            .collect()
    }
}

impl Worker<'_> {
    pub(super) fn index(&self) -> usize {
        self.index
    }

    pub(super) fn backend(&self) -> Backend {
        self.lanes.backends[self.index]
    }
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        self.lanes.lock().lanes[self.index].give_back(self.lanes.workers, self.express);
        self.lanes.freed.notify_all();
    }
}
