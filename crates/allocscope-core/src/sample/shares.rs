//! A tree's memory counted once: each process's heap figures and resident
//! memory weighted by its share of the pages they cover, so that a page
//! that k processes map counts 1/k in each and once in the tree.
//!
//! A forked child's allocator counters report the heap it inherited as its
//! own: a parent that filled 64 MiB and forked 1,000 sleeping children read
//! 62.5 GiB of live heap, summed. The kernel says how much of a process's
//! anonymous memory counts as its own through its PSS (`Pss_Anon`, a page
//! of k mappers at 1/k), which the sampler reads or estimates on every tick
//! (`sample`, `ProcessPss`): `RssAnon - Pss_Anon` is what the other
//! mappers hold of its pages, the discount. Which pages are shared, and
//! with how many, it does not say; here they are taken as shared by the
//! process's family (the live processes of its program name: forks of one
//! another, at least two), so its shared anonymous bytes are the discount
//! times k/(k-1). What a forked child shares with its parent is what the
//! parent wrote before the fork, its heap first: the shared bytes are
//! placed in the live heap first (at most its parent's live heap, what it
//! can have inherited: under tcmalloc a child of a parent with no live
//! heap inherited its allocator's spans, and placed in its live heap they
//! took 12 of 128 MiB), then in the allocator's metadata and its
//! free memory (the order `breakdown` fills them in), then in the rest, and
//! each part counts its shared bytes at 1/k and the others in full. The
//! inherited heap a child has not touched then counts at its share and the
//! parent's with it sums to the heap once; what a child allocated or wrote
//! since counts in full. Two simpler rules were wrong on the real tree: each
//! part at `Pss_Anon / RssAnon` took a child's own 80 KiB of stacks for heap
//! (141.6 MiB of live heap for a tree of 72), and the discount off the live
//! heap first lost the heap's share to the inherited stacks (23 MiB).
//! File and shared-memory parts take the process's `Pss_File` and
//! `Pss_Shmem`, so a tree's weighted parts add up to its PSS. A tree of one
//! process is left as it is (its RSS is its memory of record), and so is a
//! process whose PSS was never read nor estimated.

use super::breakdown::HeapFigures;
use super::probe_shm::{add, ProbeReading};
use super::proc::RssParts;
use super::pss::ProcessPss;
use super::pss_estimate::ratio;
use foldhash::{HashMap, HashSet};

/// What of a process's figures counts in the tree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share {
    /// The bytes of its anonymous memory that other processes hold
    /// (`RssAnon - Pss_Anon`): kept as bytes, not as a share, since what
    /// a process allocates after the PSS it was weighed by is its own (a
    /// share read just after a fork took 30 of a child's 32 MiB for the
    /// parent's).
    pub discount_bytes: u64,
    /// How many processes map its shared pages (at least 2).
    pub mappers: f64,
    /// `Pss_File / RssFile`, `Pss_Shmem / RssShmem`.
    pub file: f64,
    pub shmem: f64,
}

impl Share {
    /// Everything in full.
    pub const WHOLE: Share = Share {
        discount_bytes: 0,
        mappers: 2.0,
        file: 1.0,
        shmem: 1.0,
    };

    /// The share of a process with status split `rss` and PSS split `pss`
    /// whose family has `family` live processes.
    pub fn of(rss: &RssParts, pss: &RssParts, family: usize) -> Share {
        Share {
            discount_bytes: rss.anon_bytes - pss.anon_bytes.min(rss.anon_bytes),
            mappers: family.max(2) as f64,
            file: ratio(pss.file_bytes as f64, rss.file_bytes as f64),
            shmem: ratio(pss.shmem_bytes as f64, rss.shmem_bytes as f64),
        }
    }

    /// Of `anon_bytes` of anonymous memory: the bytes others hold, and the
    /// bytes shared.
    fn split(&self, anon_bytes: u64) -> (u64, u64) {
        let discount = self.discount_bytes.min(anon_bytes);
        let shared = scale(discount, 1.0 / self.others(anon_bytes)).min(anon_bytes);
        (discount, shared)
    }

    /// The part of a shared byte that others hold, of a process with
    /// `anon_bytes`: at least the discount's share of all of it (a PSS
    /// below RSS/k says its pages have more mappers than its family).
    fn others(&self, anon_bytes: u64) -> f64 {
        let discount = ratio(self.discount_bytes as f64, anon_bytes as f64);
        (1.0 - 1.0 / self.mappers).max(discount)
    }

    /// A heap figure of a process with `anon_bytes` (live heap, the
    /// allocator's resident or retained bytes) as it counts in the tree:
    /// its shared bytes, at most `inherited`, at 1/k.
    pub fn weigh_figure(&self, anon_bytes: u64, bytes: u64, inherited: Option<u64>) -> u64 {
        let (discount, shared) = self.split(anon_bytes);
        let here = bytes.min(shared).min(inherited.unwrap_or(u64::MAX));
        bytes - scale(here, self.others(anon_bytes)).min(discount.min(bytes))
    }

    /// `rss` and `heap` as they count in the tree: the shared bytes placed
    /// in live (at most `inherited`, its parent's live heap), metadata and
    /// free in turn (each first bounded by what is left of `RssAnon`, as
    /// `breakdown` bounds it), then in the rest.
    pub fn weigh(
        &self,
        rss: &RssParts,
        heap: Option<&HeapFigures>,
        inherited: Option<u64>,
    ) -> (RssParts, Option<HeapFigures>) {
        let anon = rss.anon_bytes;
        let (mut discount, mut shared) = self.split(anon);
        let weighed = RssParts {
            anon_bytes: anon - discount,
            file_bytes: scale(rss.file_bytes, self.file),
            shmem_bytes: scale(rss.shmem_bytes, self.shmem),
        };
        let others = self.others(anon);
        let heap = heap.map(|h| {
            let mut left = anon;
            let mut take = |bytes: u64, most: u64| {
                let bounded = bytes.min(left);
                left -= bounded;
                let here = bounded.min(shared).min(most);
                shared -= here;
                let off = scale(here, others).min(discount);
                discount -= off;
                bounded - off
            };
            let live_bytes = take(h.live_bytes, inherited.unwrap_or(u64::MAX));
            let metadata_bytes = take(h.metadata_bytes, u64::MAX);
            let free_bytes = take(h.free_bytes, u64::MAX);
            HeapFigures {
                live_bytes,
                free_bytes,
                metadata_bytes,
            }
        });
        (weighed, heap)
    }
}

fn scale(bytes: u64, share: f64) -> u64 {
    (bytes as f64 * share).round().max(0.0) as u64
}

/// Each process's last PSS split, carried to the ticks that had none.
#[derive(Debug, Default)]
pub struct ShareTable {
    pss: HashMap<i32, (RssParts, RssParts)>,
}

impl ShareTable {
    /// This tick's PSS of every process, read or estimated; a tick without
    /// PSS (an empty list) keeps the last ones.
    pub fn update(&mut self, processes: &[ProcessPss]) {
        for p in processes {
            self.pss.insert(p.pid, (p.rss, p.pss));
        }
    }

    /// Forgets the processes that are gone, so a reused pid starts afresh.
    pub fn retain(&mut self, live: impl ExactSizeIterator<Item = i32>) {
        if self.pss.len() > live.len() {
            let live: HashSet<i32> = live.collect();
            self.pss.retain(|pid, _| live.contains(pid));
        }
    }

    /// `pid`'s share, its family having `family` live processes: from its
    /// last PSS split (the proportions of that tick, applied to this one's
    /// figures), in full when none is known.
    pub fn share(&self, pid: i32, family: usize) -> Share {
        self.pss
            .get(&pid)
            .map_or(Share::WHOLE, |(rss, pss)| Share::of(rss, pss, family))
    }
}

/// The tree's live heap, allocator resident and retained bytes, each
/// process's reading at its share (`None` where no process reported the
/// figure); `weight` gives a pid's share, anonymous RSS and what its live
/// heap can have inherited.
pub fn weighed_totals(
    readings: &[(i32, ProbeReading)],
    weight: impl Fn(i32) -> (Share, u64, Option<u64>),
) -> [Option<u64>; 3] {
    let mut totals = [None; 3];
    for (pid, r) in readings {
        let (share, anon, inherited) = weight(*pid);
        let figures = [Some(r.live_bytes), r.resident_bytes, r.retained_bytes];
        for (i, (sum, v)) in totals.iter_mut().zip(figures).enumerate() {
            add(
                sum,
                v.map(|v| share.weigh_figure(anon, v, inherited.filter(|_| i == 0))),
            );
        }
    }
    totals
}

#[cfg(test)]
mod tests;
