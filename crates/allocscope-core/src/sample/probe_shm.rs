//! Reads what the heap probe publishes: one small shared-memory file per
//! process, `<dir>/<pid>` (layout in probe/PROTOCOL.md), mapped once and
//! read under its seqlock on every tick; allocscope writes one word of it,
//! the reclaim request. Files of processes that
//! have not started the probe yet, or never will, are simply absent.

use foldhash::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{fence, AtomicU64, Ordering};

use super::cpu_time::monotonic_ns;
use super::heap_vet::{known, Tally};
pub use super::probe_reading::{
    ProbeOff, ProbeReading, ReclaimReading, RECLAIM_CALLING_THREAD, RECLAIM_NONE, RECLAIM_WHOLE,
};
use std::sync::Arc;

const MAGIC: u64 = 0x3152_5043_4f4c_4c41; // "ALLOCPR1"
#[cfg(test)]
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
const W_POLLED_NS: usize = 24;
const W_POLL_START_NS: usize = 25;
const W_RECLAIM_FREE_BEFORE: usize = 26;
const W_RECLAIM_LIVE_BEFORE: usize = 27;
const W_STATE: usize = 28;
const W_RECLAIM_KIND: usize = 29;
const W_RECLAIM_ANON_BEFORE: usize = 30;
const W_RECLAIM_ANON_AFTER: usize = 31;
const WORDS: usize = 32;
/// Written by allocscope: how many reclaim tests it asks for.
const W_REQUEST: usize = 64;

/// Decodes the words of one file; `None` unless it is a probe file whose
/// probe has measured something. A size word of 2^63 or more is unknown,
/// whether the probe wrote "unknown" (`u64::MAX`) or a counter wrapped
/// below zero (`heap_vet::known`).
pub fn decode(words: &[u64; WORDS]) -> Option<ProbeReading> {
    if words[W_MAGIC] != MAGIC {
        return None;
    }
    let live = words[W_LIVE];
    Some(ProbeReading {
        pid: words[W_PID],
        mode: words[W_MODE],
        live_bytes: known(live).unwrap_or(0),
        live_wrapped: (known(live).is_none() && live != u64::MAX).then_some(live),
        resident_bytes: known(words[W_RESIDENT]),
        retained_bytes: known(words[W_RETAINED]),
        arenas: u32::try_from(words[W_ARENAS]).ok().filter(|&a| a > 0),
        free_bytes: known(words[W_FREE]),
        metadata_bytes: known(words[W_METADATA]),
        threads: words[W_THREADS],
        cpu_ns: words[W_CPU_NS],
        polled_ns: (words[W_POLLED_NS] > 0).then_some(words[W_POLLED_NS]),
        poll_start_ns: (words[W_POLL_START_NS] > 0).then_some(words[W_POLL_START_NS]),
        off: ProbeOff::from_word(words[W_STATE]),
        reclaim: (words[W_RECLAIMS] > 0).then(|| ReclaimReading {
            count: words[W_RECLAIMS],
            rss_before_bytes: known(words[W_RECLAIM_RSS_BEFORE]),
            rss_after_bytes: known(words[W_RECLAIM_RSS_AFTER]),
            start_ns: words[W_RECLAIM_START_NS],
            end_ns: words[W_RECLAIM_END_NS],
            user_ns: words[W_RECLAIM_USER_NS],
            sys_ns: words[W_RECLAIM_SYS_NS],
            free_before_bytes: known(words[W_RECLAIM_FREE_BEFORE])
                .filter(|_| words[W_POLLED_NS] > 0),
            live_before_bytes: known(words[W_RECLAIM_LIVE_BEFORE])
                .filter(|_| words[W_POLLED_NS] > 0),
            kind: words[W_RECLAIM_KIND],
            // 0 from a probe that predates the words (its file is zeroed).
            anon_before_bytes: known(words[W_RECLAIM_ANON_BEFORE]).filter(|&b| b > 0),
            anon_after_bytes: known(words[W_RECLAIM_ANON_AFTER]).filter(|&b| b > 0),
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
    /// The most arenas one process has, and its pid.
    pub arenas: Option<(u32, i32)>,
    /// Each process's own reading (those with counters: mode stats or
    /// count), to combine with its /proc figures.
    pub processes: Vec<(i32, ProbeReading)>,
    /// Processes whose reading was stale (`ProbeReading::stale_at`) or
    /// impossible (a live heap that wrapped below zero, `heap_vet`): their
    /// figures are left out, and the tick has no heap figures at all
    /// (`read` leaves every sum `None`), rather than wrong ones.
    pub stale_processes: u32,
    /// How many of the processes run the probe's own thread (every one
    /// with a probe file, published or not), so that the tree's thread count can leave
    /// them out.
    pub probe_threads: u32,
}

/// Reads every process's file in one run's shared-memory directory.
#[derive(Debug)]
pub struct ProbeReader {
    dir: PathBuf,
    /// Every process seen, kept after it is gone so its probe's CPU time
    /// and mode still count.
    procs: SeenTable,
    /// How late past its planned poll a reading may be before it is stale.
    stale_after_ns: u64,
    /// Ticks read so far: whose turn it is on a big tree.
    ticks: u64,
    /// The ticks whose reads were thinned, and what they read.
    pub thinned: ProbeThinning,
    /// What vetting the readings discarded or clamped (`heap_vet`).
    tally: Arc<Tally>,
}

/// What the thinned ticks of a big tree read (`MIN_THINNED_PROBES`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProbeThinning {
    pub ticks: u64,
    /// Processes on those ticks, summed.
    pub processes: u64,
    /// Files read on them, summed; the other processes kept their last
    /// reading.
    pub read: u64,
}

impl ProbeThinning {
    /// What the thinned ticks read, in words (`None` when none was).
    pub fn note(&self) -> Option<String> {
        (self.ticks > 0).then(|| format!(
            "on {} ticks the heap probe's files of {:.0} of about {:.0} processes read a tick (memory moved, or their turn every {REREAD_TICKS} ticks), the rest kept their last reading",
            self.ticks,
            self.read as f64 / self.ticks as f64,
            self.processes as f64 / self.ticks as f64,
        ))
    }
}

/// What the reader knows of one process.
#[derive(Debug, Default)]
struct Seen {
    /// Its file, once it exists and is sized.
    map: Option<Mapping>,
    /// Its last reading.
    last: Option<ProbeReading>,
    /// The poll that the last reading came from and the process's
    /// anonymous RSS on the tick it was first seen (`drifted`).
    landed: Option<(u64, u64)>,
    /// The anonymous RSS of the tick that last read its file and found a
    /// usable reading; `None` after one that did not.
    read_at_anon: Option<u64>,
    /// Whether its file was ever looked for.
    tried: bool,
}

/// Every process seen, in the order first seen: a big tree's bookkeeping
/// looks up each pid on every tick, and an index of small entries stays
/// in the cache where a table of whole readings did not.
#[derive(Debug, Default)]
struct SeenTable {
    index: HashMap<i32, usize>,
    seen: Vec<(i32, Seen)>,
}

impl SeenTable {
    fn len(&self) -> usize {
        self.seen.len()
    }

    /// `pid`'s entry, made empty if it is new.
    fn entry(&mut self, pid: i32) -> &mut Seen {
        let next = self.seen.len();
        let i = *self.index.entry(pid).or_insert(next);
        if i == next {
            self.seen.push((pid, Seen::default()));
        }
        &mut self.seen[i].1
    }

    fn get(&self, pid: &i32) -> Option<&Seen> {
        self.index.get(pid).map(|&i| &self.seen[i].1)
    }

    fn retain(&mut self, keep: impl Fn(i32, &Seen) -> bool) {
        self.seen.retain(|(pid, seen)| keep(*pid, seen));
        self.index = self
            .seen
            .iter()
            .enumerate()
            .map(|(i, (pid, _))| (*pid, i))
            .collect();
    }
}

/// A reading whose poll began this many sampler intervals ago is stale.
/// The probe polls every half interval, so a healthy probe's reading is
/// at most about half a tick old plus its poll; two ticks leave room for
/// a slow poll of a big heap and the sampler's jitter, while a reading
/// from before a burst of growth (RSS can climb 100 MiB in a tick) is
/// not taken for the tick's.
pub const STALE_AFTER_TICKS: u32 = 2;

/// A reading is also stale once the process's anonymous RSS has moved by
/// more than this share of it (or `DRIFT_MIN_BYTES`, whichever is more)
/// since the tick it was first seen: a probe blocked on the allocator's
/// locks right after a poll that began in time (the program's start,
/// before its threads allocated) would otherwise describe a heap hundreds
/// of MiB smaller than the RSS it is set against, the rest called "other".
pub const DRIFT_SHARE: f64 = 0.05;
pub const DRIFT_MIN_BYTES: u64 = 4 << 20;

/// Trees up to this size have every file read on every tick. On a bigger
/// one (a pre-forking server's thousand workers) reading a thousand
/// pages a tick was a third of the sampler's cost, so a process whose
/// anonymous RSS is exactly what it was when its file was last read
/// keeps that reading, and is read again on its turn, every
/// `REREAD_TICKS`-th tick (the turns staggered by pid): its heap figures
/// are then at most that many ticks old while its memory stood still.
pub const MIN_THINNED_PROBES: usize = 64;
pub const REREAD_TICKS: u64 = 10;

impl ProbeReader {
    /// A reader whose readings are stale once their poll began
    /// `STALE_AFTER_TICKS` sampler intervals ago.
    pub fn new(dir: PathBuf, interval: std::time::Duration) -> ProbeReader {
        ProbeReader {
            dir,
            procs: SeenTable::default(),
            stale_after_ns: interval
                .checked_mul(STALE_AFTER_TICKS)
                .and_then(|d| u64::try_from(d.as_nanos()).ok())
                .unwrap_or(u64::MAX),
            ticks: 0,
            thinned: ProbeThinning::default(),
            tally: Tally::shared(),
        }
    }

    /// This reader, vetting into `tally` (shared with the run that says
    /// what it discarded or clamped).
    pub fn vetting_into(self, tally: Arc<Tally>) -> ProbeReader {
        ProbeReader { tally, ..self }
    }

    /// Sums the readings of `pids`, and finds the process with the most
    /// arenas. A field is `None` when no process reported it, and every
    /// one when any process's reading was stale: a sum with one process
    /// at its value of a second ago would be taken as this tick's.
    /// `pids` come with their anonymous RSS this tick.
    pub fn read(&mut self, pids: &[(i32, u64)]) -> HeapTotals {
        let mut totals = HeapTotals {
            processes: Vec::with_capacity(pids.len()),
            ..HeapTotals::default()
        };
        let now_ns = monotonic_ns();
        let thinned = pids.len() > MIN_THINNED_PROBES;
        self.ticks += 1;
        if thinned {
            self.thinned.ticks += 1;
            self.thinned.processes += pids.len() as u64;
        }
        if self.procs.len() > 2 * pids.len() + 16 {
            // Gone processes that never published: nothing to keep.
            let live: std::collections::HashSet<i32> = pids.iter().map(|&(p, _)| p).collect();
            self.procs
                .retain(|pid, seen| seen.last.is_some() || live.contains(&pid));
        }
        for &(pid, anon_bytes) in pids {
            let due = !thinned || (pid as u64 + self.ticks).is_multiple_of(REREAD_TICKS);
            let seen = self.procs.entry(pid);
            let reused = !due && seen.read_at_anon == Some(anon_bytes);
            let reading = if reused {
                seen.last
            } else if due || seen.map.is_some() || !seen.tried {
                self.thinned.read += u64::from(thinned);
                read_file(&self.dir, pid, seen)
            } else {
                None
            };
            // The probe makes its file before it starts its thread, and
            // may publish its first words only later.
            if seen.map.is_some() {
                totals.probe_threads += 1;
            }
            let Some(reading) = reading.filter(|r| r.mode != 0) else {
                seen.read_at_anon = None;
                continue;
            };
            // A reused reading was fresh when read, and the memory it
            // describes has not moved since. A live heap that wrapped below
            // zero is no figure: the tick goes without sums, as with a
            // stale reading; one above what is resident is clamped to it.
            let fresh = reused
                || !(drifted(seen, &reading, anon_bytes)
                    || reading.stale_at(now_ns, self.stale_after_ns));
            let vetted = fresh.then(|| self.tally.vet(reading, anon_bytes));
            let Some(reading) = vetted.flatten() else {
                seen.read_at_anon = None;
                totals.stale_processes += 1;
                continue;
            };
            seen.read_at_anon = Some(anon_bytes);
            add(&mut totals.live_heap_bytes, Some(reading.live_bytes));
            add(&mut totals.allocator_resident_bytes, reading.resident_bytes);
            add(&mut totals.allocator_retained_bytes, reading.retained_bytes);
            totals.processes.push((pid, reading));
        }
        totals.arenas = most_arenas(&totals.processes);
        if totals.stale_processes > 0 {
            return HeapTotals {
                probe_threads: totals.probe_threads,
                stale_processes: totals.stale_processes,
                arenas: totals.arenas,
                ..HeapTotals::default()
            };
        }
        totals
    }

    /// `pid`'s reading now, its file mapped first if need be; kept as its
    /// last. `None` until its probe has published.
    fn reading(&mut self, pid: i32) -> Option<ProbeReading> {
        let seen = self.procs.entry(pid);
        read_file(&self.dir, pid, seen)
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
            if let Some(map) = self.procs.get(&pid).and_then(|s| s.map.as_ref()) {
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
                let requested = match self.procs.get(&pid).and_then(|s| s.map.as_ref()) {
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
        let files: Vec<i32> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .collect();
        for pid in files {
            self.procs.entry(pid);
        }
        for (pid, seen) in &mut self.procs.seen {
            read_file(&self.dir, *pid, seen);
        }
        let mut all: Vec<(i32, ProbeReading)> = self
            .procs
            .seen
            .iter()
            .filter_map(|(p, s)| Some((*p, s.last?)))
            .collect();
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

/// Adds `v` to a sum that stays `None` until something is added.
pub(super) fn add(sum: &mut Option<u64>, v: Option<u64>) {
    if let Some(v) = v {
        *sum = Some(sum.unwrap_or(0).saturating_add(v));
    }
}

/// `pid`'s reading now from its file in `dir`, mapped first if need be;
/// kept as its last. `None` until its probe has published.
fn read_file(dir: &Path, pid: i32, seen: &mut Seen) -> Option<ProbeReading> {
    seen.tried = true;
    if seen.map.is_none() {
        seen.map = Some(Mapping::open(&dir.join(pid.to_string()))?);
    }
    let reading = seen
        .map
        .as_ref()
        .and_then(Mapping::read)
        .and_then(|w| decode(&w))
        .filter(|r| r.pid == pid as u64)?;
    seen.last = Some(reading);
    Some(reading)
}

/// Whether the process's anonymous RSS has drifted (`DRIFT_SHARE`) since
/// the tick that first saw `reading`'s poll; remembers that tick's.
fn drifted(seen: &mut Seen, reading: &ProbeReading, anon_bytes: u64) -> bool {
    let Some(polled) = reading.polled_ns else {
        return false;
    };
    let since = match seen.landed {
        Some((at, since)) if at == polled => since,
        _ => {
            seen.landed = Some((polled, anon_bytes));
            anon_bytes
        }
    };
    let allowed = ((since as f64 * DRIFT_SHARE) as u64).max(DRIFT_MIN_BYTES);
    since.abs_diff(anon_bytes) > allowed
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
    use std::time::Duration;

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
        answered[W_RECLAIM_FREE_BEFORE] = 700;
        answered[W_RECLAIM_LIVE_BEFORE] = 150;
        let reclaim = decode(&answered).and_then(|r| r.reclaim);
        assert_eq!(
            reclaim.map(|r| (r.rss_before_bytes, r.rss_after_bytes, r.start_ns, r.sys_ns)),
            Some((Some(900), Some(300), 10, 4))
        );
        // A probe without the poll-time word predates the reclaim's free figures.
        assert_eq!(reclaim.map(|r| r.free_before_bytes), Some(None));
        answered[W_POLLED_NS] = 5;
        let reclaim = decode(&answered).and_then(|r| r.reclaim);
        assert_eq!(
            reclaim.map(|r| (r.free_before_bytes, r.live_before_bytes)),
            Some((Some(700), Some(150)))
        );
        assert_eq!(reclaim.map(|r| r.kind), Some(RECLAIM_NONE));
        // A probe that predates the anonymous RSS words left them zero.
        assert_eq!(
            reclaim.map(|r| (r.anon_before_bytes, r.anon_after_bytes)),
            Some((None, None))
        );
        answered[W_RECLAIM_ANON_BEFORE] = 800;
        answered[W_RECLAIM_ANON_AFTER] = UNKNOWN;
        let reclaim = decode(&answered).and_then(|r| r.reclaim);
        assert_eq!(
            reclaim.map(|r| (r.anon_before_bytes, r.anon_after_bytes)),
            Some((Some(800), None))
        );
        answered[W_RECLAIM_KIND] = RECLAIM_CALLING_THREAD;
        let reclaim = decode(&answered).and_then(|r| r.reclaim);
        assert_eq!(reclaim.map(|r| r.kind), Some(RECLAIM_CALLING_THREAD));
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
        let mut reader = ProbeReader::new(dir.path().to_path_buf(), Duration::MAX);
        // Each process's anonymous RSS holds its live heap (`heap_vet`).
        let totals = reader.read(&[(11, 4096), (12, 4096), (13, 4096)]);
        assert_eq!(totals.live_heap_bytes, Some(1024));
        let pids: Vec<i32> = totals.processes.iter().map(|(pid, _)| *pid).collect();
        assert_eq!(pids, vec![11, 12]);
        assert_eq!(totals.processes[1].1.live_bytes, 24);
        assert_eq!(
            (totals.arenas, totals.allocator_resident_bytes),
            (Some((5, 12)), None)
        );
        assert_eq!(reader.read(&[(13, 4096)]).live_heap_bytes, None);
        let (cpu_s, mode) = reader.finish();
        assert!((cpu_s - 1.0).abs() < 1e-9);
        assert_eq!(mode, "count");
        Ok(())
    }

    #[test]
    fn a_reading_late_past_its_planned_poll_is_stale_and_the_tick_gets_no_heap_figures(
    ) -> anyhow::Result<()> {
        let r = |start: u64, polled: u64| ProbeReading {
            poll_start_ns: Some(start),
            polled_ns: Some(polled),
            ..ProbeReading::default()
        };
        // Bound 100 ms: a poll from 1.0 to 1.01 s is fresh until 1.1 s; one
        // that waited on locks from 0.3 s to 1.01 s is stale when it lands.
        let bound = 100_000_000;
        assert!(!r(1_000_000_000, 1_010_000_000).stale_at(1_090_000_000, bound));
        assert!(r(1_000_000_000, 1_010_000_000).stale_at(1_110_000_000, bound));
        assert!(r(300_000_000, 1_010_000_000).stale_at(1_020_000_000, bound));
        assert!(
            !ProbeReading::default().stale_at(u64::MAX, bound),
            "an old probe"
        );

        let dir = tempfile::tempdir()?;
        let now = monotonic_ns();
        for (pid, polled) in [(21i32, now), (22, now.saturating_sub(2_000_000_000))] {
            let mut w = words(1, 1000);
            w[W_PID] = pid as u64;
            w[W_POLL_START_NS] = polled;
            w[W_POLLED_NS] = polled + 1_000_000;
            let mut bytes: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
            bytes.resize(MAP_BYTES, 0);
            std::fs::write(dir.path().join(pid.to_string()), bytes)?;
        }
        let mut reader = ProbeReader::new(dir.path().to_path_buf(), Duration::from_millis(50));
        let fresh = reader.read(&[(21, 4096)]);
        assert_eq!(
            (fresh.live_heap_bytes, fresh.stale_processes),
            (Some(1000), 0)
        );
        // One stale process of two: no sums at all, not half of them.
        let tick = reader.read(&[(21, 4096), (22, 4096)]);
        assert_eq!((tick.live_heap_bytes, tick.stale_processes), (None, 1));
        assert!(tick.processes.is_empty());
        Ok(())
    }

    #[test]
    fn a_reading_is_stale_once_the_process_rss_has_moved_since_it_was_first_seen(
    ) -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let now = monotonic_ns();
        let mut w = words(1, 1000);
        w[W_PID] = 31;
        w[W_POLL_START_NS] = now;
        w[W_POLLED_NS] = now + 1_000_000;
        let mut bytes: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
        bytes.resize(MAP_BYTES, 0);
        std::fs::write(dir.path().join("31"), bytes)?;
        let mut reader = ProbeReader::new(dir.path().to_path_buf(), Duration::from_secs(60));
        const MIB: u64 = 1 << 20;
        // First seen at 100 MiB; 4% later it still holds, 160 MiB later
        // (the threads allocated while the probe waited) it does not.
        assert_eq!(reader.read(&[(31, 100 * MIB)]).stale_processes, 0);
        assert_eq!(reader.read(&[(31, 104 * MIB)]).stale_processes, 0);
        let grown = reader.read(&[(31, 260 * MIB)]);
        assert_eq!((grown.stale_processes, grown.live_heap_bytes), (1, None));
        // A small process may move by the floor.
        let mut small = ProbeReader::new(dir.path().to_path_buf(), Duration::from_secs(60));
        assert_eq!(small.read(&[(31, MIB)]).stale_processes, 0);
        assert_eq!(small.read(&[(31, 4 * MIB)]).stale_processes, 0);
        assert_eq!(small.read(&[(31, 6 * MIB)]).stale_processes, 1);
        Ok(())
    }

    /// Writes pid's probe file with `live` and a poll of now.
    fn publish(dir: &Path, pid: i32, live: u64) -> anyhow::Result<()> {
        use std::os::unix::fs::FileExt;
        let now = monotonic_ns();
        let mut w = words(1, live);
        w[W_PID] = pid as u64;
        w[W_POLL_START_NS] = now;
        w[W_POLLED_NS] = now;
        let mut bytes: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
        bytes.resize(MAP_BYTES, 0);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(pid.to_string()))?;
        // In place: the reader's mapping sees it.
        file.write_all_at(&bytes, 0)?;
        Ok(())
    }

    #[test]
    fn a_big_tree_rereads_a_process_whose_memory_stood_still_only_on_its_turn() -> anyhow::Result<()>
    {
        let dir = tempfile::tempdir()?;
        let big: Vec<i32> = (1000..1000 + MIN_THINNED_PROBES as i32 + 36).collect();
        for &pid in &big {
            publish(dir.path(), pid, 10)?;
        }
        let mut reader = ProbeReader::new(dir.path().to_path_buf(), Duration::from_secs(60));
        let tree = |anon_of_1001: u64| -> Vec<(i32, u64)> {
            big.iter()
                .map(|&p| (p, if p == 1001 { anon_of_1001 } else { 1 << 20 }))
                .collect()
        };
        let live_of_1001 = |t: &HeapTotals| {
            t.processes
                .iter()
                .find(|(p, _)| *p == 1001)
                .map(|(_, r)| r.live_bytes)
        };
        // Tick 1 reads every file: none was read before.
        assert_eq!(
            reader.read(&tree(1 << 20)).live_heap_bytes,
            Some(10 * big.len() as u64)
        );
        publish(dir.path(), 1001, 500)?;
        // Tick 2: its RSS stood still and its turn (tick 9) has not come.
        assert_eq!(live_of_1001(&reader.read(&tree(1 << 20))), Some(10));
        // Tick 3: its RSS moved, so it is read at once.
        assert_eq!(live_of_1001(&reader.read(&tree(2 << 20))), Some(500));
        publish(dir.path(), 1001, 700)?;
        for _ in 4..9 {
            assert_eq!(live_of_1001(&reader.read(&tree(2 << 20))), Some(500));
        }
        // Tick 9 is its turn.
        assert_eq!(live_of_1001(&reader.read(&tree(2 << 20))), Some(700));
        // Each thinned tick read the files of the pids whose turn it was
        // (a tenth), and tick 1 and 3 one more each: every file, and 1001.
        let n = big.len() as u64;
        let turns: u64 = (2..=9u64)
            .map(|t| {
                big.iter()
                    .filter(|&&p| (p as u64 + t).is_multiple_of(REREAD_TICKS))
                    .count() as u64
            })
            .sum();
        assert_eq!(
            reader.thinned,
            ProbeThinning {
                ticks: 9,
                processes: 9 * n,
                read: n + turns + 1
            }
        );
        // A small tree reads every file on every tick.
        publish(dir.path(), 1001, 900)?;
        let small = reader.read(&[(1001, 2 << 20)]);
        assert_eq!(live_of_1001(&small), Some(900));
        Ok(())
    }
}

#[cfg(test)]
mod impossible_figures_tests;
