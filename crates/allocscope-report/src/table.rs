//! The terminal comparison: one block per metric, one line per configuration
//! with its median, 95% CI and ratio to the baseline, the memory at each
//! marker, then a footer with the failed runs, warnings (linked allocators
//! among them), the sampler's overhead, and the verdict with its deploy lines.
//! Fits in 80-100 columns for configuration names up to ~20 characters.

use super::format::{ratio_cell, MARK};
use super::reporter::Reporter;
use allocscope_analyze::metric_table::Shown;
use allocscope_analyze::types::Analysis;
use allocscope_core::model::{RunStatus, StoredExperiment};
use allocscope_core::units::format_seconds;
use anyhow::Result;
use std::fmt::Write as _;

#[derive(Debug, Clone, Copy, Default)]
pub struct TableReporter;

impl Reporter for TableReporter {
    fn render(&self, analysis: &Analysis) -> Result<Vec<u8>> {
        let mut out = String::new();
        header(&mut out, analysis)?;
        let width = name_width(&analysis.experiment);
        // One block per shown metric some configuration measured.
        for (k, metric) in analysis.metrics.iter().enumerate() {
            if metric.shown != Shown::Never && super::columns::measured(analysis, k) {
                metric_block(&mut out, analysis, k, width)?;
            }
        }
        super::service_table::service_blocks(&mut out, analysis, width)?;
        super::heap_table::heap_block(&mut out, analysis, width)?;
        super::breakdown_table::breakdown_block(&mut out, analysis, width)?;
        super::limits::block(&mut out, analysis, width)?;
        super::markers_table::markers_block(&mut out, analysis)?;
        footer(&mut out, analysis)?;
        Ok(out.into_bytes())
    }
}

pub(super) fn name_width(experiment: &StoredExperiment) -> usize {
    experiment
        .configs
        .iter()
        .map(|c| c.config.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(12)
}

/// ` "nightly"`: the experiment's name as its header line quotes it, or
/// nothing when it has none.
pub(super) fn quoted_name(e: &StoredExperiment) -> String {
    e.info
        .name
        .as_deref()
        .map(|n| format!(" \"{n}\""))
        .unwrap_or_default()
}

pub(super) fn header(out: &mut String, analysis: &Analysis) -> Result<()> {
    let e = &analysis.experiment;
    let name = quoted_name(e);
    writeln!(
        out,
        "experiment {}{name}: {}, started {}",
        e.id, e.status, e.info.started_at
    )?;
    writeln!(
        out,
        "command: {}",
        super::format::shell_line(&e.info.command)
    )?;
    let h = &e.info.host;
    writeln!(out, "host: {}", super::limits::host_line(h))?;
    if let Some(line) = super::limits::runs_line(h) {
        writeln!(out, "{line}")?;
    }
    if let Some(c) = &h.cpus_emulated {
        let line = super::cpus_line::cpus_line(c, h.cpus);
        writeln!(out, "host emulated: --cpus {}, {line}", c.cpus)?;
    }
    match e.status.as_str() {
        "complete" => {}
        "running" => writeln!(
            out,
            "warning: the experiment is still running; results are partial"
        )?,
        other => writeln!(
            out,
            "warning: the experiment is {other}; results cover only the runs it stored"
        )?,
    }
    configurations(out, analysis)
}

/// Each configuration with its runs ok, allocator and version.
fn configurations(out: &mut String, analysis: &Analysis) -> Result<()> {
    let e = &analysis.experiment;
    let width = name_width(e);
    writeln!(
        out,
        "\nconfigurations ({} runs each)",
        super::columns::runs_each(analysis, e.info.runs_per_config)
    )?;
    for (i, (config, summary)) in e.configs.iter().zip(&analysis.summaries).enumerate() {
        let c = &config.config;
        let version = c
            .version
            .as_deref()
            .map(|v| format!(" {v}"))
            .unwrap_or_default();
        let base = if i == analysis.baseline {
            "  (baseline)"
        } else {
            ""
        };
        // A `--variant` shows the command line it ran.
        let command = c
            .command
            .as_ref()
            .map(|words| format!(" ({})", words.join(" ")))
            .unwrap_or_default();
        let served = super::served_words::table_words(config)
            .map(|s| format!("  {s}"))
            .unwrap_or_default();
        writeln!(
            out,
            "  {:<width$}  {}/{} runs ok  {}{version}{command}{served}{base}",
            c.name, summary.ok_runs, summary.total_runs, c.allocator
        )?;
    }
    Ok(())
}

/// The block of the metric-table row `k`.
fn metric_block(out: &mut String, analysis: &Analysis, k: usize, width: usize) -> Result<()> {
    let title = analysis.metrics[k].title();
    let figures = super::columns::metric_figures(analysis, k);
    let configs = analysis.experiment.configs.iter();
    let rows: Vec<Vec<String>> = (configs.zip(figures))
        .map(|(config, f)| {
            let name = config.config.name.clone();
            let Some(est) = f.estimate else {
                return vec![name, "-".into(), "no successful runs".into(), String::new()];
            };
            let vs = match f.ratio {
                _ if f.baseline => "baseline".to_string(),
                r => r.map(ratio_cell).unwrap_or_default(),
            };
            let ci = f.unit.bounds(est.ci_low, est.ci_high).unwrap_or_default();
            vec![name, f.unit.show(est.median), ci, vs]
        })
        .collect();
    // Without any interval (fewer than 6 runs each) the CI column goes.
    let ci_head = if rows.iter().all(|r| r[2].is_empty()) {
        ""
    } else {
        "95% CI"
    };
    // The title heads the name column, which widens for a long title.
    let width = width.max(title.chars().count().saturating_sub(2));
    let heads = [title.as_str(), "median", ci_head, "vs baseline"];
    writeln!(out)?;
    super::section::terminal(out, width, &heads, &rows, |k| k == 1)?;
    Ok(())
}

fn footer(out: &mut String, analysis: &Analysis) -> Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "{MARK} the ratio's 95% CI excludes 1.0: a difference beyond run-to-run noise."
    )?;
    runs_notes(out, analysis)?;
    super::verdict_text::verdict(out, &analysis.verdict)
}

/// `jemalloc run 2: failed, exit code 1: exited with code 1; stderr:
/// initdb: cannot write /nonexistent`: one line per run not `ok`, for every
/// report.
pub(super) fn failed_runs(analysis: &Analysis) -> Vec<String> {
    let runs = (analysis.experiment.configs.iter())
        .flat_map(|c| c.runs.iter().map(move |r| (&c.config.name, &r.record)));
    runs.filter(|(_, r)| r.status != RunStatus::Ok)
        .map(|(name, r)| {
            let mut line = format!("{name} run {}: {}", r.index, r.status.as_str());
            if let Some(code) = r.exit_code {
                line.push_str(&format!(", exit code {code}"));
            }
            if let Some(sig) = r.signal {
                line.push_str(&format!(", signal {sig}"));
                if let Some(name) = signal_hook::low_level::signal_name(sig) {
                    line.push_str(&format!(" ({name})"));
                }
            }
            if let Some(why) = r.failure_words() {
                line.push_str(&format!(": {why}"));
            }
            line
        })
        .collect()
}

/// The failed runs, the warnings and the sampler's overhead.
pub(super) fn runs_notes(out: &mut String, analysis: &Analysis) -> Result<()> {
    let e = &analysis.experiment;
    let failed = failed_runs(analysis);
    if !failed.is_empty() {
        writeln!(out, "failed runs (excluded from the summary above):")?;
        for line in failed {
            writeln!(
                out,
                "{}",
                super::format::hanging(&line, 98, "  ").join("\n")
            )?;
        }
    }
    // Warnings are long sentences: one clause per line, wrapped, keeps the width.
    for warning in &analysis.warnings {
        let lines: Vec<String> = (warning.split_inclusive("; "))
            .flat_map(|clause| super::format::wrap(clause, 88))
            .collect();
        writeln!(out, "warning: {}", lines.join("\n         "))?;
    }
    let runs = e.configs.iter().flat_map(|c| &c.runs);
    let (sampler_s, wall_s) = runs.fold((0.0, 0.0), |(s, w), r| {
        (s + r.record.sampler_cpu_s, w + r.record.wall_s)
    });
    if wall_s > 0.0 {
        writeln!(
            out,
            "sampler overhead: {:.2}% of a core ({} of sampler CPU over {} of runs)",
            100.0 * sampler_s / wall_s,
            format_seconds(sampler_s),
            format_seconds(wall_s)
        )?;
    }
    Ok(())
}
