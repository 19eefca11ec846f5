//! The race: after each round from `decide::FIRST_LOOK` on, every candidate
//! is judged by the verdict's own paired intervals (`analyze::judge`) at a
//! level corrected twice, once for looking after every round (Pocock's
//! per-look level, as `compare --runs auto`) and once for the number of
//! candidates racing (Bonferroni); a candidate beyond noise over the budget,
//! saving less than `--min-saving`, or using more memory than a qualifying
//! candidate is dropped, with the round and the reason.

use crate::analyze::choice::{measures, Measures};
use crate::analyze::decide::{schedule, sequential_alpha, Side};
use crate::analyze::interval::LogRatio;
use crate::analyze::judge::{judge_all, shown_at, Judged};
use crate::analyze::metric_table::{self, MetricDef};
use crate::judging::{JudgeSettings, DEFAULT_DECISION_ALPHA};
use crate::model::StoredExperiment;
use serde::{Deserialize, Serialize};

/// The two-sided level each candidate's intervals are settled at while the
/// race looks after every round: the per-look level for `max_runs` rounds,
/// shared among `candidates` (Bonferroni), so that the chance that any
/// candidate settles wrongly at any look stays within 5%.
pub fn race_alpha(max_runs: u32, candidates: usize) -> f64 {
    sequential_alpha(max_runs) / candidates.max(1) as f64
}

/// The level the final verdict of a race judges each candidate at: 95%
/// shared among the `candidates` that raced, so that the chance of
/// recommending a candidate that does not truly qualify stays within 5%
/// however many raced.
pub fn verdict_alpha(candidates: usize) -> f64 {
    DEFAULT_DECISION_ALPHA / candidates.max(1) as f64
}

/// A candidate that stopped running, when and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dropped {
    pub config: String,
    /// The last round it ran (from 1).
    pub round: u32,
    pub reason: String,
}

/// What one look at the race says.
pub struct Look {
    pub judged: Vec<Judged>,
    pub measures: Measures,
    /// Candidates settled out at this look (configuration indices), with why.
    pub dropped: Vec<(usize, String)>,
    /// Nothing is left open, or the round limit is reached.
    pub stop: bool,
}

/// Judges `experiment` after `rounds_done` rounds at `judging`'s level
/// (already the race's, see `race_alpha`).
pub fn look(
    experiment: &StoredExperiment,
    baseline: usize,
    judging: &JudgeSettings,
    rounds_done: u32,
    max_runs: u32,
) -> Look {
    let table = metric_table::of_experiment(&experiment.info);
    let measures = measures(experiment, baseline, &table, judging);
    let judged = judge_all(experiment, baseline, &measures, judging);
    let standings: Vec<_> = judged.iter().map(|j| j.standing.clone()).collect();
    let stop = schedule(&standings, rounds_done, max_runs).stop;
    let names: Vec<&str> = experiment
        .configs
        .iter()
        .map(|c| c.config.name.as_str())
        .collect();
    let dropped = judged
        .iter()
        .filter_map(|j| {
            drop_reason(j, &judged, &names, &measures, judging).map(|why| (j.index, why))
        })
        .collect();
    Look {
        judged,
        measures,
        dropped,
        stop,
    }
}

fn ratio_words(row: &MetricDef, r: Option<&LogRatio>, alpha: f64) -> String {
    match r.map(|r| shown_at(row, r, alpha)) {
        Some(r) if r.ci_low.is_finite() => format!(
            "{} {:.2}x [{:.2}, {:.2}]",
            row.label, r.value, r.ci_low, r.ci_high
        ),
        Some(r) => format!("{} {:.2}x", row.label, r.value),
        None => format!("no {} figures", row.label),
    }
}

/// Why `j` is settled out, in words with the interval that settled it;
/// `None` while it may still win.
pub fn drop_reason(
    j: &Judged,
    judged: &[Judged],
    names: &[&str],
    measures: &Measures,
    judging: &JudgeSettings,
) -> Option<String> {
    let alpha = judging.decision_alpha;
    let s = &j.standing;
    if s.performance == Side::Bad {
        return Some(format!(
            "over the {}% budget: {}",
            judging.max_slowdown_pct,
            ratio_words(&measures.perf, j.perf.as_ref(), alpha)
        ));
    }
    if s.memory == Side::Bad {
        return Some(format!(
            "saves less than {}%: {}",
            judging.min_saving_pct,
            ratio_words(&measures.memory, j.memory.as_ref(), alpha)
        ));
    }
    let better = judged.get(s.outranked_by?)?;
    Some(format!(
        "more {} than {} beyond noise: {} against {}",
        measures.memory.label,
        names.get(better.index).copied().unwrap_or("?"),
        ratio_words(&measures.memory, j.memory.as_ref(), alpha),
        ratio_words(&measures.memory, better.memory.as_ref(), alpha)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::test_fixture::{experiment, with_runs};

    #[test]
    fn the_level_is_shared_among_candidates_and_looks() {
        assert!((verdict_alpha(1) - 0.05).abs() < 1e-12);
        assert!((verdict_alpha(25) - 0.002).abs() < 1e-12);
        assert!((race_alpha(20, 1) - sequential_alpha(20)).abs() < 1e-12);
        assert!((race_alpha(20, 10) - sequential_alpha(20) / 10.0).abs() < 1e-12);
        assert!(race_alpha(20, 0) > 0.0);
    }

    #[test]
    fn a_slow_candidate_and_one_saving_nothing_are_dropped_with_reasons() {
        // Memory (mean RSS, MiB) and wall time (s) per round, for the
        // baseline, a slow saver, a non-saver and a clear winner.
        let e = experiment(vec![
            with_runs(
                "glibc",
                &[(100.0, 1.0), (101.0, 1.01), (99.0, 0.99), (100.0, 1.0)],
            ),
            with_runs(
                "slow",
                &[(60.0, 2.0), (61.0, 2.02), (59.0, 1.98), (60.0, 2.0)],
            ),
            with_runs(
                "same",
                &[(100.0, 1.0), (101.0, 1.0), (99.0, 1.0), (100.5, 1.0)],
            ),
            with_runs(
                "best",
                &[(50.0, 1.0), (50.5, 1.01), (49.5, 0.99), (50.0, 1.0)],
            ),
        ]);
        let judging = JudgeSettings {
            decision_alpha: race_alpha(20, 3),
            ..JudgeSettings::default()
        };
        let l = look(&e, 0, &judging, 4, 20);
        let why = |i: usize| {
            l.dropped
                .iter()
                .find(|(c, _)| *c == i)
                .map(|(_, w)| w.clone())
        };
        assert!(
            why(1).is_some_and(|w| w.contains("over the 5% budget")),
            "{:?}",
            why(1)
        );
        assert!(
            why(2).is_some_and(|w| w.contains("saves less than 3%")),
            "{:?}",
            why(2)
        );
        assert_eq!(why(3), None);
        assert!(l.stop, "nothing is left open");
    }
}
