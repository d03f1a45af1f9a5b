//! The process's `log` records handed to one sink a host chose (`cuzk_set_log_callback`): a
//! `log::Log` installed once as the process's logger, forwarding each record at or above the
//! sink's level to the sink current at that moment.
//!
//! - The sink may be swapped or removed while other threads log. A swap waits for the calls
//!   of the previous sink under way; once it returns, the previous sink is never called again
//!   (the host may free what it holds).
//! - A record logged on a thread while the sink runs there (the sink called the library) is
//!   dropped, never forwarded into the sink again; such a thread may not swap the sink.
//! - A panic while a record is forwarded (a `Display` that panics) drops the record: it never
//!   reaches the thread that logged.
//! - Without a sink, the `log` crate's maximum level is `Off`: a record costs one load.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{OnceLock, PoisonError, RwLock};

use log::{Level, LevelFilter, Log, Metadata, Record};

/// A sink: called with each record's level, target (its module, e.g. `cuzk::params::cache`)
/// and message, from whichever thread logs, by several threads at once.
pub type Forward = Box<dyn Fn(Level, &str, &str) + Send + Sync>;

/// Why a sink was not set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkError {
    /// Other code of the process set the `log` crate's logger before the first sink: records
    /// go there, never to a sink.
    LoggerTaken,
    /// Called from inside the sink (it would wait for itself).
    InsideSink,
}

impl std::fmt::Display for SinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SinkError::LoggerTaken => {
                "the process's `log` logger was set by other code (a Rust host's): the library's records go there"
            }
            SinkError::InsideSink => "the log sink may not be changed from inside the log sink",
        })
    }
}

struct Sink {
    min: Level,
    forward: Forward,
}

/// The logger: the current sink, read-locked while a record is forwarded.
struct Forwarder {
    sink: RwLock<Option<Sink>>,
}

static FORWARDER: Forwarder = Forwarder { sink: RwLock::new(None) };

/// Whether the forwarder is the process's logger (decided by the first sink set).
static INSTALLED: OnceLock<bool> = OnceLock::new();

thread_local! {
    /// Set while this thread runs the sink.
    static IN_SINK: Cell<bool> = const { Cell::new(false) };
}

/// Marks this thread as running the sink until dropped (a panic included).
struct Inside;

impl Inside {
    fn enter() -> Inside {
        IN_SINK.with(|c| c.set(true));
        Inside
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        IN_SINK.with(|c| c.set(false));
    }
}

fn in_sink() -> bool {
    IN_SINK.with(Cell::get)
}

/// Makes `forward` the sink of every record at `min` or more severe (`None`: no sink; records
/// are then not even formatted). The first sink set installs the library's logger for the
/// process; `LoggerTaken` where other code set one first. Returns once no call of the previous
/// sink is under way.
pub fn set_sink(sink: Option<(Level, Forward)>) -> Result<(), SinkError> {
    if in_sink() {
        return Err(SinkError::InsideSink);
    }
    let installed = match sink {
        Some(_) => *INSTALLED.get_or_init(|| log::set_logger(&FORWARDER).is_ok()),
        None => INSTALLED.get().copied().unwrap_or(false),
    };
    if !installed {
        // No sink asked, and none to remove: nothing forwards.
        return sink.map_or(Ok(()), |_| Err(SinkError::LoggerTaken));
    }
    let mut current = FORWARDER.sink.write().unwrap_or_else(PoisonError::into_inner);
    log::set_max_level(sink.as_ref().map_or(LevelFilter::Off, |(min, _)| min.to_level_filter()));
    let previous = std::mem::replace(&mut *current, sink.map(|(min, forward)| Sink { min, forward }));
    drop(current);
    drop(previous);
    Ok(())
}

impl Forwarder {
    fn forward(&self, r: &Record<'_>) {
        let sink = self.sink.read().unwrap_or_else(PoisonError::into_inner);
        let Some(sink) = sink.as_ref().filter(|s| r.level() <= s.min) else { return };
        // Entered before formatting: a `Display` that logs is dropped too.
        let _inside = Inside::enter();
        let message = r.args().to_string();
        (sink.forward)(r.level(), r.target(), &message);
    }
}

impl Log for Forwarder {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        m.level() <= log::max_level() && !in_sink()
    }

    fn log(&self, r: &Record<'_>) {
        if in_sink() {
            return;
        }
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| self.forward(r))) {
            // Its destructor could panic again, into the thread that logged: leaked instead
            // (a bug's path, once per panic).
            std::mem::forget(payload);
        }
    }

    fn flush(&self) {}
}

/// Records captured by tests, one test at a time (the sink is the process's).
#[cfg(test)]
pub(crate) mod testing {
    use std::sync::{Arc, Mutex, MutexGuard};

    use log::Level;

    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

    /// The lock every test that sets a sink holds.
    pub(crate) fn lock() -> MutexGuard<'static, ()> {
        ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// (level, target, message) of each record.
    pub(crate) type Records = Arc<Mutex<Vec<(Level, String, String)>>>;

    /// A sink that keeps what it gets, removed when dropped.
    pub(crate) struct Capture {
        records: Records,
        _one: MutexGuard<'static, ()>,
    }

    impl Capture {
        /// The records so far, taken.
        pub(crate) fn take(&self) -> Vec<(Level, String, String)> {
            std::mem::take(&mut self.records.lock().unwrap())
        }
    }

    impl Drop for Capture {
        fn drop(&mut self) {
            super::set_sink(None).unwrap();
        }
    }

    /// Captures every record at `min` or more severe, from any thread, until dropped.
    pub(crate) fn capture(min: Level) -> Capture {
        let one = lock();
        let records = Records::default();
        let keep = records.clone();
        let forward = move |l: Level, t: &str, m: &str| keep.lock().unwrap().push((l, t.into(), m.into()));
        super::set_sink(Some((min, Box::new(forward)))).unwrap();
        Capture { records, _one: one }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;

    use super::testing::{capture, lock};
    use super::*;

    #[test]
    fn records_at_or_above_the_level_arrive_with_their_target() {
        let c = capture(Level::Warn);
        log::warn!(target: "cuzk::sink_test", "a warning {}", 1);
        log::info!(target: "cuzk::sink_test", "an info line");
        log::error!("an error");
        let mine: Vec<_> = c.take().into_iter().filter(|r| r.2 == "a warning 1" || r.2.starts_with("an ")).collect();
        assert_eq!(
            mine,
            [
                (Level::Warn, "cuzk::sink_test".into(), "a warning 1".into()),
                (Level::Error, "cuzk::log_sink::tests".into(), "an error".into())
            ]
        );
        assert_eq!(log::max_level(), LevelFilter::Warn);
        drop(c);
        assert_eq!(log::max_level(), LevelFilter::Off);
    }

    /// A `Display` that logs, or that calls back into the sink's setter.
    struct Reentrant(fn() -> String);

    impl std::fmt::Display for Reentrant {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&(self.0)())
        }
    }

    #[test]
    fn records_made_inside_the_sink_are_dropped_and_it_cannot_swap_itself() {
        let c = capture(Level::Trace);
        let inner = || {
            log::error!("logged while formatting");
            format!("{:?}", set_sink(None))
        };
        log::warn!("outer: {}", Reentrant(inner));
        let mine: Vec<_> =
            c.take().into_iter().filter(|r| r.2.contains("formatting") || r.2.starts_with("outer")).collect();
        assert_eq!(mine, [(Level::Warn, "cuzk::log_sink::tests".into(), "outer: Err(InsideSink)".into())]);
        log::warn!("after: the sink is still there");
        assert!(c.take().iter().any(|r| r.2 == "after: the sink is still there"));
    }

    #[test]
    fn a_panic_while_forwarding_drops_the_record_only() {
        let c = capture(Level::Info);
        let panics = || -> String { panic!("a Display that panics") };
        log::warn!("{}", Reentrant(panics));
        log::warn!("next record");
        assert!(c.take().iter().any(|r| r.2 == "next record"));
    }

    /// Threads log while others swap the sink and remove it: once a swap returns, the previous
    /// sink is never called again.
    #[test]
    fn swapping_while_threads_log() {
        let _one = lock();
        let stop = Arc::new(AtomicBool::new(false));
        let loggers: Vec<_> = (0..3)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(SeqCst) {
                        log::warn!(target: "cuzk::swap_test", "tick");
                    }
                })
            })
            .collect();
        // A panic inside a sink is caught (the record dropped): the breach is counted instead.
        let breaches = Arc::new(AtomicUsize::new(0));
        for round in 0..200 {
            let retired = Arc::new(AtomicBool::new(false));
            let calls = Arc::new(AtomicUsize::new(0));
            let (r, n, b) = (retired.clone(), calls.clone(), breaches.clone());
            let forward = move |_: Level, _: &str, _: &str| {
                if r.load(SeqCst) {
                    b.fetch_add(1, SeqCst);
                }
                std::thread::yield_now();
                n.fetch_add(1, SeqCst);
            };
            set_sink(Some((Level::Warn, Box::new(forward)))).unwrap();
            while calls.load(SeqCst) == 0 {
                std::thread::yield_now();
            }
            if round % 2 == 0 {
                set_sink(None).unwrap();
            } else {
                set_sink(Some((Level::Warn, Box::new(|_: Level, _: &str, _: &str| {})))).unwrap();
            }
            retired.store(true, SeqCst);
        }
        stop.store(true, SeqCst);
        for t in loggers {
            t.join().unwrap();
        }
        set_sink(None).unwrap();
        assert_eq!(breaches.load(SeqCst), 0, "a retired sink was called");
    }
}
