//! Progress of a long job (PCE extraction, a parameter decode or generation, a witness
//! program's recording), logged at info at a steady rate: a line when it starts, at most one
//! every [`INTERVAL`] while it runs, and one when it ends, with its totals and elapsed time.
//!
//! Any number of threads may advance one job: the count is one atomic counter and the clock
//! is read only when the count crosses a multiple of `CLOCK_EVERY` (or a call adds that
//! many at once), so an advance costs an atomic add, no lock and no thread of its own.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// The shortest time between two lines of one job.
pub const INTERVAL: Duration = Duration::from_secs(5);

/// Items between two reads of the clock.
const CLOCK_EVERY: u64 = 1 << 12;

/// One job's progress; its end line is logged when it is [`finish`](Progress::finish)ed, or,
/// as stopped, when it is dropped unfinished (an error ended it).
pub struct Progress {
    job: String,
    unit: &'static str,
    total: Option<u64>,
    done: AtomicU64,
    started: Instant,
    interval: Duration,
    /// Nanoseconds after `started` before which no line is logged.
    quiet_until: AtomicU64,
    finished: AtomicBool,
}

impl Progress {
    /// Starts `job` (e.g. "decoding /var/tmp/x.params"), counted in `unit`s, of `total` if
    /// known; logs its start.
    pub fn start(job: impl Into<String>, unit: &'static str, total: Option<u64>) -> Progress {
        Self::with_interval(job.into(), unit, total, INTERVAL)
    }

    fn with_interval(job: String, unit: &'static str, total: Option<u64>, interval: Duration) -> Progress {
        match total {
            Some(t) => log::info!("{job}: started, {t} {unit}"),
            None => log::info!("{job}: started"),
        }
        Progress {
            job,
            unit,
            total,
            done: AtomicU64::new(0),
            started: Instant::now(),
            interval,
            quiet_until: AtomicU64::new(interval.as_nanos() as u64),
            finished: AtomicBool::new(false),
        }
    }

    /// Counts `n` more items done; from any thread.
    pub fn add(&self, n: u64) {
        let before = self.done.fetch_add(n, Relaxed);
        if before / CLOCK_EVERY == (before + n) / CLOCK_EVERY {
            return;
        }
        let now = self.started.elapsed().as_nanos() as u64;
        let quiet_until = self.quiet_until.load(Relaxed);
        let next = now + self.interval.as_nanos() as u64;
        // One thread wins the line of each interval.
        if now >= quiet_until && self.quiet_until.compare_exchange(quiet_until, next, Relaxed, Relaxed).is_ok() {
            log::info!("{}: {} after {:.0} s", self.job, self.count(before + n), self.started.elapsed().as_secs_f64());
        }
    }

    /// Ends the job: logs its totals and elapsed time (once).
    pub fn finish(&self) {
        if self.finished.swap(true, Relaxed) {
            return;
        }
        let secs = self.started.elapsed().as_secs_f64();
        log::info!("{}: done, {} {} in {secs:.1} s", self.job, self.done.load(Relaxed), self.unit);
    }

    fn count(&self, done: u64) -> String {
        match self.total {
            Some(t) if t > 0 => format!("{done} of {t} {} ({:.0}%)", self.unit, 100.0 * done as f64 / t as f64),
            _ => format!("{done} {}", self.unit),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if !*self.finished.get_mut() {
            let done = self.count(self.done.load(Relaxed));
            log::info!("{}: stopped after {done}, {:.1} s", self.job, self.started.elapsed().as_secs_f64());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log_sink::testing::capture;

    #[test]
    fn lines_start_end_and_at_most_one_an_interval_from_many_threads() {
        let lines = capture(log::Level::Info);
        let interval = Duration::from_millis(20);
        let p = Progress::with_interval("progress test job".into(), "items", Some(1 << 23), interval);
        let t0 = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| (0..1 << 21).for_each(|_| p.add(1)));
            }
        });
        let intervals = (t0.elapsed().as_nanos() / interval.as_nanos()) as usize;
        p.finish();
        let stopped = Progress::with_interval("progress test job 2".into(), "rows", None, interval);
        stopped.add(3);
        drop(stopped);
        let mine: Vec<String> =
            lines.take().into_iter().filter(|r| r.2.starts_with("progress test job")).map(|r| r.2).collect();
        assert_eq!(mine[0], "progress test job: started, 8388608 items");
        let during = &mine[1..mine.len() - 3];
        assert!(during.len() <= intervals, "{} lines in {intervals} intervals: {mine:?}", during.len());
        assert!(intervals < 2 || !during.is_empty(), "no line in {intervals} intervals");
        assert!(during.iter().all(|l| l.contains(" of 8388608 items (") && l.ends_with(" s")), "{mine:?}");
        assert!(mine[mine.len() - 3].starts_with("progress test job: done, 8388608 items in "), "{mine:?}");
        assert_eq!(mine[mine.len() - 2], "progress test job 2: started");
        assert!(mine[mine.len() - 1].starts_with("progress test job 2: stopped after 3 rows, "), "{mine:?}");
    }
}
