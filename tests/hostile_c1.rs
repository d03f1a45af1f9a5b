//! Hostile C1 outputs, as a host could be sent them, with every allocation counted: each is
//! refused without allocating more than a small part of its own size (a C1 read through a
//! JSON document took 16 times it), and a good C1's parsed form is within what the engine
//! reserves for it.
//! One test: the counts are the process's.
#![cfg(feature = "porep")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use cuzk::circuits::porep::{self, PorepC1, PorepSize};
use cuzk::Error;

/// The system allocator, counting the bytes live and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let now = LIVE.fetch_add(bytes, Ordering::SeqCst) + bytes;
    PEAK.fetch_max(now, Ordering::SeqCst);
}

// SAFETY: every call is forwarded to `System` unchanged; the counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, layout);
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        let q = System.realloc(p, layout, size);
        if !q.is_null() {
            if size >= layout.size() {
                grew(size - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - size, Ordering::SeqCst);
            }
        }
        q
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// `f`'s result and the most bytes it had allocated at once beyond what was live before.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let out = f();
    (out, PEAK.load(Ordering::SeqCst) - before)
}

const MIB: usize = 1 << 20;

/// A 2 KiB C1's head with `vanilla` as its vanilla proofs and `extra` as one more field.
fn c1_with(vanilla: &str, extra: &str) -> Vec<u8> {
    format!(r#"{{"registered_proof":"StackedDrg2KiBV1_1",{extra}"vanilla_proofs":{vanilla}}}"#).into_bytes()
}

#[test]
fn hostile_c1_outputs_cost_little_memory() {
    let junk_numbers = format!("{{\"StackedDrg2KiBV1\":[[{}1]]}}", "1,".repeat(16 * MIB));
    let cases = [
        // A JSON document of this took 512 MiB (32 B per number).
        ("an array of 16 Mi numbers", c1_with(&junk_numbers, "")),
        (
            "an array of 16 Mi numbers, nowhere expected",
            c1_with("{}", &format!("\"junk\":[{}1],", "1,".repeat(16 * MIB))),
        ),
        ("nesting 16 Mi deep", c1_with(&format!("{}{}", "[".repeat(16 * MIB), "]".repeat(16 * MIB)), "")),
        ("a 32 MiB string, nowhere expected", c1_with("{}", &format!("\"junk\":\"{}\",", "a".repeat(32 * MIB)))),
        (
            "an object of 1 Mi keys",
            c1_with(&format!("{{{}\"z\":0}}", (0..MIB).map(|i| format!("\"k{i}\":[1],")).collect::<String>()), ""),
        ),
    ];
    for (what, bytes) in &cases {
        let (r, peak) = peak_of(|| PorepC1::parse(bytes));
        assert!(matches!(r, Err(Error::InvalidInput(_))), "{what}: {:?}", r.map(|c| c.num_partitions()));
        assert!(peak < bytes.len() / 8, "{what}: {peak} bytes allocated for a C1 of {}", bytes.len());
    }

    // A good C1: its parsed form holds at most what `heap_bytes` says (what the engine reserves,
    // in shares, beside its partitions), and not far less.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cuzk-hostile-{}", std::process::id()));
    let good = cuzk::oracles::porep::make_c1(PorepSize::KiB2, porep::SealVariant::Interactive, &dir, 7).unwrap().bytes;
    let _ = std::fs::remove_dir_all(&dir);
    let before = LIVE.load(Ordering::SeqCst);
    let c1 = PorepC1::parse(&good).unwrap();
    let held = LIVE.load(Ordering::SeqCst) - before;
    let counted = c1.heap_bytes() as usize;
    assert!(held <= counted && counted < 2 * held, "the parsed C1 holds {held} bytes, {counted} are counted");

    // The same C1 with its challenge proofs repeated a thousand times: refused, having held
    // about them and no more.
    let mut v: serde_json::Value = serde_json::from_slice(&good).unwrap();
    let proofs = v["vanilla_proofs"]["StackedDrg2KiBV1"][0].as_array_mut().unwrap();
    let one = proofs[0].clone();
    proofs.extend(std::iter::repeat_n(one, 1000));
    let big = serde_json::to_vec(&v).unwrap();
    drop(v);
    let (r, peak) = peak_of(|| PorepC1::parse(&big));
    assert!(matches!(r, Err(Error::InvalidInput(m)) if m.contains("challenge proofs")));
    assert!(peak < big.len(), "{peak} bytes allocated for a C1 of {}", big.len());
}
