//! Each configuration's summary: per row of the metric table, the median
//! of its `ok` runs with an order-statistic interval, and for rows with a
//! ratio the ratio to the baseline paired within rounds.

use super::figures::{ConfigSummary, Estimate, MetricSummary, Ratio};
use super::interval;
use super::metric_table::MetricDef;
use allocscope_core::model::{StoredConfig, StoredExperiment};

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
        let ok: Vec<_> = super::metrics::ok_runs(config).collect();
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
pub fn estimate(values: &[(u32, f64)]) -> Option<Estimate> {
    let plain: Vec<f64> = values.iter().map(|&(_, v)| v).collect();
    interval::median_estimate(&plain)
}

/// The ratio of a configuration's values to the baseline's, from values
/// keyed by round: paired within rounds, with no interval (NaN bounds) from
/// one pair; exactly `BASELINE_RATIO` for the baseline itself when it has
/// values.
fn ratio_to_baseline(is_baseline: bool, num: &[(u32, f64)], den: &[(u32, f64)]) -> Option<Ratio> {
    if is_baseline && !den.is_empty() {
        Some(BASELINE_RATIO)
    } else {
        interval::log_ratio(num, den).map(|r| r.ratio())
    }
}

/// One summary per configuration, in order, with ratios to the
/// configuration at `baseline`.
pub fn summarize(
    experiment: &StoredExperiment,
    baseline: usize,
    table: &[MetricDef],
) -> Vec<ConfigSummary> {
    let series: Vec<Series> = experiment
        .configs
        .iter()
        .map(|c| Series::of(c, table))
        .collect();
    let Some(base) = series.get(baseline) else {
        return Vec::new();
    };
    experiment
        .configs
        .iter()
        .zip(&series)
        .enumerate()
        .map(|(i, (config, s))| {
            let metrics = table
                .iter()
                .zip(s.values.iter().zip(&base.values))
                .map(|(m, (values, base_values))| {
                    let summary = MetricSummary {
                        estimate: estimate(values),
                        ratio: m
                            .ratio
                            .then(|| ratio_to_baseline(i == baseline, values, base_values))
                            .flatten(),
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
        .collect()
}
