//! What the human-readable tables (terminal, Markdown, HTML) share about
//! their columns: which metric-table rows get one, each column's figures
//! in one unit (`Figure`), the service's columns, how many runs each
//! configuration had, and the notes on `--metric` columns. Each format only
//! lays the figures out.

use super::format;
use allocscope_analyze::metric_table::{Better, Shown};
use allocscope_analyze::types::{Analysis, Estimate, MetricSummary, Ratio};
use allocscope_core::units::ColumnUnit;

/// One cell of a comparison: a configuration's estimate, its ratio to the
/// baseline, whether it is the baseline, and its column's unit.
#[derive(Clone, Copy)]
pub struct Figure {
    pub estimate: Option<Estimate>,
    pub ratio: Option<Ratio>,
    pub baseline: bool,
    pub unit: ColumnUnit,
}

/// Metric-table row `k`'s column: a figure per configuration, sharing the
/// unit chosen from every median and interval bound (docs/report.md,
/// "Numbers").
pub(crate) fn metric_figures(analysis: &Analysis, k: usize) -> Vec<Figure> {
    let figures: Vec<Option<&MetricSummary>> = analysis
        .summaries
        .iter()
        .map(|s| s.metrics.get(k).map(|(_, m)| m))
        .collect();
    let estimates = figures.iter().filter_map(|m| m.and_then(|m| m.estimate));
    let unit = format::estimates_unit(analysis.metrics[k].unit, estimates);
    let cell = |(i, m): (usize, Option<&MetricSummary>)| Figure {
        estimate: m.and_then(|m| m.estimate),
        ratio: m.and_then(|m| m.ratio),
        baseline: i == analysis.baseline,
        unit,
    };
    figures.into_iter().enumerate().map(cell).collect()
}

/// The Markdown and HTML comparison table: its heads (the configuration,
/// its runs ok, the metric columns' labels), and per configuration its
/// name (escaped), runs ok (`4/5`) and each figure as `cell` shows it.
pub fn comparison(
    analysis: &Analysis,
    escape: fn(&str) -> String,
    cell: fn(Figure) -> String,
) -> (Vec<&str>, Vec<Vec<String>>) {
    let columns = metric_columns(analysis);
    let labels = columns.iter().map(|&k| analysis.metrics[k].label.as_str());
    let heads = ["configuration", "runs ok"].into_iter().chain(labels);
    let figures: Vec<Vec<Figure>> = columns
        .iter()
        .map(|&k| metric_figures(analysis, k))
        .collect();
    let configs = analysis.experiment.configs.iter().zip(&analysis.summaries);
    let rows = configs.enumerate().map(|(i, (c, s))| {
        let runs = format!("{}/{}", s.ok_runs, s.total_runs);
        let cells = figures.iter().map(|f| cell(f[i]));
        [escape(&c.config.name), runs]
            .into_iter()
            .chain(cells)
            .collect()
    });
    (heads.collect(), rows.collect())
}

/// A service experiment's columns with their heads (the rows' labels):
/// the memory at the end of the load, then the median, p95 (and with
/// `p99`, p99) response times; or the load's duration when no run
/// measured latency.
pub(crate) fn service_figures(analysis: &Analysis, p99: bool) -> Vec<(&str, Vec<Figure>)> {
    let latency = analysis.service.iter().any(|s| s.latency.is_some());
    let rows: &[&str] = match (latency, p99) {
        (false, _) => &["load_s"],
        (true, false) => &["p50_ms", "p95_ms"],
        (true, true) => &["p50_ms", "p95_ms", "p99_ms"],
    };
    let ids = std::iter::once(analysis.end_of_load.as_str()).chain(rows.iter().copied());
    ids.filter_map(|id| analysis.metrics.iter().position(|m| m.id == id))
        .map(|k| {
            (
                analysis.metrics[k].label.as_str(),
                metric_figures(analysis, k),
            )
        })
        .collect()
}

/// The metric-table rows the Markdown and HTML comparison tables have a
/// column for: those shown always, and those shown when measured that some
/// configuration measured.
pub(crate) fn metric_columns(analysis: &Analysis) -> Vec<usize> {
    (0..analysis.metrics.len())
        .filter(|&k| match analysis.metrics[k].shown {
            Shown::Always => true,
            Shown::WhenMeasured => measured(analysis, k),
            Shown::Never => false,
        })
        .collect()
}

/// Whether some configuration has an estimate of metric-table row `k`.
pub fn measured(analysis: &Analysis, k: usize) -> bool {
    let mut summaries = analysis.summaries.iter();
    summaries.any(|s| s.metrics.get(k).is_some_and(|(_, m)| m.estimate.is_some()))
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
