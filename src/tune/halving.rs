//! Successive halving, the race's early rounds: before the paired
//! intervals exist (`decide::FIRST_LOOK`), each round's look keeps only the
//! best share of the open candidates by the point estimate of their paired
//! memory ratio, so that 24 candidates cost 24 runs once and not three
//! times. A candidate whose performance ratio is over the budget by its
//! point estimate ranks after every one within it: one run is not beyond
//! noise, so it is not dropped for that alone, only ranked last.

use super::race::Look;
use crate::analyze::choice::{measures, Measures};
use crate::analyze::decide::FIRST_LOOK;
use crate::analyze::judge::{judge_all, shown_at, Judged};
use crate::analyze::metric_table;
use crate::judging::JudgeSettings;
use crate::model::StoredExperiment;

/// The fewest candidates a halving keeps: two, so that the intervals from
/// `FIRST_LOOK` on still have a race to judge.
const MIN_KEPT: usize = 2;

/// How many of `open` candidates the look after `round` keeps: a quarter,
/// rounded down, after round 1 (24 or 25 -> 6), half, rounded up, after
/// round 2 (6 -> 3); `None` from `FIRST_LOOK` on, where the intervals judge
/// instead. Rounding the first share down keeps a `--try` value or two
/// from adding a run to every later round.
pub fn kept_after(round: u32, open: usize) -> Option<usize> {
    let kept = match round {
        1 => open / 4,
        r if r < FIRST_LOOK => open.div_ceil(2),
        _ => return None,
    };
    Some(kept.max(MIN_KEPT).min(open))
}

/// The candidates of `judged` among `open` that this halving drops after
/// `round`, with why ("round 1: ranked 13th of 24 by mean RSS ratio 0.93x,
/// kept 6"); empty from `FIRST_LOOK` on.
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
    let budget_log = (1.0 + judging.max_slowdown_pct / 100.0).ln();
    let over = |j: &Judged| j.perf.as_ref().is_some_and(|p| p.centre > budget_log);
    let memory = |j: &Judged| j.memory.as_ref().map_or(f64::INFINITY, |m| m.centre);
    let mut ranked: Vec<&Judged> = judged.iter().filter(|j| open.contains(&j.index)).collect();
    ranked.sort_by(|a, b| over(a).cmp(&over(b)).then(memory(a).total_cmp(&memory(b))));
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
                    ", {} {:.2}x over the {}% budget by its point estimate",
                    measures.perf.label,
                    shown_at(&measures.perf, p, judging.decision_alpha).value,
                    judging.max_slowdown_pct
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
    use crate::tune::test_fixture::{experiment, with_runs};

    #[test]
    fn a_quarter_survives_round_one_and_half_of_that_round_two() {
        assert_eq!(kept_after(1, 24), Some(6));
        assert_eq!(kept_after(1, 27), Some(6));
        assert_eq!(kept_after(2, 6), Some(3));
        assert_eq!(kept_after(1, 3), Some(2));
        assert_eq!(kept_after(2, 2), Some(2));
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
            Some("round 1: ranked 8th of 8 by mean RSS ratio 0.40x, wall time 3.00x over the 5% budget by its point estimate, kept 2")
        );
        assert_eq!(
            why(8),
            Some("round 1: ranked 3rd of 8 by mean RSS ratio 0.70x, kept 2")
        );
    }

    #[test]
    fn from_the_first_look_on_halving_drops_nothing() {
        assert!(halved(&[(40.0, 1.0), (90.0, 1.0), (95.0, 1.0)], FIRST_LOOK).is_empty());
        assert_eq!(halved(&[(40.0, 1.0), (90.0, 1.0), (95.0, 1.0)], 2).len(), 1);
    }
}
