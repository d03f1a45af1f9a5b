//! Captures the "synthesis time" bellperson logs (info level) inside
//! `create_proof`, so the old path can be checked against bellperson itself,
//! and prints warnings and errors (cuzk's, e.g. an SRS that does not fit a
//! GPU) to stderr.

use std::sync::Mutex;
use std::time::Duration;

static SYNTHESIS: Mutex<Vec<Duration>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.level() <= log::Level::Info
    }
    fn log(&self, r: &log::Record) {
        if r.level() <= log::Level::Warn {
            eprintln!("{} {}: {}", r.level(), r.target(), r.args());
            return;
        }
        let msg = r.args().to_string();
        if let Some(d) = msg.strip_prefix("synthesis time: ").and_then(parse_debug_duration) {
            SYNTHESIS.lock().unwrap().push(d);
        }
    }
    fn flush(&self) {}
}

static LOGGER: Capture = Capture;

pub fn install() {
    let _ = log::set_logger(&LOGGER).map(|()| log::set_max_level(log::LevelFilter::Info));
}

/// The synthesis times logged since the last call.
pub fn take_synthesis_times() -> Vec<Duration> {
    std::mem::take(&mut SYNTHESIS.lock().unwrap())
}

/// Parses `Duration`'s Debug output (`1.5s`, `812.3ms`, `40µs`, `7ns`).
fn parse_debug_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (num, unit) = s.split_at(split);
    let v: f64 = num.parse().ok()?;
    let scale = match unit {
        "s" => 1.0,
        "ms" => 1e-3,
        "µs" | "us" => 1e-6,
        "ns" => 1e-9,
        _ => return None,
    };
    Some(Duration::from_secs_f64(v * scale))
}
