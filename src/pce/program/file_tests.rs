//! The witness program in its `.pce` file: saved and loaded back equal, version-1 files,
//! damaged and hostile program sections, and the verdict kept beside the file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
use bellperson::gadgets::sha256::sha256_compression_function;
use bellperson::gadgets::uint32::UInt32;
use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use super::{Layout, Program};
use crate::circuits::Sha256Chain;
use crate::pce::file::{self, Access, FileBytes, LoadedPce};
use crate::pce::{extract, Pce};
use crate::witness::{Witness, WitnessBuffer};
use crate::Error;

/// Where the header keeps the witness program's section entry, and its own checksum.
const PROGRAM_ENTRY: usize = 880;
const HEADER_SUM: usize = 992;

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cuzk-program-file-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `k` SHA-256 compressions, each of its own message block from the IV: parts that read only
/// themselves and the ONE, so that its program splits by block. `seed: None` is the blank.
#[derive(Clone)]
struct Blocks {
    k: usize,
    seed: Option<u64>,
}

impl Blocks {
    fn layout(&self) -> Layout {
        Layout { prefix_inputs: 1, prefix_aux: 0, parts: self.k }
    }
}

impl Circuit<Scalar> for Blocks {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut rng = self.seed.map(ChaCha20Rng::seed_from_u64);
        let iv = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
        for i in 0..self.k {
            let bits = (0..512)
                .map(|j| {
                    let v = rng.as_mut().map(|r| r.gen::<bool>());
                    Ok(Boolean::from(AllocatedBit::alloc(cs.namespace(|| format!("block {i} bit {j}")), v)?))
                })
                .collect::<Result<Vec<_>, SynthesisError>>()?;
            let state: Vec<UInt32> = iv.iter().map(|&v| UInt32::constant(v)).collect();
            sha256_compression_function(cs.namespace(|| format!("block {i}")), &bits, &state)?;
        }
        Ok(())
    }
}

/// The values of `p`'s free columns in `w`.
fn free_values(p: &Program, w: &Witness) -> Vec<Scalar> {
    let at = |c: usize| if c < w.inputs.len() { w.inputs[c] } else { w.aux[c - w.inputs.len()] };
    p.free().iter().map(|&c| at(c as usize)).collect()
}

fn replay(p: &Program, pce: &Pce, w: &Witness) -> crate::Result<Witness> {
    p.run(pce, free_values(p, w), WitnessBuffer::new(0, 0))
}

fn assert_same_program(a: &Program, b: &Program) {
    assert_eq!(a.steps[..], b.steps[..], "steps");
    assert_eq!(a.groups[..], b.groups[..], "groups");
    assert_eq!(a.free[..], b.free[..], "free columns");
    assert_eq!(a.is_bit[..], b.is_bit[..], "boolean columns");
    let split = |p: &Program| p.split.as_ref().map(|s| (s.layout, s.ends.clone()));
    assert_eq!(split(a), split(b), "split");
}

/// `pce` with its program recorded (split by `layout`), saved to `path`; its bytes.
fn save_with_program(pce: &Pce, layout: Option<Layout>, path: &Path) -> Vec<u8> {
    assert!(pce.program(|| layout).is_some());
    file::save(pce, "program-test", path).unwrap();
    std::fs::read(path).unwrap()
}

fn load_bytes(bytes: &[u8], verify: bool) -> crate::Result<LoadedPce> {
    file::load_from(FileBytes::copy_of(bytes), None, verify)
}

/// The program of a loaded PCE, which must not be recorded again.
fn loaded_program(pce: &Pce) -> &Program {
    pce.program(|| panic!("a program loaded with its file is not recorded again")).expect("a loaded program")
}

/// A sha256-chain and a split circuit: saved with their programs, loaded back (read and
/// mapped) with the same program, which replays the same witness as a fresh one, the
/// gadgets' own.
#[test]
fn a_saved_program_loads_back_equal() {
    let dir = tmp_dir("equal");
    let chain = (Sha256Chain::random(2, 3), Sha256Chain::blank(2));
    let blocks = (Blocks { k: 3, seed: Some(4) }, Blocks { k: 3, seed: None });
    let cases: [(Witness, Pce, Option<Layout>); 2] = [
        (Witness::generate(chain.0).unwrap(), extract(chain.1).unwrap(), None),
        (Witness::generate(blocks.0.clone()).unwrap(), extract(blocks.1).unwrap(), Some(blocks.0.layout())),
    ];
    for (i, (w, pce, layout)) in cases.iter().enumerate() {
        let path = dir.join(format!("{i}.pce"));
        let bytes = save_with_program(pce, *layout, &path);
        assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 2, "format version 2");
        let fresh = Program::record(pce, *layout).unwrap();
        assert_eq!(fresh.is_split(), layout.is_some());
        let want = replay(&fresh, pce, w).unwrap();
        assert!(want == *w, "the fresh program replays the gadgets' witness");
        for access in [Access::Read, Access::Map] {
            let loaded = file::load(&path, Some("program-test"), true, access).unwrap();
            assert_eq!(loaded.fingerprint, file::fingerprint(pce), "the fingerprint names the matrices alone");
            let p = loaded_program(&loaded.pce);
            assert_same_program(p, &fresh);
            assert!(replay(p, &loaded.pce, w).unwrap() == want, "{access:?}: the same witness, bit for bit");
            // Saved again, the same bytes.
            let again = dir.join(format!("{i}-again.pce"));
            file::save(&loaded.pce, "program-test", &again).unwrap();
            assert_eq!(std::fs::read(&again).unwrap(), bytes);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A PCE saved without a program is a version-1 file, as before the program's section: it
/// loads, and its program is recorded on first use.
#[test]
fn a_version_1_file_loads_and_records() {
    let dir = tmp_dir("v1");
    let c = Sha256Chain::random(1, 5);
    let pce = extract(Sha256Chain::blank(1)).unwrap();
    let path = dir.join("v1.pce");
    file::save(&pce, "v1", &path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 1, "format version 1");
    assert_eq!(u32::from_le_bytes(bytes[104..108].try_into().unwrap()), 10, "ten sections");
    assert!(bytes[PROGRAM_ENTRY..HEADER_SUM].iter().all(|&b| b == 0), "no program entry");
    let loaded = file::load(&path, Some("v1"), true, Access::Read).unwrap();
    let recorded = AtomicUsize::new(0);
    let p = loaded.pce.program(|| {
        recorded.fetch_add(1, Ordering::Relaxed);
        None
    });
    assert_eq!(recorded.load(Ordering::Relaxed), 1, "recorded on first use");
    let w = Witness::generate(c).unwrap();
    assert!(replay(p.unwrap(), &loaded.pce, &w).unwrap() == w);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Rewrites the program section's checksum and the header checksum to match the (possibly
/// corrupted) section, as a careless or hostile writer would.
fn reseal(b: &mut [u8]) {
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
    let (off, len) = (u64_at(b, PROGRAM_ENTRY), u64_at(b, PROGRAM_ENTRY + 8));
    let sum = *blake3::hash(&b[off..off + len]).as_bytes();
    b[PROGRAM_ENTRY + 16..PROGRAM_ENTRY + 48].copy_from_slice(&sum);
    let sum = *blake3::hash(&b[..HEADER_SUM]).as_bytes();
    b[HEADER_SUM..HEADER_SUM + 32].copy_from_slice(&sum);
}

/// The program section's byte range.
fn program_section(b: &[u8]) -> std::ops::Range<usize> {
    let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
    u64_at(PROGRAM_ENTRY)..u64_at(PROGRAM_ENTRY) + u64_at(PROGRAM_ENTRY + 8)
}

fn bad_msg(r: crate::Result<LoadedPce>) -> String {
    match r {
        Err(Error::BadPceFile(m)) => m,
        Err(e) => panic!("expected BadPceFile, got {e:?}"),
        Ok(_) => panic!("a bad program section was accepted"),
    }
}

/// A damaged program section is refused, checksums skipped or not; one resealed by a hostile
/// writer is refused where an index is out of range, and otherwise replays without a panic.
#[test]
fn a_damaged_or_hostile_program_section_is_refused() {
    let dir = tmp_dir("damaged");
    let c = Blocks { k: 2, seed: Some(6) };
    let w = Witness::generate(c.clone()).unwrap();
    let pce = extract(Blocks { k: 2, seed: None }).unwrap();
    let bytes = save_with_program(&pce, Some(c.layout()), &dir.join("blocks.pce"));
    let section = program_section(&bytes);
    let mut sealed = bytes.clone();
    reseal(&mut sealed);
    assert_eq!(sealed, bytes, "reseal reproduces the writer's checksums");
    let loaded = load_bytes(&bytes, false).unwrap();
    let p = loaded_program(&loaded.pce);
    assert!(p.is_split());

    // Damaged: the checksum catches it, whether or not the other sections' are checked.
    let mut b = bytes.clone();
    b[section.start + 200] ^= 4;
    for verify in [true, false] {
        assert!(bad_msg(load_bytes(&b, verify)).contains("witness program section checksum"));
    }

    // Hostile, behind valid checksums: each field out of range, refused by name.
    let rows = pce.num_constraints() as u32;
    let cols = (pce.num_inputs + pce.num_aux) as u32;
    let steps_at = section.start + 128;
    let first_bits = p.steps.iter().position(|s| s[1] >> 30 == 3).expect("a decomposition step");
    let parts_at = section.start + 48;
    type Corrupt = Box<dyn Fn(&mut Vec<u8>)>;
    let put = |b: &mut Vec<u8>, at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let cases: Vec<(&str, Corrupt)> = vec![
        ("row", Box::new(move |b| put(b, steps_at, rows))),
        ("target column", Box::new(move |b| put(b, steps_at + 4, cols))),
        ("group offset", Box::new(move |b| put(b, steps_at + 8 * first_bits + 4, 3 << 30 | 1))),
        ("version", Box::new(move |b| put(b, section.start, 2))),
        ("counts disagree", Box::new(move |b| put(b, parts_at, 3))),
        ("another circuit", Box::new(move |b| put(b, section.start + 8, 2))),
    ];
    for (want, corrupt) in cases {
        let mut b = bytes.clone();
        corrupt(&mut b);
        reseal(&mut b);
        let m = bad_msg(load_bytes(&b, false));
        assert!(m.contains(want), "expected {want:?} in {m:?}");
    }

    // Random flips behind valid checksums: refused, or replayed without a panic.
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let (mut refused, mut replayed) = (0, 0);
    for _ in 0..300 {
        let mut b = bytes.clone();
        for _ in 0..rng.gen_range(1..4) {
            let at = rng.gen_range(section.clone());
            b[at] ^= 1 << rng.gen_range(0..8);
        }
        reseal(&mut b);
        match load_bytes(&b, false) {
            Ok(l) => {
                replayed += 1;
                let p = loaded_program(&l.pce);
                if let Err(e) = replay(p, &l.pce, &w) {
                    assert!(!e.to_string().contains("panicked"), "a checked program panicked: {e}");
                }
            }
            Err(Error::BadPceFile(_)) => refused += 1,
            Err(e) => panic!("{e:?}"),
        }
    }
    eprintln!("resealed random flips: {refused} refused, {replayed} checked and replayed without a panic");
    assert!(refused > 0 && replayed > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The first witness of a loaded program is checked against the gadgets once per file: the
/// verdict written beside it spares every later load the gadgets; a verdict of disagreement
/// leaves the gadgets in charge; one for another file, or damaged, is ignored.
#[test]
fn the_verdict_beside_the_file_spares_the_gadgets() {
    let dir = tmp_dir("vouched");
    let c = Sha256Chain::random(1, 8);
    let w = Witness::generate(c.clone()).unwrap();
    let gadgets = || crate::witness::digest_of(|cs| c.clone().synthesize(cs));
    let path = dir.join("chain.pce");
    let sidecar = dir.join("chain.pce.vouched");
    save_with_program(&extract(Sha256Chain::blank(1)).unwrap(), None, &path);
    let load = |path: &Path| file::load(path, None, false, Access::Read).unwrap().pce;

    // First "process": no verdict yet; the gadgets judge, and the verdict is written.
    let pce = load(&path);
    assert_eq!(pce.program.trusted(), None);
    let calls = AtomicUsize::new(0);
    let replayed = replay(loaded_program(&pce), &pce, &w).unwrap();
    let judged = pce.vouch(replayed, || {
        calls.fetch_add(1, Ordering::Relaxed);
        gadgets()
    });
    assert!(judged.unwrap().is_some_and(|r| r == w));
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    assert_eq!(std::fs::metadata(&sidecar).unwrap().len(), 80);

    // A later "process": trusted at once, the gadgets never called.
    let pce = load(&path);
    assert_eq!(pce.program.trusted(), Some(true));
    let replayed = replay(loaded_program(&pce), &pce, &w).unwrap();
    let trusted = pce.vouch(replayed, || panic!("the gadgets are not called for a vouched file"));
    assert!(trusted.unwrap().is_some_and(|r| r == w));

    // The verdict for another file (another circuit here), or a damaged one, is ignored.
    let other = dir.join("other.pce");
    save_with_program(&extract(Sha256Chain::blank(2)).unwrap(), None, &other);
    std::fs::copy(&sidecar, dir.join("other.pce.vouched")).unwrap();
    assert_eq!(load(&other).program.trusted(), None, "another file's verdict");
    let good = std::fs::read(&sidecar).unwrap();
    let mut flipped = good.clone();
    flipped[20] ^= 1;
    for damage in [good[..79].to_vec(), [&good[..], &[0]].concat(), flipped] {
        std::fs::write(&sidecar, damage).unwrap();
        assert_eq!(load(&path).program.trusted(), None, "a damaged verdict");
    }

    // A verdict of disagreement: the program is not used, nor saved again.
    super::vouched::Sidecar::of(&path, crate::pce::header::identity(&std::fs::read(&path).unwrap()))
        .write(false)
        .unwrap();
    let pce = load(&path);
    assert_eq!(pce.program.trusted(), Some(false));
    assert!(pce.program(|| panic!("not recorded either")).is_none());
    assert!(pce.program.to_save().is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}
