//! Big trees whose full pass the budget cannot pay for: which trees those
//! are (`choose_scaled`), the few smaps_rollup reads a tick makes instead
//! (`scaled_tick`, estimated by `pss_estimate::ScaledPss`), and the run's
//! note on them.
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

use super::{rss_bytes, PssReader, ReadWith};
use crate::model::Sample;
use crate::sample::budget::Budget;
use crate::sample::counters::{Counted, MIN_THINNED_PROCESSES};
use crate::sample::pss_estimate::{Live, PssEstimator, PssSource, ScaledPss};

/// A full pass must cost at most what the budget gives in this long: 20
/// ms at the default budget, what the bucket saves up (`MAX_SAVED_CPU`),
/// so a pass never waits on more than a full bucket, nor leaves it more
/// than a pass in debt.
const FULL_PASS_EVERY_S: f64 = 2.5;

impl PssReader {
    /// Whether this tick of the processes with memory reads a few of them
    /// scaled (big tree) rather than full passes; switches the state.
    pub(super) fn choose_scaled(&mut self, budget: &Budget, tree: &[Live]) -> bool {
        let affordable_s = budget.fraction * FULL_PASS_EVERY_S;
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
                self.full_pass_made = false;
            }
            _ => {}
        }
        scaled
    }

    /// Reads a few processes' smaps_rollup, as many as the bucket (or the
    /// PSS floor, one) pays for, or one of each class when `force`d (and
    /// when scaled reads just began), and estimates every process from them.
    pub(super) fn scaled_tick(&mut self, with: &mut ReadWith, tick: &Counted, sample: &mut Sample) {
        let Some(mut scaled) = self.scaled.take() else {
            return;
        };
        let exiting = scaled.shrinking(&tick.tree);
        scaled.retain(&tick.tree);
        if tick.split_known && !tick.tree.is_empty() {
            with.force |= std::mem::take(&mut self.scaled_read_due);
            // While the tree exits, its reads made before hold (`shrinking`).
            let read = if exiting && !with.force {
                0
            } else {
                self.read_some(with, &mut scaled, &tick.tree)
            };
            if !scaled.has_reads() {
                // Every RSS counted in full is no estimate (+700% on a
                // tree of 1,000 whose first reads failed as it forked).
                self.scaled = Some(scaled);
                return;
            }
            let each = scaled.estimate(&tick.tree).into_iter();
            let total = self.keep(&tick.tree, each.map(|pss| (pss, PssSource::Scaled)));
            sample.pss_bytes = Some(total);
            let estimated = tick.tree.len().saturating_sub(read);
            sample.pss_estimated_processes = u32::try_from(estimated).unwrap_or(u32::MAX);
            self.scaled_ticks += 1;
        }
        self.scaled = Some(scaled);
    }

    /// The reads of one tick; how many there were.
    fn read_some(&mut self, with: &mut ReadWith, scaled: &mut ScaledPss, tree: &[Live]) -> usize {
        // What the tree's biggest process costs: the plan reads them first.
        let biggest = tree.iter().map(|p| p.rss.total_bytes()).max().unwrap_or(0);
        let each_s = self.rollup_cost.of(1, biggest).unwrap_or(0.0);
        let most = if with.force {
            scaled.classes(tree)
        } else if self.rollup_cost.of(1, biggest).is_none() {
            // One read, to learn what they cost.
            1
        } else {
            with.budget.reads_affordable(each_s)
        };
        let mut read = 0;
        for p in scaled.plan(tree, most) {
            let Some(payer) = with.budget.read_payer(each_s, with.force) else {
                break;
            };
            if let Some((rollup, p)) = self.read_paid(with, &p, payer) {
                scaled.record(tree, &p, &rollup);
                self.scaled_reads += 1;
                read += 1;
            }
        }
        read
    }

    /// What the scaled reads thinned over the run, in words (`None` when
    /// there were none).
    pub fn thinning_note(&self) -> Option<String> {
        (self.scaled_ticks > 0).then(|| format!(
            "PSS estimated on {} ticks from {} smaps_rollup reads of a few processes, scaled to their class",
            self.scaled_ticks, self.scaled_reads
        ))
    }
}
