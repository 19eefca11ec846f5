//! What analysis hands to the reporters: the `Analysis`, and the figures it
//! holds (re-exported from `figures`, where the files that compute them
//! find them without depending on this one).

pub use super::figures::{ConfigSummary, Estimate, MarkerStat, MetricSummary, Ratio};
use super::heap::HeapSummary;
use super::limit::LimitNeed;
use super::markers::MarkerSummary;
use super::metric_table::MetricDef;
use super::service::ServiceSummary;
use super::verdict::Verdict;
use allocscope_core::model::StoredExperiment;

/// The experiment plus one summary per configuration, in the same order.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    pub experiment: StoredExperiment,
    /// Index into `experiment.configs`.
    pub baseline: usize,
    /// The summarised metrics; each summary has one entry per row.
    pub metrics: Vec<MetricDef>,
    pub summaries: Vec<ConfigSummary>,
    /// Marker labels in order of first appearance; empty without markers.
    pub markers: MarkerSummary,
    /// Things the reader should know, e.g. a `--mark` that never matched.
    pub warnings: Vec<String>,
    /// Which configuration to run with, why, and how to deploy it.
    pub verdict: Verdict,
    /// The heap probe's figures, one per configuration; empty when the
    /// experiment did not measure the heap.
    pub heap: Vec<HeapSummary>,
    /// Latency and service memory, one per configuration; empty unless the
    /// experiment ran a service (`compare --server`).
    pub service: Vec<ServiceSummary>,
    /// The memory limit each configuration needs (`None` where no ok run
    /// measured a peak), one per configuration.
    pub limits: Vec<Option<LimitNeed>>,
    /// The id of the end-of-load memory row the service tables show: the
    /// row the tree word `end-of-load` names (RSS, or PSS for a
    /// multi-process server), what a service is judged by unless
    /// `--memory-metric` chose another.
    pub end_of_load: String,
    /// A race's figures (`allocscope tune`, `tune::render::TuneSummary`),
    /// set by the command that ran or re-renders it; the JSON export
    /// carries them as `tune`.
    pub tune: Option<serde_json::Value>,
}
