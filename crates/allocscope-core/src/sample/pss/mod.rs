//! The tree's PSS/USS/swap on each tick, from `smaps_rollup`, which walks
//! the page tables under the mm lock: 20-90 µs on a quiet process, 1-4 ms
//! on a busy many-threaded one, and it can stall the workload's own
//! mmap/madvise. So reads are paid for from the CPU budget (`Budget`):
//! full passes over every process, estimated between them
//! (`pss_estimate`) with processes read alone (newcomers, probes); on a big
//! tree, a few reads a tick scaled to their class (`scaled_reads.rs`).
//! Every read is paired with the status read just after it. A process that
//! exits during a pass is left out of its sum, not counted as a failed
//! read. A sample carries PSS only when it was read or estimated for every
//! process of that tick.

mod rollup_cost;
mod scaled_reads;

use super::breakdown::Splitter;
use super::budget::{Budget, Pass, Payer};
use super::counters::{Counted, Counters};
use super::cpu_time::timed;
use super::proc::{self, Rollup, RssParts};
use super::pss_estimate::{Live, PssEstimator, PssSource, ScaledPss};
use crate::model::Sample;
use rollup_cost::RollupCost;

/// What the tree's PSS reads know between ticks.
#[derive(Debug, Default)]
pub(super) struct PssReader {
    estimator: PssEstimator,
    /// A full pass was made: until then one is due at once, at the start
    /// and after a big tree's scaled reads (`scaled_reads`) gave way to
    /// full passes again.
    full_pass_made: bool,
    /// Big trees: a few processes read at a time, scaled to their class.
    scaled: Option<ScaledPss>,
    /// One process of each class is read at once: scaled reads just began.
    scaled_read_due: bool,
    /// What a process's smaps_rollup costs, learned from every read.
    rollup_cost: RollupCost,
    /// Ticks that read smaps_rollup (for every pid of that tick).
    pub(super) passes: u64,
    /// Processes read alone to learn their family's growth.
    pub(super) probes: u64,
    /// Processes read alone by `scaled`, and the ticks it estimated.
    scaled_reads: u64,
    scaled_ticks: u64,
    /// Every process's PSS on the last tick, by kind.
    pub(super) processes: Vec<ProcessPss>,
    /// Each process's `LazyFree` and `AnonHugePages` from its last read:
    /// what the breakdown carries between ticks.
    pub(super) split: Splitter,
}

/// One process's PSS on a tick, split by kind, read or estimated
/// (`Sampler::processes`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProcessPss {
    pub pid: i32,
    pub ppid: i32,
    /// `RssAnon`, `RssFile`, `RssShmem` from its status.
    pub rss: RssParts,
    /// `Pss_Anon`, `Pss_File`, `Pss_Shmem`, read or estimated.
    pub pss: RssParts,
    pub source: PssSource,
}

/// What a tick's smaps_rollup reads go by: the budget that pays for them,
/// read whatever it holds when `force`d, and the counters that read each
/// process's status just after its read.
pub(super) struct ReadWith<'a> {
    pub(super) budget: &'a mut Budget,
    pub(super) force: bool,
    pub(super) counters: &'a mut Counters,
}

impl PssReader {
    /// This tick's PSS of `tick`'s processes into `sample`: full passes,
    /// estimated between them, unless the tree is read scaled.
    pub(super) fn tick(&mut self, with: &mut ReadWith, tick: &Counted, sample: &mut Sample) {
        self.processes.clear();
        if self.choose_scaled(with.budget, &tick.tree) {
            return self.scaled_tick(with, tick, sample);
        }
        self.estimator.retain(&tick.tree);
        let pass = if !tick.split_known {
            // Nothing is estimated: no reserve to keep.
            Pass::Stale
        } else if self.estimator.shaken(&tick.tree) {
            Pass::Shaken
        } else if self.estimator.stale(&tick.tree) {
            Pass::Stale
        } else {
            Pass::Current
        };
        if let Some(payer) = with
            .budget
            .pass_payer(pass, !self.full_pass_made || with.force)
        {
            let (totals, cost_s) =
                timed(|| self.read_pss_totals(with.counters, &tick.tree, tick.split_known));
            self.passes += 1;
            self.full_pass_made = true;
            with.budget.pay_pass(payer, cost_s);
            self.rollup_cost
                .note(cost_s, tick.tree.len(), rss_bytes(&tick.tree));
            if let Some((pss, uss, swap)) = totals {
                sample.pss_bytes = Some(pss);
                sample.uss_bytes = Some(uss);
                sample.swap_bytes = Some(swap);
            }
        }
        if sample.pss_bytes.is_none() && !tick.tree.is_empty() && tick.split_known {
            self.processes.clear();
            self.read_joined(with, &tick.tree);
            self.read_probe(with, &tick.tree);
            // Nothing read (a pass failed as the tree forked or exited):
            // no PSS rather than every RSS counted in full.
            if !self.estimator.has_reads() {
                return;
            }
            let each = self.estimator.estimate(&tick.tree);
            sample.pss_bytes = Some(self.keep(&tick.tree, each));
            sample.pss_estimated_processes = u32::try_from(tick.tree.len()).unwrap_or(u32::MAX);
        }
    }

    /// Reads in full, once, each process that joined the tree since the
    /// last full pass, as the budget allows (`Budget::alone_payer`): what
    /// it shares with the others is taken from them, not added (see
    /// `pss_estimate`).
    fn read_joined(&mut self, with: &mut ReadWith, tree: &[Live]) {
        for p in tree {
            if !self.estimator.unread(p.pid) {
                continue;
            }
            if let Some((rollup, read)) = self.read_alone(with, p) {
                self.estimator.record_joined(&read, &rollup);
            }
        }
    }

    /// Reads alone the process whose read would tell how much of what its
    /// family maps is new to the tree, when one is due
    /// (`PssEstimator::probe_due`), on the same terms as a joined one.
    fn read_probe(&mut self, with: &mut ReadWith, tree: &[Live]) {
        let Some(p) = self.estimator.probe_due(tree) else {
            return;
        };
        if let Some((rollup, read)) = self.read_alone(with, &p) {
            self.probes += 1;
            self.estimator.record_probe(tree, &read, &rollup);
        }
    }

    /// One process's read between full passes on the terms of
    /// `Budget::alone_payer`.
    fn read_alone(&mut self, with: &mut ReadWith, p: &Live) -> Option<(Rollup, Live)> {
        let payer = with.budget.alone_payer()?;
        self.read_paid(with, p, payer)
    }

    /// `read_rollup` of one process, its cost paid by `payer` and learned
    /// from; the process as read.
    fn read_paid(&mut self, with: &mut ReadWith, p: &Live, payer: Payer) -> Option<(Rollup, Live)> {
        let (read, cost_s) = timed(|| self.read_rollup(with.counters, p));
        with.budget.pay(payer, cost_s);
        self.rollup_cost.note(cost_s, 1, p.rss.total_bytes());
        let (rollup, rss) = read?;
        Some((rollup, Live { rss: rss?, ..*p }))
    }

    /// `p`'s smaps_rollup, and its RSS split from its status read right
    /// after. The status of the tick was read before every rollup of a full
    /// pass; a process that maps or frees memory in between (a pass takes
    /// tens of milliseconds on a big tree) would leave a baseline whose RSS
    /// and PSS describe different moments, and its anon would be off by
    /// the difference in every estimate until its next read (17 MiB of a
    /// PostgreSQL backend's 23 was).
    fn read_rollup(
        &mut self,
        counters: &mut Counters,
        p: &Live,
    ) -> Option<(Rollup, Option<RssParts>)> {
        let (rollup, anon_pages) = proc::read_smaps_rollup_with_anon(p.pid)?;
        self.split.record_anon_pages(p.pid, anon_pages);
        Some((rollup, counters.status_now(p.pid)))
    }

    /// Summed (PSS, USS, swap) of the tree, or `None` if any process still
    /// running could not be read (a partial sum would look like a drop in
    /// memory) or none could. Every read also becomes that process's
    /// baseline for the estimates until its next one.
    pub(super) fn read_pss_totals(
        &mut self,
        counters: &mut Counters,
        tree: &[Live],
        split_known: bool,
    ) -> Option<(u64, u64, u64)> {
        let mut totals = (0u64, 0u64, 0u64);
        let mut read_any = false;
        for p in tree {
            let Some((rollup, rss)) = self.read_rollup(counters, p) else {
                // One that exited since the tick's status read holds
                // nothing now: the others' sum is the tree's. Shutdowns
                // and connection churn would otherwise spoil the very
                // passes the estimate needs most.
                if exited(p.pid) {
                    continue;
                }
                self.estimator.full_read_failed();
                return None;
            };
            if let Some(rss) = rss.filter(|_| split_known) {
                let read = Live { rss, ..*p };
                self.estimator.record(&read, &rollup);
                let pss = rollup.pss_parts.unwrap_or(RssParts {
                    anon_bytes: rollup.pss_bytes,
                    ..RssParts::default()
                });
                self.keep(&[read], [(pss, PssSource::Read)]);
            }
            read_any = true;
            totals.0 = totals.0.saturating_add(rollup.pss_bytes);
            totals.1 = totals.1.saturating_add(rollup.uss_bytes);
            totals.2 = totals.2.saturating_add(rollup.swap_bytes);
        }
        if !read_any {
            self.estimator.full_read_failed();
            return None;
        }
        self.estimator.full_read_done();
        Some(totals)
    }

    /// Keeps `each` process's PSS of `tree`, read or estimated, as this
    /// tick's; their sum.
    fn keep(
        &mut self,
        tree: &[Live],
        each: impl IntoIterator<Item = (RssParts, PssSource)>,
    ) -> u64 {
        let mut total = 0u64;
        for (p, (pss, source)) in tree.iter().zip(each) {
            total = total.saturating_add(pss.total_bytes());
            self.processes.push(ProcessPss {
                pid: p.pid,
                ppid: p.ppid,
                rss: p.rss,
                pss,
                source,
            });
        }
        total
    }
}

/// The summed RSS of `tree`.
fn rss_bytes(tree: &[Live]) -> u64 {
    tree.iter().map(|p| p.rss.total_bytes()).sum()
}

/// Whether `pid` has exited (gone, or a zombie with no memory left).
pub(super) fn exited(pid: i32) -> bool {
    proc::read_stat(pid).is_none_or(|stat| matches!(stat.state, 'Z' | 'X'))
}
