//! Markdown for an issue or pull request: the one screen's summary on top
//! (`screen::markdown`), then under a `<details>` fold the experiment in one
//! line, the comparison table (runs ok, peak RSS, mean RSS, mean PSS, wall time: each
//! median \[95% CI\] and ratio \[CI\]) and the verdict with its deploy lines.
//! Every string from the user or the workload is escaped.

use super::columns::Figure;
use super::format::{estimate, ratio_bounds, shell_line};
use super::reporter::Reporter;
use allocscope_analyze::types::Analysis;
use allocscope_analyze::verdict::LimitLines;
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

fn cell(f: Figure) -> String {
    let Some(e) = f.estimate else {
        return "-".to_string();
    };
    let value = estimate(f.unit, e);
    match (f.baseline, f.ratio) {
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

/// A service experiment's table: RSS at the end of the load, median and
/// p95 response time (or the load's duration), throughput.
fn service_table(out: &mut String, analysis: &Analysis) -> std::fmt::Result {
    let Some(info) = &analysis.experiment.info.service else {
        return Ok(());
    };
    writeln!(out, "Load: {}.\n", escape(&info.load))?;
    let latency = analysis.service.iter().any(|s| s.latency.is_some());
    let columns = super::columns::service_figures(analysis, false);
    let mut head = vec!["configuration"];
    head.extend(columns.iter().map(|(head, _)| *head));
    head.extend(latency.then_some("throughput"));
    let configs = analysis.experiment.configs.iter().zip(&analysis.service);
    let rows = configs.enumerate().map(|(i, (c, s))| {
        let mut cells = vec![escape(&c.config.name)];
        cells.extend(columns.iter().map(|(_, figures)| cell(figures[i])));
        if latency {
            cells.push(s.latency.map_or("-".to_string(), |l| {
                format!("{:.0} req/s", l.throughput_rps.median)
            }));
        }
        cells
    });
    super::section::markdown(out, &head, rows)?;
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

/// The command and host, and whether runs had a cgroup.
fn heading(out: &mut String, analysis: &Analysis) -> std::fmt::Result {
    let e = &analysis.experiment;
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
        let mut out = String::new();
        let e = &analysis.experiment;
        let name = e.info.name.as_deref().map(escape).unwrap_or_default();
        writeln!(out, "## allocscope experiment {} {name}\n", e.id)?;
        // The answer first; the complete report under a fold, so that it
        // pastes into an issue without flooding it.
        super::screen::markdown(&mut out, analysis, escape)?;
        if let Some(d) = &analysis.verdict.deploy {
            writeln!(out, "**Deploy:**\n\n{}", fenced(&d.shell, "sh"))?;
        }
        writeln!(out, "<details><summary>Full report</summary>\n")?;
        heading(&mut out, analysis)?;
        let (head, rows) = super::columns::comparison(analysis, escape, cell);
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
            escape(&super::verdict_words::reason(v))
        )?;
        for line in super::verdict_words::explanation(v) {
            writeln!(out, "- {}", escape(&line))?;
        }
        if let Some(cause) = &v.cause {
            writeln!(out, "\n{}:\n", super::verdict_text::WHY_HEAD)?;
            for line in super::cause_words::lines(cause) {
                writeln!(out, "- {}", escape(&line))?;
            }
        }
        if !analysis.warnings.is_empty() {
            writeln!(out)?;
            for warning in &analysis.warnings {
                writeln!(out, "> warning: {}", escape(warning))?;
            }
        }
        let failed = super::table::failed_runs(analysis);
        if !failed.is_empty() {
            writeln!(out, "\n#### Failed runs (left out of the figures)\n")?;
            for line in failed {
                writeln!(out, "- {}", escape(&line))?;
            }
        }
        if let Some(kept) = &v.kept_limit {
            let words = super::verdict_words::kept_words(kept);
            writeln!(out, "\n#### Memory limit\n\n{}:\n", escape(&words))?;
            for (title, text) in LimitLines::of(&kept.memory_limit).targets() {
                writeln!(out, "{title}:\n\n{}", fenced(text, ""))?;
            }
        }
        let deploy = v.deploy.as_ref().map(super::verdict_words::deploy_snippets);
        if let (Some(d), Some(name)) = (deploy, &v.config) {
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
        writeln!(out, "</details>")?;
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
