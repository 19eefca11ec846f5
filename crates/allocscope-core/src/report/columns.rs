//! What the human-readable tables (terminal, Markdown, HTML) share about
//! their columns: which metric-table rows get one, the unit of each, how
//! many runs each configuration had, and the notes on `--metric` columns.

use super::format;
use crate::analyze::metric_table::{Better, Shown};
use crate::analyze::types::Analysis;

/// The metric-table rows the Markdown and HTML comparison tables have a
/// column for: those shown always, and those shown when measured that some
/// configuration measured.
pub fn metric_columns(analysis: &Analysis) -> Vec<usize> {
    let measured = |k: usize| {
        analysis
            .summaries
            .iter()
            .any(|s| s.metrics.get(k).is_some_and(|(_, m)| m.estimate.is_some()))
    };
    (0..analysis.metrics.len())
        .filter(|&k| match analysis.metrics[k].shown {
            Shown::Always => true,
            Shown::WhenMeasured => measured(k),
            Shown::Never => false,
        })
        .collect()
}

/// How many runs each configuration had: `5` for a fixed schedule, `3 to
/// 19` when `--runs auto` stopped settled candidates early or a limit cut
/// the rounds short (the header used to claim the planned count).
pub fn runs_each(analysis: &Analysis, planned: u32) -> String {
    let counts = analysis.summaries.iter().map(|s| s.total_runs);
    match (counts.clone().min(), counts.max()) {
        (Some(lo), Some(hi)) if lo == hi => hi.to_string(),
        (Some(lo), Some(hi)) => format!("{lo} to {hi}"),
        _ => planned.to_string(),
    }
}

/// One sentence per `--metric` column of the Markdown and HTML tables,
/// saying which way it is better (the terminal says it in the block title).
pub fn user_metric_notes(analysis: &Analysis) -> Vec<String> {
    metric_columns(analysis)
        .into_iter()
        .map(|k| &analysis.metrics[k])
        .filter(|m| m.is_user())
        .map(|m| {
            let direction = match m.better {
                Better::Higher => "higher",
                Better::Lower => "lower",
            };
            format!(
                "{}: a figure the program prints (--metric), {direction} is better.",
                m.label
            )
        })
        .collect()
}

/// The unit of metric-table row `k`'s column: chosen from every
/// configuration's median and interval bounds, so the whole column shares it.
pub fn metric_unit(analysis: &Analysis, k: usize) -> crate::units::ColumnUnit {
    let estimates = analysis
        .summaries
        .iter()
        .filter_map(|s| s.metrics.get(k).and_then(|(_, m)| m.estimate));
    format::estimates_unit(analysis.metrics[k].unit, estimates)
}
