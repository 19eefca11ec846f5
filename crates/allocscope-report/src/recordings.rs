//! `report --recordings`: the recordings side by side as text (one line per
//! recording with its steady state, then the levels at the same elapsed
//! times against the first recording) and as JSON.

use allocscope_analyze::recordings::{RecordingSummary, RecordingsAnalysis};
use allocscope_analyze::steady::SteadyState;
use allocscope_core::recorded::RecordingInfo;
use allocscope_core::units::{ColumnUnit, Unit};
use std::fmt::Write;

/// The text report: the side-by-side table, the steady states, the levels
/// at the same elapsed times, and the notes.
pub fn render_text(analysis: &RecordingsAnalysis) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Recordings side by side (RSS of the whole process tree, aligned by elapsed time)\n"
    );
    side_by_side(&mut out, &analysis.summaries);
    let _ = writeln!(out, "\nSteady state (when RSS stopped growing):");
    let summaries = &analysis.summaries;
    let steady = SteadyUnits::of(summaries.iter().filter_map(|s| s.steady.as_ref()));
    for s in summaries {
        let _ = writeln!(out, "  {}: {}", s.info.name, steady.text(s.steady.as_ref()));
    }
    same_time(&mut out, analysis);
    let notes: Vec<String> = summaries
        .iter()
        .filter_map(|s| Some(format!("  {}: {}", s.info.name, note(&s.info)?)))
        .collect();
    if !notes.is_empty() {
        let _ = writeln!(out, "\nNotes:\n{}", notes.join("\n"));
    }
    out
}

/// One line per recording, columns aligned (figures to the right).
fn side_by_side(out: &mut String, summaries: &[RecordingSummary]) {
    let column = |unit: Unit, pick: fn(&RecordingSummary) -> Option<f64>| {
        ColumnUnit::for_values(unit, summaries.iter().filter_map(pick))
    };
    let elapsed = column(Unit::Seconds, |s| Some(s.info.elapsed_s));
    let peak = column(Unit::Bytes, |s| Some(s.peak_rss_bytes as f64));
    let last = column(Unit::Bytes, |s| s.last_rss_bytes.map(|b| b as f64));
    let row = |s: &RecordingSummary| {
        vec![
            s.info.id.to_string(),
            s.info.name.clone(),
            s.info.config.clone(),
            s.info.status.clone(),
            elapsed.show(s.info.elapsed_s),
            s.samples.to_string(),
            peak.show(s.peak_rss_bytes as f64),
            s.last_rss_bytes.map_or("-".into(), |b| last.show(b as f64)),
        ]
    };
    let rows: Vec<Vec<String>> = summaries.iter().map(row).collect();
    let heads = [
        "id", "name", "config", "status", "elapsed", "samples", "peak RSS", "last RSS",
    ];
    let widths = super::section::widths(&heads, &rows);
    let header = heads.map(String::from).to_vec();
    for r in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, &w))| {
                if i >= 4 {
                    format!("{cell:>w$}")
                } else {
                    format!("{cell:<w$}")
                }
            })
            .collect();
        let _ = writeln!(out, "  {}", cells.join("  ").trim_end());
    }
}

/// Each later recording's RSS at the same elapsed times as the first's,
/// with the ratio; nothing for one recording.
fn same_time(out: &mut String, analysis: &RecordingsAnalysis) {
    let points = &analysis.same_time;
    if analysis.summaries.len() <= 1 || points.is_empty() {
        return;
    }
    let base = &analysis.summaries[0].info.name;
    let _ = writeln!(out, "\nAt the same elapsed time (RSS, against {base}):");
    let at = ColumnUnit::for_values(Unit::Seconds, points.iter().map(|p| p.at_s));
    let levels = points.iter().flat_map(|p| p.rss_bytes.iter().flatten());
    let rss = ColumnUnit::for_values(Unit::Bytes, levels.copied());
    for point in points {
        let Some(Some(base_level)) = point.rss_bytes.first() else {
            continue;
        };
        for (s, level) in analysis.summaries.iter().zip(&point.rss_bytes).skip(1) {
            let Some(level) = level else { continue };
            let ratio = if *base_level > 0.0 {
                level / base_level
            } else {
                f64::NAN
            };
            let _ = writeln!(
                out,
                "  after {}: {} {} against {} ({ratio:.2}x)",
                at.show(point.at_s),
                s.info.name,
                rss.show(*level),
                rss.show(*base_level),
            );
        }
    }
}

/// The units of the steady-state lines: the times, the levels and the
/// growth rates each in one unit across the recordings.
struct SteadyUnits {
    at: ColumnUnit,
    level: ColumnUnit,
    growth: ColumnUnit,
}

impl SteadyUnits {
    fn of<'a>(steady: impl Iterator<Item = &'a SteadyState> + Clone) -> SteadyUnits {
        SteadyUnits {
            at: ColumnUnit::for_values(
                Unit::Seconds,
                steady.clone().filter_map(|s| s.settled_at_s),
            ),
            level: ColumnUnit::for_values(Unit::Bytes, steady.clone().map(|s| s.level_bytes)),
            growth: ColumnUnit::for_values(Unit::Bytes, steady.map(|s| s.growth_bytes_per_hour)),
        }
    }

    /// `settled after 2.50 min at 310 MiB (grew 120 MiB/h before)`.
    fn text(&self, steady: Option<&SteadyState>) -> String {
        let Some(s) = steady else {
            return "too few samples to tell".into();
        };
        let level = self.level.show(s.level_bytes);
        match s.settled_at_s {
            Some(at) if at <= 0.0 => format!("flat from the start at {level}"),
            Some(at) => format!(
                "settled after {} at {level} (grew {}/h before)",
                self.at.show(at),
                self.growth.show(s.growth_bytes_per_hour)
            ),
            None => format!(
                "still {} at the end: {}/h, last at {level}",
                if s.growth_bytes_per_hour < 0.0 {
                    "falling"
                } else {
                    "growing"
                },
                self.growth.show(s.growth_bytes_per_hour.abs()),
            ),
        }
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

/// One self-contained HTML page: the side-by-side text and every plot
/// inline, under the same Content-Security-Policy as the experiment report.
pub fn render_html(analysis: &RecordingsAnalysis) -> String {
    let names: Vec<&str> = analysis
        .summaries
        .iter()
        .map(|s| s.info.name.as_str())
        .collect();
    let title = format!("allocscope recordings: {}", names.join(", "));
    let mut out = super::html::page_head(&title);
    out.push_str("<pre>");
    out.push_str(&super::svg::escape(&render_text(analysis)));
    out.push_str("</pre>\n<h2>Plots</h2>\n");
    for plot in super::svg::recordings::all(analysis) {
        let _ = super::html::figure(&mut out, &plot);
    }
    out.push_str("</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocscope_analyze::recordings::analyze_recordings;
    use allocscope_core::recorded::{RecordedPoint, Recording};

    const MIB: u64 = 1024 * 1024;

    fn recording(id: i64, name: &str, rss: impl Fn(u64) -> u64) -> Recording {
        let points = (0..=600)
            .map(|t| RecordedPoint {
                t_s: t as f64,
                span_s: 0.0,
                samples: 1,
                rss_min_bytes: rss(t),
                rss_mean_bytes: rss(t),
                rss_max_bytes: rss(t),
                pss_mean_bytes: None,
                swap_bytes: None,
                vsz_bytes: 2 * rss(t),
                processes: 1,
                threads: 1,
                minor_faults: 0,
                major_faults: 0,
            })
            .collect();
        Recording {
            info: RecordingInfo {
                id,
                name: name.into(),
                config: "glibc".into(),
                command: None,
                target_pid: 1,
                started_at: "2026-01-01T00:00:00Z".into(),
                interval_ms: 1000,
                status: "exited".into(),
                finished_at: None,
                exit_code: Some(0),
                signal: None,
                message: None,
                hostname: "h".into(),
                elapsed_s: 600.0,
            },
            points,
        }
    }

    #[test]
    fn side_by_side_text_has_steady_states_and_same_time_ratios() {
        let analysis = analyze_recordings(vec![
            recording(1, "big", |t| (100 + t.min(120)) * MIB),
            recording(2, "small", |_| 110 * MIB),
        ]);
        let text = render_text(&analysis);
        assert!(text.contains("big: settled after"), "{text}");
        assert!(
            text.contains("small: flat from the start at 110 MiB"),
            "{text}"
        );
        assert!(
            text.contains("after 10.0 min: small 110 MiB against 220 MiB (0.50x)"),
            "{text}"
        );
        let json = render_json(&analysis).expect("serialises");
        assert!(json.contains("\"schema\": \"allocscope-recordings/1\""));
        let plots = crate::svg::recordings::all(&analysis);
        assert_eq!(plots.len(), 1, "no PSS plot without PSS");
        assert!(plots[0].svg.contains("small"));
    }

    #[test]
    fn html_page_has_the_text_escaped_and_the_plots_inline() {
        let analysis = analyze_recordings(vec![
            recording(1, "a<script>", |t| (100 + t.min(120)) * MIB),
            recording(2, "small", |_| 110 * MIB),
        ]);
        let html = render_html(&analysis);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("Content-Security-Policy"));
        assert!(!html.contains("a<script>"), "names must be escaped");
        assert!(html.contains("a&lt;script&gt;: settled after"));
        assert!(html.contains("<figure id=\"plot-recordings_rss\">"));
        assert!(html.trim_end().ends_with("</body></html>"));
    }
}
