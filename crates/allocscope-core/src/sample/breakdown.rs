//! Where a tick's RSS went: each process's resident memory split into parts
//! that add up to it exactly, then summed over the tree.
//!
//! Per process, from three sources:
//! - the kernel's split of RSS in /proc/PID/status, read every tick (the
//!   same read the sample's RSS comes from, and `VmRSS` is the sum of these
//!   three counters): `file` = `RssFile`, `shmem` = `RssShmem`, and `RssAnon`
//!   is split further;
//! - the allocator's own accounting, from the heap probe: live heap, free
//!   memory it holds, its metadata. These cannot exceed `RssAnon`; where
//!   they do (glibc counts free chunks whose pages were given back with
//!   `madvise`, jemalloc's counters lag the pages), free shrinks first,
//!   then metadata, then live;
//! - `LazyFree` and `AnonHugePages` from smaps_rollup, which is read at the
//!   sampler's budgeted rate, never more often for this: each process's
//!   last read is carried forward (`Splitter`), and a process never
//!   read yet has none. Of the anonymous memory the heap parts leave,
//!   `lazy_free` takes up to `LazyFree`, `huge_pages` up to `AnonHugePages`
//!   of what remains (huge pages beyond what the allocator accounts for:
//!   what THP costs), and `other_anon` the rest (stacks, JIT code, the
//!   program's own mmap).
//!
//! A process without the probe's figures (it did not load the probe, a
//! static binary, an allocator without counters) has all its anonymous
//! memory in `other_anon` and is counted, so reports can say how many
//! there were; when such processes hold more than a fifth of the tree's
//! RSS, that memory is `unknown` instead (their heap is in it, and calling
//! it "other" would say no allocator setting changes it). A tick on which no process had figures has no breakdown:
//! a split with every heap part zero would be misleading. A tick whose
//! processes have all exited holds nothing, and splits into zeros.
//! Arithmetic only: the reads are those the sampler makes anyway.

use super::probe_shm::ProbeReading;
use super::proc::{AnonPages, RssParts};
use crate::model::Breakdown;
use foldhash::{HashMap, HashSet};

/// What one process's allocator says it holds, from the heap probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HeapFigures {
    pub live_bytes: u64,
    /// Resident memory the allocator holds that the program has freed
    /// (0 where the allocator does not say).
    pub free_bytes: u64,
    pub metadata_bytes: u64,
}

impl From<&ProbeReading> for HeapFigures {
    /// Count mode knows the live heap alone: its free and metadata are 0.
    fn from(r: &ProbeReading) -> HeapFigures {
        HeapFigures {
            live_bytes: r.live_bytes,
            free_bytes: r.free_bytes.unwrap_or(0),
            metadata_bytes: r.metadata_bytes.unwrap_or(0),
        }
    }
}

/// One process's figures on a tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProcessMemory {
    /// `RssAnon`, `RssFile`, `RssShmem` of this tick's status.
    pub rss: RssParts,
    /// From its last smaps_rollup read (none yet: zero).
    pub anon_pages: AnonPages,
    /// `None` when its allocator gave no figures.
    pub heap: Option<HeapFigures>,
}

/// One process's breakdown; its parts add up to `rss.total_bytes()`.
pub fn of_process(p: &ProcessMemory) -> Breakdown {
    let anon = p.rss.anon_bytes;
    let heap = p.heap.unwrap_or_default();
    // Shrink in order: free, then metadata, then live.
    let live = heap.live_bytes.min(anon);
    let metadata = heap.metadata_bytes.min(anon - live);
    let free = heap.free_bytes.min(anon - live - metadata);
    let rest = anon - live - metadata - free;
    let lazy_free = p.anon_pages.lazy_free_bytes.min(rest);
    let huge_pages = p.anon_pages.huge_pages_bytes.min(rest - lazy_free);
    Breakdown {
        live_heap_bytes: live,
        allocator_free_bytes: free,
        allocator_metadata_bytes: metadata,
        huge_pages_bytes: huge_pages,
        lazy_free_bytes: lazy_free,
        other_anon_bytes: rest - lazy_free - huge_pages,
        file_bytes: p.rss.file_bytes,
        shmem_bytes: p.rss.shmem_bytes,
        unknown_bytes: 0,
        // The cgroup's, set on the tree's (`Sampler::split_rss`).
        kernel_bytes: 0,
    }
}

/// Above this share of the tree's RSS, the anonymous memory of the
/// processes without allocator counters is `unknown` rather than `other`:
/// their heap is in it, and a saving there must not read as "not heap".
pub const UNKNOWN_SHARE: f64 = 0.2;

/// The tree's breakdown (each part summed over its processes) and how many
/// processes had no heap figures; `None` when none had any. When those
/// processes hold more than `UNKNOWN_SHARE` of the tree's RSS, what their
/// `other_anon` would hold is `unknown_bytes`.
pub fn of_tree(processes: impl IntoIterator<Item = ProcessMemory>) -> Option<(Breakdown, u32)> {
    let mut total = Breakdown::default();
    let mut heapless_total = Breakdown::default();
    let (mut with_heap, mut heapless) = (0u32, 0u32);
    for p in processes {
        if p.heap.is_some() {
            with_heap += 1;
            add(&mut total, &of_process(&p));
        } else {
            heapless += 1;
            add(&mut heapless_total, &of_process(&p));
        }
    }
    let tree_rss = total
        .total_bytes()
        .saturating_add(heapless_total.total_bytes());
    if heapless_total.total_bytes() as f64 > tree_rss as f64 * UNKNOWN_SHARE {
        heapless_total.unknown_bytes = heapless_total.other_anon_bytes;
        heapless_total.other_anon_bytes = 0;
    }
    add(&mut total, &heapless_total);
    (with_heap > 0).then_some((total, heapless))
}

/// Adds `part` into `total`, part by part.
pub fn add(total: &mut Breakdown, part: &Breakdown) {
    let mut sum = total.parts();
    for (s, p) in sum.iter_mut().zip(part.parts()) {
        *s = s.saturating_add(p);
    }
    *total = Breakdown::from_parts(sum);
}

/// The sampler's side: each process's `LazyFree` and `AnonHugePages` from
/// its last smaps_rollup read, carried forward between the budgeted reads.
#[derive(Debug, Default)]
pub struct Splitter {
    anon_pages: HashMap<i32, AnonPages>,
}

impl Splitter {
    /// `pid`'s smaps_rollup was just read.
    pub fn record_anon_pages(&mut self, pid: i32, pages: AnonPages) {
        self.anon_pages.insert(pid, pages);
    }

    /// The tick's breakdown of `tree` (each process's pid, status split and
    /// heap figures, `None` when it has none) and its processes without
    /// heap figures; `None` when none had any.
    /// A tree with no process left holding memory (the last ticks of a run,
    /// its processes exited) is zero in every part, as its RSS is: the
    /// run's mean breakdown then covers the same ticks as its mean RSS.
    /// Forgets the processes that are gone, so a reused pid starts afresh.
    pub fn split(
        &mut self,
        tree: &[(i32, (RssParts, Option<HeapFigures>))],
    ) -> Option<(Breakdown, u32)> {
        if tree.is_empty() {
            return Some((Breakdown::default(), 0));
        }
        if self.anon_pages.len() > tree.len() {
            let live: HashSet<i32> = tree.iter().map(|&(pid, _)| pid).collect();
            self.anon_pages.retain(|pid, _| live.contains(pid));
        }
        of_tree(tree.iter().map(|&(pid, (rss, heap))| ProcessMemory {
            rss,
            anon_pages: self.anon_pages.get(&pid).copied().unwrap_or_default(),
            heap,
        }))
    }
}

#[cfg(test)]
mod tests;
