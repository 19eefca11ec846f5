//! Big trees whose full pass the budget cannot pay for: which trees those
//! are (`choose_scaled`), the few smaps_rollup reads a tick makes instead
//! (`scaled_tick`, estimated by `pss_estimate::ScaledPss`), and the run's
//! note on what was thinned.
//!
//! A process's smaps_rollup walks its page tables, so it costs a little
//! per process and the rest per resident page (`rollup_cost.rs`): 20-90 µs on
//! a quiet small process, 0.4-2.5 ms on a worker mapping a 64 MiB heap.
//! Priced per process from the first read, a shell of 3 MiB alone, a tree
//! of 101 such workers looked 14 times cheaper than it was: it stayed on
//! full passes, the one it could afford put the bucket 78 ms in debt
//! (1.8% of a core over a 4 s run), and between passes every worker was
//! guessed (-11%). When the tree has more than `MIN_THINNED_PROCESSES`
//! and a pass would cost more than the budget gives in
//! `FULL_PASS_EVERY_S`, full passes stop: each tick reads as many
//! processes as the bucket holds reads for (or its PSS floor one), picked
//! by `ScaledPss::plan`. Back under half that cost, full passes resume
//! with a fresh estimator and a pass at once.

use super::counters::MIN_THINNED_PROCESSES;
use super::process_pss::ProcessPss;
use super::pss_estimate::{Live, PssEstimator, PssSource, ScaledPss};
use super::{thread_cpu_seconds, Counted, Payer, Sampler};
use crate::model::Sample;

/// A full pass must cost at most what the budget gives in this long: 20
/// ms at the default budget, what the bucket saves up (`MAX_SAVED_CPU`),
/// so a pass never waits on more than a full bucket, nor leaves it more
/// than a pass in debt.
const FULL_PASS_EVERY_S: f64 = 2.5;
/// The summed RSS of `tree`.
fn rss_bytes(tree: &[Live]) -> u64 {
    tree.iter().map(|p| p.rss.total_bytes()).sum()
}

impl Sampler {
    /// Whether this tick of the processes with memory reads a few of them
    /// scaled (big tree) rather than full passes; switches the state.
    pub(super) fn choose_scaled(&mut self, tree: &[Live]) -> bool {
        let affordable_s = self.budget_fraction * FULL_PASS_EVERY_S;
        let pass_s = self.rollup_cost.of(tree.len(), rss_bytes(tree));
        // An exiting tree stays on its reads: a fresh estimator's first
        // pass would fail on the processes exiting, and those never read
        // would count their RSS in full (a peak of 1,270 MiB against 142).
        let exiting = self.scaled.as_ref().is_some_and(|s| s.shrinking(tree));
        let scaled = exiting
            || tree.len() > MIN_THINNED_PROCESSES
                && match (pass_s, self.scaled.is_some()) {
                    // Nothing read yet: a big tree starts with a few.
                    (None, _) => true,
                    (Some(pass_s), true) => pass_s > affordable_s / 2.0,
                    (Some(pass_s), false) => pass_s > affordable_s,
                };
        match (scaled, self.scaled.is_some()) {
            (true, false) => {
                self.scaled = Some(ScaledPss::default());
                // Until a read, processes would count their RSS in full.
                self.scaled_read_due = true;
            }
            (false, true) => {
                self.scaled = None;
                self.estimator = PssEstimator::default();
                self.full_pass_due = true;
            }
            _ => {}
        }
        scaled
    }

    /// Reads a few processes' smaps_rollup, as many as the bucket (or the
    /// PSS floor, one) pays for, or one of each class when `force`d, and
    /// estimates every process from them.
    pub(super) fn scaled_tick(&mut self, tick: &Counted, force: bool, sample: &mut Sample) {
        let Some(mut scaled) = self.scaled.take() else {
            return;
        };
        let exiting = scaled.shrinking(&tick.tree);
        scaled.retain(&tick.tree);
        if tick.split_known && !tick.tree.is_empty() {
            let force = force || std::mem::take(&mut self.scaled_read_due);
            // While the tree exits, its reads made before hold (`shrinking`).
            let read = if exiting && !force {
                0
            } else {
                self.read_some(&mut scaled, &tick.tree, force)
            };
            if !scaled.has_reads() {
                // Every RSS counted in full is no estimate (+700% on a
                // tree of 1,000 whose first reads failed as it forked).
                self.scaled = Some(scaled);
                return;
            }
            let each = scaled.estimate(&tick.tree);
            let mut total = 0u64;
            for (p, pss) in tick.tree.iter().zip(each) {
                total = total.saturating_add(pss.total_bytes());
                self.processes.push(ProcessPss {
                    pid: p.pid,
                    ppid: p.ppid,
                    rss: p.rss,
                    pss,
                    source: PssSource::Scaled,
                });
            }
            sample.pss_bytes = Some(total);
            let estimated = tick.tree.len().saturating_sub(read);
            sample.pss_estimated_processes = u32::try_from(estimated).unwrap_or(u32::MAX);
            self.scaled_ticks += 1;
        }
        self.scaled = Some(scaled);
    }

    /// The reads of one tick; how many there were.
    fn read_some(&mut self, scaled: &mut ScaledPss, tree: &[Live], force: bool) -> usize {
        // What the tree's biggest process costs: the plan reads them first.
        let biggest = tree.iter().map(|p| p.rss.total_bytes()).max().unwrap_or(0);
        let each_s = self.rollup_cost.of(1, biggest).unwrap_or(0.0);
        let most = if force {
            scaled.classes(tree)
        } else if self.rollup_cost.of(1, biggest).is_none() {
            // One read, to learn what they cost.
            1
        } else {
            let afford = |tokens_s: f64| (tokens_s / each_s.max(1e-9)).max(0.0) as usize;
            afford(self.tokens_s).max(afford(self.floor_tokens_s).min(1))
        };
        let mut read = 0;
        for p in scaled.plan(tree, most) {
            let payer = if force || each_s == 0.0 || self.tokens_s >= each_s {
                Payer::Bucket
            } else if self.floor_tokens_s >= each_s {
                Payer::Floor
            } else {
                break;
            };
            let start_s = thread_cpu_seconds();
            let rollup = self.read_rollup(&p);
            let cost_s = (thread_cpu_seconds() - start_s).max(0.0);
            self.pay(payer, cost_s);
            self.pss_cpu_s += cost_s;
            self.rollup_cost.note(cost_s, 1, p.rss.total_bytes());
            if let Some((rollup, Some(rss))) = rollup {
                scaled.record(tree, &Live { rss, ..p }, &rollup);
                self.scaled_reads += 1;
                read += 1;
            }
        }
        read
    }

    /// What the sampler thinned over the run, in words (`None` when it
    /// read every process on every tick): on how many of the thinned
    /// ticks' processes `stat` and `status` were looked at and read, and
    /// how many processes' PSS was read when full passes gave way to reads
    /// of a few, scaled to their class; how many heap probe files a tick
    /// were read.
    pub fn thinning_note(&self) -> Option<String> {
        let thinned = self.counters.thinned;
        let mut parts = Vec::new();
        if thinned.ticks > 0 {
            let per_tick = |n: u64| n as f64 / thinned.ticks as f64;
            parts.push(format!(
                "on {} ticks of about {:.0} processes, {:.0} looked at a tick (statm), {:.0} of them read in full (stat, status), the rest carried",
                thinned.ticks,
                per_tick(thinned.processes),
                per_tick(thinned.looked),
                per_tick(thinned.full)
            ));
        }
        if let Some(probe) = self.probe.as_ref().map(|p| p.thinned) {
            if probe.ticks > 0 {
                parts.push(format!(
                    "on {} ticks the heap probe's files of {:.0} of about {:.0} processes read a tick (memory moved, or their turn every {} ticks), the rest kept their last reading",
                    probe.ticks,
                    probe.read as f64 / probe.ticks as f64,
                    probe.processes as f64 / probe.ticks as f64,
                    super::probe_shm::REREAD_TICKS
                ));
            }
        }
        if self.scaled_ticks > 0 {
            parts.push(format!(
                "PSS estimated on {} ticks from {} smaps_rollup reads of a few processes, scaled to their class",
                self.scaled_ticks, self.scaled_reads
            ));
        }
        (!parts.is_empty()).then(|| format!("big tree: {}", parts.join("; ")))
    }
}
