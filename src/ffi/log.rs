//! `cuzk_set_log_callback`: the library's log records (warnings, retries, progress of long
//! jobs) handed to a host callback, over the safe sink of `crate::log_sink`.

use std::ffi::{c_char, c_void, CString};

use log::Level;

use super::status::{cuzk_error, cuzk_status, cuzk_status::*, Failure};
use crate::log_sink::{self, SinkError};

/// The severity of a log record: `min_level` of `cuzk_set_log_callback` and the `level` its
/// callback gets. Higher is more severe; the values are spaced so that levels can be added
/// between them.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum cuzk_log_level {
    /// The finest detail.
    CUZK_LOG_TRACE = 10,
    /// Detail for debugging the library.
    CUZK_LOG_DEBUG = 20,
    /// Progress of long jobs (PCE extraction, parameter decoding and generation, witness
    /// program recording), about one line every 5 seconds each, with start and end lines.
    CUZK_LOG_INFO = 30,
    /// Something went wrong and the library carried on (a device retried, a cache not
    /// written, a fallback taken).
    CUZK_LOG_WARN = 40,
    /// Something went wrong that the host should look at.
    CUZK_LOG_ERROR = 50,
}

use cuzk_log_level::*;

const LEVELS: [(cuzk_log_level, Level); 5] = [
    (CUZK_LOG_TRACE, Level::Trace),
    (CUZK_LOG_DEBUG, Level::Debug),
    (CUZK_LOG_INFO, Level::Info),
    (CUZK_LOG_WARN, Level::Warn),
    (CUZK_LOG_ERROR, Level::Error),
];

/// A host's log callback: one record, its `level` (a `cuzk_log_level` value), `target` (the
/// module that logged it, e.g. `"cuzk::params::cache"`; records of the library's dependencies
/// carry theirs) and `message`, both NUL-terminated UTF-8, owned by the library and valid only
/// during the call (copy what you keep). `user` is the pointer given with the callback.
///
/// Called from any library thread, several at once: it must be thread-safe. It must not call
/// any `cuzk_*` function (records the library makes while it runs on that thread are
/// dropped; `cuzk_set_log_callback` from it fails), and should return quickly: the thread that
/// logged waits for it.
pub type cuzk_log_callback =
    Option<unsafe extern "C" fn(user: *mut c_void, level: u32, target: *const c_char, message: *const c_char)>;

/// The host's callback and its pointer, called from library threads.
struct HostCallback {
    call: unsafe extern "C" fn(*mut c_void, u32, *const c_char, *const c_char),
    user: *mut c_void,
}

// SAFETY: the callback's contract (`cuzk_log_callback`): it may be called from any thread,
// several at once, with `user`, which the library never reads.
unsafe impl Send for HostCallback {}
// SAFETY: as above; the library only passes `user` back.
unsafe impl Sync for HostCallback {}

impl HostCallback {
    fn send(&self, level: Level, target: &str, message: &str) {
        let c_level = LEVELS.iter().find(|(_, l)| *l == level).map_or(CUZK_LOG_ERROR, |&(c, _)| c);
        let (target, message) = (c_text(target), c_text(message));
        // SAFETY: the callback's contract (`cuzk_log_callback`); both strings live until it
        // returns.
        unsafe { (self.call)(self.user, c_level as u32, target.as_ptr(), message.as_ptr()) }
    }
}

/// `s` NUL-terminated, a NUL inside it shown as U+FFFD.
fn c_text(s: &str) -> CString {
    CString::new(s).unwrap_or_else(|_| CString::new(s.replace('\0', "\u{fffd}")).expect("no NUL left"))
}

/// Sends the library's log records at `min_level` (a `cuzk_log_level` value) or more severe to
/// `callback` with `user`, from now on; `callback` NULL sends none (the library then formats
/// none). Replaces the callback set before: once this returns, the previous callback is not
/// running and is never called again, so what its `user` points to may be freed.
///
/// Records go to the process's one logger of the Rust `log` crate. The first call that sets a
/// callback makes the library's logger that logger; where other Rust code of the process set
/// one first (a Rust host), it returns `CUZK_LOGGER_IN_USE` and the records stay there. Without
/// a callback the library logs nothing.
///
/// Errors: `CUZK_INVALID_ARGUMENT` for an unknown `min_level`, or when called from inside the
/// callback; `CUZK_LOGGER_IN_USE`. On an error the previous callback stays.
///
/// Ownership: the library keeps `callback` and `user` until the next call replaces them (the
/// one exception to "no caller pointer is kept"); it never reads or frees `user`. The strings
/// passed to the callback are the library's, valid only during that call. Thread-safety: safe
/// from any thread, also while other threads log; calls are serialized.
#[no_mangle]
pub unsafe extern "C" fn cuzk_set_log_callback(
    min_level: u32,
    callback: cuzk_log_callback,
    user: *mut c_void,
    err: *mut cuzk_error,
) -> cuzk_status {
    ffi_boundary!(err, {
        let min = LEVELS.iter().find(|(c, _)| *c as u32 == min_level).map(|&(_, l)| l).ok_or_else(|| {
            Failure::new(CUZK_INVALID_ARGUMENT, format!("min_level {min_level} is not a cuzk_log_level"))
        })?;
        let sink = callback.map(|call| {
            let host = HostCallback { call, user };
            let forward: log_sink::Forward = Box::new(move |level, target, message| host.send(level, target, message));
            (min, forward)
        });
        log_sink::set_sink(sink).map_err(|e| {
            let status = match e {
                SinkError::LoggerTaken => CUZK_LOGGER_IN_USE,
                SinkError::InsideSink => CUZK_INVALID_ARGUMENT,
            };
            Failure::new(status, e.to_string())
        })
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;
    use std::sync::Mutex;

    use super::*;
    use crate::log_sink::testing::lock;

    /// What the test callback got: (level, target, message).
    type Got = Mutex<Vec<(u32, String, String)>>;

    unsafe extern "C" fn keep(user: *mut c_void, level: u32, target: *const c_char, message: *const c_char) {
        // SAFETY: `user` is the test's `Got`; the strings are the library's, valid now.
        let got = unsafe { &*(user as *const Got) };
        let text = |p| unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string();
        got.lock().unwrap().push((level, text(target), text(message)));
    }

    unsafe extern "C" fn set_from_inside(user: *mut c_void, _: u32, _: *const c_char, message: *const c_char) {
        // SAFETY: as in `keep`.
        if unsafe { CStr::from_ptr(message) }.to_bytes() == b"try to swap" {
            let got = unsafe { &*(user as *const Got) };
            let s = unsafe {
                cuzk_set_log_callback(CUZK_LOG_INFO as u32, None, std::ptr::null_mut(), std::ptr::null_mut())
            };
            got.lock().unwrap().push((s as u32, String::new(), String::new()));
        }
    }

    #[test]
    fn records_reach_the_callback_as_c_strings() {
        let _one = lock();
        let got: Box<Got> = Box::default();
        let user = &*got as *const Got as *mut c_void;
        // SAFETY: `got` outlives the callback: it is removed below.
        let s = unsafe { cuzk_set_log_callback(CUZK_LOG_WARN as u32, Some(keep), user, std::ptr::null_mut()) };
        assert_eq!(s, CUZK_OK);
        log::info!(target: "cuzk::ffi_log_test", "below the level");
        log::warn!(target: "cuzk::ffi_log_test", "a NUL \0 inside");
        log::error!(target: "cuzk::ffi_log_test", "an error: {}", 7);
        // SAFETY: NULL removes it.
        assert_eq!(unsafe { cuzk_set_log_callback(CUZK_LOG_WARN as u32, None, user, std::ptr::null_mut()) }, CUZK_OK);
        log::error!(target: "cuzk::ffi_log_test", "after removal");
        let mine: Vec<_> = got.lock().unwrap().drain(..).filter(|r| r.1 == "cuzk::ffi_log_test").collect();
        let want = |l: cuzk_log_level, m: &str| (l as u32, "cuzk::ffi_log_test".to_string(), m.to_string());
        assert_eq!(mine, [want(CUZK_LOG_WARN, "a NUL \u{fffd} inside"), want(CUZK_LOG_ERROR, "an error: 7")]);
    }

    #[test]
    fn bad_levels_and_swaps_from_inside_the_callback_are_refused() {
        let _one = lock();
        let e = std::ptr::null_mut();
        for bad in [0, 11, 35, 60, u32::MAX] {
            // SAFETY: refused before the callback is kept.
            let s = unsafe { cuzk_set_log_callback(bad, Some(keep), std::ptr::null_mut(), e) };
            assert_eq!(s, CUZK_INVALID_ARGUMENT, "level {bad}");
        }
        let got: Box<Got> = Box::default();
        let user = &*got as *const Got as *mut c_void;
        // SAFETY: `got` outlives the callback: removed below.
        assert_eq!(unsafe { cuzk_set_log_callback(CUZK_LOG_INFO as u32, Some(set_from_inside), user, e) }, CUZK_OK);
        log::warn!("try to swap");
        // SAFETY: NULL removes it.
        assert_eq!(unsafe { cuzk_set_log_callback(CUZK_LOG_INFO as u32, None, user, e) }, CUZK_OK);
        assert_eq!(got.lock().unwrap().as_slice(), [(CUZK_INVALID_ARGUMENT as u32, String::new(), String::new())]);
    }
}
