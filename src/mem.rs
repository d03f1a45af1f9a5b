//! Memory instrumentation: what the kernel says the process holds (VmRSS,
//! VmHWM, RssAnon, RssFile), a resettable peak, `malloc_trim`, and per-owner
//! byte accounting that the rest of the crate keeps up to date through
//! [`Tracked`] guards.
//!
//! The kernel figures are the truth; the owner counters say *who* holds it.
//! VmHWM is the kernel's own high-water mark, so a short-lived spike between
//! two samples is never missed (sampling VmRSS is how the anchor under-reported
//! its peak by 70 GiB).

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Mutex, Weak};

use crate::{Error, Result};

/// Who holds a block of memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Owner {
    /// PCE bytes in anonymous (heap) memory: a PCE read from its `.pce` file
    /// (the default) or extracted and not saved, whole; the dictionary of a
    /// mapped one.
    Pce,
    /// PCE bytes mapped from a `.pce` file (page cache, shared, reclaimable;
    /// only when mapping was asked for).
    PceMapped,
    /// Groth16 parameters (SRS) held resident.
    Srs,
    /// Witness assignments of in-flight proofs (and their buffers kept for
    /// the next proofs).
    Witness,
    /// The a, b, c evaluations of in-flight proofs (and their buffers kept).
    Abc,
    /// Device memory in use on the GPUs (all devices together).
    Gpu,
}

impl Owner {
    pub const ALL: [Owner; 6] = [Owner::Pce, Owner::PceMapped, Owner::Srs, Owner::Witness, Owner::Abc, Owner::Gpu];

    pub fn name(self) -> &'static str {
        match self {
            Owner::Pce => "pce",
            Owner::PceMapped => "pce_mapped",
            Owner::Srs => "srs",
            Owner::Witness => "witness",
            Owner::Abc => "abc",
            Owner::Gpu => "gpu",
        }
    }

    fn slot(self) -> &'static AtomicU64 {
        &COUNTERS[self as usize]
    }
}

static COUNTERS: [AtomicU64; 6] =
    [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];

/// A byte count: `u64`, `usize` or `u32`, so callers need no casts.
pub trait ByteCount {
    fn to_u64(self) -> u64;
}
impl ByteCount for u64 {
    fn to_u64(self) -> u64 {
        self
    }
}
impl ByteCount for usize {
    fn to_u64(self) -> u64 {
        self as u64
    }
}
impl ByteCount for u32 {
    fn to_u64(self) -> u64 {
        self as u64
    }
}

/// RAII accounting: adds `bytes` to `owner` on creation, subtracts them on drop.
#[derive(Debug)]
pub struct Tracked {
    owner: Owner,
    bytes: u64,
}

impl Tracked {
    pub fn new(owner: Owner, bytes: impl ByteCount) -> Tracked {
        let bytes = bytes.to_u64();
        owner.slot().fetch_add(bytes, Ordering::Relaxed);
        Tracked { owner, bytes }
    }

    /// Changes the amount this guard accounts for.
    pub fn set(&mut self, bytes: impl ByteCount) {
        let bytes = bytes.to_u64();
        let slot = self.owner.slot();
        if bytes >= self.bytes {
            slot.fetch_add(bytes - self.bytes, Ordering::Relaxed);
        } else {
            slot.fetch_sub(self.bytes - bytes, Ordering::Relaxed);
        }
        self.bytes = bytes;
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn owner(&self) -> Owner {
        self.owner
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.owner.slot().fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// Guards of shared objects (`Arc`s handed out by the PCE registry and the SRS
/// cache) whose owner already let go: each is released once the last strong
/// reference is gone. Swept whenever counters are read.
type Liveness = Box<dyn Fn() -> bool + Send>;
type Guard = Box<dyn std::any::Any + Send>;
static PENDING: Mutex<Vec<(Liveness, Guard)>> = Mutex::new(Vec::new());

/// Keeps `guard` (one or more [`Tracked`]) alive until the object behind
/// `weak` is dropped by its last user (checked lazily, whenever counters are
/// read).
pub(crate) fn release_when_dropped<T: Send + Sync + 'static, G: Send + 'static>(weak: Weak<T>, guard: G) {
    let alive: Liveness = Box::new(move || weak.strong_count() > 0);
    PENDING.lock().unwrap_or_else(|p| p.into_inner()).push((alive, Box::new(guard)));
    sweep();
}

/// Releases the guards of objects nobody holds any more.
pub(crate) fn sweep() {
    let mut pending = PENDING.lock().unwrap_or_else(|p| p.into_inner());
    pending.retain(|(alive, _)| alive());
}

/// Bytes currently accounted to `owner`.
pub fn owner_bytes(owner: Owner) -> u64 {
    sweep();
    owner.slot().load(Ordering::Relaxed)
}

/// The process's memory, from the kernel and from the crate's own accounting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemStats {
    /// Resident set size now (VmRSS).
    pub rss_bytes: u64,
    /// Peak resident set since start or the last [`reset_peak`] (VmHWM).
    pub peak_rss_bytes: u64,
    /// Resident anonymous memory (heap, stacks).
    pub rss_anon_bytes: u64,
    /// Resident file-backed memory (mapped PCE files, the binary).
    pub rss_file_bytes: u64,
    pub pce_bytes: u64,
    pub pce_mapped_bytes: u64,
    pub srs_bytes: u64,
    pub witness_bytes: u64,
    pub abc_bytes: u64,
    pub gpu_bytes: u64,
    /// Whether [`reset_peak`] works here (probed once; then what the last
    /// attempt found).
    pub peak_reset_supported: bool,
}

/// The value of a `Key:  123 kB` line of a `/proc/*/status` text, in bytes;
/// 0 when the key is missing or malformed.
pub fn parse_status_field(status: &str, key: &str) -> u64 {
    for line in status.lines() {
        let Some(rest) = line.strip_prefix(key) else { continue };
        let Some(rest) = rest.strip_prefix(':') else { continue };
        let mut parts = rest.split_whitespace();
        let Some(n) = parts.next().and_then(|n| n.parse::<u64>().ok()) else { return 0 };
        let unit = match parts.next().map(|u| u.to_ascii_lowercase()) {
            None => 1,
            Some(u) if u == "b" => 1,
            Some(u) if u == "kb" => 1 << 10,
            Some(u) if u == "mb" => 1 << 20,
            Some(u) if u == "gb" => 1 << 30,
            Some(_) => return 0,
        };
        return n.saturating_mul(unit);
    }
    0
}

/// Kernel figures (missing fields read as 0: never an error) and owner counters.
pub fn stats() -> MemStats {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let f = |k| parse_status_field(&status, k);
    MemStats {
        rss_bytes: f("VmRSS"),
        peak_rss_bytes: f("VmHWM"),
        rss_anon_bytes: f("RssAnon"),
        rss_file_bytes: f("RssFile"),
        pce_bytes: owner_bytes(Owner::Pce),
        pce_mapped_bytes: owner_bytes(Owner::PceMapped),
        srs_bytes: owner_bytes(Owner::Srs),
        witness_bytes: owner_bytes(Owner::Witness),
        abc_bytes: owner_bytes(Owner::Abc),
        gpu_bytes: owner_bytes(Owner::Gpu),
        peak_reset_supported: peak_reset_supported(),
    }
}

const CLEAR_REFS: &str = "/proc/self/clear_refs";
/// 0: not known yet, 1: works, 2: refused.
static PEAK_RESET: AtomicU8 = AtomicU8::new(0);

/// Whether the peak can be reset. Until the first [`reset_peak`], probed by
/// opening `/proc/self/clear_refs` for writing (which changes nothing).
pub fn peak_reset_supported() -> bool {
    match PEAK_RESET.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let ok = std::fs::OpenOptions::new().write(true).open(CLEAR_REFS).is_ok();
            // Only a probe: a real attempt later overrides it.
            let _ = PEAK_RESET.compare_exchange(0, if ok { 1 } else { 2 }, Ordering::Relaxed, Ordering::Relaxed);
            ok
        }
    }
}

/// Resets VmHWM to the current RSS (writes `5` to `/proc/self/clear_refs`,
/// Linux ≥ 4.0). Refused in some containers (read-only /proc) and on other
/// kernels: then `Error::Io` says why, and [`MemStats::peak_reset_supported`]
/// turns false.
pub fn reset_peak() -> Result<()> {
    use std::io::Write;
    let r = std::fs::OpenOptions::new().write(true).open(CLEAR_REFS).and_then(|mut f| f.write_all(b"5"));
    match r {
        Ok(()) => {
            PEAK_RESET.store(1, Ordering::Relaxed);
            Ok(())
        }
        Err(e) => {
            PEAK_RESET.store(2, Ordering::Relaxed);
            Err(Error::Io(format!(
                "cannot reset the peak RSS: writing 5 to {CLEAR_REFS} failed: {e} \
                 (needs Linux >= 4.0 and a writable /proc)"
            )))
        }
    }
}

/// Allocations from this size up get their own mapping, unmapped on free:
/// glibc's own starting threshold, kept. Below it a proof's buffers would come
/// from the per-thread arenas at small sizes too (a 2^16-row a, b or c is
/// 2 MiB), which keep their pages after `free`: several stages' buffers, each
/// freed, then add up in RSS beyond what any stage holds.
pub const LARGE_ALLOCATION: usize = 128 << 10;

/// Makes glibc give large blocks back to the kernel the moment they are
/// freed (glibc only, a no-op elsewhere; once per process). By default glibc
/// raises its mmap threshold, up to 32 MiB, whenever such a block is freed;
/// from then on proof-sized buffers (a 2^20-row witness is 32 MB) come from
/// the per-thread arenas, which keep them after `free`. RSS then grows by a
/// buffer per synthesis thread, outside every budget, until the next
/// [`trim`]. A threshold fixed at [`LARGE_ALLOCATION`] stops the adjusting.
pub fn unmap_large_frees() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // SAFETY: mallopt only sets a glibc tunable; the value is in range.
        ONCE.call_once(|| unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, LARGE_ALLOCATION as libc::c_int);
        });
    }
}

/// Returns freed heap memory to the kernel (`malloc_trim(0)`; glibc only, a
/// no-op elsewhere).
pub fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own arenas; any pad value is valid.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Bytes this process may still take: `MemAvailable`, or less where a memory cgroup (v1 or v2,
/// this process's or an ancestor's) leaves less room under its limit — in a 16 GiB container
/// on a 512 GiB host, the container's room, its clean page cache counted as room (as
/// `MemAvailable` counts the host's). An error when `MemAvailable` cannot be read.
pub fn available_bytes() -> Result<u64> {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let info = read("/proc/meminfo").ok_or_else(|| Error::Io("reading /proc/meminfo".into()))?;
    let avail = parse_status_field(&info, "MemAvailable");
    if !info.lines().any(|l| l.starts_with("MemAvailable:")) {
        return Err(Error::Io("/proc/meminfo has no MemAvailable: give the engine a budget in bytes".into()));
    }
    let room = read("/proc/self/cgroup").and_then(|c| cgroup_room(&c, read));
    Ok(room.map_or(avail, |r| r.min(avail)))
}

/// `Ok` when `bytes` more fit in what the process may still take ([`available_bytes`]), else
/// `TooLarge` saying what `what` needs: checked before a big allocation that the machine cannot
/// hold (Rust aborts the process when an allocation fails, and overcommit calls the OOM killer
/// instead). Where the available memory cannot be read there is nothing to check against.
pub fn check_room(what: &str, bytes: u64) -> Result<()> {
    match available_bytes() {
        Ok(room) if bytes > room => Err(Error::TooLarge(format!(
            "{what} needs about {:.1} GiB; this process may take {:.1} GiB",
            bytes as f64 / GIB,
            room as f64 / GIB
        ))),
        _ => Ok(()),
    }
}

const GIB: f64 = (1u64 << 30) as f64;

/// The least room among the memory cgroups of this process and their ancestors, from
/// `/proc/self/cgroup`'s text and a reader of `/sys/fs/cgroup` files; `None` when no limit is
/// set. A cgroup's room is its limit less its usage, where the usage counts no clean page
/// cache (the kernel reclaims it before it kills anything under the limit; a 47 GB parameter
/// file just read is cached and charged to the cgroup). A cgroup path that is not mounted as
/// such (a container's namespace root) is read at the mount's root.
fn cgroup_room(proc_cgroup: &str, read: impl Fn(&str) -> Option<String>) -> Option<u64> {
    let number = |s: Option<String>| s.and_then(|s| s.trim().parse::<u64>().ok());
    // v1: "N:memory:/path", limits in memory.limit_in_bytes (a huge value: none), page cache
    // in memory.stat's hierarchical total_* fields.
    // v2: "0::/path", limits in memory.max ("max": none).
    let mut rooms = Vec::new();
    for line in proc_cgroup.lines() {
        let mut f = line.splitn(3, ':');
        let (_, controllers, path) = (f.next(), f.next().unwrap_or(""), f.next().unwrap_or(""));
        let (base, limit, usage, v1) = if controllers.split(',').any(|c| c == "memory") {
            ("/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes", true)
        } else if controllers.is_empty() {
            ("/sys/fs/cgroup", "memory.max", "memory.current", false)
        } else {
            continue;
        };
        let mut dir = path.trim_end_matches('/').to_string();
        loop {
            let at = |file: &str| format!("{base}{dir}/{file}");
            if let (Some(l), Some(u)) = (number(read(&at(limit))), number(read(&at(usage)))) {
                if l < 1 << 60 {
                    let clean = read(&at("memory.stat")).map_or(0, |stat| clean_page_cache(&stat, v1));
                    rooms.push(l.saturating_sub(u.saturating_sub(clean)));
                }
            }
            match dir.rfind('/') {
                Some(i) => dir.truncate(i),
                None => break,
            }
        }
    }
    rooms.into_iter().min()
}

/// The clean page cache in a cgroup's `memory.stat`: its file pages on either LRU list less
/// those dirty or under writeback (shared memory is not among them: it lives on the anonymous
/// lists).
fn clean_page_cache(stat: &str, v1: bool) -> u64 {
    let field = |name: &str| {
        stat.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse::<u64>().ok()).unwrap_or(0)
    };
    let [active, inactive, dirty, writeback] = if v1 {
        ["total_active_file", "total_inactive_file", "total_dirty", "total_writeback"]
    } else {
        ["active_file", "inactive_file", "file_dirty", "file_writeback"]
    };
    field(active).saturating_add(field(inactive)).saturating_sub(field(dirty).saturating_add(field(writeback)))
}

#[cfg(test)]
mod cgroup_tests {
    use super::cgroup_room;
    use std::collections::HashMap;

    fn files(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |p: &str| m.get(p).cloned()
    }

    #[test]
    fn v2_limit_of_the_process_or_an_ancestor() {
        let f = files(&[
            ("/sys/fs/cgroup/pod/c/memory.max", "max\n"),
            ("/sys/fs/cgroup/pod/c/memory.current", "1000\n"),
            ("/sys/fs/cgroup/pod/memory.max", "17179869184\n"),
            ("/sys/fs/cgroup/pod/memory.current", "1073741824\n"),
        ]);
        assert_eq!(cgroup_room("0::/pod/c\n", &f), Some(15 << 30), "16 GiB limit, 1 GiB used");
    }

    #[test]
    fn v2_namespace_root_and_no_limit() {
        let f = files(&[("/sys/fs/cgroup/memory.max", "4096\n"), ("/sys/fs/cgroup/memory.current", "1024\n")]);
        assert_eq!(cgroup_room("0::/\n", &f), Some(3072));
        let none = files(&[("/sys/fs/cgroup/memory.max", "max\n"), ("/sys/fs/cgroup/memory.current", "1\n")]);
        assert_eq!(cgroup_room("0::/\n", &none), None);
    }

    #[test]
    fn v1_memory_controller() {
        let f = files(&[
            ("/sys/fs/cgroup/memory/docker/x/memory.limit_in_bytes", "2147483648"),
            ("/sys/fs/cgroup/memory/docker/x/memory.usage_in_bytes", "147483648"),
            ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712"),
            ("/sys/fs/cgroup/memory/memory.usage_in_bytes", "5"),
        ]);
        let text = "5:cpu:/docker/x\n4:memory:/docker/x\n0::/\n";
        assert_eq!(cgroup_room(text, &f), Some(2_000_000_000));
        assert_eq!(cgroup_room("4:memory:/\n", &f), None, "the unlimited root");
    }

    /// A parameter file just read is page cache charged to the cgroup: room all the same, but
    /// not its dirty or written-back pages.
    #[test]
    fn clean_page_cache_is_room() {
        let v2 = files(&[
            ("/sys/fs/cgroup/api/memory.max", "137438953472\n"),
            ("/sys/fs/cgroup/api/memory.current", "130000000000\n"),
            (
                "/sys/fs/cgroup/api/memory.stat",
                "anon 70000000000\nfile 60000000000\nactive_file 55000000000\ninactive_file 4000000000\n\
                 shmem 1000000000\nfile_dirty 300000000\nfile_writeback 200000000\n",
            ),
        ]);
        let clean = 55_000_000_000 + 4_000_000_000 - 500_000_000;
        assert_eq!(cgroup_room("0::/api\n", &v2), Some(137_438_953_472 - (130_000_000_000 - clean)));
        let v1 = files(&[
            ("/sys/fs/cgroup/memory/x/memory.limit_in_bytes", "2000"),
            ("/sys/fs/cgroup/memory/x/memory.usage_in_bytes", "1500"),
            (
                "/sys/fs/cgroup/memory/x/memory.stat",
                "active_file 9\ninactive_file 9\ntotal_active_file 700\ntotal_inactive_file 100\ntotal_dirty 50\n",
            ),
        ]);
        assert_eq!(cgroup_room("4:memory:/x\n", &v1), Some(2000 - (1500 - 750)));
    }
}
