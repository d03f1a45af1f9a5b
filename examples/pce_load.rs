//! Save and load times of a large `.pce` file (page cache hot), with and without
//! checksum verification, and bytes per non-zero on disk.
//!
//! ```text
//! CARGO_TARGET_DIR=target/mem cargo run --release --no-default-features \
//!     --example pce_load -- [rows = 33554432] [sha256-chain|mimc-chain] [dir = /tmp]
//! CUZK_KEEP=1 keeps the file; `pce_load load PATH` re-times loading it.
//! ```

use std::time::Instant;

use cuzk::circuits::{Family, Synthetic};
use cuzk::pce::{extract, file};

fn main() -> cuzk::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("load") {
        // Re-time an existing file: `pce_load load PATH`.
        let path = std::path::Path::new(&args[2]);
        for verify in [false, false, false, true, true] {
            let t = Instant::now();
            let l = file::load(path, None, verify)?;
            let load_s = t.elapsed().as_secs_f64();
            let t = Instant::now();
            file::validate(&l.pce)?;
            println!("verify {verify}: load {load_s:.3} s; validation alone {:.3} s", t.elapsed().as_secs_f64());
        }
        return Ok(());
    }
    let rows: usize = args.get(1).map(|s| s.parse().expect("rows")).unwrap_or(1 << 25);
    let family = Family::parse(args.get(2).map(String::as_str).unwrap_or("sha256-chain"))?;
    let dir = std::path::PathBuf::from(args.get(3).map(String::as_str).unwrap_or("/tmp"));
    let c = Synthetic::new(family, rows, 1);
    let id = c.circuit_id();
    let path = dir.join(format!("{id}.pce"));
    let t = Instant::now();
    let pce = extract(c.blank())?;
    println!(
        "{id}: {} rows, {} inputs, {} aux, {} nnz, {} dict, {:.3} in-memory bytes/nnz, extracted in {:.1} s",
        pce.num_constraints(),
        pce.num_inputs,
        pce.num_aux,
        pce.nnz(),
        pce.dict.len(),
        pce.bytes_per_nnz(),
        t.elapsed().as_secs_f64()
    );
    let b = file::bench(&pce, &id, &path, 3)?;
    drop(pce);
    let gb = b.file_bytes as f64 / 1e9;
    println!("file: {} bytes ({gb:.3} GB), {:.3} bytes per non-zero", b.file_bytes, b.bytes_per_nnz);
    println!("save (validate + checksums + write + fsync + rename): {:.3} s", b.save_s);
    println!("load, checksums skipped (mmap + structural validation): {:.3} s", b.load_s);
    println!("load, checksums verified: {:.3} s ({:.2} GB/s)", b.load_verified_s, gb / b.load_verified_s);
    println!("structural validation alone: {:.3} s ({:.2} GB/s)", b.validate_s, gb / b.validate_s);
    println!("fingerprint of the in-memory PCE: {:.3} s ({:.2} GB/s)", b.fingerprint_s, gb / b.fingerprint_s);
    println!("threads: {}", rayon::current_num_threads());
    if std::env::var_os("CUZK_KEEP").is_none() {
        std::fs::remove_file(&path)?;
    }
    Ok(())
}
