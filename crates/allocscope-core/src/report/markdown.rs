//! Markdown for an issue or pull request: the experiment in one line, the
//! comparison table (runs ok, peak RSS, mean RSS, mean PSS, wall time: each
//! median \[95% CI\] and ratio \[CI\]) and the verdict with its deploy lines.
//! Every string from the user or the workload is escaped.

use super::format::{estimate, estimates_unit, ratio_bounds};
use super::reporter::Reporter;
use crate::analyze::service::ServiceSummary;
use crate::analyze::types::{Analysis, ConfigSummary, Estimate, Ratio};
use crate::analyze::verdict::sh_quote;
use crate::units::{ColumnUnit, Unit};
use anyhow::Result;
use std::fmt::Write as _;

#[derive(Debug, Clone, Copy, Default)]
pub struct MarkdownReporter;

/// Escapes text for a Markdown table cell or paragraph: the characters that
/// start formatting, pipes, and HTML (`<`, `>`, `&` as entities).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '~' | '!' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// The command as a shell would need it typed.
pub fn shell_line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| sh_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A fenced code block that no backtick run in `text` can close early.
fn fenced(text: &str, lang: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}{lang}\n{}\n{fence}\n", text.trim_end())
}

fn cell(est: Option<Estimate>, ratio: Option<Ratio>, base: bool, column: ColumnUnit) -> String {
    let Some(e) = est else {
        return "-".to_string();
    };
    let value = estimate(column, e);
    match (base, ratio) {
        (true, _) => format!("{value}<br>baseline"),
        (false, Some(r)) => {
            let bold = if r.excludes_one() { "**" } else { "" };
            match ratio_bounds(&r) {
                Some(ci) => format!("{value}<br>{bold}{:.2}x {ci}{bold}", r.value),
                None => format!("{value}<br>{:.2}x", r.value),
            }
        }
        (false, None) => value,
    }
}

/// A configuration's row: one cell per metric column.
fn row(name: &str, s: &ConfigSummary, base: bool, columns: &[(usize, ColumnUnit)]) -> Vec<String> {
    let mut cells = vec![escape(name), format!("{}/{}", s.ok_runs, s.total_runs)];
    for &(k, column) in columns {
        let m = s.metrics.get(k).map(|(_, m)| m);
        cells.push(cell(
            m.and_then(|m| m.estimate),
            m.and_then(|m| m.ratio),
            base,
            column,
        ));
    }
    cells
}

/// `RSS at end of load`, or `PSS ...` for a multi-process server.
pub fn end_of_load_head(analysis: &Analysis) -> &'static str {
    if analysis.end_of_load.metric == "pss_end_load_bytes" {
        "PSS at end of load"
    } else {
        "RSS at end of load"
    }
}

/// A service experiment's table: RSS at the end of the load, median and
/// p95 response time (or the load's duration), throughput.
fn service_table(out: &mut String, analysis: &Analysis) -> std::fmt::Result {
    let Some(info) = &analysis.experiment.info.service else {
        return Ok(());
    };
    writeln!(out, "Load: {}.\n", escape(&info.load))?;
    let latency = analysis.service.iter().any(|s| s.latency.is_some());
    let memory_head = end_of_load_head(analysis);
    let head: &[&str] = if latency {
        &[
            "configuration",
            memory_head,
            "median response time",
            "p95 response time",
            "throughput",
        ]
    } else {
        &["configuration", memory_head, "load duration"]
    };
    let services = &analysis.service;
    let column = |unit: Unit, pick: &dyn Fn(&ServiceSummary) -> Option<Estimate>| {
        estimates_unit(unit, services.iter().filter_map(pick))
    };
    let memory = column(Unit::Bytes, &|s| (analysis.end_of_load.estimate)(s));
    let p50 = column(Unit::Milliseconds, &|s| s.latency.map(|l| l.p50_ms));
    let p95 = column(Unit::Milliseconds, &|s| s.latency.map(|l| l.p95_ms));
    let load = column(Unit::Seconds, &|s| s.load_s);
    let configs = analysis.experiment.configs.iter().zip(services);
    let rows = configs.enumerate().map(|(i, (c, s))| {
        let base = i == analysis.baseline;
        let mut cells = vec![
            escape(&c.config.name),
            cell(
                (analysis.end_of_load.estimate)(s),
                (analysis.end_of_load.ratio)(s),
                base,
                memory,
            ),
        ];
        if latency {
            let l = s.latency;
            cells.push(cell(l.map(|l| l.p50_ms), s.ratio_p50_ms, base, p50));
            cells.push(cell(l.map(|l| l.p95_ms), s.ratio_p95_ms, base, p95));
            cells.push(l.map_or("-".to_string(), |l| {
                format!("{:.0} req/s", l.throughput_rps.median)
            }));
        } else {
            cells.push(cell(s.load_s, s.ratio_load_s, base, load));
        }
        cells
    });
    super::section::markdown(out, head, rows)?;
    writeln!(out)
}

/// The memory limit each configuration needs, and the cgroup charge against
/// PSS where both were measured.
fn limit_table(out: &mut String, analysis: &Analysis) -> std::fmt::Result {
    let rows = super::limits::rows(analysis);
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(out, "### {}\n", escape(&super::limits::title(analysis)))?;
    let rows = rows
        .iter()
        .map(|row| row.iter().map(|c| escape(c)).collect());
    super::section::markdown(out, &super::limits::head(analysis), rows)?;
    writeln!(out)
}

/// The title, the command and host, and whether runs had a cgroup.
fn heading(out: &mut String, analysis: &Analysis) -> std::fmt::Result {
    let e = &analysis.experiment;
    let name = e.info.name.as_deref().map(escape).unwrap_or_default();
    writeln!(out, "## allocscope experiment {} {name}\n", e.id)?;
    writeln!(
        out,
        "Command: {} on {} (Linux {}, glibc {}, {} CPUs, THP {}), {} runs per configuration, \
         started {}.\n",
        escape(&shell_line(&e.info.command)),
        escape(&e.info.host.hostname),
        escape(&e.info.host.kernel),
        escape(&e.info.host.glibc),
        e.info.host.cpus,
        escape(&e.info.host.thp),
        super::columns::runs_each(analysis, e.info.runs_per_config),
        escape(&e.info.started_at)
    )?;
    if let Some(line) = super::limits::runs_line(&e.info.host) {
        writeln!(out, "{}.\n", escape(&line))?;
    }
    if let Some(c) = &e.info.host.cpus_emulated {
        let line = super::cpus_line::cpus_line(c, e.info.host.cpus);
        writeln!(
            out,
            "Host emulated with `--cpus {}`: {}.\n",
            c.cpus,
            escape(&line)
        )?;
    }
    Ok(())
}

impl Reporter for MarkdownReporter {
    fn render(&self, analysis: &Analysis) -> Result<Vec<u8>> {
        let e = &analysis.experiment;
        let mut out = String::new();
        heading(&mut out, analysis)?;
        let columns: Vec<(usize, ColumnUnit)> = super::columns::metric_columns(analysis)
            .into_iter()
            .map(|k| (k, super::columns::metric_unit(analysis, k)))
            .collect();
        let mut head = vec!["configuration", "runs ok"];
        head.extend(
            columns
                .iter()
                .map(|&(k, _)| analysis.metrics[k].label.as_str()),
        );
        let configs = e.configs.iter().zip(&analysis.summaries).enumerate();
        let rows =
            configs.map(|(i, (c, s))| row(&c.config.name, s, i == analysis.baseline, &columns));
        super::section::markdown(&mut out, &head, rows)?;
        writeln!(
            out,
            "\nMedians over the ok runs with their 95% interval (from 6 runs); the second line is \
             the ratio to the baseline, paired by round, **bold** when its 95% interval \
             excludes 1.0.\n"
        )?;
        for note in super::columns::user_metric_notes(analysis) {
            writeln!(out, "{}\n", escape(&note))?;
        }
        service_table(&mut out, analysis)?;
        super::breakdown_table::breakdown_markdown(&mut out, analysis, escape)?;
        limit_table(&mut out, analysis)?;
        let v = &analysis.verdict;
        writeln!(
            out,
            "### Verdict ({})\n\n{}\n",
            super::verdict_text::thresholds(v),
            escape(&v.reason)
        )?;
        for line in &v.explanation {
            writeln!(out, "- {}", escape(line))?;
        }
        if let Some(cause) = &v.cause {
            writeln!(out, "\n{}:\n", super::verdict_text::WHY_HEAD)?;
            for line in &cause.lines {
                writeln!(out, "- {}", escape(line))?;
            }
        }
        if !analysis.warnings.is_empty() {
            writeln!(out)?;
            for warning in &analysis.warnings {
                writeln!(out, "> warning: {}", escape(warning))?;
            }
        }
        if let Some(kept) = &v.kept_limit {
            writeln!(out, "\n#### Memory limit\n\n{}:\n", escape(&kept.words))?;
            for (title, text) in kept.targets() {
                writeln!(out, "{title}:\n\n{}", fenced(text, ""))?;
            }
        }
        if let (Some(d), Some(name)) = (&v.deploy, &v.config) {
            writeln!(out, "\n#### Deploy {}\n", escape(name))?;
            for (title, text, lang) in [
                ("Shell", &d.shell, "sh"),
                ("systemd unit, `[Service]` section", &d.systemd, "ini"),
                ("Dockerfile", &d.dockerfile, "dockerfile"),
                ("Kubernetes container", &d.kubernetes, "yaml"),
            ] {
                writeln!(out, "{title}:\n\n{}", fenced(text, lang))?;
            }
        }
        Ok(out.into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_pipes_backticks_and_html() {
        assert_eq!(
            escape("a|b `c` <script>alert(1)</script> & d"),
            "a\\|b \\`c\\` &lt;script&gt;alert(1)&lt;/script&gt; &amp; d"
        );
    }

    #[test]
    fn fences_outlast_backticks_inside() {
        assert_eq!(fenced("x", "sh"), "```sh\nx\n```\n");
        assert_eq!(fenced("a ```` b", ""), "`````\na ```` b\n`````\n");
    }
}
