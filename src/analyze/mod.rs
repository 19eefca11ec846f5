//! Analysis: per-run metrics (`metrics`), statistics across repetitions
//! (`stats`), markers (`markers`), and `analyze`, which summarises each
//! configuration of a stored experiment against the baseline. Only runs with
//! status `ok` are summarised.

pub mod decide;
pub mod deploy;
pub mod heap;
pub mod interval;
pub mod judge;
pub mod linked;
pub mod markers;
pub mod metric_table;
pub mod metrics;
pub mod recordings;
pub mod service;
pub mod stats;
pub mod steady;
pub mod types;
pub mod verdict;

#[cfg(test)]
pub(crate) mod fixture;

use crate::model::{RunStatus, StoredConfig, StoredExperiment};
use anyhow::{bail, Result};
use metric_table::MetricDef;
use types::{Analysis, ConfigSummary, Estimate, MetricSummary, Ratio};

/// The baseline's ratios to itself: exactly 1 with a degenerate interval
/// (not `None`, so JSON/CSV consumers always find a number for it; the table
/// prints `baseline` instead).
pub const BASELINE_RATIO: Ratio = Ratio {
    value: 1.0,
    ci_low: 1.0,
    ci_high: 1.0,
};

/// The figures of one configuration's `ok` runs: one vector per row of the
/// metric table, in its order, each value keyed by its run's round (runs
/// that did not measure a metric are left out of its vector).
struct Series {
    values: Vec<Vec<(u32, f64)>>,
    ok_runs: usize,
}

impl Series {
    fn of(config: &StoredConfig, table: &[MetricDef]) -> Series {
        let ok: Vec<_> = config
            .runs
            .iter()
            .filter(|r| r.record.status == RunStatus::Ok)
            .collect();
        Series {
            values: table
                .iter()
                .map(|m| {
                    ok.iter()
                        .filter_map(|r| Some((r.record.index, (m.extract)(r)?)))
                        .collect()
                })
                .collect(),
            ok_runs: ok.len(),
        }
    }
}

/// The median with its order-statistic interval (none below 6 runs).
pub(crate) fn estimate(values: &[(u32, f64)]) -> Option<Estimate> {
    let plain: Vec<f64> = values.iter().map(|&(_, v)| v).collect();
    interval::median_estimate(&plain)
}

/// `num / den` from values keyed by round: paired within rounds, with no
/// interval (NaN bounds) from one pair.
pub(crate) fn ratio(num: &[(u32, f64)], den: &[(u32, f64)]) -> Option<Ratio> {
    interval::log_ratio(num, den).map(|r| r.ratio())
}

/// Summarises every configuration, with ratios to the configuration named
/// `baseline`, and the verdict with the default `--max-slowdown`.
pub fn analyze(experiment: StoredExperiment, baseline: &str) -> Result<Analysis> {
    analyze_with_budget(experiment, baseline, verdict::DEFAULT_MAX_SLOWDOWN_PCT)
}

/// `analyze` with a performance budget for the verdict, in percent, and the
/// other judging settings at their defaults.
pub fn analyze_with_budget(
    experiment: StoredExperiment,
    baseline: &str,
    max_slowdown_pct: f64,
) -> Result<Analysis> {
    let judging = crate::judging::JudgeSettings {
        max_slowdown_pct,
        ..Default::default()
    };
    analyze_with(experiment, baseline, &judging)
}

/// `analyze` judged by `judging` (`--max-slowdown`, `--min-saving`,
/// `--memory-metric`, `--perf-metric`).
pub fn analyze_with(
    experiment: StoredExperiment,
    baseline: &str,
    judging: &crate::judging::JudgeSettings,
) -> Result<Analysis> {
    let Some(base_index) = experiment
        .configs
        .iter()
        .position(|c| c.config.name == baseline)
    else {
        let names: Vec<&str> = experiment
            .configs
            .iter()
            .map(|c| c.config.name.as_str())
            .collect();
        bail!(
            "no configuration named '{baseline}' in experiment {}; choose --baseline from: {}",
            experiment.id,
            names.join(", ")
        );
    };
    let table = metric_table::of_experiment(&experiment.info);
    let series: Vec<Series> = experiment
        .configs
        .iter()
        .map(|c| Series::of(c, &table))
        .collect();
    let base = &series[base_index];
    let summaries = experiment
        .configs
        .iter()
        .zip(&series)
        .enumerate()
        .map(|(i, (config, s))| {
            let ratio = |num: &[(u32, f64)], den: &[(u32, f64)]| {
                if i == base_index && !den.is_empty() {
                    Some(BASELINE_RATIO)
                } else {
                    ratio(num, den)
                }
            };
            let metrics = table
                .iter()
                .zip(s.values.iter().zip(&base.values))
                .map(|(m, (values, base_values))| {
                    let summary = MetricSummary {
                        estimate: estimate(values),
                        ratio: m.ratio.then(|| ratio(values, base_values)).flatten(),
                    };
                    (m.id.clone(), summary)
                })
                .collect();
            ConfigSummary {
                ok_runs: s.ok_runs,
                total_runs: config.runs.len(),
                metrics,
            }
        })
        .collect::<Vec<_>>();
    let service = service::summarize(&experiment, base_index);
    let end_of_load = service::end_of_load(&experiment, &service);
    let mut verdict = verdict::decide(&experiment, base_index, end_of_load, judging, &table);
    let heap = heap::summarize(&experiment);
    verdict
        .explanation
        .extend(heap::explain(&experiment, &heap));
    Ok(Analysis {
        verdict,
        heap,
        markers: markers::summarize(&experiment),
        warnings: markers::unmatched_warnings(&experiment)
            .into_iter()
            .chain(linked::warnings(&experiment))
            .chain(service::warnings(&experiment, &service))
            .collect(),
        service,
        end_of_load,
        experiment,
        baseline: base_index,
        metrics: table,
        summaries,
    })
}

#[cfg(test)]
mod coverage_tests;
#[cfg(test)]
mod tests;
