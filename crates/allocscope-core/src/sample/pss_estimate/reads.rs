//! The reads the estimate rests on, and when they stop describing the
//! tree: full passes, a newcomer's read alone, the tick's live processes
//! (what leavers held passes to their family), and whether the last pass is
//! `stale` (redo it early) or `shaken` (redo it at once).

use super::baseline::{Baseline, Live};
use super::estimator::PssEstimator;
use super::parts::{parts_of, Shares};
use crate::sample::proc::Rollup;
use std::collections::HashSet;

/// How far the tree's anonymous and shmem RSS may move, summed over its
/// processes and relative to its RSS at the last full pass, before that
/// pass counts as stale (`PssEstimator::stale`).
const DRIFT_SHARE: f64 = 0.1;

/// The share of the tree that processes which joined or left since the
/// last full pass must hold for the pass to be `shaken`: the joiners' RSS
/// against the tree's, or what the leavers shared against the survivors'
/// PSS at the pass.
const SHAKEN_SHARE: f64 = 0.1;

impl PssEstimator {
    /// Remembers a full read of `p` during a full pass: its RSS from its
    /// status, `rollup` from its smaps_rollup, read one after the other.
    pub fn record(&mut self, p: &Live, rollup: &Rollup) {
        self.pass
            .insert(p.pid, Baseline::new(p, rollup, false, self.tick));
    }

    /// Call after a full pass read every process: its reads become the
    /// baselines, and its overall shares the default for processes with no
    /// read of their own or of a parent.
    pub fn full_read_done(&mut self) {
        self.baselines = std::mem::take(&mut self.pass);
        self.departed.clear();
        self.probed.clear();
        self.learn_growth();
        // The tree's sums are its families' sums, just taken.
        let (mut rss, mut pss) = ([0.0; 3], [0.0; 3]);
        for family in self.families.values() {
            for k in 0..3 {
                rss[k] += family.rss[k];
                pss[k] += family.pss[k];
            }
        }
        self.tree_shares =
            (!self.baselines.is_empty()).then(|| Shares::of(&parts_of(rss), &parts_of(pss)));
    }

    /// Whether any process was read: with none, an estimate would count
    /// every RSS in full.
    pub fn has_reads(&self) -> bool {
        !self.baselines.is_empty()
    }

    /// A full pass that could not read every process: its reads are
    /// dropped, the last complete pass stays the reference.
    pub fn full_read_failed(&mut self) {
        self.pass.clear();
    }

    /// Whether the last full pass no longer describes the tree well, so the
    /// next one should come early: a process joined or left since (sharing
    /// moved between processes in ways the cheap counters cannot show), or
    /// the tree's anonymous and shmem RSS moved by more than `DRIFT_SHARE`
    /// of what the pass saw, summed over processes (a process that grows
    /// fast is where a stale read errs most).
    pub fn stale(&self, live: &[Live]) -> bool {
        if self.baselines.is_empty() {
            return false;
        }
        if !self.departed.is_empty() || self.baselines.values().any(|b| b.joined) {
            return true;
        }
        let (mut moved, mut seen) = (0u64, 0u64);
        for Live { pid, rss, .. } in live {
            let Some(b) = self.baselines.get(pid) else {
                return true;
            };
            moved += rss.anon_bytes.abs_diff(b.rss.anon_bytes)
                + rss.shmem_bytes.abs_diff(b.rss.shmem_bytes);
            seen += b.rss.total_bytes();
        }
        moved as f64 > DRIFT_SHARE * seen as f64
    }

    /// Whether the tree changed since the last full pass in a way the
    /// estimate cannot follow, so the sampler keeps budget in reserve for a
    /// full pass right then:
    /// - two or more processes joined, holding more than `SHAKEN_SHARE` of
    ///   the tree's RSS (a burst of workers or connections): what newcomers
    ///   share only among themselves is new to the tree, what they share
    ///   with older processes is not, and a newcomer's read alone does not
    ///   tell the two apart. One newcomer alone is followed well by its
    ///   own read;
    /// - processes left holding, of pages others map too, more than
    ///   `SHAKEN_SHARE` of what the survivors held at the pass (a shutdown):
    ///   what leavers shared among themselves goes with them, and the rest
    ///   passes to survivors that may not map it.
    pub fn shaken(&self, live: &[Live]) -> bool {
        if self.baselines.is_empty() {
            return false;
        }
        let (mut joiners, mut joined, mut all) = (0, 0u64, 0u64);
        for p in live {
            let total = p.rss.total_bytes();
            all += total;
            if self.baselines.get(&p.pid).is_none_or(|b| b.joined) {
                joiners += 1;
                joined += total;
            }
        }
        let left: f64 = self
            .departed
            .values()
            .flatten()
            .map(|(shared, _)| shared.iter().sum::<f64>())
            .sum();
        let survivors: f64 = self
            .baselines
            .values()
            .filter(|b| !b.joined)
            .map(|b| b.pss.total_bytes() as f64)
            .sum();
        (joiners >= 2 && joined as f64 > SHAKEN_SHARE * all as f64)
            || left > SHAKEN_SHARE * survivors
    }

    /// Whether `pid` has no read since the last full pass began: a process
    /// that joined the tree since.
    pub fn unread(&self, pid: i32) -> bool {
        !self.baselines.contains_key(&pid)
    }

    /// Remembers a read of `pid` made alone, the first time it was seen
    /// after the last full pass.
    pub fn record_joined(&mut self, p: &Live, rollup: &Rollup) {
        self.new_page_scale.remove(&p.family);
        self.joined_families.insert(p.family);
        self.baselines
            .insert(p.pid, Baseline::new(p, rollup, true, self.tick));
    }

    /// Forgets processes that are gone (their pids may be reused); what
    /// they held of shared pages passes to their family.
    ///
    /// Call once per tick, first: it counts ticks and notes when each
    /// process was first seen, and its RSS then.
    pub fn retain(&mut self, live: &[Live]) {
        self.tick += 1;
        for p in live {
            self.first_seen.entry(p.pid).or_insert((self.tick, p.rss));
        }
        let live: HashSet<i32> = live.iter().map(|p| p.pid).collect();
        self.first_seen.retain(|pid, _| live.contains(pid));
        let departed = &mut self.departed;
        self.baselines.retain(|pid, b| {
            let alive = live.contains(pid);
            // A process that joined since the last full pass took its shared
            // part from the others; leaving, it gives it back: no change.
            if !alive && !b.joined {
                departed
                    .entry(b.family)
                    .or_default()
                    .push((b.shared(), b.other_mappers()));
            }
            alive
        });
    }
}
