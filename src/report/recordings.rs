//! `report --recordings`: the recordings side by side as text (one line per
//! recording with its steady state, then the levels at the same elapsed
//! times against the first recording) and as JSON.

use crate::analyze::recordings::{RecordingSummary, RecordingsAnalysis};
use crate::analyze::steady::SteadyState;
use crate::recorded::RecordingInfo;
use crate::units::{format_bytes, format_seconds};
use std::fmt::Write;

/// The text report.
pub fn render_text(analysis: &RecordingsAnalysis) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Recordings side by side (RSS of the whole process tree, aligned by elapsed time)\n"
    );
    let rows: Vec<[String; 8]> = analysis.summaries.iter().map(row).collect();
    let header = [
        "id", "name", "config", "status", "elapsed", "samples", "peak RSS", "last RSS",
    ]
    .map(String::from);
    let mut widths = header.clone().map(|h| h.len());
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for r in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = r
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (cell, w))| {
                if i >= 4 {
                    format!("{cell:>w$}")
                } else {
                    format!("{cell:<w$}")
                }
            })
            .collect();
        let _ = writeln!(out, "  {}", cells.join("  ").trim_end());
    }
    let _ = writeln!(out, "\nSteady state (when RSS stopped growing):");
    for s in &analysis.summaries {
        let _ = writeln!(out, "  {}: {}", s.info.name, steady_text(s.steady.as_ref()));
    }
    if analysis.summaries.len() > 1 && !analysis.same_time.is_empty() {
        let base = &analysis.summaries[0].info.name;
        let _ = writeln!(out, "\nAt the same elapsed time (RSS, against {base}):");
        for point in &analysis.same_time {
            let Some(Some(base_level)) = point.rss_bytes.first() else {
                continue;
            };
            for (s, level) in analysis.summaries.iter().zip(&point.rss_bytes).skip(1) {
                let Some(level) = level else { continue };
                let _ = writeln!(
                    out,
                    "  after {}: {} {} against {} ({:.2}x)",
                    format_seconds(point.at_s),
                    s.info.name,
                    format_bytes(*level),
                    format_bytes(*base_level),
                    if *base_level > 0.0 {
                        level / base_level
                    } else {
                        f64::NAN
                    },
                );
            }
        }
    }
    let notes: Vec<String> = analysis
        .summaries
        .iter()
        .filter_map(|s| Some(format!("  {}: {}", s.info.name, note(&s.info)?)))
        .collect();
    if !notes.is_empty() {
        let _ = writeln!(out, "\nNotes:\n{}", notes.join("\n"));
    }
    out
}

fn row(s: &RecordingSummary) -> [String; 8] {
    [
        s.info.id.to_string(),
        s.info.name.clone(),
        s.info.config.clone(),
        s.info.status.clone(),
        format_seconds(s.info.elapsed_s),
        s.samples.to_string(),
        format_bytes(s.peak_rss_bytes as f64),
        s.last_rss_bytes
            .map_or("-".into(), |b| format_bytes(b as f64)),
    ]
}

/// `settled after 2.5 min at 310 MiB (grew 120 MiB/h before)`.
pub fn steady_text(steady: Option<&SteadyState>) -> String {
    match steady {
        None => "too few samples to tell".into(),
        Some(s) => match s.settled_at_s {
            Some(at) if at <= 0.0 => {
                format!("flat from the start at {}", format_bytes(s.level_bytes))
            }
            Some(at) => format!(
                "settled after {} at {} (grew {}/h before)",
                format_seconds(at),
                format_bytes(s.level_bytes),
                format_bytes(s.growth_bytes_per_hour)
            ),
            None => format!(
                "still {} at the end: {}/h, last at {}",
                if s.growth_bytes_per_hour < 0.0 {
                    "falling"
                } else {
                    "growing"
                },
                format_bytes(s.growth_bytes_per_hour.abs()),
                format_bytes(s.level_bytes)
            ),
        },
    }
}

fn note(info: &RecordingInfo) -> Option<String> {
    match (info.status.as_str(), &info.message) {
        ("incomplete", _) => Some(
            "incomplete: its allocscope stopped without finishing it; `record --pid` on the \
             same process continues it"
                .into(),
        ),
        (_, Some(message)) => Some(message.clone()),
        _ => None,
    }
}

/// The JSON report (schema `allocscope-recordings/1`), without the points.
pub fn render_json(analysis: &RecordingsAnalysis) -> serde_json::Result<String> {
    let value = serde_json::json!({
        "schema": "allocscope-recordings/1",
        "recordings": analysis.summaries,
        "same_time": analysis.same_time,
    });
    serde_json::to_string_pretty(&value).map(|s| s + "\n")
}
