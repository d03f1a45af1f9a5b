//! What making an engine does to the host process's malloc: by default it
//! fixes glibc's mmap threshold, so that large blocks are mapped and unmapped
//! whatever was freed before; `tune_malloc: false` leaves glibc adjusting its
//! threshold as it does by default. A test binary of its own: the threshold
//! is process-wide and, once fixed, stays fixed.
#![cfg(all(target_os = "linux", target_env = "gnu"))]

use cuzk::engine::{BudgetSpec, Engine, EngineConfig};

/// A block of the proof buffers' scale: above the engine's 128 KiB threshold,
/// below glibc's 32 MiB cap on its adjusting one.
const BLOCK: usize = 8 << 20;

/// Whether a block of `bytes` allocated now gets a mapping of its own (glibc
/// counts those in `hblks`); the block is freed again.
fn mapped_alone(bytes: usize) -> bool {
    // SAFETY: mallinfo2 only reads glibc's counters; the block is allocated,
    // checked and freed here, never dereferenced.
    unsafe {
        let before = libc::mallinfo2().hblks;
        // black_box: an allocation nothing uses could be optimised away.
        let p = std::hint::black_box(libc::malloc(bytes));
        assert!(!p.is_null(), "malloc({bytes})");
        let after = libc::mallinfo2().hblks;
        libc::free(p);
        after > before
    }
}

#[test]
fn an_engine_fixes_the_mmap_threshold_unless_told_not_to() {
    let config = |tune_malloc| EngineConfig {
        synthesis_threads: 1,
        devices: Some(vec![]),
        budget: BudgetSpec::Bytes(1 << 30),
        tune_malloc,
        ..EngineConfig::default()
    };
    let kept = Engine::new(config(false)).unwrap();
    // glibc's own behaviour, on a thread of its own (so that the block it
    // leaves in its arena is not this thread's): freeing a mapped block
    // raises the threshold past its size, so the next block of that size
    // comes from an arena.
    let adjusts = std::thread::spawn(|| {
        mapped_alone(BLOCK);
        !mapped_alone(BLOCK)
    });
    assert!(adjusts.join().unwrap(), "with tune_malloc false, glibc's threshold adjusts as before");
    drop(kept);
    let _tuned = Engine::new(config(true)).unwrap();
    // Fixed: every large block this thread allocates is mapped, and freeing
    // it does not raise the threshold.
    for _ in 0..3 {
        assert!(mapped_alone(BLOCK), "the default engine fixes the threshold: every large block is mapped");
    }
}
