//! Reads what the heap probe publishes: one small shared-memory file per
//! process, `<dir>/<pid>` (layout in probe/PROTOCOL.md), mapped once and
//! read under its seqlock on every tick; allocscope writes one word of it,
//! the reclaim request. Files of processes that
//! have not started the probe yet, or never will, are simply absent.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{fence, AtomicU64, Ordering};

const MAGIC: u64 = 0x3152_5043_4f4c_4c41; // "ALLOCPR1"
const UNKNOWN: u64 = u64::MAX;
const MAP_BYTES: usize = 4096;
const W_MAGIC: usize = 0;
const W_SEQ: usize = 1;
const W_PID: usize = 2;
const W_MODE: usize = 3;
const W_LIVE: usize = 5;
const W_RESIDENT: usize = 6;
const W_RETAINED: usize = 7;
const W_ARENAS: usize = 8;
const W_CPU_NS: usize = 9;
const W_FREE: usize = 14;
const W_METADATA: usize = 15;
const W_THREADS: usize = 16;
const W_RECLAIMS: usize = 17;
const W_RECLAIM_RSS_BEFORE: usize = 18;
const W_RECLAIM_RSS_AFTER: usize = 19;
const W_RECLAIM_START_NS: usize = 20;
const W_RECLAIM_END_NS: usize = 21;
const W_RECLAIM_USER_NS: usize = 22;
const W_RECLAIM_SYS_NS: usize = 23;
const WORDS: usize = 24;
/// Written by allocscope: how many reclaim tests it asks for.
const W_REQUEST: usize = 64;

/// One process's reading, taken consistently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProbeReading {
    pub pid: u64,
    /// 0 none (no counters), 1 stats, 2 count.
    pub mode: u64,
    pub live_bytes: u64,
    pub resident_bytes: Option<u64>,
    pub retained_bytes: Option<u64>,
    pub arenas: Option<u32>,
    /// Resident memory the allocator holds that the program has freed
    /// (glibc `fordblks`, jemalloc resident - allocated - metadata,
    /// gperftools' free lists, mimalloc commit - live); PROTOCOL.md says
    /// what each one counts.
    pub free_bytes: Option<u64>,
    /// The allocator's own bookkeeping, where it reports it (jemalloc,
    /// gperftools).
    pub metadata_bytes: Option<u64>,
    /// The process's threads at the last poll (0 unknown).
    pub threads: u64,
    pub cpu_ns: u64,
    /// The last reclaim test this process answered, if any.
    pub reclaim: Option<ReclaimReading>,
}

/// One process's answer to a reclaim request (PROTOCOL.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReclaimReading {
    /// Reclaims done so far.
    pub count: u64,
    /// The process's RSS just before and just after; `None` when its
    /// allocator has no call that returns memory.
    pub rss_before_bytes: Option<u64>,
    pub rss_after_bytes: Option<u64>,
    /// CLOCK_MONOTONIC nanoseconds when it started and ended.
    pub start_ns: u64,
    pub end_ns: u64,
    /// The CPU time it cost the process, user and system.
    pub user_ns: u64,
    pub sys_ns: u64,
}

/// Decodes the words of one file; `None` unless it is a probe file whose
/// probe has measured something.
pub fn decode(words: &[u64; WORDS]) -> Option<ProbeReading> {
    if words[W_MAGIC] != MAGIC {
        return None;
    }
    let known = |v: u64| (v != UNKNOWN).then_some(v);
    Some(ProbeReading {
        pid: words[W_PID],
        mode: words[W_MODE],
        live_bytes: known(words[W_LIVE]).unwrap_or(0),
        resident_bytes: known(words[W_RESIDENT]),
        retained_bytes: known(words[W_RETAINED]),
        arenas: u32::try_from(words[W_ARENAS]).ok().filter(|&a| a > 0),
        free_bytes: known(words[W_FREE]),
        metadata_bytes: known(words[W_METADATA]),
        threads: words[W_THREADS],
        cpu_ns: words[W_CPU_NS],
        reclaim: (words[W_RECLAIMS] > 0).then(|| ReclaimReading {
            count: words[W_RECLAIMS],
            rss_before_bytes: known(words[W_RECLAIM_RSS_BEFORE]),
            rss_after_bytes: known(words[W_RECLAIM_RSS_AFTER]),
            start_ns: words[W_RECLAIM_START_NS],
            end_ns: words[W_RECLAIM_END_NS],
            user_ns: words[W_RECLAIM_USER_NS],
            sys_ns: words[W_RECLAIM_SYS_NS],
        }),
    })
}

/// A shared mapping of one probe file: read, except the request word.
#[derive(Debug)]
struct Mapping {
    ptr: *const AtomicU64,
}

impl Mapping {
    fn open(path: &Path) -> Option<Mapping> {
        use std::os::unix::io::AsRawFd;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .ok()?;
        if file.metadata().ok()?.len() < MAP_BYTES as u64 {
            return None; // not sized yet
        }
        // SAFETY: a fresh shared mapping of a file at least MAP_BYTES
        // long; the fd may be closed once mapped.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                MAP_BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        (ptr != libc::MAP_FAILED).then_some(Mapping {
            ptr: ptr as *const AtomicU64,
        })
    }

    fn word(&self, i: usize) -> &AtomicU64 {
        // SAFETY: i <= W_REQUEST < MAP_BYTES / 8, inside the mapping, 8-byte
        // aligned (page start).
        unsafe { &*self.ptr.add(i) }
    }

    /// The words under the seqlock: retried while the probe is writing.
    fn read(&self) -> Option<[u64; WORDS]> {
        for _ in 0..64 {
            let before = self.word(W_SEQ).load(Ordering::Acquire);
            let mut words = [0u64; WORDS];
            for (i, w) in words.iter_mut().enumerate() {
                *w = self.word(i).load(Ordering::Relaxed);
            }
            fence(Ordering::Acquire);
            let after = self.word(W_SEQ).load(Ordering::Relaxed);
            if before == after && before.is_multiple_of(2) {
                return Some(words);
            }
            std::hint::spin_loop();
        }
        None
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what `open` mapped.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, MAP_BYTES) };
    }
}

/// The tree's heap at one tick: sums over the processes that published,
/// except arenas, which belong to one process each.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HeapTotals {
    pub live_heap_bytes: Option<u64>,
    pub allocator_resident_bytes: Option<u64>,
    pub allocator_retained_bytes: Option<u64>,
    pub allocator_free_bytes: Option<u64>,
    pub allocator_metadata_bytes: Option<u64>,
    /// The most arenas one process has, and its pid.
    pub arenas: Option<(u32, i32)>,
    /// Each process's own reading (those with counters: mode stats or
    /// count), to combine with its /proc figures.
    pub processes: Vec<(i32, ProbeReading)>,
    /// How many of the processes run the probe's own thread (every one
    /// with a probe file, published or not), so that the tree's thread count can leave
    /// them out.
    pub probe_threads: u32,
}

/// Reads every process's file in one run's shared-memory directory.
#[derive(Debug)]
pub struct ProbeReader {
    dir: PathBuf,
    maps: HashMap<i32, Mapping>,
    /// The last reading seen per pid, kept after the process is gone so its
    /// probe's CPU time and mode still count.
    last: HashMap<i32, ProbeReading>,
}

impl ProbeReader {
    pub fn new(dir: PathBuf) -> ProbeReader {
        ProbeReader {
            dir,
            maps: HashMap::new(),
            last: HashMap::new(),
        }
    }

    /// Sums the readings of `pids`, and finds the process with the most
    /// arenas. A field is `None` when no process reported it.
    pub fn read(&mut self, pids: &[i32]) -> HeapTotals {
        let mut totals = HeapTotals::default();
        let add = |sum: &mut Option<u64>, v: Option<u64>| {
            if let Some(v) = v {
                *sum = Some(sum.unwrap_or(0).saturating_add(v));
            }
        };
        for &pid in pids {
            let reading = self.reading(pid);
            // The probe makes its file before it starts its thread, and
            // may publish its first words only later.
            if self.maps.contains_key(&pid) {
                totals.probe_threads += 1;
            }
            let Some(reading) = reading else {
                continue;
            };
            if reading.mode == 0 {
                continue;
            }
            add(&mut totals.live_heap_bytes, Some(reading.live_bytes));
            add(&mut totals.allocator_resident_bytes, reading.resident_bytes);
            add(&mut totals.allocator_retained_bytes, reading.retained_bytes);
            add(&mut totals.allocator_free_bytes, reading.free_bytes);
            add(&mut totals.allocator_metadata_bytes, reading.metadata_bytes);
            totals.processes.push((pid, reading));
        }
        totals.arenas = most_arenas(&totals.processes);
        totals
    }

    /// `pid`'s reading now, its file mapped first if need be; kept as its
    /// last. `None` until its probe has published.
    fn reading(&mut self, pid: i32) -> Option<ProbeReading> {
        if !self.maps.contains_key(&pid) {
            let map = Mapping::open(&self.dir.join(pid.to_string()))?;
            self.maps.insert(pid, map);
        }
        let reading = self
            .maps
            .get(&pid)
            .and_then(Mapping::read)
            .and_then(|w| decode(&w))
            .filter(|r| r.pid == pid as u64)?;
        self.last.insert(pid, reading);
        Some(reading)
    }

    /// Asks each of `pids` whose probe has published for one more reclaim
    /// test (PROTOCOL.md, "Reclaim requests"); returns how many were asked.
    pub fn request_reclaim(&mut self, pids: &[i32]) -> usize {
        let mut asked = 0;
        for &pid in pids {
            let Some(reading) = self.reading(pid) else {
                continue;
            };
            let done = reading.reclaim.map_or(0, |r| r.count);
            if let Some(map) = self.maps.get(&pid) {
                map.word(W_REQUEST).store(done + 1, Ordering::Release);
                asked += 1;
            }
        }
        asked
    }

    /// How many of `pids` were asked for a reclaim test they have not
    /// answered yet.
    pub fn unanswered(&mut self, pids: &[i32]) -> usize {
        pids.iter()
            .filter(|&&pid| {
                let requested = match self.maps.get(&pid) {
                    Some(map) => map.word(W_REQUEST).load(Ordering::Acquire),
                    None => return false,
                };
                let done = self
                    .reading(pid)
                    .and_then(|r| r.reclaim)
                    .map_or(0, |r| r.count);
                done < requested
            })
            .count()
    }

    /// Every process's last words, read once more after the tree has ended
    /// (the processes are gone: their words stay), those never mapped
    /// (processes that lived and ended between two ticks) included.
    pub fn read_all(&mut self) -> Vec<(i32, ProbeReading)> {
        let unseen: Vec<i32> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .filter(|pid| !self.maps.contains_key(pid))
            .collect();
        for pid in unseen {
            if let Some(m) = Mapping::open(&self.dir.join(pid.to_string())) {
                self.maps.insert(pid, m);
            }
        }
        for (pid, map) in &self.maps {
            if let Some(r) = map.read().and_then(|w| decode(&w)) {
                self.last.insert(*pid, r);
            }
        }
        let mut all: Vec<(i32, ProbeReading)> = self.last.iter().map(|(p, r)| (*p, *r)).collect();
        all.sort_by_key(|(pid, _)| *pid);
        all
    }

    /// Reads every file once more and returns the probes' CPU seconds
    /// summed over every process seen, and the mode that gave numbers:
    /// "stats", "count", or "none".
    pub fn finish(&mut self) -> (f64, &'static str) {
        let all = self.read_all();
        let cpu_ns: u64 = all.iter().map(|(_, r)| r.cpu_ns).sum();
        let modes: Vec<u64> = all.iter().map(|(_, r)| r.mode).collect();
        let mode = if modes.contains(&1) {
            "stats"
        } else if modes.contains(&2) {
            "count"
        } else {
            "none"
        };
        (cpu_ns as f64 * 1e-9, mode)
    }
}

/// The process with the most arenas among `readings`, and how many: among
/// processes with as many, the one holding the most live heap is the
/// workload. Arenas belong to one process each, never summed.
pub fn most_arenas<'a>(
    readings: impl IntoIterator<Item = &'a (i32, ProbeReading)>,
) -> Option<(u32, i32)> {
    readings
        .into_iter()
        .filter(|(_, r)| r.mode != 0)
        .filter_map(|(pid, r)| Some(((r.arenas?, r.live_bytes), *pid)))
        .max_by_key(|(rank, _)| *rank)
        .map(|((arenas, _), pid)| (arenas, pid))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(mode: u64, live: u64) -> [u64; WORDS] {
        let mut w = [0u64; WORDS];
        w[W_MAGIC] = MAGIC;
        w[W_PID] = 7;
        w[W_MODE] = mode;
        w[W_LIVE] = live;
        w[W_RESIDENT] = UNKNOWN;
        w[W_RETAINED] = 5;
        w[W_ARENAS] = 3;
        w[W_FREE] = 40;
        w[W_METADATA] = UNKNOWN;
        w
    }

    #[test]
    fn decodes_known_and_unknown_fields() {
        let r = decode(&words(1, 100)).expect("a probe file");
        assert_eq!((r.pid, r.mode, r.live_bytes), (7, 1, 100));
        assert_eq!(
            (r.resident_bytes, r.retained_bytes, r.arenas),
            (None, Some(5), Some(3))
        );
        assert_eq!(
            (r.free_bytes, r.metadata_bytes, r.reclaim),
            (Some(40), None, None)
        );
        let mut answered = words(1, 100);
        answered[W_RECLAIMS] = 1;
        answered[W_RECLAIM_RSS_BEFORE] = 900;
        answered[W_RECLAIM_RSS_AFTER] = 300;
        answered[W_RECLAIM_START_NS] = 10;
        answered[W_RECLAIM_SYS_NS] = 4;
        let reclaim = decode(&answered).and_then(|r| r.reclaim);
        assert_eq!(
            reclaim.map(|r| (r.rss_before_bytes, r.rss_after_bytes, r.start_ns, r.sys_ns)),
            Some((Some(900), Some(300), 10, 4))
        );
        let mut bad = words(1, 1);
        bad[W_MAGIC] = 0;
        assert_eq!(decode(&bad), None);
    }

    #[test]
    fn sums_the_files_of_the_listed_pids_but_not_their_arenas() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        for (pid, live) in [(11i32, 1000u64), (12, 24)] {
            let mut w = words(2, live);
            w[W_PID] = pid as u64;
            w[W_CPU_NS] = 500_000_000;
            // More arenas count before more live heap.
            w[W_ARENAS] = if pid == 12 { 5 } else { 3 };
            let mut bytes: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
            bytes.resize(MAP_BYTES, 0);
            std::fs::write(dir.path().join(pid.to_string()), bytes)?;
        }
        let mut reader = ProbeReader::new(dir.path().to_path_buf());
        let totals = reader.read(&[11, 12, 13]);
        assert_eq!(totals.live_heap_bytes, Some(1024));
        assert_eq!(totals.allocator_free_bytes, Some(80));
        assert_eq!(totals.allocator_metadata_bytes, None);
        let pids: Vec<i32> = totals.processes.iter().map(|(pid, _)| *pid).collect();
        assert_eq!(pids, vec![11, 12]);
        assert_eq!(totals.processes[1].1.live_bytes, 24);
        assert_eq!(
            (totals.arenas, totals.allocator_resident_bytes),
            (Some((5, 12)), None)
        );
        assert_eq!(reader.read(&[13]).live_heap_bytes, None);
        let (cpu_s, mode) = reader.finish();
        assert!((cpu_s - 1.0).abs() < 1e-9);
        assert_eq!(mode, "count");
        Ok(())
    }
}
