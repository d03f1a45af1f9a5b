//! A stand-in for filecoin-ffi's Rust staticlib: its own Rust runtime (a panic
//! is raised and caught, so its unwinder and `rust_eh_personality` are used)
//! and blst 0.3.14 (filecoin-ffi's), whose C symbols stay global here as they
//! do in libfilcrypto.a. Every function returns 1 on success, 0 on a wrong
//! result and -1 on a panic.

use blst::min_pk::SecretKey;
use blst::BLST_ERROR;
use std::panic::{self, catch_unwind};

fn guarded(f: impl FnOnce() -> bool + panic::UnwindSafe) -> i32 {
    match catch_unwind(f) {
        Ok(true) => 1,
        Ok(false) => 0,
        Err(_) => -1,
    }
}

/// The generator of G1, compressed by this blst, into `out` (48 bytes,
/// caller-owned).
///
/// # Safety
/// `out` points to 48 writable bytes.
#[no_mangle]
pub unsafe extern "C" fn other_g1_generator(out: *mut u8) -> i32 {
    let out = out as usize;
    guarded(move || {
        // SAFETY: the generator is a static point; `out` holds 48 bytes (the caller's promise).
        unsafe { blst::blst_p1_affine_compress(out as *mut u8, blst::blst_p1_affine_generator()) };
        true
    })
}

/// A BLS signature (min_pk, Filecoin's scheme) made and verified with a key
/// derived from `seed`; a signature over another message must not verify.
#[no_mangle]
pub extern "C" fn other_bls_sign_verify(seed: u8) -> i32 {
    guarded(move || {
        const DST: &[u8] = b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_";
        let Ok(sk) = SecretKey::key_gen(&[seed; 32], &[]) else { return false };
        let pk = sk.sk_to_pk();
        let sig = sk.sign(b"beside cuzk", DST, &[]);
        sig.verify(true, b"beside cuzk", DST, &[], &pk, true) == BLST_ERROR::BLST_SUCCESS
            && sig.verify(true, b"beside cuzK", DST, &[], &pk, true) != BLST_ERROR::BLST_SUCCESS
    })
}

/// Raises a panic and catches it, with this runtime's unwinder (the message
/// silenced): 1 when caught.
#[no_mangle]
pub extern "C" fn other_panic_caught() -> i32 {
    let hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let caught = catch_unwind(|| panic!("other: deliberate panic")).is_err();
    panic::set_hook(hook);
    i32::from(caught)
}
