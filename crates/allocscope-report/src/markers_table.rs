//! The table's block "memory at markers": one row per marker label (every
//! k-th and the last of a long series, `thin.rs`), one column per
//! configuration, each cell the median RSS over the ok runs, all in one
//! unit since a row compares the configurations.

use super::thin;
use allocscope_analyze::types::Analysis;
use allocscope_core::units::{ColumnUnit, Unit};
use anyhow::Result;
use std::fmt::Write as _;

/// More marker labels than this are thinned to every k-th plus the last.
const MAX_MARKER_ROWS: usize = 40;
/// Longer marker labels are cut to keep the table's width.
const MAX_LABEL_CHARS: usize = 30;

/// The block, after a blank line; nothing without markers.
pub(super) fn markers_block(out: &mut String, analysis: &Analysis) -> Result<()> {
    if analysis.markers.is_empty() {
        return Ok(());
    }
    let (rows, step) = thin::every_kth(analysis.markers.len(), MAX_MARKER_ROWS);
    // The head `marker` stands over the labels, past their indent.
    let configs = analysis.experiment.configs.iter();
    let heads: Vec<&str> = std::iter::once("  marker")
        .chain(configs.map(|c| c.config.name.as_str()))
        .collect();
    let rows = lines(analysis, &rows);
    let label_w = rows.iter().map(|r| r[0].chars().count()).max();
    writeln!(out)?;
    writeln!(out, "memory at markers (median RSS over the ok runs)")?;
    super::section::terminal(out, label_w.unwrap_or(0).max(6), &heads, &rows, |_| true)?;
    if step > 1 {
        writeln!(
            out,
            "  (every {step}th of {} markers and the last; the JSON and CSV exports have all)",
            analysis.markers.len()
        )?;
    }
    Ok(())
}

/// A label cut to `MAX_LABEL_CHARS`, a `~` saying so.
fn cut(label: &str) -> String {
    if label.chars().count() > MAX_LABEL_CHARS {
        let cut: String = label.chars().take(MAX_LABEL_CHARS - 1).collect();
        format!("{cut}~")
    } else {
        label.to_string()
    }
}

/// The shown rows: each its label, then one cell per configuration, the
/// median RSS, `-` where no ok run recorded the label.
fn lines(analysis: &Analysis, rows: &[usize]) -> Vec<Vec<String>> {
    let column = ColumnUnit::for_values(
        Unit::Bytes,
        rows.iter()
            .flat_map(|&i| analysis.markers.cells(i))
            .filter_map(|c| c.rss_bytes_median),
    );
    rows.iter()
        .map(|&i| {
            let cells = analysis.markers.cells(i).iter().map(|c| {
                c.rss_bytes_median
                    .map_or_else(|| "-".into(), |b| column.show(b))
            });
            std::iter::once(cut(analysis.markers.label(i)))
                .chain(cells)
                .collect()
        })
        .collect()
}
