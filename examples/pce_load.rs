//! Load times of an existing `.pce` file (page cache hot after the first),
//! read into memory and mapped, with and without checksum verification, and
//! the structural validation alone.
//!
//! ```text
//! CARGO_TARGET_DIR=target/mem cargo run --release --no-default-features \
//!     --example pce_load -- PATH
//! ```
//!
//! `cuzk-bench pce-file` writes such a file (`--keep`) and times saving it too.

use std::time::Instant;

use cuzk::pce::{file, Access};

fn main() -> cuzk::Result<()> {
    let path = std::env::args().nth(1).expect("usage: pce_load PATH");
    let path = std::path::Path::new(&path);
    for access in [Access::Read, Access::Map] {
        for verify in [false, false, false, true, true] {
            let t = Instant::now();
            let l = file::load(path, None, verify, access)?;
            let load_s = t.elapsed().as_secs_f64();
            let t = Instant::now();
            file::validate(&l.pce)?;
            let validate_s = t.elapsed().as_secs_f64();
            println!("{access:?}, verify {verify}: load {load_s:.3} s; validation alone {validate_s:.3} s");
        }
    }
    Ok(())
}
