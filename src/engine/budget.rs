//! Admission control: a memory budget that requests reserve their exact
//! footprint from before they allocate, waiting (by priority, then arrival)
//! when it does not fit, failing at once when it never could.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::{Error, Result};

/// How urgently a proof is needed: higher values overtake queued lower ones.
pub type Priority = u8;

/// Cancels a request that is still queued (or between its stages); safe to
/// trigger from any thread. A child token also sees its parent's cancel.
#[derive(Clone, Debug, Default)]
pub struct CancelToken {
    flag: Arc<AtomicBool>,
    parent: Option<Arc<AtomicBool>>,
}

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }
    /// A token cancelled by its own `cancel` or by this one's.
    pub fn child(&self) -> CancelToken {
        CancelToken { flag: Arc::default(), parent: Some(self.flag.clone()) }
    }
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::SeqCst);
    }
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::SeqCst) || self.parent.as_ref().is_some_and(|p| p.load(Ordering::SeqCst))
    }
    /// `Err(Cancelled)` once cancelled.
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }
}

#[derive(Default)]
struct State {
    used: u64,
    peak_used: u64,
    /// Waiting requests: (priority, ticket); the head is the highest priority,
    /// then the lowest ticket.
    waiting: Vec<(Priority, u64)>,
    next_ticket: u64,
}

impl State {
    fn head(&self) -> Option<(Priority, u64)> {
        self.waiting.iter().copied().max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
    }
}

/// A byte budget shared by every in-flight proof.
pub struct MemoryBudget {
    total: u64,
    state: Mutex<State>,
    freed: Condvar,
}

/// How often a waiter re-checks its cancel token.
const CANCEL_POLL: Duration = Duration::from_millis(20);

impl MemoryBudget {
    pub fn new(total: u64) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget { total, state: Mutex::default(), freed: Condvar::new() })
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes reserved now.
    pub fn used(&self) -> u64 {
        self.lock().used
    }

    /// Requests waiting for budget now.
    pub fn waiting(&self) -> usize {
        self.lock().waiting.len()
    }

    /// The most bytes ever reserved at once.
    pub fn peak_used(&self) -> u64 {
        self.lock().peak_used
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock cannot leave the counters half-updated.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until `bytes` fit and this request is first in line, then reserves
    /// them. Fails at once if `bytes` exceed the whole budget; fails with
    /// `Cancelled` (holding nothing) if `cancel` fires while waiting.
    pub fn reserve(self: &Arc<Self>, bytes: u64, priority: Priority, cancel: &CancelToken) -> Result<Reservation> {
        if bytes > self.total {
            return Err(Error::OverBudget(format!(
                "a proof needs {bytes} bytes, the whole budget is {}",
                self.total
            )));
        }
        let mut st = self.lock();
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        st.waiting.push((priority, ticket));
        loop {
            if cancel.is_cancelled() {
                st.waiting.retain(|w| w.1 != ticket);
                drop(st);
                // Someone behind us may now be the head.
                self.freed.notify_all();
                return Err(Error::Cancelled);
            }
            if st.head() == Some((priority, ticket)) && st.used + bytes <= self.total {
                st.waiting.retain(|w| w.1 != ticket);
                st.used += bytes;
                st.peak_used = st.peak_used.max(st.used);
                drop(st);
                self.freed.notify_all();
                return Ok(Reservation { budget: self.clone(), bytes });
            }
            st = self.freed.wait_timeout(st, CANCEL_POLL).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    fn release(&self, bytes: u64) {
        let mut st = self.lock();
        st.used -= bytes;
        drop(st);
        self.freed.notify_all();
    }
}

/// Reserved bytes, given back on drop (or earlier, in parts, as buffers die).
pub struct Reservation {
    budget: Arc<MemoryBudget>,
    bytes: u64,
}

impl Reservation {
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Gives back `bytes` of this reservation now.
    pub fn release(&mut self, bytes: u64) {
        let bytes = bytes.min(self.bytes);
        self.bytes -= bytes;
        self.budget.release(bytes);
    }

    /// Moves `bytes` of this reservation into a new one, to be given back
    /// when the buffers it stands for die (e.g. with a, b, c).
    pub fn split(&mut self, bytes: u64) -> Reservation {
        let bytes = bytes.min(self.bytes);
        self.bytes -= bytes;
        Reservation { budget: self.budget.clone(), bytes }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.budget.release(self.bytes);
        }
    }
}
