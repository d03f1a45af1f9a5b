//! Admission control: a memory budget that requests reserve their exact
//! footprint from before they allocate, waiting (by priority, then arrival)
//! when it does not fit, failing at once when it never could. Every budget also draws from
//! its [`Ceiling`], the process's: what all engines hold together.

use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use blstrs::Scalar;

use super::ceiling::{Ceiling, Usage};
use super::CancelToken;
use crate::circuits::ProofClass;
use crate::mem::Tracked;
use crate::{Error, Result};

/// How urgently a proof is needed. Throughput requests queue by level (a higher one overtakes
/// queued lower ones, then arrival order). `Deadline` requests (a WindowPoSt) queue the same way
/// but ahead of every throughput request. `Critical` is the latency class (a WinningPoSt): it
/// overtakes everything, and never waits for other work — a slice of the budget is kept for
/// it, its a, b, c need no holder slot, and the engine gives it its own CPU threads and an
/// express worker on every device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    Throughput(u8),
    Deadline(u8),
    Critical,
}

impl Priority {
    pub fn is_critical(self) -> bool {
        self == Priority::Critical
    }

    /// This priority raised to the class of a proof (never lowered): a WinningPoSt is
    /// critical, a WindowPoSt at least a deadline request of the same level.
    pub fn in_class(self, class: ProofClass) -> Priority {
        match (self, class) {
            (Priority::Critical, _) | (_, ProofClass::Critical) => Priority::Critical,
            (Priority::Throughput(level), ProofClass::Deadline) => Priority::Deadline(level),
            (p, _) => p,
        }
    }
}

impl Default for Priority {
    fn default() -> Self {
        Priority::Throughput(0)
    }
}

#[derive(Default)]
struct State {
    used: u64,
    peak_used: u64,
    /// Requests waiting to be admitted: (priority, ticket); the head is the
    /// highest priority, then the lowest ticket.
    waiting: Vec<(Priority, u64)>,
    /// Admitted requests waiting for their peak stage: (priority, ticket, bytes).
    stage_waiting: Vec<(Priority, u64, u64)>,
    /// Throughput requests in their peak stage now (critical ones need no slot).
    stage_holders: usize,
    next_ticket: u64,
    /// Buffers of finished proofs kept for the next ones (counted in `used`,
    /// given up the moment a reservation needs their room).
    idle: Vec<Idle>,
    idle_bytes: u64,
    /// `used` and `idle_bytes` as the ceiling counts them now ([`State::settle`]).
    in_ceiling: u64,
    idle_in_ceiling: u64,
}

/// A kept buffer, still counted under the owner it had in use.
struct Idle {
    buf: Vec<Scalar>,
    _owner: Tracked,
    since: Instant,
}

impl Idle {
    fn bytes(&self) -> u64 {
        buffer_bytes(&self.buf)
    }
}

fn buffer_bytes(buf: &[Scalar]) -> u64 {
    32 * buf.len() as u64
}

impl State {
    fn head(&self) -> Option<(Priority, u64)> {
        self.waiting.iter().copied().max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
    }

    fn ticket(&mut self) -> u64 {
        self.next_ticket += 1;
        self.next_ticket
    }

    /// Bytes that reservations hold (the idle buffers can always be given up).
    fn held(&self) -> u64 {
        self.used - self.idle_bytes
    }

    /// Takes, for each length in `lens`, an idle buffer of exactly that
    /// capacity (emptied), or an empty vector where none is kept. Their bytes
    /// leave `used`: the reservation being granted counts them from now on.
    fn reuse<const N: usize>(&mut self, lens: [usize; N]) -> [Vec<Scalar>; N] {
        lens.map(|len| match self.idle.iter().position(|b| b.buf.capacity() == len) {
            Some(i) => {
                let idle = self.idle.swap_remove(i);
                self.used -= idle.bytes();
                self.idle_bytes -= idle.bytes();
                let mut buf = idle.buf;
                buf.clear();
                buf
            }
            None => Vec::new(),
        })
    }

    /// Gives up idle buffers, oldest first, until `bytes` more fit in `total`;
    /// the caller drops them once the lock is released.
    fn make_room(&mut self, bytes: u64, total: u64, out: &mut Vec<Idle>) {
        while self.used + bytes > total && self.give_up_oldest(out) > 0 {}
    }

    /// Gives up the oldest idle buffer into `out`: its bytes (0 when none is kept).
    fn give_up_oldest(&mut self, out: &mut Vec<Idle>) -> u64 {
        if self.idle.is_empty() {
            return 0;
        }
        let idle = self.idle.remove(0);
        let bytes = idle.bytes();
        self.used -= bytes;
        self.idle_bytes -= bytes;
        out.push(idle);
        bytes
    }

    /// Brings the ceiling's count of this budget up to date; called, under this budget's lock,
    /// after every change to `used` or `idle_bytes`.
    fn settle(&mut self, c: &mut Usage) {
        c.used = c.used - self.in_ceiling + self.used;
        c.idle = c.idle - self.idle_in_ceiling + self.idle_bytes;
        (self.in_ceiling, self.idle_in_ceiling) = (self.used, self.idle_bytes);
    }

    /// What the other budgets of the ceiling hold: (reservations, kept buffers).
    fn others(&self, c: &Usage) -> (u64, u64) {
        let idle = c.idle - self.idle_in_ceiling;
        (c.used - self.in_ceiling - idle, idle)
    }
}

/// How long a kept buffer waits for a proof to reuse it before it is freed.
const IDLE_KEEP: Duration = Duration::from_secs(60);

/// Every budget alive, so `cuzk_mem_trim` can free their idle buffers.
static BUDGETS: Mutex<Vec<Weak<MemoryBudget>>> = Mutex::new(Vec::new());

fn live_budgets() -> Vec<Arc<MemoryBudget>> {
    let mut all = BUDGETS.lock().unwrap_or_else(|e| e.into_inner());
    all.retain(|w| w.strong_count() > 0);
    all.iter().filter_map(Weak::upgrade).collect()
}

/// Frees the idle buffers every engine keeps (see [`MemoryBudget::give_idle`]).
pub fn drop_idle_buffers() {
    live_budgets().iter().for_each(|b| b.drop_idle());
}

/// Starts, once per process, the thread that frees kept buffers idle for [`IDLE_KEEP`] on
/// time, not only when the next proof finishes (after a burst they would otherwise hold the
/// budget's memory until then). It holds no budget alive between its rounds.
fn start_reaper() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let reap = || loop {
            std::thread::sleep(IDLE_KEEP / 4);
            live_budgets().iter().for_each(|b| b.expire_idle(IDLE_KEEP));
        };
        if let Err(e) = std::thread::Builder::new().name("cuzk-idle-reaper".into()).spawn(reap) {
            log::warn!("no thread to free idle buffers on time ({e}); they are freed as proofs finish");
        }
    });
}

/// A byte budget shared by every in-flight proof. A proof is admitted with
/// what it holds throughout (its witness) and room for its peak stage (a, b,
/// c), which it reserves later, when at most `stage_limit` proofs may hold
/// theirs: so J proofs need `J·now + min(J, limit)·later` bytes, not
/// `J·(now + later)`. Throughput requests leave a critical reserve free, so a
/// critical request that fits in it never waits for them. The budget also
/// keeps the buffers of finished proofs for the next ones (no fresh pages to
/// fault in per proof), inside its total. Whatever it reserves or keeps is also counted
/// against its [`Ceiling`]: a reservation waits while the engines together leave no room, and
/// takes the room another engine's kept buffers hold.
pub struct MemoryBudget {
    total: u64,
    ceiling: Arc<Ceiling>,
    /// Bytes throughput requests leave free for critical ones.
    critical_reserve: u64,
    stage_limit: usize,
    state: Mutex<State>,
    freed: Condvar,
}

/// How often a waiter re-checks its cancel token.
const CANCEL_POLL: Duration = Duration::from_millis(20);

impl MemoryBudget {
    /// A budget whose peak stage any number of requests may hold at once, with nothing kept
    /// for critical requests.
    pub fn new(total: u64) -> Arc<MemoryBudget> {
        Self::with_limits(total, usize::MAX, 0)
    }

    /// A budget that lets at most `limit` throughput requests (at least one) hold their peak
    /// stage at once, and keeps `critical_reserve` bytes of `total` (at most all of it) that
    /// only critical requests may take; under the process's ceiling.
    pub fn with_limits(total: u64, limit: usize, critical_reserve: u64) -> Arc<MemoryBudget> {
        Self::within(Ceiling::process(), total, limit, critical_reserve)
    }

    /// [`MemoryBudget::with_limits`] under `ceiling`.
    pub(crate) fn within(ceiling: Arc<Ceiling>, total: u64, limit: usize, critical_reserve: u64) -> Arc<MemoryBudget> {
        let b = Arc::new(MemoryBudget {
            total,
            ceiling,
            critical_reserve: critical_reserve.min(total),
            stage_limit: limit.max(1),
            state: Mutex::default(),
            freed: Condvar::new(),
        });
        let mut all = BUDGETS.lock().unwrap_or_else(|e| e.into_inner());
        all.retain(|w| w.strong_count() > 0);
        all.push(Arc::downgrade(&b));
        drop(all);
        start_reaper();
        b
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// The bytes kept for critical requests.
    pub fn critical_reserve(&self) -> u64 {
        self.critical_reserve
    }

    /// The most bytes requests of `priority`'s class may hold together with everything else.
    fn cap(&self, priority: Priority) -> u64 {
        if priority.is_critical() {
            self.total
        } else {
            self.total - self.critical_reserve
        }
    }

    /// The most bytes every budget of the ceiling may hold together once this budget's request of
    /// `priority`'s class is in: a throughput one leaves this engine's critical reserve free there
    /// too.
    fn ceiling_cap(&self, priority: Priority) -> u64 {
        match priority.is_critical() {
            true => self.ceiling.total(),
            false => self.ceiling.total().saturating_sub(self.critical_reserve),
        }
    }

    /// Whether this budget, holding `held` bytes, may take `bytes` more for a request of
    /// `priority` under the ceiling (`c`): `Ok`, or `Err` with the bytes other budgets' kept
    /// buffers would have to give up for it to (0 when that would not be enough).
    fn ceiling_fit(
        &self,
        st: &State,
        c: &Usage,
        held: u64,
        bytes: u64,
        priority: Priority,
    ) -> std::result::Result<(), u64> {
        let (others, others_idle) = st.others(c);
        let cap = self.ceiling_cap(priority);
        let need = others.saturating_add(others_idle).saturating_add(held).saturating_add(bytes);
        match need.checked_sub(cap) {
            None | Some(0) => Ok(()),
            Some(short) if short <= others_idle => Err(short),
            Some(_) => Err(0),
        }
    }

    /// The ceiling this budget draws from, with every other engine's.
    pub fn ceiling(&self) -> &Ceiling {
        &self.ceiling
    }

    /// How many requests may hold their peak stage at once.
    pub fn stage_limit(&self) -> usize {
        self.stage_limit
    }

    /// Bytes reserved now, idle buffers included.
    pub fn used(&self) -> u64 {
        self.lock().used
    }

    /// Bytes of the idle buffers kept for reuse.
    pub fn idle_bytes(&self) -> u64 {
        self.lock().idle_bytes
    }

    /// Bytes reserved now, idle buffers not included.
    pub fn held(&self) -> u64 {
        self.lock().held()
    }

    /// Requests waiting for budget now (to be admitted, or for their peak stage).
    pub fn waiting(&self) -> usize {
        let st = self.lock();
        st.waiting.len() + st.stage_waiting.len()
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
    /// them: [`MemoryBudget::admit`] without a peak stage.
    pub fn reserve(self: &Arc<Self>, bytes: u64, priority: Priority, cancel: &CancelToken) -> Result<Reservation> {
        Ok(self.admit(bytes, 0, priority, cancel, [])?.0)
    }

    /// Admits a request that holds `now` bytes from here on and `later` more
    /// in its peak stage ([`MemoryBudget::reserve_stage`]): waits until
    /// `now + later` fit and it is first in line (by priority, then arrival),
    /// then reserves `now`. Leaving room for `later` is what guarantees that
    /// some admitted request can always enter its peak stage. Throughput
    /// requests fit only outside the critical reserve, here and under the ceiling (where the
    /// other engines' reservations count too). Fails at once if `now + later` exceed what its
    /// class may ever hold, in this budget or under the ceiling; fails with `Cancelled` (holding
    /// nothing) if `cancel` fires while waiting. With the reservation come
    /// kept buffers for the lengths in `reuse`, as [`MemoryBudget::give_idle`]
    /// left them (empty vectors where none of that capacity is kept); the
    /// reservation must cover them.
    pub fn admit<const N: usize>(
        self: &Arc<Self>,
        now: u64,
        later: u64,
        priority: Priority,
        cancel: &CancelToken,
        reuse: [usize; N],
    ) -> Result<(Reservation, [Vec<Scalar>; N])> {
        let need = now.saturating_add(later);
        let cap = self.cap(priority);
        let reserve = match priority.is_critical() {
            false if self.critical_reserve > 0 => {
                format!(" less the {} kept for critical requests", self.critical_reserve)
            }
            _ => String::new(),
        };
        if need > cap {
            return Err(Error::OverBudget(format!(
                "a proof needs {need} bytes, the budget is {}{reserve}",
                self.total
            )));
        }
        if need > self.ceiling_cap(priority) {
            return Err(Error::OverBudget(format!(
                "a proof needs {need} bytes; this process's engines may hold {} together (the memory \
                 it could take when its first engine was made){reserve}",
                self.ceiling.total()
            )));
        }
        let mut st = self.lock();
        let ticket = st.ticket();
        st.waiting.push((priority, ticket));
        let mut bufs = [(); N].map(|_| Vec::new());
        self.wait(
            st,
            cancel,
            |st, freed| {
                if st.head() != Some((priority, ticket)) || st.held() + need > cap {
                    return Err(0);
                }
                let mut c = self.ceiling.lock();
                self.ceiling_fit(st, &c, st.held(), need, priority)?;
                bufs = st.reuse(reuse);
                let others = c.used - st.in_ceiling;
                st.make_room(now, self.total.min(self.ceiling.total().saturating_sub(others)), freed);
                st.used += now;
                st.settle(&mut c);
                Ok(())
            },
            |st| st.waiting.retain(|w| w.1 != ticket),
        )?;
        Ok((Reservation { budget: self.clone(), bytes: now, stage: false }, bufs))
    }

    /// Reserves an admitted request's peak-stage `bytes` (at most the `later`
    /// it was admitted with) once fewer than `stage_limit` throughput requests
    /// hold theirs (a critical request takes no slot). Among the waiters that
    /// fit, the highest priority, then the earliest, goes first; the slot is
    /// given back when the reservation drops. Kept buffers come with it as
    /// with [`MemoryBudget::admit`].
    pub fn reserve_stage<const N: usize>(
        self: &Arc<Self>,
        bytes: u64,
        priority: Priority,
        cancel: &CancelToken,
        reuse: [usize; N],
    ) -> Result<(Reservation, [Vec<Scalar>; N])> {
        let mut st = self.lock();
        let ticket = st.ticket();
        st.stage_waiting.push((priority, ticket, bytes));
        let slot = !priority.is_critical();
        let mut bufs = [(); N].map(|_| Vec::new());
        self.wait(
            st,
            cancel,
            |st, freed| {
                let held = st.held();
                let mut c = self.ceiling.lock();
                let fits = |w: &(Priority, u64, u64)| {
                    held + w.2 <= self.cap(w.0) && self.ceiling_fit(st, &c, held, w.2, w.0).is_ok()
                };
                let first = st
                    .stage_waiting
                    .iter()
                    .filter(|w| fits(w))
                    .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
                    .map(|w| w.1);
                let free_slot = !slot || st.stage_holders < self.stage_limit;
                if !free_slot || first != Some(ticket) {
                    // Where nobody fits, other engines' kept buffers may make room for this one.
                    let squeeze = first.is_none() && free_slot && held + bytes <= self.cap(priority);
                    let short = self.ceiling_fit(st, &c, held, bytes, priority).err().unwrap_or(0);
                    return Err(if squeeze { short } else { 0 });
                }
                bufs = st.reuse(reuse);
                let others = c.used - st.in_ceiling;
                st.make_room(bytes, self.total.min(self.ceiling.total().saturating_sub(others)), freed);
                st.used += bytes;
                st.stage_holders += usize::from(slot);
                st.settle(&mut c);
                Ok(())
            },
            |st| st.stage_waiting.retain(|w| w.1 != ticket),
        )?;
        Ok((Reservation { budget: self.clone(), bytes, stage: slot }, bufs))
    }

    /// The waiting loop both kinds of reservation share: `take` reserves
    /// (giving up idle buffers into its second argument as needed) and says
    /// whether it could (`Err`: the bytes other budgets' kept buffers would have to give up for
    /// it to, which they are then asked to, 0 when waiting is all there is), `leave` removes
    /// the waiter; on either outcome the others are woken (one of them may now be first).
    /// Another budget's reservations, given back, wake nobody here: they are seen at the next
    /// poll ([`CANCEL_POLL`]).
    fn wait<'s>(
        &'s self,
        mut st: std::sync::MutexGuard<'s, State>,
        cancel: &CancelToken,
        mut take: impl FnMut(&mut State, &mut Vec<Idle>) -> std::result::Result<(), u64>,
        leave: impl Fn(&mut State),
    ) -> Result<()> {
        let mut freed = Vec::new();
        let outcome = loop {
            if cancel.is_cancelled() {
                break Err(Error::Cancelled);
            }
            match take(&mut st, &mut freed) {
                Ok(()) => {
                    st.peak_used = st.peak_used.max(st.used);
                    break Ok(());
                }
                Err(short) if short > 0 => {
                    drop(st);
                    let given = self.squeeze_others(short);
                    st = self.lock();
                    if given > 0 {
                        continue;
                    }
                }
                Err(_) => {}
            }
            st = self.freed.wait_timeout(st, CANCEL_POLL).unwrap_or_else(|e| e.into_inner()).0;
        };
        leave(&mut st);
        drop(st);
        self.freed.notify_all();
        drop(freed);
        outcome
    }

    /// Keeps `buf` for a later request to reuse, moving its bytes
    /// (its length: the pages it touched) out of `from`, the reservation that
    /// covered it, and counting it under `owner` meanwhile. Buffers idle for
    /// a minute are freed (by the next call here, or by the reaper thread).
    pub fn give_idle(&self, buf: Vec<Scalar>, from: &mut Reservation, owner: crate::mem::Owner) {
        let bytes = buffer_bytes(&buf);
        if bytes > from.bytes || buf.capacity() == 0 {
            return;
        }
        from.bytes -= bytes;
        {
            let mut st = self.lock();
            st.idle_bytes += bytes;
            st.idle.push(Idle { _owner: Tracked::new(owner, bytes), buf, since: Instant::now() });
            st.settle(&mut self.ceiling.lock());
        }
        self.expire_idle(IDLE_KEEP);
    }

    /// Frees the kept buffers idle for longer than `keep`.
    pub(crate) fn expire_idle(&self, keep: Duration) {
        let expired: Vec<Idle> = {
            let mut st = self.lock();
            let (old, kept): (Vec<Idle>, Vec<Idle>) =
                std::mem::take(&mut st.idle).into_iter().partition(|b| b.since.elapsed() > keep);
            st.idle = kept;
            let gone: u64 = old.iter().map(Idle::bytes).sum();
            st.used -= gone;
            st.idle_bytes -= gone;
            st.settle(&mut self.ceiling.lock());
            old
        };
        if !expired.is_empty() {
            drop(expired);
            self.freed.notify_all();
        }
    }

    /// Frees every idle buffer now.
    pub fn drop_idle(&self) {
        let idle = {
            let mut st = self.lock();
            st.used -= st.idle_bytes;
            st.idle_bytes = 0;
            st.settle(&mut self.ceiling.lock());
            std::mem::take(&mut st.idle)
        };
        drop(idle);
        self.freed.notify_all();
    }

    /// Frees kept buffers, oldest first, until `bytes` are given up or none is left: the bytes
    /// given up.
    fn give_up_idle(&self, bytes: u64) -> u64 {
        let mut out = Vec::new();
        let mut given = 0;
        {
            let mut st = self.lock();
            while given < bytes {
                match st.give_up_oldest(&mut out) {
                    0 => break,
                    n => given += n,
                }
            }
            st.settle(&mut self.ceiling.lock());
        }
        drop(out);
        given
    }

    /// Asks the other budgets of this one's ceiling to give up `bytes` of kept buffers: the
    /// bytes they gave up. Called holding no budget's lock.
    fn squeeze_others(&self, bytes: u64) -> u64 {
        let mut given = 0;
        for other in live_budgets() {
            if given >= bytes {
                break;
            }
            if Arc::ptr_eq(&other.ceiling, &self.ceiling) && !std::ptr::eq(&*other, self) {
                given += other.give_up_idle(bytes - given);
            }
        }
        given
    }

    fn release(&self, bytes: u64, stage_ends: bool) {
        let mut st = self.lock();
        st.used -= bytes;
        if stage_ends {
            st.stage_holders -= 1;
        }
        st.settle(&mut self.ceiling.lock());
        drop(st);
        self.freed.notify_all();
    }
}

impl Drop for MemoryBudget {
    /// Reservations hold their budget: what is left are kept buffers, freed with it, and their
    /// room goes back to the ceiling.
    fn drop(&mut self) {
        let st = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        let mut c = self.ceiling.lock();
        c.used -= st.in_ceiling;
        c.idle -= st.idle_in_ceiling;
    }
}

/// Reserved bytes, given back on drop.
pub struct Reservation {
    budget: Arc<MemoryBudget>,
    bytes: u64,
    /// A throughput peak-stage reservation: its drop also frees a stage slot.
    stage: bool,
}

impl Reservation {
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.bytes > 0 || self.stage {
            self.budget.release(self.bytes, self.stage);
        }
    }
}
