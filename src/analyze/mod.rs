//! Analysis: per-run metrics (`metrics`), statistics across repetitions
//! (`stats`), markers (`markers`), and `analyze`, which summarises each
//! configuration of a stored experiment against the baseline. Only runs with
//! status `ok` are summarised.

pub mod deploy;
pub mod heap;
pub mod linked;
pub mod markers;
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
use stats::{bootstrap_median_ci, bootstrap_ratio_ci, CONFIDENCE, RESAMPLES};
use types::{Analysis, ConfigSummary, Estimate, Ratio};

/// The baseline's ratios to itself: exactly 1 with a degenerate interval
/// (not `None`, so JSON/CSV consumers always find a number for it; the table
/// prints `baseline` instead).
pub const BASELINE_RATIO: Ratio = Ratio {
    value: 1.0,
    ci_low: 1.0,
    ci_high: 1.0,
};

/// The figures of one configuration's `ok` runs, one vector per metric.
struct Series {
    peak_rss_bytes: Vec<f64>,
    mean_rss_bytes: Vec<f64>,
    mean_pss_bytes: Vec<f64>,
    wall_s: Vec<f64>,
    cpu_s: Vec<f64>,
}

impl Series {
    fn of(config: &StoredConfig) -> Series {
        let ok: Vec<_> = config
            .runs
            .iter()
            .filter(|r| r.record.status == RunStatus::Ok)
            .collect();
        let m: Vec<_> = ok.iter().map(|r| metrics::of(r)).collect();
        Series {
            peak_rss_bytes: m.iter().map(|m| m.peak_rss_bytes as f64).collect(),
            mean_rss_bytes: m.iter().map(|m| m.mean_rss_bytes as f64).collect(),
            mean_pss_bytes: m
                .iter()
                .filter_map(|m| m.mean_pss_bytes.map(|b| b as f64))
                .collect(),
            wall_s: ok.iter().map(|r| r.record.wall_s).collect(),
            cpu_s: ok
                .iter()
                .map(|r| r.record.user_s + r.record.sys_s)
                .collect(),
        }
    }
}

fn estimate(values: &[f64]) -> Option<Estimate> {
    bootstrap_median_ci(values, RESAMPLES, CONFIDENCE)
}

/// Summarises every configuration, with ratios to the configuration named
/// `baseline`, and the verdict with the default `--max-slowdown`.
pub fn analyze(experiment: StoredExperiment, baseline: &str) -> Result<Analysis> {
    analyze_with_budget(experiment, baseline, verdict::DEFAULT_MAX_SLOWDOWN_PCT)
}

/// `analyze` with a wall-time budget for the verdict, in percent.
pub fn analyze_with_budget(
    experiment: StoredExperiment,
    baseline: &str,
    max_slowdown_pct: f64,
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
    let series: Vec<Series> = experiment.configs.iter().map(Series::of).collect();
    let base = &series[base_index];
    let summaries = experiment
        .configs
        .iter()
        .zip(&series)
        .enumerate()
        .map(|(i, (config, s))| {
            let ratio = |num: &[f64], den: &[f64]| {
                if i == base_index && !den.is_empty() {
                    Some(BASELINE_RATIO)
                } else {
                    bootstrap_ratio_ci(num, den)
                }
            };
            ConfigSummary {
                ok_runs: s.wall_s.len(),
                total_runs: config.runs.len(),
                peak_rss_bytes: estimate(&s.peak_rss_bytes),
                mean_rss_bytes: estimate(&s.mean_rss_bytes),
                mean_pss_bytes: estimate(&s.mean_pss_bytes),
                wall_s: estimate(&s.wall_s),
                cpu_s: estimate(&s.cpu_s),
                ratio_peak_rss_bytes: ratio(&s.peak_rss_bytes, &base.peak_rss_bytes),
                ratio_mean_rss_bytes: ratio(&s.mean_rss_bytes, &base.mean_rss_bytes),
                ratio_wall_s: ratio(&s.wall_s, &base.wall_s),
            }
        })
        .collect::<Vec<_>>();
    let service = service::summarize(&experiment, base_index);
    let end_of_load = service::end_of_load(&experiment, &service);
    let mut verdict = verdict::decide(
        &experiment,
        base_index,
        &summaries,
        (&service, end_of_load),
        max_slowdown_pct,
    );
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
        summaries,
    })
}

#[cfg(test)]
mod tests;
