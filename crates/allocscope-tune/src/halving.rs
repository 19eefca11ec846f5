//! Successive halving, the race's early rounds: before the paired
//! intervals exist (`decide::FIRST_LOOK`), each round's look keeps only the
//! best share of the open candidates by the point estimate of their paired
//! memory ratio, so that 20 candidates cost 20 runs once and not three
//! times. A candidate whose performance ratio is over the budget beyond the
//! noise of one reading (`perf_noise`) ranks after every one within it: one
//! or two runs are not an interval, so it is not dropped for that alone,
//! only ranked last; one within that noise of the budget ranks by its
//! memory like any other.

use super::race::Look;
use allocscope_analyze::choice::{measures, Measures};
use allocscope_analyze::decide::FIRST_LOOK;
use allocscope_analyze::interval::LogRatio;
use allocscope_analyze::judge::{judge_all, shown_at, Judged};
use allocscope_analyze::metric_table;
use allocscope_analyze::stats::median;
use allocscope_core::judging::JudgeSettings;
use allocscope_core::model::StoredExperiment;

/// The fewest candidates round 1 keeps: two, so that round 2 still
/// chooses between readings.
const MIN_KEPT: usize = 2;

/// How many spreads of one reading a performance point estimate must be
/// over the budget to rank last: a candidate truly at the budget reads that
/// far over it about once in 40 looks.
const NOISE_SPREADS: f64 = 2.0;

/// The fewest performance readings a spread is estimated from.
const MIN_FOR_SPREAD: usize = 4;

/// How many of `open` candidates the look after `round` keeps: a sixth,
/// rounded down and at least 2, after round 1 (20 -> 3, 24 -> 4), one
/// after round 2, the finalist (successive halving ends with one arm);
/// `None` from `FIRST_LOOK` on, where the intervals judge instead. A lone
/// finalist is judged at compare's own level (a family of one), so a race
/// that settles at its first look costs 21 runs in round 1, 4 in round 2
/// and 2 in round 3: 27, under twice the 15 of compare's five defaults at
/// theirs, and 29 a round later (two finalists made it 28 and 31, and
/// their level, shared between two, often needed that later round).
pub(crate) fn kept_after(round: u32, open: usize) -> Option<usize> {
    let kept = match round {
        1 => (open / 6).max(MIN_KEPT),
        r if r < FIRST_LOOK => 1,
        _ => return None,
    };
    Some(kept.min(open))
}

/// The spread (log scale) of one candidate's performance point estimate
/// after the same rounds. Across the open candidates, 1.4826 times the
/// median absolute deviation of their paired log ratios (the standard
/// deviation for normal noise, blind to the few candidates truly far off)
/// shows the noise of their own runs; the baseline's runs, shared by every
/// candidate of a round, move all of them together and add as much again
/// (taken to be as noisy as any candidate's), hence the factor of √2. True
/// differences between candidates only widen it, so it errs towards
/// keeping a candidate. 0 with fewer than `MIN_FOR_SPREAD` readings.
pub(crate) fn perf_noise(centres: &[f64]) -> f64 {
    if centres.len() < MIN_FOR_SPREAD {
        return 0.0;
    }
    let middle = median(centres).unwrap_or(0.0);
    let deviations: Vec<f64> = centres.iter().map(|c| (c - middle).abs()).collect();
    let own = 1.4826 * median(&deviations).unwrap_or(0.0);
    std::f64::consts::SQRT_2 * own
}

/// The candidates of `judged` among `open` that this halving drops after
/// `round`, with why ("round 1: ranked 13th of 20 by mean RSS ratio 0.93x,
/// kept 3"); empty from `FIRST_LOOK` on.
pub fn halve(
    judged: &[Judged],
    open: &[usize],
    measures: &Measures,
    judging: &JudgeSettings,
    round: u32,
) -> Vec<(usize, String)> {
    let Some(kept) = kept_after(round, open.len()) else {
        return Vec::new();
    };
    let mut ranked: Vec<&Judged> = judged.iter().filter(|j| open.contains(&j.index)).collect();
    let centres: Vec<f64> = ranked
        .iter()
        .filter_map(|j| j.perf.as_ref().map(|p| p.centre))
        .collect();
    let budget_log = (1.0 + judging.max_slowdown_pct / 100.0).ln();
    let limit = budget_log + NOISE_SPREADS * perf_noise(&centres);
    let over = |j: &Judged| j.perf.as_ref().is_some_and(|p| p.centre > limit);
    let memory = |j: &Judged| j.memory.as_ref().map_or(f64::INFINITY, |m| m.centre);
    // A candidate without figures (every run failed, crashed or was
    // killed) can never be recommended: it ranks after every one with
    // figures, even one over the budget.
    let failed = |j: &Judged| j.memory.is_none();
    ranked.sort_by(|a, b| {
        (failed(a), over(a))
            .cmp(&(failed(b), over(b)))
            .then(memory(a).total_cmp(&memory(b)))
    });
    let of = ranked.len();
    ranked
        .iter()
        .enumerate()
        .skip(kept)
        .map(|(place, j)| {
            let memory_words = j.memory.as_ref().map_or_else(
                || format!("no {} figures", measures.memory.label),
                |m| {
                    let r = shown_at(&measures.memory, m, judging.decision_alpha);
                    format!("{} ratio {:.2}x", measures.memory.label, r.value)
                },
            );
            let budget_words = match j.perf.as_ref().filter(|_| over(j)) {
                Some(p) => format!(
                    ", {} {:.2}x over the {}% budget beyond one reading's noise ({:.2}x)",
                    measures.perf.label,
                    shown_at(&measures.perf, p, judging.decision_alpha).value,
                    judging.max_slowdown_pct,
                    shown_at(
                        &measures.perf,
                        &LogRatio {
                            centre: limit,
                            ..p.clone()
                        },
                        0.05
                    )
                    .value
                ),
                None => String::new(),
            };
            let why = format!(
                "round {round}: ranked {} of {of} by {memory_words}{budget_words}, kept {kept}",
                ordinal(place + 1)
            );
            (j.index, why)
        })
        .collect()
}

/// The look after early `round` (before `FIRST_LOOK`): the `open`
/// candidates judged, those this halving drops; the race goes on.
pub fn halving_look(
    experiment: &StoredExperiment,
    baseline: usize,
    judging: &JudgeSettings,
    round: u32,
    open: &[usize],
) -> Look {
    let table = metric_table::of_experiment(&experiment.info);
    let measures = measures(experiment, baseline, &table, judging);
    let judged = judge_all(experiment, baseline, &measures, judging);
    let dropped = halve(&judged, open, &measures, judging, round);
    Look {
        judged,
        measures,
        dropped,
        stop: false,
    }
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_fixture::{experiment, with_runs};

    #[test]
    fn a_sixth_survives_round_one_and_one_finalist_round_two() {
        assert_eq!(kept_after(1, 20), Some(3));
        assert_eq!(kept_after(1, 24), Some(4));
        assert_eq!(kept_after(1, 23), Some(3));
        assert_eq!(kept_after(2, 3), Some(1));
        assert_eq!(kept_after(2, 4), Some(1));
        assert_eq!(kept_after(1, 3), Some(2));
        assert_eq!(kept_after(2, 2), Some(1));
        assert_eq!(kept_after(1, 1), Some(1));
        assert_eq!(kept_after(FIRST_LOOK, 24), None);
    }

    /// One round: the baseline at 100 MiB in 1 s, then candidates with the
    /// given (MiB, s).
    fn halved(candidates: &[(f64, f64)], round: u32) -> Vec<(usize, String)> {
        let mut configs = vec![with_runs("glibc", &[(100.0, 1.0)])];
        configs.extend(
            candidates
                .iter()
                .enumerate()
                .map(|(i, run)| with_runs(&format!("c{i}"), &[*run])),
        );
        let e = experiment(configs);
        let judging = JudgeSettings::default();
        let table = metric_table::of_experiment(&e.info);
        let m = measures(&e, 0, &table, &judging);
        let judged = judge_all(&e, 0, &m, &judging);
        let open: Vec<usize> = (1..=candidates.len()).collect();
        halve(&judged, &open, &m, &judging, round)
    }

    #[test]
    fn the_least_memory_within_the_budget_is_kept_and_each_drop_says_its_rank() {
        // c0 saves most but is 3x slower (over the 5% budget by its run).
        let runs = [
            (40.0, 3.0),
            (90.0, 1.0),
            (60.0, 1.0),
            (95.0, 1.0),
            (50.0, 1.0),
            (80.0, 1.0),
            (99.0, 1.0),
            (70.0, 1.0),
        ];
        let dropped = halved(&runs, 1);
        let mut indices: Vec<usize> = dropped.iter().map(|(i, _)| *i).collect();
        indices.sort();
        // Kept: c4 (50) and c2 (60); c0 ranks last for its point estimate.
        assert_eq!(indices, [1, 2, 4, 6, 7, 8]);
        let why = |i: usize| {
            dropped
                .iter()
                .find(|(c, _)| *c == i)
                .map(|(_, w)| w.as_str())
        };
        assert_eq!(
            why(1),
            Some("round 1: ranked 8th of 8 by mean RSS ratio 0.40x, CPU time 3.00x over the 5% budget beyond one reading's noise (1.05x), kept 2")
        );
        assert_eq!(
            why(8),
            Some("round 1: ranked 3rd of 8 by mean RSS ratio 0.70x, kept 2")
        );
    }

    #[test]
    fn a_reading_over_the_budget_within_the_noise_of_the_others_ranks_by_memory() {
        // Readings of wall time spread 0.85-1.20x around the baseline's (as
        // db_bench's ops/sec did): c0 saves most and read 1.12x, over the 5%
        // budget by its point estimate but within one reading's noise, so it
        // is kept; c1 read 3x, beyond that noise, and ranks last.
        let runs = [
            (40.0, 1.12),
            (30.0, 3.0),
            (60.0, 0.85),
            (90.0, 0.9),
            (95.0, 0.95),
            (80.0, 1.0),
            (99.0, 1.05),
            (70.0, 1.2),
        ];
        let dropped = halved(&runs, 1);
        let gone = |i: usize| dropped.iter().any(|(c, _)| *c == i);
        assert!(!gone(1), "c0 dropped: {dropped:?}");
        assert!(!gone(3), "c2 dropped: {dropped:?}");
        let why = dropped
            .iter()
            .find(|(c, _)| *c == 2)
            .map(|(_, w)| w.as_str());
        assert!(
            why.is_some_and(|w| w.starts_with("round 1: ranked 8th of 8")
                && w.contains("beyond one reading's noise")),
            "{why:?}"
        );
    }

    #[test]
    fn a_candidate_whose_runs_all_failed_ranks_after_one_over_the_budget() {
        let mut configs = vec![with_runs("glibc", &[(100.0, 1.0)])];
        configs.push(with_runs("fast", &[(50.0, 1.0)]));
        configs.push(with_runs("slow", &[(40.0, 3.0)]));
        let mut failed = with_runs("failed", &[(10.0, 1.0)]);
        for run in &mut failed.runs {
            run.record.status = allocscope_core::model::RunStatus::Failed;
        }
        configs.push(failed);
        let e = experiment(configs);
        let judging = JudgeSettings::default();
        let table = metric_table::of_experiment(&e.info);
        let m = measures(&e, 0, &table, &judging);
        let judged = judge_all(&e, 0, &m, &judging);
        let dropped = halve(&judged, &[1, 2, 3], &m, &judging, 1);
        let gone: Vec<usize> = dropped.iter().map(|(i, _)| *i).collect();
        assert_eq!(gone, [3], "kept 2 of 3: {dropped:?}");
        assert!(
            dropped[0]
                .1
                .starts_with("round 1: ranked 3rd of 3 by no mean RSS figures"),
            "{dropped:?}"
        );
    }

    #[test]
    fn the_noise_of_one_reading_is_the_robust_spread_of_the_candidates() {
        assert_eq!(perf_noise(&[0.1, -0.1, 0.0]), 0.0, "too few readings");
        let spread = perf_noise(&[-0.1, 0.0, 0.1, 0.2, 3.0]);
        assert!(
            (spread - std::f64::consts::SQRT_2 * 1.4826 * 0.1).abs() < 1e-9,
            "{spread}"
        );
    }

    #[test]
    fn from_the_first_look_on_halving_drops_nothing() {
        assert!(halved(&[(40.0, 1.0), (90.0, 1.0), (95.0, 1.0)], FIRST_LOOK).is_empty());
        assert_eq!(halved(&[(40.0, 1.0), (90.0, 1.0), (95.0, 1.0)], 2).len(), 2);
    }
}
