//! The `.pce` file and the PCE registry: round trips on every circuit family
//! (read and mapped), truncations, bit flips, structural corruption behind
//! valid checksums, foreign / wrong-version / wrong-circuit files, concurrent
//! loads, unload, a read PCE outliving changes to its file, the witness program
//! saved at extraction and its verdict kept beside the file.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};

use blstrs::Scalar;
use common::*;
use cuzk::circuits::{Circuit, Family, Synthetic, WitnessSource};
use cuzk::mem::{self, Owner};
use cuzk::pce::file::{self, FileBytes, HEADER_LEN, SECTIONS};
use cuzk::pce::{evaluate, extract, registry, Access, Pce};
use cuzk::witness::{Witness, WitnessBuffer};
use cuzk::Error;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// Registry tests check process-wide counters: one at a time.
static REGISTRY_LOCK: Mutex<()> = Mutex::new(());

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cuzk-pce-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn bad_msg(r: Result<file::LoadedPce, Error>) -> String {
    match r {
        Err(Error::BadPceFile(m)) => m,
        Err(e) => panic!("expected BadPceFile, got {e:?}"),
        Ok(_) => panic!("a bad file was accepted"),
    }
}

/// Loads `bytes` as a file read into memory, without the filesystem.
fn load_bytes(bytes: &[u8], id: Option<&str>, verify: bool) -> Result<file::LoadedPce, Error> {
    file::load_from(FileBytes::copy_of(bytes), id, verify)
}

fn round_trip<C: bellperson::Circuit<Scalar> + Clone + Send>(id: &str, circuit: &C, blank: C, dir: &Path) {
    let pce = extract(blank).unwrap();
    let path = dir.join(format!("{id}.pce"));
    file::save(&pce, id, &path).unwrap();
    let fp = file::fingerprint(&pce);
    for (verify, access) in [(true, Access::Read), (false, Access::Read), (true, Access::Map), (false, Access::Map)] {
        let loaded = file::load(&path, Some(id), verify, access).unwrap();
        assert_eq!(loaded.circuit_id, id);
        assert_eq!(loaded.fingerprint, fp, "{id}: fingerprint of file and memory");
        assert_eq!(file::fingerprint(&loaded.pce), fp);
        assert_same_pce(&pce, &loaded.pce);
        // Read: all of it on the heap, exactly; mapped: only the dictionary.
        let heap = match access {
            Access::Read => loaded.pce.byte_len(),
            Access::Map => loaded.pce.dict.capacity() * 32,
        };
        assert_eq!(loaded.pce.heap_bytes(), heap, "{id}: {access:?}");
        assert_eval_parity(&loaded.pce, circuit);
    }
    // Saving a loaded PCE gives the same bytes.
    let loaded = file::load(&path, Some(id), true, Access::Map).unwrap();
    let again = dir.join(format!("{id}-again.pce"));
    file::save(&loaded.pce, id, &again).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), std::fs::read(&again).unwrap());
    let bpn = std::fs::metadata(&path).unwrap().len() as f64 / pce.nnz() as f64;
    eprintln!("{id}: {} nnz, {bpn:.2} file bytes per nnz", pce.nnz());
}

#[test]
fn round_trip_every_family() {
    let dir = tmp_dir("roundtrip");
    for family in Family::ALL {
        for size in [600, 30_000] {
            let c = Synthetic::new(family, size, 7);
            round_trip(&c.circuit_id(), &c, c.blank(), &dir);
        }
    }
    for n in [0, 1, 40] {
        round_trip(&format!("traps-{n}"), &traps(n), blank_traps(n), &dir);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn small_file(dir: &Path) -> (Vec<u8>, Traps) {
    let c = traps(1);
    let pce = extract(blank_traps(1)).unwrap();
    let p = dir.join("small.pce");
    file::save(&pce, "traps-1", &p).unwrap();
    (std::fs::read(&p).unwrap(), c)
}

#[test]
fn every_truncation_is_refused() {
    let dir = tmp_dir("trunc");
    let (bytes, _) = small_file(&dir);
    assert!(bytes.len() > HEADER_LEN && bytes.len() < 16 << 10, "a few-KB file: {}", bytes.len());
    let p = dir.join("cut.pce");
    for len in 0..bytes.len() {
        std::fs::write(&p, &bytes[..len]).unwrap();
        for verify in [true, false] {
            for access in [Access::Read, Access::Map] {
                let m = bad_msg(file::load(&p, Some("traps-1"), verify, access));
                assert!(m.contains("truncated") || m.contains("magic"), "cut at {len}: {m}");
            }
        }
    }
    // One extra byte is refused too.
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(bad_msg(load_bytes(&longer, None, false)).contains("trailing"));
    eprintln!("{} truncation points refused", bytes.len());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn random_bit_flips_are_refused() {
    let dir = tmp_dir("flips");
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    // A few-KB file and a ~0.5 MB one (where most flips land in big arrays).
    let sha = Synthetic::new(Family::Sha256Chain, 30_000, 1);
    let sha_pce = extract(sha.blank()).unwrap();
    let p = dir.join("sha.pce");
    file::save(&sha_pce, "sha", &p).unwrap();
    let (small, trap) = small_file(&dir);
    let cases: [(Vec<u8>, &str, Witness, usize); 2] = [
        (small, "traps-1", Witness::generate(trap).unwrap(), 3000),
        (std::fs::read(&p).unwrap(), "sha", Witness::generate(sha.clone()).unwrap(), 1000),
    ];
    for (bytes, id, w, n) in cases {
        let (mut accepted_unverified, mut in_header) = (0, 0);
        for _ in 0..n {
            let mut b = bytes.clone();
            let bit = rng.gen_range(0..b.len() * 8);
            b[bit / 8] ^= 1 << (bit % 8);
            in_header += (bit / 8 < HEADER_LEN) as usize;
            bad_msg(load_bytes(&b, Some(id), true));
            if let Ok(l) = load_bytes(&b, Some(id), false) {
                // Structurally valid: must evaluate without panicking.
                accepted_unverified += 1;
                let _ = evaluate(&l.pce, &w);
            }
        }
        eprintln!(
            "{id}: {n} flips ({in_header} in the header) all refused with checksums; \
             {accepted_unverified} passed the structural checks alone and evaluated without panic"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Rewrites the section checksums, fingerprint and header checksum to match
/// the (possibly corrupted) contents, as a careless or hostile writer would.
fn reseal(b: &mut [u8]) {
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let mut h = blake3::Hasher::new_derive_key("cuzk pce fingerprint v1");
    for at in [24, 32, 40, 72, 48, 56, 64, 80, 88, 96] {
        h.update(&b[at..at + 8]);
    }
    for i in 0..SECTIONS {
        let at = 400 + 48 * i;
        let (off, len) = (u64_at(b, at) as usize, u64_at(b, at + 8) as usize);
        let sum = *blake3::hash(&b[off..off + len]).as_bytes();
        b[at + 16..at + 48].copy_from_slice(&sum);
        h.update(&b[at + 8..at + 16]);
        h.update(&sum);
    }
    let fp = *h.finalize().as_bytes();
    b[112..144].copy_from_slice(&fp);
    let sum = *blake3::hash(&b[..992]).as_bytes();
    b[992..1024].copy_from_slice(&sum);
}

fn section(b: &[u8], i: usize) -> (usize, usize) {
    let at = 400 + 48 * i;
    let off = u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
    let len = u64::from_le_bytes(b[at + 8..at + 16].try_into().unwrap()) as usize;
    (off, len)
}

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn structural_corruption_behind_valid_checksums_is_refused() {
    let dir = tmp_dir("struct");
    let (bytes, trap) = small_file(&dir);
    let mut sealed = bytes.clone();
    reseal(&mut sealed);
    assert_eq!(sealed, bytes, "reseal reproduces the writer's checksums");
    let pce = load_bytes(&bytes, None, true).unwrap().pce;
    let cols = (pce.num_inputs + pce.num_aux) as u32;
    let (a_words, _) = section(&bytes, 1);
    let (a_rp, _) = section(&bytes, 0);
    let (b_words, _) = section(&bytes, 3);
    let (dict, _) = section(&bytes, 6);
    // The first TAG_DICT word of B (the `big` constant) and a row of A.
    let bw = &pce.b.words;
    let di = bw.iter().position(|w| w >> 30 == 2).expect("a dictionary coefficient in B");
    type Corrupt = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(&str, Corrupt)> = vec![
        ("column", Box::new(move |b| put_u32(b, a_words, cols))),
        ("tag", Box::new(move |b| put_u32(b, a_words, 3 << 30))),
        ("dictionary index", Box::new(move |b| put_u32(b, b_words + 4 * (di + 1), 1 << 20))),
        ("monotone", Box::new(move |b| put_u32(b, a_rp + 4, 1 << 20))),
        ("start at", Box::new(move |b| put_u32(b, a_rp, 1))),
        ("canonical", Box::new(move |b| b[dict..dict + 32].fill(0xff))),
        (
            "density",
            Box::new(move |b| {
                let (off, _) = section(b, 9);
                b[off] ^= 1; // b_aux bit 0 flipped (popcount checked too)
            }),
        ),
        ("non-zero padding", Box::new(|b| b[HEADER_LEN - 40] = 1)),
    ];
    for (want, corrupt) in cases {
        let mut b = bytes.clone();
        corrupt(&mut b);
        reseal(&mut b);
        for verify in [true, false] {
            let m = bad_msg(load_bytes(&b, None, verify));
            assert!(m.contains(want), "expected {want:?} in {m:?}");
        }
    }
    // A dictionary tag on the last word of a row: retag the last word of A's row 0.
    let end0 = pce.a.row_ptr[1] as usize;
    let mut b = bytes.clone();
    let w = pce.a.words[end0 - 1];
    put_u32(&mut b, a_words + 4 * (end0 - 1), (w & ((1 << 30) - 1)) | 2 << 30);
    reseal(&mut b);
    let m = bad_msg(load_bytes(&b, None, false));
    assert!(m.contains("last word") || m.contains("dictionary index") || m.contains("non-zeros"), "{m}");

    // Random word corruption behind valid checksums: refused, or structurally
    // valid and then evaluation must not panic.
    let w = Witness::generate(trap).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let (mut refused, mut accepted) = (0, 0);
    for _ in 0..2000 {
        let mut b = bytes.clone();
        let i = [0, 1, 2, 3, 4, 5, 7, 8, 9][rng.gen_range(0..9)];
        let (off, len) = section(&b, i);
        if len == 0 {
            continue;
        }
        let at = off + rng.gen_range(0..len);
        b[at] ^= 1 << rng.gen_range(0..8);
        reseal(&mut b);
        match load_bytes(&b, None, true) {
            Ok(l) => {
                accepted += 1;
                let _ = evaluate(&l.pce, &w);
            }
            Err(Error::BadPceFile(_)) => refused += 1,
            Err(e) => panic!("{e:?}"),
        }
    }
    eprintln!("resealed random flips: {refused} refused, {accepted} valid and evaluated without panic");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn foreign_version_and_circuit_are_refused() {
    let dir = tmp_dir("foreign");
    let (bytes, _) = small_file(&dir);
    let p = dir.join("x.pce");
    std::fs::write(&p, &bytes).unwrap();
    let m = bad_msg(file::load(&p, Some("porep-32g-v1"), true, Access::Read));
    assert!(m.contains("traps-1") && m.contains("porep-32g-v1"), "{m}");
    assert!(file::load(&p, None, true, Access::Read).is_ok());
    // Another format version; version 2 (with a witness program) with version 1's ten sections.
    let mut b = bytes.clone();
    put_u32(&mut b, 8, 3);
    assert!(bad_msg(load_bytes(&b, None, true)).contains("format version 3"));
    let mut b = bytes.clone();
    put_u32(&mut b, 8, 2);
    reseal(&mut b);
    assert!(bad_msg(load_bytes(&b, None, true)).contains("10 sections, version 2 has 11"));
    // The anchor's format (magic "PCE\x02", version 2).
    let mut anchor = b"PCE\x02\x02\x00\x00\x00".to_vec();
    anchor.resize(4096, 0);
    assert!(bad_msg(load_bytes(&anchor, None, false)).contains("not a cuzk PCE file"));
    // Arbitrary bytes, an empty file, a missing file.
    assert!(bad_msg(load_bytes(&[7u8; 5000], None, false)).contains("magic"));
    assert!(bad_msg(load_bytes(&[], None, false)).contains("truncated"));
    assert!(matches!(file::load(&dir.join("missing.pce"), None, true, Access::Read), Err(Error::Io(_))));
    // A bad circuit id at save time.
    let pce = extract(blank_traps(0)).unwrap();
    assert!(matches!(file::save(&pce, "", &p), Err(Error::InvalidInput(_))));
    assert!(matches!(file::save(&pce, &"x".repeat(300), &p), Err(Error::InvalidInput(_))));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn save_is_atomic_and_leaves_no_temp_files() {
    let dir = tmp_dir("atomic");
    let pce = extract(blank_traps(3)).unwrap();
    let p = dir.join("t.pce");
    file::save(&pce, "t", &p).unwrap();
    file::save(&pce, "t", &p).unwrap(); // over an existing file
    let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec![std::ffi::OsString::from("t.pce")]);
    // Into a missing directory: an error, nothing left behind.
    assert!(matches!(file::save(&pce, "t", &dir.join("nope/t.pce")), Err(Error::Io(_))));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn concurrent_loads_share_one_instance() {
    let _g = REGISTRY_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tmp_dir("concurrent");
    let path = dir.join("mimc.pce");
    let id = "test-concurrent-mimc";
    let extractions = Arc::new(AtomicUsize::new(0));
    let c = Synthetic::new(Family::MimcChain, 20_000, 3);
    let barrier = Arc::new(Barrier::new(16));
    let got: Vec<Arc<Pce>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..16)
            .map(|_| {
                let (barrier, extractions, path, blank) =
                    (barrier.clone(), extractions.clone(), path.clone(), c.blank());
                s.spawn(move || {
                    barrier.wait();
                    registry::load_or_extract(id, &path, true, Access::Read, || {
                        extractions.fetch_add(1, Ordering::SeqCst);
                        extract(blank)
                    })
                    .unwrap()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(extractions.load(Ordering::SeqCst), 1, "extraction ran once");
    assert!(got.iter().all(|p| Arc::ptr_eq(p, &got[0])), "one instance");
    assert!(Arc::ptr_eq(&registry::get(id).unwrap(), &got[0]));
    assert!(registry::loaded().contains(&id.to_string()));
    // Read back from the saved file: compact, all of it on the heap.
    assert_eq!(got[0].heap_bytes(), got[0].byte_len());
    assert_eval_parity(&got[0], &c);
    drop(got);
    assert!(registry::unload(id));
    assert!(!registry::unload(id));
    assert!(registry::get(id).is_none());
    // Loading again reads the file: no extraction.
    let again = registry::load_or_extract(id, &path, false, Access::Map, || panic!("must not extract")).unwrap();
    assert_eq!(again.num_constraints(), c.rows());
    assert!(registry::unload(id));
    // A file for another circuit at that path is an error, not re-extracted over.
    let m = registry::load_or_extract("test-other-id", &path, true, Access::Read, || panic!("must not extract"));
    assert!(matches!(m, Err(Error::BadPceFile(ref m)) if m.contains(id)), "{m:?}");
    assert!(registry::get("test-other-id").is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_read_pce_outlives_changes_to_its_file() {
    let _g = REGISTRY_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tmp_dir("changed");
    let (path, other) = (dir.join("mimc.pce"), dir.join("sha.pce"));
    let id = "test-changed-mimc";
    let c = Synthetic::new(Family::MimcChain, 20_000, 5);
    file::save(&extract(c.blank()).unwrap(), id, &path).unwrap();
    let sha = Synthetic::new(Family::Sha256Chain, 30_000, 1);
    file::save(&extract(sha.blank()).unwrap(), "sha", &other).unwrap();
    let (pce0, mapped0) = (mem::owner_bytes(Owner::Pce), mem::owner_bytes(Owner::PceMapped));
    let pce = registry::load_or_extract(id, &path, true, Access::Read, || panic!("must not extract")).unwrap();
    // Every byte the PCE uses is its own, counted as the PCE's heap.
    assert_eq!(pce.heap_bytes(), pce.byte_len());
    assert_eq!(mem::owner_bytes(Owner::Pce) - pce0, pce.byte_len() as u64);
    assert_eq!(mem::owner_bytes(Owner::PceMapped), mapped0);
    // Truncated, then rewritten in place with another file's bytes (what
    // `cp sha.pce mimc.pce` does): a mapping would now fault or change.
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(0).unwrap();
    drop(f);
    std::fs::write(&path, std::fs::read(&other).unwrap()).unwrap();
    assert_eval_parity(&pce, &c);
    assert!(registry::unload(id));
    drop(pce);
    assert_eq!(mem::owner_bytes(Owner::Pce), pce0, "heap accounting back to baseline");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unload_frees_memory_and_accounting() {
    let _g = REGISTRY_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tmp_dir("unload");
    let path = dir.join("sha.pce");
    let id = "test-unload-sha";
    let c = Synthetic::new(Family::Sha256Chain, 1 << 21, 1);
    let (pce0, mapped0) = (mem::owner_bytes(Owner::Pce), mem::owner_bytes(Owner::PceMapped));
    let pce = registry::load_or_extract(id, &path, true, Access::Map, || extract(c.blank())).unwrap();
    let file_len = std::fs::metadata(&path).unwrap().len();
    let s1 = mem::stats();
    let (heap, mapped) = (pce.heap_bytes() as u64, (pce.byte_len() - pce.heap_bytes()) as u64);
    assert_eq!(mem::owner_bytes(Owner::Pce) - pce0, heap);
    assert_eq!(mem::owner_bytes(Owner::PceMapped) - mapped0, mapped);
    assert!(mapped > file_len * 9 / 10 && mapped <= file_len, "{mapped} of {file_len}");
    // The registry drops its reference; a user still holds one.
    assert!(registry::unload(id));
    assert_eq!(mem::owner_bytes(Owner::PceMapped) - mapped0, mapped, "still held by a user");
    drop(pce);
    assert_eq!(mem::owner_bytes(Owner::Pce), pce0, "heap accounting back to baseline");
    assert_eq!(mem::owner_bytes(Owner::PceMapped), mapped0, "mapped accounting back to baseline");
    let s2 = mem::stats();
    // The mapping was populated, so its pages count in RssFile until unmapped.
    // Tolerance 8 MiB: other tests of this binary map only files < 1 MB, and
    // the binary's own text pages can fault in meanwhile (a few MB at most).
    let dropped = s1.rss_file_bytes as i64 - s2.rss_file_bytes as i64;
    let tol = 8 << 20;
    eprintln!(
        "file {file_len} B; RssFile {} -> {} (dropped {dropped}); VmRSS {} -> {}",
        s1.rss_file_bytes, s2.rss_file_bytes, s1.rss_bytes, s2.rss_bytes
    );
    assert!(file_len > 32 << 20, "a file big enough to see: {file_len}");
    assert!((dropped - file_len as i64).abs() < tol, "RssFile dropped {dropped}, file is {file_len}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Writes small valid files as a seed corpus for `fuzz/` (run by hand:
/// `CUZK_FUZZ_SEEDS=fuzz/corpus/pce_load cargo test ... -- --ignored write_fuzz_seeds`).
#[test]
#[ignore]
fn write_fuzz_seeds() {
    let dir = PathBuf::from(std::env::var("CUZK_FUZZ_SEEDS").expect("CUZK_FUZZ_SEEDS"));
    std::fs::create_dir_all(&dir).unwrap();
    for n in [0, 1, 3] {
        file::save(&extract(blank_traps(n)).unwrap(), &format!("traps-{n}"), &dir.join(format!("traps-{n}"))).unwrap();
    }
    for f in Family::ALL {
        let c = Synthetic::new(f, 300, 1);
        file::save(&extract(c.blank()).unwrap(), &c.circuit_id(), &dir.join(c.circuit_id())).unwrap();
    }
    // A file with its witness program (format version 2).
    let c = Synthetic::new(Family::Sha256Chain, 300, 1);
    let pce = extract(c.blank()).unwrap();
    assert!(pce.program(|| None).is_some());
    file::save(&pce, &c.circuit_id(), &dir.join(format!("{}-program", c.circuit_id()))).unwrap();
}

/// A load that asks for checksums is not served, as it is, an instance loaded before without
/// them: its file's sections are checked then (once), and a corrupt one is refused.
#[test]
fn a_verified_load_checks_an_instance_loaded_unverified() {
    let _g = REGISTRY_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tmp_dir("verify-on-hit");
    let c = Synthetic::new(Family::Sha256Chain, 30_000, 1);
    let good = dir.join("good.pce");
    file::save(&extract(c.blank()).unwrap(), "test-verify-on-hit", &good).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    // A flip past the header that only the checksums catch.
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let corrupt = (0..10_000)
        .map(|_| {
            let mut b = bytes.clone();
            let bit = rng.gen_range(HEADER_LEN * 8..b.len() * 8);
            b[bit / 8] ^= 1 << (bit % 8);
            b
        })
        .find(|b| load_bytes(b, None, false).is_ok())
        .expect("some flips pass the structural checks");
    let bad = dir.join("bad.pce");
    std::fs::write(&bad, &corrupt).unwrap();
    for access in [Access::Read, Access::Map] {
        let id = "test-verify-on-hit";
        let p = registry::load_or_extract(id, &bad, false, access, || panic!("must not extract")).unwrap();
        let m = registry::load_or_extract(id, &bad, true, access, || panic!("must not extract"));
        assert!(matches!(m, Err(Error::BadPceFile(ref m)) if m.contains("checksum")), "{m:?}");
        drop(p);
        assert!(registry::unload(id));
        let p = registry::load_or_extract(id, &good, false, access, || panic!("must not extract")).unwrap();
        let q = registry::load_or_extract(id, &good, true, access, || panic!("must not extract")).unwrap();
        assert!(Arc::ptr_eq(&p, &q));
        assert!(registry::unload(id));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A circuit whose witnesses replay a program has it recorded at extraction and saved with its
/// PCE. A restart (unloaded, loaded again) replays the file's program without recording it;
/// once one process's witness agreed with the gadgets, the next trusts it at once. Its bytes
/// count as the PCE's, read or mapped.
#[test]
fn extraction_saves_the_witness_program() {
    let _g = REGISTRY_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tmp_dir("program");
    let circuit = Circuit::parse("sha256-chain", 60_000).unwrap();
    let id = circuit.circuit_id().unwrap();
    let instance = || circuit.statement(3, &[]).unwrap().instance(0).unwrap();
    let want = Witness::generate(instance()).unwrap();
    let witness = |pce: &Pce| instance().witness(pce, WitnessBuffer::new(pce.num_inputs, pce.num_aux)).unwrap();
    for access in [Access::Read, Access::Map] {
        let path = dir.join(format!("{access:?}.pce"));
        let (pce0, mapped0) = (mem::owner_bytes(Owner::Pce), mem::owner_bytes(Owner::PceMapped));
        for restart in [false, true] {
            let pce = circuit.load_pce(&path, true, access).unwrap();
            let version = u32::from_le_bytes(std::fs::read(&path).unwrap()[8..12].try_into().unwrap());
            assert_eq!(version, 2, "saved with its witness program");
            let program = pce.program(|| panic!("the file's program is not recorded again")).unwrap();
            let heap = (pce.heap_bytes() + program.heap_bytes()) as u64;
            let mapped = (pce.byte_len() - pce.heap_bytes() + program.mapped_bytes()) as u64;
            assert_eq!(mem::owner_bytes(Owner::Pce) - pce0, heap, "{access:?}");
            assert_eq!(mem::owner_bytes(Owner::PceMapped) - mapped0, mapped, "{access:?}");
            assert!(program.heap_bytes() > 0, "at least its coefficients");
            assert_eq!(program.mapped_bytes() > 0, access == Access::Map);
            // The first process judges with the gadgets; the restarted one knows the verdict.
            assert_eq!(pce.program.trusted(), restart.then_some(true), "restart {restart}");
            assert!(witness(&pce) == want);
            assert_eq!(pce.program.trusted(), Some(true));
            assert!(dir.join(format!("{access:?}.pce.vouched")).exists());
            drop(pce);
            assert!(registry::unload(&id));
        }
        assert_eq!(mem::owner_bytes(Owner::Pce), pce0, "heap accounting back to baseline");
        assert_eq!(mem::owner_bytes(Owner::PceMapped), mapped0, "mapped accounting back to baseline");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
