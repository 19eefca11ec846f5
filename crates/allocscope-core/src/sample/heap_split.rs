//! The heap probe's side of a tick: each process's reading (`read`, before
//! the tick's PSS), then, once the tick's PSS is known, the tree's heap
//! figures and breakdown with each process counted at its share of the
//! pages (`split_rss`, `shares`) and the cgroup's kernel memory as the
//! breakdown's kernel part.

use super::breakdown::HeapFigures;
use super::counters::Counted;
use super::probe_shm::{ProbeReader, ProbeReading};
use super::proc::{self, RssParts};
use super::pss::PssReader;
use super::pss_estimate::Live;
use super::shares::{self, Share, ShareTable};
use crate::model::{Breakdown, ProcessName, Sample};

/// The heap probe's files, read on every tick, and what the breakdown
/// weighs their figures by.
#[derive(Debug)]
pub(super) struct HeapSplit {
    pub(super) probe: ProbeReader,
    /// This tick's readings, weighted once the tick's PSS is known
    /// (`split_rss`).
    readings: Vec<(i32, ProbeReading)>,
    /// Each process's last PSS split: what of its figures counts in a tree.
    shares: ShareTable,
}

impl HeapSplit {
    pub(super) fn new(probe: ProbeReader) -> HeapSplit {
        HeapSplit {
            probe,
            readings: Vec::new(),
            shares: ShareTable::default(),
        }
    }

    /// The heap probe's figures for the live processes.
    pub(super) fn read(&mut self, live: &[Live], sample: &mut Sample) {
        let anon: Vec<(i32, u64)> = live.iter().map(|p| (p.pid, p.rss.anon_bytes)).collect();
        let heap = self.probe.read(&anon);
        // The probe's thread is ours, not the workload's.
        sample.threads = sample.threads.saturating_sub(heap.probe_threads);
        // A stale tick has no heap figures (`ProbeReader::read`), so no
        // breakdown either: `split_rss` finds no process with figures.
        sample.heap_stale_processes = heap.stale_processes;
        sample.live_heap_bytes = heap.live_heap_bytes;
        sample.allocator_resident_bytes = heap.allocator_resident_bytes;
        sample.allocator_retained_bytes = heap.allocator_retained_bytes;
        if let Some((arenas, pid)) = heap.arenas {
            sample.arenas = Some(arenas);
            sample.arenas_pid = Some(pid);
            sample.arenas_process = proc::read_comm(pid).map(|c| ProcessName::new(&c));
        }
        self.readings = heap.processes;
    }

    /// Where the tick's RSS went: from each process's status split of this
    /// tick, its heap figures and its last smaps_rollup read (`pss.split`).
    /// On a tree of several processes each one's figures count at its share
    /// of the pages they cover (this tick's PSS, or the last known:
    /// `shares`), the live heap and the allocator's figures included, so
    /// the heap a thousand forks inherited counts once.
    pub(super) fn split_rss(&mut self, tick: &Counted, pss: &mut PssReader, sample: &mut Sample) {
        self.shares.update(&pss.processes);
        self.shares.retain(tick.tree.iter().map(|p| p.pid));
        let readings = std::mem::take(&mut self.readings);
        let heaps: foldhash::HashMap<i32, HeapFigures> = readings
            .iter()
            .map(|(pid, r)| (*pid, HeapFigures::from(r)))
            .collect();
        let several = tick.tree.len() > 1;
        let mut families: foldhash::HashMap<u64, usize> = foldhash::HashMap::default();
        for p in &tick.tree {
            *families.entry(p.family).or_default() += 1;
        }
        let shares = &self.shares;
        let share = |p: &Live| {
            if several {
                shares.share(p.pid, families.get(&p.family).copied().unwrap_or(1))
            } else {
                Share::WHOLE
            }
        };
        // What a process's live heap can have inherited: its parent's, when
        // its parent is in the tree with figures.
        let inherited = |p: &Live| heaps.get(&p.ppid).map(|h| h.live_bytes);
        let weighed: Vec<(i32, (RssParts, Option<HeapFigures>))> = tick
            .tree
            .iter()
            .map(|p| {
                let heap = heaps.get(&p.pid);
                (p.pid, share(p).weigh(&p.rss, heap, inherited(p)))
            })
            .collect();
        if several && sample.live_heap_bytes.is_some() {
            let by_pid: foldhash::HashMap<i32, &Live> =
                tick.tree.iter().map(|p| (p.pid, p)).collect();
            let [live, resident, retained] = shares::weighed_totals(&readings, |pid| {
                by_pid.get(&pid).map_or((Share::WHOLE, 0, None), |p| {
                    (share(p), p.rss.anon_bytes, inherited(p))
                })
            });
            sample.live_heap_bytes = live;
            sample.allocator_resident_bytes = resident;
            sample.allocator_retained_bytes = retained;
        }
        let split = tick.split_known.then(|| pss.split.split(&weighed));
        if let Some((breakdown, heapless)) = split.flatten() {
            // The cgroup's kernel memory as a part of its own: with it the
            // parts add up to the charge.
            let kernel_bytes = sample.cgroup.map_or(0, |c| c.kernel_bytes);
            sample.breakdown = Some(Breakdown {
                kernel_bytes,
                ..breakdown
            });
            sample.heapless_processes = heapless;
        }
    }
}
