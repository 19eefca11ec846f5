//! The verdict's part of the JSON document: its sentences under the keys
//! they always had (`reason`, `explanation`), and beside them the same as
//! data (`reason_data`, `explanation_data`: each a `code` with its figures).
//! Key names are a public interface: add keys, never rename them.

use super::verdict_words::{explanation, reason};
use crate::analyze::cause::Cause;
use crate::analyze::metric_table::MetricDef;
use crate::analyze::verdict::{Deploy, KeptLimit, Note, Outcome, Reason, Unsettled, Verdict};
use serde::{Serialize, Serializer};

#[derive(Serialize)]
pub struct VerdictOut<'a> {
    outcome: Outcome,
    config: Option<&'a str>,
    reason: String,
    reason_data: &'a Reason,
    explanation: Vec<String>,
    explanation_data: &'a [Note],
    /// The row memory was judged by: its id (`mean_rss_bytes`,
    /// `mean_pss_bytes`, `rss_end_load_bytes`).
    #[serde(serialize_with = "judged_key")]
    memory_metric: &'a MetricDef,
    /// The row the budget applies to: its id (`wall_s`, `p95_ms`), or a
    /// `--metric`'s NAME.
    #[serde(serialize_with = "judged_key")]
    performance_metric: &'a MetricDef,
    max_slowdown_pct: f64,
    min_saving_pct: f64,
    unsettled: &'a [Unsettled],
    deploy: Option<&'a Deploy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kept_limit: Option<&'a KeptLimit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cause: Option<&'a Cause>,
}

impl<'a> VerdictOut<'a> {
    pub fn of(v: &'a Verdict) -> Self {
        VerdictOut {
            outcome: v.outcome,
            config: v.config.as_deref(),
            reason: reason(v),
            reason_data: &v.reason,
            explanation: explanation(v),
            explanation_data: &v.explanation,
            memory_metric: &v.memory,
            performance_metric: &v.performance,
            max_slowdown_pct: v.max_slowdown_pct,
            min_saving_pct: v.min_saving_pct,
            unsettled: &v.unsettled,
            deploy: v.deploy.as_ref(),
            kept_limit: v.kept_limit.as_ref(),
            cause: v.cause.as_ref(),
        }
    }
}

/// The key JSON names a judged row by: its id, or a `--metric`'s NAME.
fn judged_key<S: Serializer>(row: &&MetricDef, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(if row.is_user() { row.name() } else { &row.id })
}
