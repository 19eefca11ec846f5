//! The user's own metrics of a finished run: each `--metric` read from the
//! run's output (`user_metric::outputs`) into `RunRecord::user_metrics`. A miss is a
//! note in the run's message, never a failed run: the memory figures of the
//! run are as good as ever.

use crate::model::RunRecord;
use crate::user_metric::{extract_from, outputs, Extracted, UserMetric};

/// Fills `record.user_metrics`; returns the notes for the metrics that gave
/// no value (also appended to `record.message`).
pub fn extract_user_metrics(record: &mut RunRecord, metrics: &[UserMetric]) -> Vec<String> {
    if metrics.is_empty() {
        return Vec::new();
    }
    let texts = outputs(record);
    let mut notes = Vec::new();
    for metric in metrics {
        match extract_from(&metric.pattern, &texts) {
            Extracted::Value(v) => {
                record.user_metrics.insert(metric.name.clone(), v);
            }
            Extracted::NoMatch => notes.push(format!(
                "--metric {} matched no line of stdout or stderr",
                metric.name
            )),
            Extracted::NotANumber(text) => notes.push(format!(
                "--metric {} matched '{text}', not a number",
                metric.name
            )),
        }
    }
    if !notes.is_empty() {
        let joined = notes.join("; ");
        record.message = Some(match record.message.take() {
            Some(m) => format!("{m}; {joined}"),
            None => joined,
        });
    }
    notes
}
