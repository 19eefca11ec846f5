//! The race: after each round from `decide::FIRST_LOOK` on, every candidate
//! is judged by the verdict's own paired intervals (`analyze::judge`) at a
//! level corrected twice, once for looking after every round (Pocock's
//! per-look level, as `compare --runs auto`) and once for the number of
//! candidates racing (Bonferroni); a candidate beyond noise over the budget,
//! saving less than `--min-saving`, or using more memory than a qualifying
//! candidate is dropped, with the round and the reason. The race stops as
//! soon as its answer is settled (`settled`), not only when nothing is open.

use allocscope_analyze::choice::{measures, Measures};
use allocscope_analyze::decide::{schedule, sequential_alpha, Side};
use allocscope_analyze::interval::LogRatio;
use allocscope_analyze::judge::{judge_all, shown_at, Judged};
use allocscope_analyze::metric_table::{self, MetricDef};
use allocscope_core::judging::{JudgeSettings, DEFAULT_DECISION_ALPHA};
use allocscope_core::model::StoredExperiment;
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
/// (already the race's, see `race_alpha`); only the `open` candidates
/// (configuration indices: those neither dropped nor the baseline) can be
/// dropped or keep the race going.
pub fn look(
    experiment: &StoredExperiment,
    baseline: usize,
    judging: &JudgeSettings,
    rounds_done: u32,
    max_runs: u32,
    open: &[usize],
) -> Look {
    let table = metric_table::of_experiment(&experiment.info);
    let measures = measures(experiment, baseline, &table, judging);
    let judged = judge_all(experiment, baseline, &measures, judging);
    let names: Vec<&str> = experiment
        .configs
        .iter()
        .map(|c| c.config.name.as_str())
        .collect();
    let dropped: Vec<(usize, String)> = judged
        .iter()
        .filter(|j| open.contains(&j.index))
        .filter_map(|j| {
            drop_reason(j, &judged, &names, &measures, judging).map(|why| (j.index, why))
        })
        .collect();
    let alive: Vec<&Judged> = judged
        .iter()
        .filter(|j| open.contains(&j.index) && !dropped.iter().any(|(i, _)| *i == j.index))
        .collect();
    let standings: Vec<_> = alive.iter().map(|j| j.standing.clone()).collect();
    let stop =
        schedule(&standings, rounds_done, max_runs).stop || settled(&alive, judging.min_saving_pct);
    Look {
        judged,
        measures,
        dropped,
        stop,
    }
}

/// The race's answer cannot change by more than `--min-saving`: some
/// candidate qualifies, and no candidate still open could, beyond noise,
/// save `min_saving_pct` more than the best qualifier's point estimate
/// (the low end of each open one's memory interval, at the race's level,
/// lies above it). A saving is counted as the verdict counts it, in
/// percent of the baseline's memory: two candidates at 0.09x and 0.10x
/// differ by one point, not by a tenth. More rounds could only swap the
/// recommendation for one within that margin of it, which is no saving
/// (`--min-saving`), so they are not run. A candidate open without a memory interval keeps the race
/// going. Stopping early only ends the race; it settles no side, so the
/// level of the recommendation is unchanged.
pub fn settled(alive: &[&Judged], min_saving_pct: f64) -> bool {
    let memory = |j: &Judged| j.memory.as_ref().map_or(f64::INFINITY, |m| m.centre);
    let Some(best) = alive
        .iter()
        .filter(|j| j.standing.qualifies())
        .min_by(|a, b| memory(a).total_cmp(&memory(b)))
    else {
        return false;
    };
    let floor = memory(best).exp() - min_saving_pct / 100.0;
    alive
        .iter()
        .filter(|j| j.standing.is_open())
        .all(|j| j.standing.memory_bounds.is_some_and(|(low, _)| low > floor))
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
pub(crate) fn drop_reason(
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
    use crate::test_fixture::{experiment, with_runs};

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
        let l = look(&e, 0, &judging, 4, 20, &[1, 2, 3]);
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

    /// The baseline, a clear winner, one open on wall time whose memory is
    /// within 3% of the winner's, and one halving dropped after two rounds
    /// (index 3), which no longer races; `extra` adds more candidates.
    fn settling(extra: Vec<allocscope_core::model::StoredConfig>) -> StoredExperiment {
        let mut configs = vec![
            with_runs(
                "glibc",
                &[(100.0, 1.0), (101.0, 1.01), (99.0, 0.99), (100.0, 1.0)],
            ),
            with_runs(
                "best",
                &[(48.0, 1.0), (52.0, 1.01), (49.0, 0.99), (51.0, 1.0)],
            ),
            with_runs(
                "near",
                &[(52.0, 0.9), (52.5, 1.2), (52.0, 0.95), (52.5, 1.15)],
            ),
            with_runs("halved", &[(40.0, 1.0), (41.0, 1.3)]),
        ];
        configs.extend(extra);
        experiment(configs)
    }

    #[test]
    fn the_race_stops_once_no_open_candidate_could_save_more_than_the_winner() {
        let judging = JudgeSettings {
            decision_alpha: race_alpha(20, 2),
            ..JudgeSettings::default()
        };
        let l = look(&settling(Vec::new()), 0, &judging, 4, 20, &[1, 2]);
        assert!(l.dropped.is_empty(), "{:?}", l.dropped);
        assert!(l.judged[1].standing.is_open(), "near is open on wall time");
        assert!(l.stop, "best qualifies and near cannot save 3% more");
        // One open candidate whose memory could still be beyond noise
        // lower than the winner's keeps the race going.
        let lean = with_runs(
            "lean",
            &[(30.0, 0.9), (31.0, 1.2), (30.0, 0.95), (30.5, 1.15)],
        );
        let l = look(&settling(vec![lean]), 0, &judging, 4, 20, &[1, 2, 4]);
        assert!(!l.stop, "lean could still be the recommendation");
        assert!(!settled(&[], 3.0), "nothing qualifies");
    }

    #[test]
    fn a_saving_is_counted_in_points_of_the_baselines_memory() {
        // Far below the baseline, "best" qualifies at about 0.08x and
        // "near", open on wall time, reads about 0.08x with a low end
        // near 0.07x: more than 3% of best's own memory below it, but
        // not 3 points of the baseline's, the unit a saving is counted in.
        let judging = JudgeSettings {
            decision_alpha: race_alpha(20, 2),
            ..JudgeSettings::default()
        };
        let e = experiment(vec![
            with_runs(
                "glibc",
                &[(100.0, 1.0), (100.0, 1.0), (100.0, 1.0), (100.0, 1.0)],
            ),
            with_runs("best", &[(7.5, 1.0), (8.5, 1.01), (7.8, 0.99), (8.2, 1.0)]),
            with_runs("near", &[(7.0, 0.9), (9.0, 1.2), (7.5, 0.95), (8.5, 1.15)]),
        ]);
        let l = look(&e, 0, &judging, 4, 20, &[1, 2]);
        assert!(l.dropped.is_empty(), "{:?}", l.dropped);
        let near = &l.judged[1].standing;
        assert!(near.is_open(), "near is open on wall time");
        let low = near.memory_bounds.map_or(f64::NAN, |(low, _)| low);
        assert!(low < 0.08 * 0.97 && low > 0.08 - 0.03, "{low}");
        assert!(l.stop, "near cannot save 3 points more than best");
    }

    #[test]
    fn candidates_dropped_earlier_do_not_keep_the_race_going() {
        // Only "slow" still races, and this look drops it: nothing is left,
        // though "halved" (two runs, no interval) would read as open.
        let slow = with_runs(
            "slow",
            &[(60.0, 2.0), (61.0, 2.02), (59.0, 1.98), (60.0, 2.0)],
        );
        let judging = JudgeSettings {
            decision_alpha: race_alpha(20, 1),
            ..JudgeSettings::default()
        };
        let l = look(&settling(vec![slow]), 0, &judging, 4, 20, &[4]);
        assert_eq!(l.dropped.len(), 1, "{:?}", l.dropped);
        assert!(l.judged[2].standing.is_open(), "halved reads as open");
        assert!(l.stop, "nothing still racing is open");
    }
}
