//! A Rust host that set the `log` crate's logger first keeps it: `cuzk_set_log_callback` says
//! so (`CUZK_LOGGER_IN_USE`) and the library's records still reach the host's logger. A
//! process of its own: the logger is set once per process.

use std::ffi::{c_char, c_void, CStr};
use std::sync::Mutex;

use cuzk::ffi::{cuzk_error, cuzk_log_level, cuzk_set_log_callback, cuzk_status, CUZK_ERROR_MESSAGE_LEN};

static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct HostLogger;

impl log::Log for HostLogger {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, r: &log::Record) {
        SEEN.lock().unwrap().push(r.args().to_string());
    }
    fn flush(&self) {}
}

static HOST: HostLogger = HostLogger;

unsafe extern "C" fn never(_: *mut c_void, _: u32, _: *const c_char, _: *const c_char) {
    panic!("the callback of a refused cuzk_set_log_callback was called");
}

#[test]
fn a_host_logger_set_first_is_kept() {
    log::set_logger(&HOST).unwrap();
    log::set_max_level(log::LevelFilter::Warn);
    let mut err =
        Box::new(cuzk_error { status: cuzk_status::CUZK_OK, _reserved: 0, message: [1; CUZK_ERROR_MESSAGE_LEN] });
    let warn = cuzk_log_level::CUZK_LOG_WARN as u32;
    // SAFETY: a valid error out-param; the callback is refused, never kept.
    let s = unsafe { cuzk_set_log_callback(warn, Some(never), std::ptr::null_mut(), &mut *err) };
    assert_eq!(s, cuzk_status::CUZK_LOGGER_IN_USE);
    // SAFETY: the library wrote a NUL-terminated message.
    let message = unsafe { CStr::from_ptr(err.message.as_ptr()) }.to_str().unwrap();
    assert!(message.contains("set by other code"), "{message}");
    // Removing a callback that was never set is fine.
    // SAFETY: as above.
    let s = unsafe { cuzk_set_log_callback(warn, None, std::ptr::null_mut(), &mut *err) };
    assert_eq!(s, cuzk_status::CUZK_OK);
    log::warn!("the host's logger still gets this");
    assert_eq!(SEEN.lock().unwrap().as_slice(), ["the host's logger still gets this"]);
    assert_eq!(log::max_level(), log::LevelFilter::Warn, "the library left the host's level alone");
}
