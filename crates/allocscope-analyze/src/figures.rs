//! The figures analysis computes: a median with its interval (`Estimate`),
//! a ratio to the baseline (`Ratio`), a configuration's summary of every
//! metric-table row, and the memory at each marker label. Plain values that
//! every other file of `analyze` may use, so this file uses none of them.

use serde::Serialize;

/// A median with its 95% interval; `ci_low`/`ci_high` are NaN when none
/// exists (below 6 runs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub median: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// A ratio to the baseline (geometric mean of the paired per-round ratios)
/// with its 95% interval; `ci_low`/`ci_high` are NaN when none exists (one
/// pair).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ratio {
    pub value: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

impl Ratio {
    /// True when the CI lies wholly on one side of 1.0.
    pub fn excludes_one(&self) -> bool {
        self.ci_high < 1.0 || self.ci_low > 1.0
    }
}

/// One metric of one configuration: `None` where no ok run measured it
/// (estimate) or the metric has no ratio / no data on either side (ratio).
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSummary {
    pub estimate: Option<Estimate>,
    pub ratio: Option<Ratio>,
}

/// A configuration's summary: one `MetricSummary` per row of the
/// analysis's metric table, in its order.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigSummary {
    pub ok_runs: usize,
    pub total_runs: usize,
    /// Keyed by metric id, in metric-table order.
    pub metrics: Vec<(String, MetricSummary)>,
}

impl ConfigSummary {
    fn get(&self, id: &str) -> Option<&MetricSummary> {
        self.metrics.iter().find(|(m, _)| m == id).map(|(_, s)| s)
    }

    /// The estimate of the metric `id`.
    pub fn estimate(&self, id: &str) -> Option<Estimate> {
        self.get(id).and_then(|s| s.estimate)
    }

    /// The ratio to the baseline of the metric `id`.
    pub fn ratio(&self, id: &str) -> Option<Ratio> {
        self.get(id).and_then(|s| s.ratio)
    }
}

/// The memory at one marker label for one configuration: medians over the
/// `ok` runs that recorded the label (PSS over those that had a reading).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MarkerStat {
    pub runs: usize,
    pub rss_bytes_median: Option<f64>,
    pub pss_bytes_median: Option<f64>,
}
