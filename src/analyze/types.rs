//! What analysis hands to the reporters.

use crate::model::StoredExperiment;
use serde::Serialize;

/// A median with its 95% bootstrap confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub median: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// A ratio of medians (configuration / baseline) with its 95% bootstrap CI.
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

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigSummary {
    pub ok_runs: usize,
    pub total_runs: usize,
    pub peak_rss_bytes: Option<Estimate>,
    pub mean_rss_bytes: Option<Estimate>,
    pub mean_pss_bytes: Option<Estimate>,
    pub wall_s: Option<Estimate>,
    /// user + sys
    pub cpu_s: Option<Estimate>,
    pub ratio_peak_rss_bytes: Option<Ratio>,
    pub ratio_mean_rss_bytes: Option<Ratio>,
    pub ratio_wall_s: Option<Ratio>,
}

/// The memory at one marker label for one configuration: medians over the
/// `ok` runs that recorded the label (PSS over those that had a reading).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MarkerStat {
    pub runs: usize,
    pub rss_bytes_median: Option<f64>,
    pub pss_bytes_median: Option<f64>,
}

/// One marker label with one `MarkerStat` per configuration, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MarkerRow {
    pub label: String,
    pub configs: Vec<MarkerStat>,
}

/// The experiment plus one summary per configuration, in the same order.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    pub experiment: StoredExperiment,
    /// Index into `experiment.configs`.
    pub baseline: usize,
    pub summaries: Vec<ConfigSummary>,
    /// Marker labels in order of first appearance; empty without markers.
    pub markers: Vec<MarkerRow>,
    /// Things the reader should know, e.g. a `--mark` that never matched.
    pub warnings: Vec<String>,
    /// Which configuration to run with, why, and how to deploy it.
    pub verdict: super::verdict::Verdict,
    /// The heap probe's figures, one per configuration; empty when the
    /// experiment did not measure the heap.
    pub heap: Vec<super::heap::HeapSummary>,
    /// Latency and service memory, one per configuration; empty unless the
    /// experiment ran a service (`compare --server`).
    pub service: Vec<super::service::ServiceSummary>,
    /// Which end-of-load memory a service is judged by (RSS, or PSS for a
    /// multi-process server).
    pub end_of_load: super::service::EndOfLoad,
}
