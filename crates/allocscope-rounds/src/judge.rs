//! The judge `--runs auto` asks after each round: the verdict's own measures
//! and paired intervals (`analyze::judge`), and the adaptive schedule
//! (`analyze::decide::schedule`): settled-out candidates run no more rounds,
//! nor do those the futility rule finds unresolvable
//! (`analyze::decide::unresolvable`, against what `--max-runs` and
//! `--max-time` leave: the rounds the time left holds at the last round's
//! pace), and the rounds stop when no other candidate is open. A stopped
//! candidate's time goes to those still running: each round is shorter,
//! so more of them fit before `--max-time`.

use super::driver::{Decision, Judge};
use allocscope_analyze::choice::{measures, Measures};
use allocscope_analyze::decide::{more_rounds_words, schedule, unresolvable, Side, Standing};
use allocscope_analyze::interval::LogRatio;
use allocscope_analyze::judge::{judge_all, shown_at, Judged};
use allocscope_analyze::metric_table::{self, MetricDef};
use allocscope_core::judging::JudgeSettings;
use allocscope_core::model::StoredExperiment;
use std::time::{Duration, Instant};

/// A judge for `compare --runs auto`; `max_runs` is the round limit,
/// `max_time` the time after which no round starts (`--max-time`).
pub fn adaptive(
    baseline: &str,
    judging: &JudgeSettings,
    max_runs: u32,
    max_time: Option<Duration>,
) -> Judge<'static> {
    let began = Instant::now();
    let baseline = baseline.to_string();
    // Every round is a look at the intervals: settle at the stricter
    // per-look level so that looking often does not settle noise.
    let judging = JudgeSettings {
        decision_alpha: allocscope_analyze::decide::sequential_alpha(max_runs),
        ..judging.clone()
    };
    Box::new(move |experiment| {
        let Some(base) = experiment
            .configs
            .iter()
            .position(|c| c.config.name == baseline)
        else {
            return Ok(Decision::default());
        };
        let table = metric_table::of_experiment(&experiment.info);
        let measures = measures(&experiment, base, &table, &judging);
        let judged = judge_all(&experiment, base, &measures, &judging);
        let rounds_done = experiment.configs[base]
            .runs
            .iter()
            .map(|r| r.record.index)
            .max()
            .unwrap_or(0);
        let mut standings: Vec<Standing> = judged.iter().map(|j| j.standing.clone()).collect();
        // What the caps leave: --max-runs, or the rounds --max-time still
        // has room to start at the pace of the last round.
        let left_by_time = max_time.map(|t| {
            let left = t.saturating_sub(began.elapsed()).as_secs_f64();
            rounds_in(left, round_seconds(&experiment, rounds_done))
        });
        let cap = left_by_time.map_or(max_runs, |n| max_runs.min(rounds_done + n));
        for s in &mut standings {
            s.unresolvable = unresolvable(s, rounds_done, cap);
        }
        let plan = schedule(&standings, rounds_done, max_runs);
        let mut decision = Decision {
            stop: plan.stop,
            ..Decision::default()
        };
        for (j, s) in judged.iter().zip(&standings) {
            if s.settled_out() {
                decision.dropped.push(j.index);
            } else if s.unresolvable {
                let why = why_open(j, &measures, &judging);
                let within = match (cap.saturating_sub(rounds_done), cap < max_runs) {
                    (0, _) => String::new(),
                    (left, true) => format!(" in the {left} rounds --max-time leaves"),
                    (left, false) => format!(" in the {left} rounds left"),
                };
                decision.unresolvable.push((
                    j.index,
                    format!("no difference this experiment can resolve{within}: {why}"),
                ));
            } else if s.is_open() {
                decision
                    .open
                    .push((j.index, why_open(j, &measures, &judging)));
            }
        }
        Ok(decision)
    })
}

/// The seconds the last round's runs took (`round`, from 1): the
/// configurations still running, the baseline among them.
fn round_seconds(experiment: &StoredExperiment, round: u32) -> f64 {
    let runs = experiment.configs.iter().flat_map(|c| &c.runs);
    runs.filter(|r| r.record.index == round)
        .map(|r| r.record.wall_s)
        .sum()
}

/// Whole rounds of `round_s` seconds that fit in `left_s`; at least one
/// while time is left, none without (`--max-time` starts a round while it
/// has not passed).
fn rounds_in(left_s: f64, round_s: f64) -> u32 {
    match (left_s > 0.0, round_s > 0.0) {
        (false, _) => 0,
        (true, false) => u32::MAX,
        (true, true) => ((left_s / round_s).ceil() as u32).max(1),
    }
}

/// `mean PSS 0.98x [0.94, 1.02] straddles the 3% saving, about 6 more rounds`.
pub fn why_open(j: &Judged, measures: &Measures, judging: &JudgeSettings) -> String {
    let saving = format!("the {}% saving", judging.min_saving_pct);
    let budget = format!("the {}% budget", judging.max_slowdown_pct);
    let side = |row: &MetricDef, threshold: &str, r: Option<&LogRatio>, s: Side| {
        (s == Side::Open).then(
            || match r.map(|r| shown_at(row, r, judging.decision_alpha)) {
                Some(r) if r.ci_low.is_finite() => format!(
                    "{} {:.2}x [{:.2}, {:.2}] straddles {threshold}",
                    row.label, r.value, r.ci_low, r.ci_high
                ),
                Some(r) => format!("{} {:.2}x from one round", row.label, r.value),
                None => format!("no {} figures", row.label),
            },
        )
    };
    let mut parts: Vec<String> = [
        side(
            &measures.memory,
            &saving,
            j.memory.as_ref(),
            j.standing.memory,
        ),
        side(
            &measures.perf,
            &budget,
            j.perf.as_ref(),
            j.standing.performance,
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let Some(n) = j.standing.more_rounds {
        parts.push(more_rounds_words(n));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_left_holds_whole_rounds_started_before_it_ends() {
        // 100 s left at 30 s a round: rounds start at 0, 30, 60 and 90 s.
        assert_eq!(rounds_in(100.0, 30.0), 4);
        assert_eq!(rounds_in(90.0, 30.0), 3);
        // A round longer than what is left still starts; none once past.
        assert_eq!(rounds_in(5.0, 30.0), 1);
        assert_eq!(rounds_in(0.0, 30.0), 0);
        assert_eq!(rounds_in(10.0, 0.0), u32::MAX);
    }
}
