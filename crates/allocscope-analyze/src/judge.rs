//! Each candidate's standing on the two rows it is judged by
//! (`choice::measures`): each `ok` run's value of them, the ratios to the
//! baseline paired within rounds (`interval::log_ratio`), and where each
//! candidate stands against `--min-saving` and `--max-slowdown`
//! (`decide::standing`). The verdict and `compare --runs auto` share it.
//! The performance ratio leaves out the rounds a neighbour disturbed
//! (`disturbed.rs`) and is robust to one far pair
//! (`interval::robust_log_ratio_without`). Beside a CPU figure chosen by
//! default, the guard (wall time, a service's latency) settles out a
//! candidate whose whole guard interval lies over the budget
//! (`decide::guard`).
//! A row whose higher values are better (a `--metric` with
//! `--higher-is-better`) is judged by the inverse ratio, its cost.

use super::choice::Measures;
use super::decide::{guard, outrank, standing, Standing, Thresholds};
use super::disturbed::Rule;
use super::figures::Ratio;
use super::interval::{log_ratio, robust_log_ratio_without, LogRatio};
use super::metric_table::{Better, MetricDef, Unit};
use super::metrics::ok_runs;
use allocscope_core::judging::{JudgeSettings, DEFAULT_DECISION_ALPHA};
use allocscope_core::model::{RunStatus, StoredConfig, StoredExperiment};

/// A cost ratio (above 1 is worse) as the tables show `row`: candidate /
/// baseline, so a throughput's cost ratio 0.91x reads 1.10x.
pub fn shown(row: &MetricDef, cost: &LogRatio) -> Ratio {
    shown_at(row, cost, DEFAULT_DECISION_ALPHA)
}

/// `shown` at the two-sided level `1 - alpha`.
pub fn shown_at(row: &MetricDef, cost: &LogRatio, alpha: f64) -> Ratio {
    let r = cost.ratio_at(alpha);
    if row.better == Better::Higher {
        Ratio {
            value: 1.0 / r.value,
            ci_low: 1.0 / r.ci_high,
            ci_high: 1.0 / r.ci_low,
        }
    } else {
        r
    }
}

/// Each ok run's value keyed by its round (the run index).
pub(crate) fn by_round(config: &StoredConfig, row: &MetricDef) -> Vec<(u32, f64)> {
    ok_runs(config)
        .filter_map(|r| (row.extract)(r).map(|v| (r.record.index, v)))
        .collect()
}

/// The cost ratio of `config` to `base` (above 1 is worse).
pub(crate) fn cost_ratio(
    config: &StoredConfig,
    base: &StoredConfig,
    row: &MetricDef,
) -> Option<LogRatio> {
    let (c, b) = (by_round(config, row), by_round(base, row));
    if row.better == Better::Higher {
        log_ratio(&b, &c)
    } else {
        log_ratio(&c, &b)
    }
}

/// The performance cost ratio of `config` to `base` without the rounds in
/// which either run was disturbed by other work on the machine
/// (`disturbed::Rule`), for a row measured in time, while two such pairs remain
/// (`interval::log_ratio_without`).
pub(crate) fn undisturbed_cost_ratio(
    config: &StoredConfig,
    base: &StoredConfig,
    row: &MetricDef,
    rule: Option<Rule>,
) -> Option<LogRatio> {
    // Other work on the machine moves time, not a count the program
    // prints (a `--metric` read without a time unit) or memory.
    let timed = matches!(row.unit, Unit::Seconds | Unit::Milliseconds);
    let disturbed: Vec<u32> = match rule.filter(|_| timed) {
        Some(rule) => (config.runs.iter().chain(&base.runs))
            .filter(|r| rule.is_disturbed(&r.record))
            .map(|r| r.record.index)
            .collect(),
        None => Vec::new(),
    };
    let (c, b) = (by_round(config, row), by_round(base, row));
    if row.better == Better::Higher {
        robust_log_ratio_without(&b, &c, &disturbed)
    } else {
        robust_log_ratio_without(&c, &b, &disturbed)
    }
}

/// (runs OOM-killed, runs) of `config`, when any was.
pub(crate) fn oom_killed(config: &StoredConfig) -> Option<(usize, usize)> {
    let killed = config
        .runs
        .iter()
        .filter(|r| r.record.status == RunStatus::Oom)
        .count();
    (killed > 0).then_some((killed, config.runs.len()))
}

/// (runs, why the first failed) of `config` when it has runs and none
/// ended `ok`: its message and the program's last stderr lines.
pub fn every_run_failed(config: &StoredConfig) -> Option<(usize, String)> {
    let first = config.runs.first()?;
    if config.runs.iter().any(|r| r.record.status == RunStatus::Ok) {
        return None;
    }
    let r = &first.record;
    let why = (r.failure_words()).unwrap_or_else(|| format!("ended {}", r.status.as_str()));
    Some((config.runs.len(), why))
}

/// One candidate's ratios and standing.
pub struct Judged {
    pub index: usize,
    pub memory: Option<LogRatio>,
    pub perf: Option<LogRatio>,
    /// The guard's ratio (`Measures::guard`), when there is a guard.
    pub guard: Option<LogRatio>,
    pub standing: Standing,
}

/// Every candidate (the baseline left out), in configuration order, judged
/// by the two rows `measures` (`choice::measures`).
pub fn judge_all(
    experiment: &StoredExperiment,
    baseline: usize,
    measures: &Measures,
    judging: &JudgeSettings,
) -> Vec<Judged> {
    let thresholds = Thresholds::from_percent(
        judging.min_saving_pct,
        judging.max_slowdown_pct,
        judging.decision_alpha,
    );
    let Some(base) = experiment.configs.get(baseline) else {
        return Vec::new();
    };
    let rule = Rule::of(experiment);
    let mut judged: Vec<Judged> = experiment
        .configs
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != baseline)
        .map(|(index, config)| {
            let memory = cost_ratio(config, base, &measures.memory);
            let perf = undisturbed_cost_ratio(config, base, &measures.perf, rule);
            let guarded = (measures.guard.as_ref())
                .and_then(|row| undisturbed_cost_ratio(config, base, row, rule));
            let mut standing = standing(memory.as_ref(), perf.as_ref(), thresholds);
            guard(&mut standing, guarded.as_ref(), thresholds);
            standing.oom_killed = oom_killed(config);
            standing.ruled_out = judging
                .ruled_out
                .when(&config.config.name)
                .map(str::to_string);
            standing.every_run_failed = every_run_failed(config).is_some();
            if standing.oom_killed.is_some()
                || standing.ruled_out.is_some()
                || standing.every_run_failed
            {
                standing.more_rounds = None;
            }
            Judged {
                index,
                memory,
                perf,
                guard: guarded,
                standing,
            }
        })
        .collect();
    let mut standings: Vec<Standing> = judged.iter().map(|j| j.standing.clone()).collect();
    outrank(&mut standings);
    for (j, mut s) in judged.iter_mut().zip(standings) {
        let name = &experiment.configs[j.index].config.name;
        s.unresolvable = s.is_open() && judging.unresolvable.contains(name);
        j.standing = s;
    }
    judged
}

#[cfg(test)]
mod tests;
