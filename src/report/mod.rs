//! Reporters: each output format lives in one file and implements
//! `Reporter`, turning an `Analysis` into bytes. Reporters never touch /proc
//! or SQLite; `write_output` decides where the bytes go (`-` is stdout).

pub mod csv;
pub mod format;
mod heap_table;
pub mod html;
pub mod json;
pub mod markdown;
pub mod markers_csv;
mod markers_table;
pub mod png;
pub mod recordings;
pub mod samples_csv;
mod service_table;
pub mod svg;
pub mod table;
mod thin;
pub mod verdict_text;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod user_metric_tests;

pub use self::csv::CsvReporter;
pub use html::HtmlReporter;
pub use json::JsonReporter;
pub use markdown::MarkdownReporter;
pub use markers_csv::MarkersCsvReporter;
pub use samples_csv::SamplesCsvReporter;
pub use table::TableReporter;

use crate::analyze::types::Analysis;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// Renders an analysis in one output format.
pub trait Reporter {
    fn render(&self, analysis: &Analysis) -> Result<Vec<u8>>;
}

/// The metric-table rows the Markdown and HTML comparison tables have a
/// column for: those shown always, and those shown when measured that some
/// configuration measured.
pub(crate) fn metric_columns(analysis: &Analysis) -> Vec<usize> {
    use crate::analyze::metric_table::Shown;
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
pub(crate) fn runs_each(analysis: &Analysis, planned: u32) -> String {
    let counts = analysis.summaries.iter().map(|s| s.total_runs);
    match (counts.clone().min(), counts.max()) {
        (Some(lo), Some(hi)) if lo == hi => hi.to_string(),
        (Some(lo), Some(hi)) => format!("{lo} to {hi}"),
        _ => planned.to_string(),
    }
}

/// One sentence per `--metric` column of the Markdown and HTML tables,
/// saying which way it is better (the terminal says it in the block title).
pub(crate) fn user_metric_notes(analysis: &Analysis) -> Vec<String> {
    metric_columns(analysis)
        .into_iter()
        .map(|k| &analysis.metrics[k])
        .filter(|m| m.is_user())
        .map(|m| {
            let direction = match m.better {
                crate::analyze::metric_table::Better::Higher => "higher",
                crate::analyze::metric_table::Better::Lower => "lower",
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
pub(crate) fn metric_unit(analysis: &Analysis, k: usize) -> crate::units::ColumnUnit {
    let estimates = analysis
        .summaries
        .iter()
        .filter_map(|s| s.metrics.get(k).and_then(|(_, m)| m.estimate));
    format::estimates_unit(analysis.metrics[k].unit, estimates)
}

/// Writes rendered bytes to `path`, or to stdout when `path` is `-`.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)
            .and_then(|()| out.flush())
            .context("writing the report to stdout")?;
        return Ok(());
    }
    std::fs::write(path, bytes)
        .with_context(|| format!("writing the report to '{}'", path.display()))
}
