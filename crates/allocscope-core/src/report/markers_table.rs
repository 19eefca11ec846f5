//! The table's block "memory at markers": one row per marker label (every
//! k-th and the last of a long series, `thin.rs`), one column per
//! configuration, each cell the median RSS over the ok runs, all in one
//! unit since a row compares the configurations.

use super::thin;
use crate::analyze::types::Analysis;
use crate::units::{ColumnUnit, Unit};
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
    let names: Vec<&str> = analysis
        .experiment
        .configs
        .iter()
        .map(|c| c.config.name.as_str())
        .collect();
    let (rows, step) = thin::every_kth(analysis.markers.len(), MAX_MARKER_ROWS);
    let labels: Vec<String> = rows
        .iter()
        .map(|&i| cut(analysis.markers.label(i)))
        .collect();
    let cells = cells(analysis, &rows);
    writeln!(out)?;
    writeln!(out, "memory at markers (median RSS over the ok runs)")?;
    grid(out, &labels, &names, &cells)?;
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

/// The shown rows' cells, one per configuration: the median RSS, `-` where
/// no ok run recorded the label.
fn cells(analysis: &Analysis, rows: &[usize]) -> Vec<Vec<String>> {
    let column = ColumnUnit::for_values(
        Unit::Bytes,
        rows.iter()
            .flat_map(|&i| analysis.markers.cells(i))
            .filter_map(|c| c.rss_bytes_median),
    );
    rows.iter()
        .map(|&i| {
            analysis
                .markers
                .cells(i)
                .iter()
                .map(|c| {
                    c.rss_bytes_median
                        .map_or_else(|| "-".into(), |b| column.show(b))
                })
                .collect()
        })
        .collect()
}

/// The head line and one line per row, labels left-aligned and cells
/// right-aligned under their configuration's name.
fn grid(out: &mut String, labels: &[String], names: &[&str], cells: &[Vec<String>]) -> Result<()> {
    let label_w = labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
        .max(6);
    let widths: Vec<usize> = names
        .iter()
        .enumerate()
        .map(|(j, name)| {
            cells
                .iter()
                .filter_map(|row| row.get(j).map(|cell| cell.chars().count()))
                .max()
                .unwrap_or(0)
                .max(name.chars().count())
        })
        .collect();
    let mut head = format!("  {:<label_w$}", "marker");
    for (name, w) in names.iter().zip(&widths) {
        write!(head, "  {name:>w$}")?;
    }
    writeln!(out, "{}", head.trim_end())?;
    for (label, row) in labels.iter().zip(cells) {
        let mut line = format!("  {label:<label_w$}");
        for (cell, w) in row.iter().zip(&widths) {
            write!(line, "  {cell:>w$}")?;
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}
