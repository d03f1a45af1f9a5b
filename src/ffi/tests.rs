//! Unit tests of the ABI shell, through the `extern "C"` functions themselves
//! (the C and Go suites exercise the same entries from outside).

use std::ffi::{c_char, CStr, CString};
use std::path::PathBuf;
use std::ptr::{null, null_mut};

use super::*;
use cuzk_status::*;

fn new_err() -> Box<cuzk_error> {
    Box::new(cuzk_error { status: CUZK_INTERNAL, _reserved: 7, message: [1; CUZK_ERROR_MESSAGE_LEN] })
}

fn message(e: &cuzk_error) -> String {
    // SAFETY: the library always NUL-terminates `message` inside its array.
    unsafe { CStr::from_ptr(e.message.as_ptr()) }.to_string_lossy().into_owned()
}

fn tmp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cuzk-ffi-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn cpath(p: &std::path::Path) -> CString {
    CString::new(p.to_str().unwrap()).unwrap()
}

const MIMC: &CStr = c"mimc-chain";

fn mimc(size: u64) -> cuzk_circuit {
    cuzk_circuit { kind: cuzk_circuit_kind::CUZK_CIRCUIT_SYNTHETIC as u32, name: MIMC.as_ptr(), size }
}

fn request(circuit: cuzk_circuit, seed: u64) -> cuzk_prove_request {
    cuzk_prove_request {
        circuit,
        seed,
        input: null(),
        input_len: 0,
        backend: cuzk_backend::CUZK_BACKEND_CPU as u32,
        device: 0,
        skip_verify: 0,
        priority: 0,
        reserved: [0; 4],
    }
}

#[test]
fn statuses_are_unique_grouped_and_named() {
    let mut seen = std::collections::HashSet::new();
    for s in ALL_STATUSES {
        assert!(seen.insert(s as u32), "{s:?} listed twice");
        // SAFETY: cuzk_status_str returns a static NUL-terminated string for any value.
        let text = unsafe { CStr::from_ptr(cuzk_status_str(s as u32)) }.to_str().unwrap();
        assert!(text.starts_with(&format!("{s:?}:")), "{text}");
        assert_eq!(cuzk_status::from_u32(s as u32), Some(s));
    }
    // SAFETY: as above: a static NUL-terminated string, also for unknown codes.
    let unknown = unsafe { CStr::from_ptr(cuzk_status_str(12345)) };
    assert_eq!(unknown.to_str().unwrap(), "unknown cuzk_status");
    // Every variant is in ALL_STATUSES: the header lists them all.
    let header = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/include/cuzk.h")).unwrap();
    let in_header = header
        .lines()
        .filter(|l| l.trim_start().starts_with("CUZK_") && l.contains(" = ") && l.trim_end().ends_with(','))
        .count();
    assert!(in_header >= ALL_STATUSES.len(), "header lists {in_header} enum values");
}

#[test]
fn header_version_matches_cargo() {
    let header = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/include/cuzk.h")).unwrap();
    let want = format!("#define CUZK_VERSION \"{}\"", env!("CARGO_PKG_VERSION"));
    assert!(header.contains(&want), "include/cuzk.h lacks {want:?}: update cbindgen.toml and regenerate");
    for (name, value) in [
        ("MAJOR", env!("CARGO_PKG_VERSION_MAJOR")),
        ("MINOR", env!("CARGO_PKG_VERSION_MINOR")),
        ("PATCH", env!("CARGO_PKG_VERSION_PATCH")),
    ] {
        let line = format!("#define CUZK_VERSION_{name} {value}");
        assert!(header.contains(&line), "include/cuzk.h lacks {line:?}");
    }
    // SAFETY: cuzk_version returns a static NUL-terminated string.
    let v = unsafe { CStr::from_ptr(cuzk_version()) };
    assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}

#[test]
fn panic_comes_back_as_a_status() {
    let mut e = new_err();
    // SAFETY: `e` is a live, writable cuzk_error.
    let s = unsafe { cuzk_debug_panic(&mut *e) };
    assert_eq!(s, CUZK_PANIC);
    assert_eq!(e.status, CUZK_PANIC);
    assert!(message(&e).contains("deliberate test panic"), "{}", message(&e));
    // SAFETY: a NULL error pointer is allowed.
    assert_eq!(unsafe { cuzk_debug_panic(null_mut()) }, CUZK_PANIC);
}

#[test]
fn error_message_is_truncated_at_a_char_boundary() {
    let mut e = new_err();
    let long = "é".repeat(CUZK_ERROR_MESSAGE_LEN);
    // SAFETY: `e` is a live, writable cuzk_error.
    unsafe { status::write_error(&mut *e, CUZK_IO, &long) };
    let m = message(&e);
    assert!(m.len() < CUZK_ERROR_MESSAGE_LEN && m.len().is_multiple_of(2) && m.chars().all(|c| c == 'é'));
}

#[test]
fn null_and_bad_arguments() {
    let mut e = new_err();
    let path = c"/nonexistent/x.pce";
    let mut out: *mut cuzk_pce = null_mut();
    // SAFETY: every pointer below is NULL on purpose or points to a live local of the right type.
    unsafe {
        assert_eq!(cuzk_pce_load(null(), path.as_ptr(), 0, &mut out, &mut *e), CUZK_NULL_ARGUMENT);
        assert!(message(&e).contains("circuit"), "{}", message(&e));
        let c = mimc(1000);
        assert_eq!(cuzk_pce_load(&c, null(), 0, &mut out, &mut *e), CUZK_NULL_ARGUMENT);
        assert_eq!(cuzk_pce_load(&c, path.as_ptr(), 0, null_mut(), &mut *e), CUZK_NULL_ARGUMENT);
        assert_eq!(cuzk_pce_load(&c, path.as_ptr(), 8, &mut out, &mut *e), CUZK_INVALID_ARGUMENT);
        let bad = cuzk_circuit { kind: 1, name: c"nope".as_ptr(), size: 10 };
        assert_eq!(cuzk_pce_load(&bad, path.as_ptr(), 0, &mut out, &mut *e), CUZK_UNKNOWN_CIRCUIT);
        let zero = cuzk_circuit { kind: 0, name: null(), size: 0 };
        assert_eq!(cuzk_pce_load(&zero, path.as_ptr(), 0, &mut out, &mut *e), CUZK_UNKNOWN_CIRCUIT);
        assert_eq!(cuzk_pce_load(&mimc(0), path.as_ptr(), 0, &mut out, &mut *e), CUZK_INVALID_ARGUMENT);
        assert_eq!(cuzk_pce_load(&mimc(1 << 40), path.as_ptr(), 0, &mut out, &mut *e), CUZK_TOO_LARGE);
        let porep = cuzk_circuit { kind: 2, name: c"3KiB".as_ptr(), size: 0 };
        let want = if cfg!(feature = "porep") { CUZK_UNKNOWN_CIRCUIT } else { CUZK_UNSUPPORTED };
        assert_eq!(cuzk_pce_load(&porep, path.as_ptr(), 0, &mut out, &mut *e), want);
        assert!(out.is_null(), "out written on failure");
        let mut p: *mut cuzk_params = null_mut();
        assert_eq!(cuzk_params_load(c"/nonexistent/x.params".as_ptr(), 0, &mut p, &mut *e), CUZK_FILE_NOT_FOUND);
        assert!(p.is_null());
        assert_eq!(cuzk_mem_stats(null_mut(), &mut *e), CUZK_NULL_ARGUMENT);
        cuzk_pce_free(null_mut());
        cuzk_params_free(null_mut());
    }
}

#[test]
fn prove_verify_and_errors_end_to_end() {
    let dir = tmp_dir("e2e");
    let (pce_path, params_path) = (cpath(&dir.join("m.pce")), cpath(&dir.join("m.params")));
    let c = mimc(600);
    let mut e = new_err();
    // SAFETY: every pointer below is NULL on purpose or points to a live local of the right type.
    unsafe {
        let (mut a, mut b): (*mut cuzk_pce, *mut cuzk_pce) = (null_mut(), null_mut());
        assert_eq!(cuzk_pce_load(&c, pce_path.as_ptr(), 0, &mut a, &mut *e), CUZK_OK, "{}", message(&e));
        assert_eq!(e.status, CUZK_OK);
        assert_eq!(message(&e), "");
        // The second load maps the saved file or finds the loaded instance: same instance.
        assert_eq!(cuzk_pce_load(&c, pce_path.as_ptr(), 0, &mut b, &mut *e), CUZK_OK);
        let mut ia: cuzk_pce_info = std::mem::zeroed();
        let mut ib: cuzk_pce_info = std::mem::zeroed();
        assert_eq!(cuzk_pce_info(a, &mut ia, &mut *e), CUZK_OK);
        assert_eq!(cuzk_pce_info(b, &mut ib, &mut *e), CUZK_OK);
        assert_eq!(ia.instance, ib.instance);
        assert!(ia.num_constraints > 0 && ia.nnz > 0);
        let id = CStr::from_ptr(ia.circuit_id.as_ptr()).to_str().unwrap();
        assert!(id.starts_with("mimc-chain-"), "{id}");
        cuzk_pce_free(b);
        // A freed handle is refused; a second free does nothing; neither is a forged handle,
        // nor one of another type, ever dereferenced.
        assert_eq!(cuzk_pce_info(b, &mut ib, &mut *e), CUZK_INVALID_HANDLE);
        assert!(message(&e).contains("pce is not a live handle"), "{}", message(&e));
        cuzk_pce_free(b);
        let forged = std::ptr::without_provenance::<cuzk_pce>(0x1000);
        assert_eq!(cuzk_pce_info(forged, &mut ib, &mut *e), CUZK_INVALID_HANDLE);
        assert_eq!(cuzk_params_unload(a.cast(), &mut *e), CUZK_INVALID_HANDLE);
        cuzk_params_free(a.cast());
        assert_eq!(cuzk_pce_info(a, &mut ib, &mut *e), CUZK_OK, "a's handle survives a free as another type");

        let mut p: *mut cuzk_params = null_mut();
        assert_eq!(cuzk_params_generate(&c, params_path.as_ptr(), 42, &mut p, &mut *e), CUZK_OK, "{}", message(&e));

        let req = request(c, 7);
        let mut proof = [0u8; CUZK_PROOF_BYTES];
        let mut len = 0usize;
        let mut t = cuzk_timings::default();
        // Size query and a short buffer: refused before any work, length told.
        assert_eq!(
            cuzk_prove(null(), a, p, &req, null(), null_mut(), 0, &mut len, &mut t, &mut *e),
            CUZK_BUFFER_TOO_SMALL
        );
        assert_eq!(len, CUZK_PROOF_BYTES);
        len = 0;
        assert_eq!(
            cuzk_prove(null(), a, p, &req, null(), proof.as_mut_ptr(), 191, &mut len, &mut t, &mut *e),
            CUZK_BUFFER_TOO_SMALL
        );
        assert_eq!(len, CUZK_PROOF_BYTES);
        assert_eq!(proof, [0u8; CUZK_PROOF_BYTES]);

        assert_eq!(
            cuzk_prove(null(), a, p, &req, null(), proof.as_mut_ptr(), proof.len(), &mut len, &mut t, &mut *e),
            CUZK_OK,
            "{}",
            message(&e)
        );
        assert_eq!(len, CUZK_PROOF_BYTES);
        assert!(t.total > 0.0 && t.verify > 0.0 && t.total >= t.witness + t.spmv);
        assert_eq!(t.backend, cuzk_backend::CUZK_BACKEND_CPU as u32);
        assert_eq!(cuzk_verify(p, &req, proof.as_ptr(), len, &mut *e), CUZK_OK, "{}", message(&e));
        // Another seed has other public inputs: the proof does not verify for it.
        assert_eq!(cuzk_verify(p, &request(c, 8), proof.as_ptr(), len, &mut *e), CUZK_VERIFICATION_FAILED);
        assert_eq!(cuzk_verify(p, &req, proof.as_ptr(), 100, &mut *e), CUZK_INVALID_ARGUMENT);
        let mut bad = proof;
        bad[0] ^= 0x01;
        let s = cuzk_verify(p, &req, bad.as_ptr(), len, &mut *e);
        assert!(matches!(s, CUZK_MALFORMED_PROOF | CUZK_VERIFICATION_FAILED), "{s:?}");

        // Request errors.
        let mut r = req;
        r.reserved[3] = 1;
        assert_eq!(
            cuzk_prove(null(), a, p, &r, null(), proof.as_mut_ptr(), 192, &mut len, null_mut(), &mut *e),
            CUZK_INVALID_ARGUMENT
        );
        let mut r = req;
        r.backend = 9;
        assert_eq!(
            cuzk_prove(null(), a, p, &r, null(), proof.as_mut_ptr(), 192, &mut len, null_mut(), &mut *e),
            CUZK_INVALID_ARGUMENT
        );
        let mut r = req;
        r.backend = cuzk_backend::CUZK_BACKEND_CUDA as u32;
        r.device = 99;
        assert_eq!(
            cuzk_prove(null(), a, p, &r, null(), proof.as_mut_ptr(), 192, &mut len, null_mut(), &mut *e),
            CUZK_NO_SUCH_DEVICE
        );
        let r = request(mimc(5000), 1);
        assert_eq!(
            cuzk_prove(null(), a, p, &r, null(), proof.as_mut_ptr(), 192, &mut len, null_mut(), &mut *e),
            CUZK_CIRCUIT_MISMATCH
        );
        assert_eq!(
            cuzk_prove(null(), a, null(), &req, null(), proof.as_mut_ptr(), 192, &mut len, null_mut(), &mut *e),
            CUZK_NULL_ARGUMENT
        );

        // Parameters of another circuit: refused, not a wrong proof.
        let other = mimc(300);
        let other_params = cpath(&dir.join("other.params"));
        let mut q: *mut cuzk_params = null_mut();
        assert_eq!(cuzk_params_generate(&other, other_params.as_ptr(), 1, &mut q, &mut *e), CUZK_OK);
        assert_eq!(
            cuzk_prove(null(), a, q, &req, null(), proof.as_mut_ptr(), 192, &mut len, null_mut(), &mut *e),
            CUZK_PARAMS_MISMATCH
        );

        let mut m = cuzk_mem_stats::default();
        assert_eq!(cuzk_mem_stats(&mut m, &mut *e), CUZK_OK);
        assert!(m.rss_bytes > 0 && m.peak_rss_bytes >= m.rss_bytes / 2 && m.srs_bytes > 0);
        assert_eq!(cuzk_mem_trim(&mut *e), CUZK_OK);

        assert_eq!(cuzk_params_unload(q, &mut *e), CUZK_OK);
        cuzk_params_free(q);
        cuzk_params_free(p);
        assert_eq!(cuzk_pce_unload(a, &mut *e), CUZK_OK);
        cuzk_pce_free(a);
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn corrupt_pce_file_is_refused() {
    let dir = tmp_dir("corrupt");
    let path = dir.join("bad.pce");
    std::fs::write(&path, b"this is not a PCE file at all, just some bytes").unwrap();
    let mut e = new_err();
    let mut out: *mut cuzk_pce = null_mut();
    // A size no other test loads, so the registry has no instance for it.
    // SAFETY: the circuit, path and out-pointers are live locals for the call.
    let s = unsafe { cuzk_pce_load(&mimc(777), cpath(&path).as_ptr(), 0, &mut out, &mut *e) };
    assert_eq!(s, CUZK_BAD_PCE_FILE, "{}", message(&e));
    assert!(out.is_null());
    let _ = std::fs::remove_dir_all(dir);
}

/// A result of another length than the size query announced (the buffer was checked against
/// the announced one) is written nowhere: `CUZK_INTERNAL`, the buffer and length untouched.
#[test]
fn a_result_longer_or_shorter_than_announced_is_not_written() {
    let mut out = [0xAAu8; 8];
    let mut len = 7usize;
    for result in [&[1u8; 9][..], &[1u8; 3][..]] {
        // SAFETY: `out` holds the 8 announced bytes, `len` is a live local.
        let r = unsafe { super::boundary::copy_out(result, 8, out.as_mut_ptr(), &mut len) };
        assert_eq!(r.map_err(|f| f.status), Err(CUZK_INTERNAL));
        assert_eq!((out, len), ([0xAA; 8], 7));
    }
    // SAFETY: as above.
    unsafe { super::boundary::copy_out(&[1; 8], 8, out.as_mut_ptr(), &mut len) }.unwrap();
    assert_eq!((out, len), ([1; 8], 8));
}

/// `cuzk_pce_unload` through a handle from before an earlier unload leaves the newer instance
/// of its circuit loaded: a later load shares that one.
#[test]
fn unloading_through_a_stale_pce_handle_keeps_the_newer_instance() {
    let dir = tmp_dir("stale-unload");
    let path = cpath(&dir.join("m.pce"));
    // A size no other test loads.
    let circuit = mimc(611);
    let mut e = new_err();
    let load = |e: &mut cuzk_error| {
        let mut h: *mut cuzk_pce = null_mut();
        // SAFETY: the circuit, path and out-pointers are live locals for the call.
        assert_eq!(unsafe { cuzk_pce_load(&circuit, path.as_ptr(), 0, &mut h, e) }, CUZK_OK, "{}", message(e));
        h
    };
    let instance = |h: *mut cuzk_pce| {
        // SAFETY: `info` is a live local; the handle is a token the library looks up.
        unsafe {
            let mut info = std::mem::MaybeUninit::<cuzk_pce_info>::uninit();
            assert_eq!(cuzk_pce_info(h, info.as_mut_ptr(), null_mut()), CUZK_OK);
            info.assume_init().instance
        }
    };
    let old = load(&mut e);
    // SAFETY (every call below): handles are the library's tokens, `e` a live error.
    unsafe {
        assert_eq!(cuzk_pce_unload(old, &mut *e), CUZK_OK);
        let new = load(&mut e);
        assert_ne!(instance(new), instance(old), "loaded afresh after the unload");
        assert_eq!(cuzk_pce_unload(old, &mut *e), CUZK_OK, "the handle stays valid");
        let again = load(&mut e);
        assert_eq!(instance(again), instance(new), "the stale handle unloaded the newer instance");
        for h in [old, new, again] {
            cuzk_pce_free(h);
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[allow(dead_code)]
fn _abi_types_are_ffi_safe(_: cuzk_mem_stats, _: cuzk_timings, _: *const c_char) {}

/// `cuzk_engine_stats` of the engine handle `engine` (passed between threads as a `usize`).
fn engine_stats(engine: usize) -> cuzk_engine_stats {
    let mut s = cuzk_engine_stats::default();
    // SAFETY: `s` is a live local; the handle is a token the library looks up.
    assert_eq!(unsafe { cuzk_engine_stats(engine as *const _, &mut s, null_mut()) }, CUZK_OK);
    s
}

/// One `cuzk_prove` of mimc-chain `size` with `seed` through the handles `[engine, pce, params,
/// cancel]` (0 for NULL): its status and message.
fn prove_with([engine, pce, params, cancel]: [usize; 4], size: u64, seed: u64) -> (cuzk_status, String) {
    let (mut proof, mut len, mut err) = ([0u8; 192], 0usize, new_err());
    // SAFETY: the buffers are live locals of the sizes given; handles are tokens the library
    // looks up.
    let st = unsafe {
        cuzk_prove(
            engine as *const _,
            pce as *const _,
            params as *const _,
            &request(mimc(size), seed),
            cancel as *const _,
            proof.as_mut_ptr(),
            192,
            &mut len,
            null_mut(),
            &mut *err,
        )
    };
    (st, message(&err))
}

/// A host that frees every handle while calls still use them (one proving, one waiting for
/// budget inside `cuzk_prove`): the calls finish with what they hold, and the handles are
/// dead for every later call.
#[test]
fn handles_freed_during_calls_stay_alive_for_them() {
    let dir = tmp_dir("handles");
    let (pce_path, params_path) = (cpath(&dir.join("m.pce")), cpath(&dir.join("m.params")));
    let mut e = new_err();
    // SAFETY: every pointer below is NULL on purpose or points to a live local of the right
    // type; handles are tokens, never dereferenced.
    unsafe {
        let c = mimc(3000);
        let mut a: *mut cuzk_pce = null_mut();
        assert_eq!(cuzk_pce_load(&c, pce_path.as_ptr(), 0, &mut a, &mut *e), CUZK_OK, "{}", message(&e));
        let mut p: *mut cuzk_params = null_mut();
        assert_eq!(cuzk_params_generate(&c, params_path.as_ptr(), 3, &mut p, &mut *e), CUZK_OK, "{}", message(&e));
        // The footprint on this CPU-only engine's backend (the default engine may be a GPU's).
        let mut probe: *mut cuzk_engine = null_mut();
        assert_eq!(cuzk_engine_new(&engine_config(1 << 30), &mut probe, &mut *e), CUZK_OK, "{}", message(&e));
        let mut fp = 0u64;
        assert_eq!(cuzk_engine_footprint(probe, a, &mut fp, &mut *e), CUZK_OK);
        cuzk_engine_free(probe);
        let mut eng: *mut cuzk_engine = null_mut();
        let mut one = engine_config(fp);
        one.flags |= CUZK_ENGINE_NO_CRITICAL_RESERVE;
        assert_eq!(cuzk_engine_new(&one, &mut eng, &mut *e), CUZK_OK, "{}", message(&e));
        let mut cancel: *mut cuzk_cancel = null_mut();
        assert_eq!(cuzk_cancel_new(&mut cancel, &mut *e), CUZK_OK);
        let (engine, pce, params, token) = (eng as usize, a as usize, p as usize, cancel as usize);
        std::thread::scope(|s| {
            let prove = |seed: u64| s.spawn(move || prove_with([engine, pce, params, token], 3000, seed));
            let first = prove(2);
            while engine_stats(engine).budget_used == 0 {
                assert!(!first.is_finished(), "the first proof ended before it was seen: {:?}", first.join());
                std::thread::yield_now();
            }
            let second = prove(3);
            while engine_stats(engine).waiting == 0 {
                assert!(!second.is_finished(), "the second proof did not wait: {:?}", second.join());
                std::thread::yield_now();
            }
            cuzk_pce_free(pce as *mut _);
            cuzk_params_free(params as *mut _);
            cuzk_engine_free(engine as *mut _);
            cuzk_cancel_free(token as *mut _);
            for h in [first, second] {
                let (st, msg) = h.join().unwrap();
                assert_eq!(st, CUZK_OK, "{msg}");
            }
        });
        let mut st = cuzk_engine_stats::default();
        assert_eq!(cuzk_engine_stats(eng, &mut st, &mut *e), CUZK_INVALID_HANDLE);
        assert_eq!(cuzk_cancel_trigger(cancel, &mut *e), CUZK_INVALID_HANDLE);
        let (mut proof, mut len) = ([0u8; 192], 0usize);
        let req = request(c, 4);
        assert_eq!(
            cuzk_prove(null(), a, p, &req, null(), proof.as_mut_ptr(), 192, &mut len, null_mut(), &mut *e),
            CUZK_INVALID_HANDLE
        );
        assert!(message(&e).contains("pce"), "{}", message(&e));
        cuzk_engine_free(eng);
        cuzk_cancel_free(cancel);
    }
}

fn engine_config(budget_bytes: u64) -> cuzk_engine_config {
    cuzk_engine_config {
        synthesis_threads: 2,
        workers_per_device: 1,
        devices: null(),
        num_devices: 0,
        budget_bytes,
        budget_margin: 0,
        flags: CUZK_ENGINE_CPU_ONLY,
        _reserved0: 0,
        critical_reserve_bytes: 0,
        reserved: [0; 3],
    }
}

#[test]
fn engines_budgets_and_cancels() {
    let dir = tmp_dir("engine");
    let (pce_path, params_path) = (cpath(&dir.join("m.pce")), cpath(&dir.join("m.params")));
    let mut e = new_err();
    // SAFETY: every pointer below is NULL on purpose or points to a live local of the right type.
    unsafe {
        let c = mimc(6000);
        let mut a: *mut cuzk_pce = null_mut();
        assert_eq!(cuzk_pce_load(&c, pce_path.as_ptr(), 0, &mut a, &mut *e), CUZK_OK, "{}", message(&e));
        let mut p: *mut cuzk_params = null_mut();
        assert_eq!(cuzk_params_generate(&c, params_path.as_ptr(), 7, &mut p, &mut *e), CUZK_OK, "{}", message(&e));

        // Config errors.
        let mut eng: *mut cuzk_engine = null_mut();
        let mut bad = engine_config(1 << 30);
        bad.reserved[0] = 1;
        assert_eq!(cuzk_engine_new(&bad, &mut eng, &mut *e), CUZK_INVALID_ARGUMENT);
        let mut bad = engine_config(1 << 30);
        bad.flags |= 1 << 7;
        assert_eq!(cuzk_engine_new(&bad, &mut eng, &mut *e), CUZK_INVALID_ARGUMENT, "unknown flag");
        let ids = [5u32];
        let mut bad = engine_config(1 << 30);
        (bad.devices, bad.num_devices) = (ids.as_ptr(), 1);
        assert_eq!(cuzk_engine_new(&bad, &mut eng, &mut *e), CUZK_INVALID_ARGUMENT, "CPU only with devices");
        bad.flags = 0;
        assert_eq!(cuzk_engine_new(&bad, &mut eng, &mut *e), CUZK_NO_SUCH_DEVICE);
        let mut bad = engine_config(1 << 30);
        bad.critical_reserve_bytes = (1 << 30) + 1;
        assert_eq!(cuzk_engine_new(&bad, &mut eng, &mut *e), CUZK_INVALID_ARGUMENT, "reserve above the budget");
        bad.critical_reserve_bytes = 1;
        bad.flags |= CUZK_ENGINE_NO_CRITICAL_RESERVE;
        assert_eq!(cuzk_engine_new(&bad, &mut eng, &mut *e), CUZK_INVALID_ARGUMENT, "a reserve and none");
        assert!(eng.is_null());

        // A budget of exactly one footprint, none of it kept for critical requests: one proof at
        // a time.
        let mut probe: *mut cuzk_engine = null_mut();
        let mut cfg = engine_config(1 << 30);
        cfg.flags |= CUZK_ENGINE_SYNTHESIS_FULL_PRIORITY;
        assert_eq!(cuzk_engine_new(&cfg, &mut probe, &mut *e), CUZK_OK, "{}", message(&e));
        let mut fp = 0u64;
        assert_eq!(cuzk_engine_footprint(probe, a, &mut fp, &mut *e), CUZK_OK);
        let mut peak = 0u64;
        assert_eq!(cuzk_engine_predicted_peak(probe, a, 3, &mut peak, &mut *e), CUZK_OK);
        assert!(peak >= 3 * fp, "{peak} < 3 × {fp}");
        cuzk_engine_free(probe);
        let mut one = engine_config(fp);
        one.flags |= CUZK_ENGINE_NO_CRITICAL_RESERVE;
        assert_eq!(cuzk_engine_new(&one, &mut eng, &mut *e), CUZK_OK);
        // Prepare: nothing to upload on the CPU; another circuit's parameters are refused.
        assert_eq!(cuzk_engine_prepare(eng, a, p, &mut *e), CUZK_OK, "{}", message(&e));
        assert_eq!(cuzk_engine_prepare(eng, a, null(), &mut *e), CUZK_NULL_ARGUMENT);
        let mut small: *mut cuzk_params = null_mut();
        let small_path = cpath(&dir.join("small.params"));
        assert_eq!(cuzk_params_generate(&mimc(500), small_path.as_ptr(), 7, &mut small, &mut *e), CUZK_OK);
        assert_eq!(cuzk_engine_prepare(eng, a, small, &mut *e), CUZK_PARAMS_MISMATCH);
        cuzk_params_free(small);
        let mut n = 0usize;
        assert_eq!(cuzk_engine_devices(eng, null_mut(), 0, &mut n, &mut *e), CUZK_OK);
        assert_eq!(n, 1);

        // Too large for the whole budget: fails at once.
        let mut tiny: *mut cuzk_engine = null_mut();
        assert_eq!(cuzk_engine_new(&engine_config(1000), &mut tiny, &mut *e), CUZK_OK);
        let req = request(c, 1);
        let mut proof = [0u8; 192];
        let mut len = 0usize;
        assert_eq!(
            cuzk_prove(tiny, a, p, &req, null(), proof.as_mut_ptr(), 192, &mut len, null_mut(), &mut *e),
            CUZK_OVER_BUDGET
        );
        cuzk_engine_free(tiny);

        // Request B waits behind A for the budget, and is cancelled there.
        let mut cancel: *mut cuzk_cancel = null_mut();
        assert_eq!(cuzk_cancel_new(&mut cancel, &mut *e), CUZK_OK);
        let (engine, pce, params, token) = (eng as usize, a as usize, p as usize, cancel as usize);
        let stats = || engine_stats(engine);
        std::thread::scope(|s| {
            let prove =
                |seed: u64, cancel: usize| s.spawn(move || prove_with([engine, pce, params, cancel], 6000, seed));
            let first = prove(2, 0);
            while stats().budget_used == 0 {
                std::thread::yield_now();
            }
            let second = prove(3, token);
            while stats().waiting == 0 {
                std::thread::yield_now();
            }
            assert_eq!(cuzk_cancel_trigger(token as *const _, null_mut()), CUZK_OK);
            assert_eq!(second.join().unwrap().0, CUZK_CANCELLED);
            let (st, msg) = first.join().unwrap();
            assert_eq!(st, CUZK_OK, "{msg}");
        });
        let s = stats();
        assert_eq!((s.budget_used, s.budget_peak, s.waiting), (0, fp, 0));
        let mut d = cuzk_device_stats::default();
        assert_eq!(cuzk_engine_devices(eng, &mut d, 1, &mut n, &mut *e), CUZK_OK);
        assert_eq!((d.backend, d.proofs, d.failures, d.healthy), (cuzk_backend::CUZK_BACKEND_CPU as u32, 1, 0, 1));
        assert!(d.busy_seconds > 0.0);
        // Priorities are 0..=255 and CUZK_PRIORITY_CRITICAL.
        let mut r = request(c, 1);
        r.backend = cuzk_backend::CUZK_BACKEND_AUTO as u32;
        r.priority = CUZK_PRIORITY_CRITICAL + 1;
        assert_eq!(
            cuzk_prove(eng, a, p, &r, null(), proof.as_mut_ptr(), 192, &mut len, null_mut(), &mut *e),
            CUZK_INVALID_ARGUMENT
        );
        r.priority = CUZK_PRIORITY_CRITICAL;
        assert_eq!(
            cuzk_prove(eng, a, p, &r, null(), proof.as_mut_ptr(), 192, &mut len, null_mut(), &mut *e),
            CUZK_OK,
            "{}",
            message(&e)
        );
        // Throughput work is refused where it could only fit by taking the critical reserve (a
        // default one: an eighth of this budget); critical work is not.
        let mut reserved: *mut cuzk_engine = null_mut();
        assert_eq!(cuzk_engine_new(&engine_config(fp), &mut reserved, &mut *e), CUZK_OK);
        r.priority = 255;
        assert_eq!(
            cuzk_prove(reserved, a, p, &r, null(), proof.as_mut_ptr(), 192, &mut len, null_mut(), &mut *e),
            CUZK_OVER_BUDGET
        );
        assert!(message(&e).contains("kept for critical requests"), "{}", message(&e));
        r.priority = CUZK_PRIORITY_CRITICAL;
        assert_eq!(
            cuzk_prove(reserved, a, p, &r, null(), proof.as_mut_ptr(), 192, &mut len, null_mut(), &mut *e),
            CUZK_OK
        );
        cuzk_engine_free(reserved);
        assert_eq!(cuzk_cancel_trigger(null(), &mut *e), CUZK_NULL_ARGUMENT);
        cuzk_cancel_free(cancel);
        cuzk_cancel_free(null_mut());
        cuzk_engine_free(eng);
        cuzk_engine_free(null_mut());
        cuzk_pce_free(a);
        cuzk_params_free(p);
    }
}

/// A circuit whose extraction this machine cannot hold is refused at once with
/// `CUZK_TOO_LARGE`, before anything is allocated (not ended by the OOM killer or an
/// allocation-failure abort partway).
#[test]
fn an_extraction_too_large_for_the_machine_is_refused_at_once() {
    let c = mimc(crate::circuits::MAX_SYNTHETIC_SIZE);
    let needs = 128 * crate::circuits::MAX_SYNTHETIC_SIZE;
    if crate::mem::available_bytes().map_or(true, |room| room >= needs) {
        eprintln!("skipped: this machine could hold the extraction of a 2^30 circuit");
        return;
    }
    let dir = tmp_dir("too-large");
    let path = cpath(&dir.join("huge.pce"));
    let (mut out, mut e) = (null_mut(), new_err());
    let start = std::time::Instant::now();
    // SAFETY: every pointer points to a live local of the right type.
    let status = unsafe { cuzk_pce_load(&c, path.as_ptr(), 0, &mut out, &mut *e) };
    assert_eq!(status, CUZK_TOO_LARGE, "{}", message(&e));
    assert!(message(&e).contains("GiB"), "{}", message(&e));
    assert!(out.is_null() && start.elapsed().as_secs() < 10);
}

/// An aggregation SRS for up to `size` proofs, written where the test `name` can load it (a
/// file of its own: tests run in parallel, and one rewriting another's file changes it on disk
/// under the other's load).
fn agg_srs_file(size: usize, name: &str) -> PathBuf {
    use rand_chacha::rand_core::SeedableRng;
    let srs = bellperson::groth16::aggregate::setup_fake_srs::<blstrs::Bls12, _>(
        &mut rand_chacha::ChaCha20Rng::seed_from_u64(3),
        size,
    );
    let path = tmp_dir("agg").join(format!("{name}-{size}.srs"));
    srs.write(&mut std::fs::File::create(&path).unwrap()).unwrap();
    path
}

#[test]
fn aggregation_srs_loads_are_checked_and_shared() {
    let path = cpath(&agg_srs_file(4, "loads"));
    let mut err = new_err();
    let mut srs = null_mut();
    // SAFETY (every call below): pointers are NULL or to live locals; handles are the library's.
    unsafe {
        assert_eq!(cuzk_agg_srs_load(null(), 2, &mut srs, &mut *err), CUZK_NULL_ARGUMENT);
        assert_eq!(cuzk_agg_srs_load(path.as_ptr(), 2, null_mut(), &mut *err), CUZK_NULL_ARGUMENT);
        for bad in [0, 3, 8, u32::MAX] {
            assert_eq!(cuzk_agg_srs_load(path.as_ptr(), bad, &mut srs, &mut *err), CUZK_INVALID_ARGUMENT, "{bad}");
        }
        let missing = cpath(&tmp_dir("agg").join("missing.srs"));
        assert_eq!(cuzk_agg_srs_load(missing.as_ptr(), 2, &mut srs, &mut *err), CUZK_FILE_NOT_FOUND);
        let junk = tmp_dir("agg").join("junk.srs");
        std::fs::write(&junk, [0u8; 100]).unwrap();
        assert_eq!(cuzk_agg_srs_load(cpath(&junk).as_ptr(), 2, &mut srs, &mut *err), CUZK_BAD_PARAMS_FILE);
        assert!(srs.is_null(), "untouched on failure");
        let (mut a, mut b) = (null_mut(), null_mut());
        assert_eq!(cuzk_agg_srs_load(path.as_ptr(), 4, &mut a, &mut *err), CUZK_OK, "{}", message(&err));
        assert_eq!(cuzk_agg_srs_load(path.as_ptr(), 4, &mut b, &mut *err), CUZK_OK);
        // (Not by `mem::stats`: tests in parallel load SRSs of their own.)
        let inner = |h| super::aggregate::HANDLES.get(h, "srs").expect("a live handle").srs.clone();
        assert!(std::sync::Arc::ptr_eq(&inner(a), &inner(b)), "a second load shares the first");
        assert_ne!(a, b);
        cuzk_agg_srs_free(a);
        cuzk_agg_srs_free(a);
        cuzk_agg_srs_free(b);
        cuzk_agg_srs_free(null_mut());
    }
}

#[cfg(feature = "porep")]
#[test]
fn aggregation_refuses_bad_input_and_writes_nothing() {
    use blstrs::{G1Projective, G2Projective};
    use group::{Curve, Group, GroupEncoding};
    use rand_chacha::rand_core::SeedableRng;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5);
    // Valid points standing in for 2 KiB interactive seal proofs (one partition each).
    let proof = |rng: &mut rand_chacha::ChaCha20Rng| -> Vec<u8> {
        [
            G1Projective::random(&mut *rng).to_affine().to_bytes().as_ref(),
            G2Projective::random(&mut *rng).to_affine().to_bytes().as_ref(),
            G1Projective::random(&mut *rng).to_affine().to_bytes().as_ref(),
        ]
        .concat()
    };
    let proofs: Vec<Vec<u8>> = (0..3).map(|_| proof(&mut rng)).collect();
    let seal = |p: &Vec<u8>| cuzk_seal_proof { proof: p.as_ptr(), proof_len: p.len(), comm_r: [1; 32], seed: [2; 32] };
    let seals: Vec<cuzk_seal_proof> = proofs.iter().map(seal).collect();
    let rp = c"StackedDrg2KiBV1_1";
    let ni = c"StackedDrg2KiBV1_2_Feat_NonInteractivePoRep";
    let path = cpath(&agg_srs_file(4, "refusals"));
    let mut err = new_err();
    let v2 = cuzk_snarkpack_version::CUZK_SNARKPACK_V2 as u32;
    // SAFETY (every call below): pointers are NULL or to live locals; handles are the library's.
    unsafe {
        let (mut n, mut len) = (0usize, 0usize);
        assert_eq!(cuzk_aggregate_len(rp.as_ptr(), 3, &mut n, &mut len, &mut *err), CUZK_OK);
        assert_eq!((n, len), (4, crate::aggregate::aggregate_len(4)));
        assert_eq!(cuzk_aggregate_len(ni.as_ptr(), 2, &mut n, null_mut(), &mut *err), CUZK_OK);
        assert_eq!(n, 32, "13 partitions each, padded");
        assert_eq!(
            cuzk_aggregate_len(c"StackedDrg2KiBV9".as_ptr(), 1, &mut n, null_mut(), &mut *err),
            CUZK_INVALID_ARGUMENT
        );
        assert_eq!(cuzk_aggregate_len(rp.as_ptr(), 0, &mut n, null_mut(), &mut *err), CUZK_INVALID_ARGUMENT);
        // The size query refuses what cuzk_aggregate refuses (FIP-0092: at most 65).
        assert_eq!(cuzk_aggregate_len(ni.as_ptr(), 65, &mut n, null_mut(), &mut *err), CUZK_OK);
        assert_eq!(cuzk_aggregate_len(ni.as_ptr(), 66, &mut n, null_mut(), &mut *err), CUZK_INVALID_ARGUMENT);
        assert_eq!(cuzk_aggregate_len(null(), 1, &mut n, null_mut(), &mut *err), CUZK_NULL_ARGUMENT);

        let (mut srs, mut small) = (null_mut(), null_mut());
        assert_eq!(cuzk_agg_srs_load(path.as_ptr(), 4, &mut srs, &mut *err), CUZK_OK);
        assert_eq!(cuzk_agg_srs_load(path.as_ptr(), 2, &mut small, &mut *err), CUZK_OK);
        let mut out = vec![0xAAu8; 1 << 20];
        let mut written = 0usize;
        let mut call = |srs: *const cuzk_agg_srs, rp: &CStr, seals: &[cuzk_seal_proof], version: u32, cap: usize| {
            written = 7;
            let st = cuzk_aggregate(
                srs,
                rp.as_ptr(),
                seals.as_ptr(),
                seals.len(),
                version,
                out.as_mut_ptr(),
                cap,
                &mut written,
                &mut *err,
            );
            (st, written)
        };
        assert_eq!(call(srs, rp, &seals, 0, len).0, CUZK_INVALID_ARGUMENT);
        assert_eq!(call(srs, rp, &seals, 3, len).0, CUZK_INVALID_ARGUMENT);
        assert_eq!(call(srs, rp, &seals, v2, len - 1), (CUZK_BUFFER_TOO_SMALL, len));
        assert_eq!(call(small, rp, &seals, v2, len).0, CUZK_INVALID_ARGUMENT, "an SRS for 2 proofs, 4 to make");
        assert_eq!(call(srs, ni, &seals, v2, 1 << 20).0, CUZK_INVALID_ARGUMENT, "13 partitions' bytes expected");
        let junk = vec![0xffu8; 192];
        assert_eq!(call(srs, rp, &[seal(&junk)], v2, len).0, CUZK_MALFORMED_PROOF);
        let short = proofs[0][..191].to_vec();
        assert_eq!(call(srs, rp, &[seal(&short)], v2, len).0, CUZK_INVALID_ARGUMENT);
        let nulled = cuzk_seal_proof { proof: null(), ..seals[0] };
        assert_eq!(call(srs, rp, &[nulled], v2, len).0, CUZK_NULL_ARGUMENT);
        let ni_proof: Vec<u8> = (0..13).flat_map(|_| proofs[0].clone()).collect();
        let many = vec![seal(&ni_proof); 66];
        assert_eq!(call(srs, ni, &many, v2, 1 << 20).0, CUZK_INVALID_ARGUMENT, "FIP-0092: at most 65");
        assert!(out.iter().all(|b| *b == 0xAA), "nothing written on failure");
        assert_eq!(
            cuzk_aggregate(srs, rp.as_ptr(), null(), 1, v2, out.as_mut_ptr(), len, &mut written, &mut *err),
            CUZK_NULL_ARGUMENT
        );

        let mut call = |srs: *const cuzk_agg_srs, out: &mut Vec<u8>| {
            let mut written = 0usize;
            let st = cuzk_aggregate(
                srs,
                rp.as_ptr(),
                seals.as_ptr(),
                3,
                v2,
                out.as_mut_ptr(),
                out.len(),
                &mut written,
                &mut *err,
            );
            out.truncate(written);
            st
        };
        assert_eq!(call(srs, &mut out), CUZK_OK);
        let (written, ours) = (out.len(), out.clone());
        let direct = crate::aggregate::seal::aggregate_seals(
            &crate::aggregate::srs::load_shared(std::path::Path::new(path.to_str().unwrap()), 4).unwrap(),
            crate::aggregate::seal::registered_proof("StackedDrg2KiBV1_1").unwrap(),
            &proofs
                .iter()
                .map(|p| crate::aggregate::seal::SealProof { comm_r: [1; 32], seed: [2; 32], proof: p })
                .collect::<Vec<_>>(),
            crate::aggregate::Version::V2,
        )
        .unwrap();
        assert_eq!((written, ours), (len, direct));
        cuzk_agg_srs_free(srs);
        cuzk_agg_srs_free(small);
        assert_eq!(call(srs, &mut vec![0u8; len]), CUZK_INVALID_HANDLE);
    }
}
