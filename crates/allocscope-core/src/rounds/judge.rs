//! The judge `--runs auto` asks after each round: the verdict's own measures
//! and paired intervals (`analyze::judge`), and the adaptive schedule
//! (`analyze::decide::schedule`): settled-out candidates run no more rounds,
//! nor do those the futility rule finds unresolvable
//! (`analyze::decide::unresolvable`), and the rounds stop when no other
//! candidate is open.

use super::driver::{Decision, Judge};
use crate::analyze::choice::{measures, Measures};
use crate::analyze::decide::{more_rounds_words, schedule, unresolvable, Side, Standing};
use crate::analyze::interval::LogRatio;
use crate::analyze::judge::{judge_all, shown_at, Judged};
use crate::analyze::metric_table::{self, MetricDef};
use crate::judging::JudgeSettings;

/// A judge for `compare --runs auto`; `max_runs` is the round limit.
pub fn adaptive(baseline: &str, judging: &JudgeSettings, max_runs: u32) -> Judge<'static> {
    let baseline = baseline.to_string();
    // Every round is a look at the intervals: settle at the stricter
    // per-look level so that looking often does not settle noise.
    let judging = JudgeSettings {
        decision_alpha: crate::analyze::decide::sequential_alpha(max_runs),
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
        for s in &mut standings {
            s.unresolvable = unresolvable(s, rounds_done, max_runs);
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
                let left = max_runs.saturating_sub(rounds_done);
                decision.unresolvable.push((
                    j.index,
                    format!("no difference this experiment can resolve in the {left} rounds left: {why}"),
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
