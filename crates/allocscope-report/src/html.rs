//! One self-contained HTML report, the answer first: the one screen's card
//! (`screen::html_card`), where the memory went as stacked bars, the
//! comparison, service, breakdown and limit tables; then the experiment
//! (command, host, allocator versions, THP, date), notes on anything
//! suspect, the verdict with its deploy lines, every other plot as inline
//! SVG, and the per-run details with links to the kept stdout/stderr.
//! Inline CSS only, no scripts, no external resources; every user or
//! workload string escaped.

use super::columns::Figure;
use super::format::ratio_bounds;
use super::reporter::Reporter;
use super::svg::{escape, plots};
use allocscope_analyze::types::Analysis;
use allocscope_analyze::verdict::{LimitLines, Outcome};
use allocscope_core::model::{RunStatus, StoredRun};
use allocscope_core::units::{format_seconds, ColumnUnit};
use anyhow::Result;
use std::fmt::Write as _;

#[derive(Debug, Clone, Copy, Default)]
pub struct HtmlReporter;

/// A CI wider than this share of its median is flagged as noisy.
const WIDE_CI: f64 = 0.20;

/// The start of a self-contained page: a Content-Security-Policy that
/// allows no script and no network, the inline style, the title as `h1`.
pub fn page_head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:\">\n<title>{}</title>\n\
         <style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        escape(title),
        escape(title)
    )
}

const STYLE: &str = "body{font-family:'DejaVu Sans',Verdana,sans-serif;margin:2em auto;\
max-width:1100px;color:#222;padding:0 1em}h1{font-size:1.5em}h2{font-size:1.2em;\
border-bottom:1px solid #ccc;margin-top:2em}table{border-collapse:collapse;margin:1em 0}\
td,th{border:1px solid #ccc;padding:4px 8px;text-align:right;vertical-align:top}\
td:first-child,th:first-child{text-align:left}.ratio{color:#555;font-size:.9em}\
.sig{font-weight:bold}.verdict{background:#eef6ee;border:1px solid #9c9;padding:.5em 1em}\
.keep{background:#f6f3e8;border-color:#cb9}.card{font-size:1.05em}.card p{margin:.4em 0}pre{background:#f4f4f4;padding:.6em;overflow:auto}\
.note{color:#8a4b00}figure{margin:1em 0}svg{max-width:100%;height:auto}dt{font-weight:bold}";

/// A link to a file on this machine, by its absolute path.
fn file_link(path: &std::path::Path) -> String {
    let text = path.to_string_lossy();
    let href: String = text
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    format!("<a href=\"file://{href}\">{}</a>", escape(&text))
}

/// A figure's cell content: its median in the column's unit, its interval,
/// and below them its ratio to the baseline.
fn cell(f: Figure) -> String {
    let Some(e) = f.estimate else {
        return "-".to_string();
    };
    let ratio = match (f.baseline, f.ratio) {
        (true, _) => "<div class=\"ratio\">baseline</div>".to_string(),
        (false, Some(r)) => format!(
            "<div class=\"ratio{}\">{:.2}x{}</div>",
            if r.excludes_one() { " sig" } else { "" },
            r.value,
            ratio_bounds(&r)
                .map(|ci| format!(" {ci}"))
                .unwrap_or_default()
        ),
        (false, None) => String::new(),
    };
    let ci = f
        .unit
        .bounds(e.ci_low, e.ci_high)
        .map(|ci| format!(" <span class=\"ratio\">{ci}</span>"))
        .unwrap_or_default();
    format!("{}{ci}{ratio}", escape(&f.unit.show(e.median)))
}

/// Things the reader should check before trusting the numbers.
fn notes(a: &Analysis) -> Vec<String> {
    let mut out: Vec<String> = a.warnings.clone();
    for (c, s) in a.experiment.configs.iter().zip(&a.summaries) {
        let name = &c.config.name;
        for r in c.runs.iter().filter(|r| r.record.status != RunStatus::Ok) {
            out.push(format!(
                "{name} run {} ended {}{}; it is left out of the figures.",
                r.record.index,
                r.record.status.as_str(),
                r.record
                    .failure_words()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default()
            ));
        }
        for (what, e) in [
            ("mean RSS", s.estimate("mean_rss_bytes")),
            ("wall time", s.estimate("wall_s")),
        ] {
            if let Some(e) = e.filter(|e| e.median > 0.0) {
                let width = (e.ci_high - e.ci_low) / e.median;
                if width > WIDE_CI {
                    out.push(format!(
                        "{name}: the 95% CI of its {what} spans {:.0}% of the median; \
                         more runs would narrow it.",
                        width * 100.0
                    ));
                }
            }
        }
    }
    if a.verdict.outcome == Outcome::Inconclusive {
        out.push(
            "The verdict is inconclusive: some candidate is not settled yet; see below."
                .to_string(),
        );
    }
    out
}

fn experiment(out: &mut String, a: &Analysis) -> Result<()> {
    let e = &a.experiment;
    let h = &e.info.host;
    writeln!(out, "<dl>")?;
    let command = super::format::shell_line(&e.info.command);
    for (k, v) in [
        ("command", command),
        (
            "date",
            format!("{} (status: {})", e.info.started_at, e.status),
        ),
        ("host", super::limits::host_line(h)),
    ]
    .into_iter()
    .chain(super::limits::runs_line(h).map(|line| ("cgroup", line)))
    {
        writeln!(out, "<dt>{k}</dt><dd><code>{}</code></dd>", escape(&v))?;
    }
    if let Some(c) = &h.cpus_emulated {
        let line = super::cpus_line::cpus_line(c, h.cpus);
        writeln!(
            out,
            "<dt>host emulated</dt><dd><code>--cpus {}</code>, {}</dd>",
            c.cpus,
            escape(&line)
        )?;
    }
    writeln!(out, "<dt>configurations</dt><dd><ul>")?;
    for c in &e.configs {
        let c = &c.config;
        let env: Vec<String> = c.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        writeln!(
            out,
            "<li><b>{}</b>: {} {} <code>{}</code></li>",
            escape(&c.name),
            escape(&c.allocator),
            escape(c.version.as_deref().unwrap_or("(version unknown)")),
            escape(&env.join(" "))
        )?;
    }
    writeln!(out, "</ul></dd></dl>")?;
    Ok(())
}

fn table(out: &mut String, a: &Analysis) -> Result<()> {
    let (heads, rows) = super::columns::comparison(a, escape, cell);
    let heads: Vec<String> = heads.into_iter().map(escape).collect();
    out.push_str("<table>");
    super::section::html(out, &heads, rows)?;
    writeln!(
        out,
        "</table><p>Medians over the ok runs with their 95% interval (from 6 runs); below each, \
         the ratio to the baseline, paired by round, <b>bold</b> when its 95% interval \
         excludes 1.0.</p>"
    )?;
    for note in super::columns::user_metric_notes(a) {
        writeln!(out, "<p>{}</p>", escape(&note))?;
    }
    Ok(())
}

/// A service experiment's table: RSS at the end of the load, the latency
/// percentiles (or the load's duration), throughput and errors.
fn service_table(out: &mut String, a: &Analysis) -> Result<()> {
    let Some(info) = &a.experiment.info.service else {
        return Ok(());
    };
    writeln!(
        out,
        "<h3>Service</h3><p>Load: {}. Ready: {}. Settle {}, then SIGTERM (SIGKILL after {}).</p>",
        escape(&info.load),
        escape(&info.ready),
        format_seconds(info.settle_s),
        format_seconds(info.grace_s)
    )?;
    let latency = a.service.iter().any(|s| s.latency.is_some());
    let columns = super::columns::service_figures(a, true);
    let mut heads = vec!["configuration"];
    heads.extend(columns.iter().map(|(head, _)| *head));
    if latency {
        heads.extend(["throughput", "errors"]);
    }
    write!(out, "<table>")?;
    super::section::html(out, &heads, [])?;
    // The rows by hand: one without latency spans the latency columns.
    for (i, (c, s)) in a.experiment.configs.iter().zip(&a.service).enumerate() {
        write!(out, "<tr><td>{}</td>", escape(&c.config.name))?;
        match (latency, s.latency) {
            (true, None) => {
                let memory = cell(columns[0].1[i]);
                write!(
                    out,
                    "<td>{memory}</td><td colspan=\"5\">no successful runs</td>"
                )?;
            }
            (_, l) => {
                for (_, figures) in &columns {
                    write!(out, "<td>{}</td>", cell(figures[i]))?;
                }
                if let Some(l) = l.filter(|_| latency) {
                    let rps = l.throughput_rps.median;
                    write!(
                        out,
                        "<td>{rps:.0} req/s</td><td>{}/{}</td>",
                        s.errors, s.requests
                    )?;
                }
            }
        }
        writeln!(out, "</tr>")?;
    }
    writeln!(out, "</table>")?;
    Ok(())
}

/// The memory limit each configuration needs, and the cgroup charge against
/// PSS where both were measured.
fn limit_table(out: &mut String, a: &Analysis) -> Result<()> {
    let rows = super::limits::rows(a);
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(out, "<h3>{}</h3><table>", escape(&super::limits::title(a)))?;
    let heads: Vec<String> = super::limits::head(a).iter().map(|h| escape(h)).collect();
    let rows = rows
        .iter()
        .map(|row| row.iter().map(|c| escape(c)).collect());
    super::section::html(out, &heads, rows)?;
    writeln!(out, "</table>")?;
    Ok(())
}

fn verdict(out: &mut String, a: &Analysis) -> Result<()> {
    let v = &a.verdict;
    let class = if matches!(v.outcome, Outcome::Recommend | Outcome::RecommendUnproven) {
        "verdict"
    } else {
        "verdict keep"
    };
    writeln!(
        out,
        "<h2>Verdict ({})</h2><div class=\"{class}\"><p>{}</p><ul>",
        escape(&super::verdict_text::thresholds(v)),
        escape(&super::verdict_words::reason(v))
    )?;
    for line in super::verdict_words::explanation(v) {
        writeln!(out, "<li>{}</li>", escape(&line))?;
    }
    write!(out, "</ul>")?;
    if let Some(cause) = &v.cause {
        writeln!(
            out,
            "\n<p id=\"why\">{}:</p><ul>",
            escape(super::verdict_text::WHY_HEAD)
        )?;
        for line in super::cause_words::lines(cause) {
            writeln!(out, "<li>{}</li>", escape(&line))?;
        }
        write!(out, "</ul>")?;
    }
    writeln!(out, "</div>")?;
    if let Some(kept) = &v.kept_limit {
        let words = super::verdict_words::kept_words(kept);
        writeln!(out, "<h3>Memory limit</h3><p>{}:</p>", escape(&words))?;
        for (title, text) in LimitLines::of(&kept.memory_limit).targets() {
            writeln!(out, "<p>{title}:</p><pre>{}</pre>", escape(text.trim_end()))?;
        }
    }
    let deploy = v.deploy.as_ref().map(super::verdict_words::deploy_snippets);
    if let (Some(d), Some(name)) = (deploy, &v.config) {
        writeln!(out, "<h3 id=\"deploy\">Deploy {}</h3>", escape(name))?;
        for (title, text) in [
            ("Shell", &d.shell),
            ("systemd unit, [Service] section", &d.systemd),
            ("Dockerfile", &d.dockerfile),
            ("Kubernetes container", &d.kubernetes),
        ] {
            writeln!(out, "<p>{title}:</p><pre>{}</pre>", escape(text.trim_end()))?;
        }
    }
    Ok(())
}

/// One row per run: its status and exit, its figure of each column of the
/// comparison table (the metric table's rows, each in one unit), and links
/// to its stdout and stderr.
fn runs(out: &mut String, a: &Analysis) -> Result<()> {
    let columns = super::columns::metric_columns(a);
    let runs: Vec<(&str, &StoredRun)> = a
        .experiment
        .configs
        .iter()
        .flat_map(|c| c.runs.iter().map(|r| (c.config.name.as_str(), r)))
        .collect();
    let value = |k: usize, run: &StoredRun| (a.metrics[k].extract)(run);
    let units: Vec<ColumnUnit> = columns
        .iter()
        .map(|&k| {
            let values = runs.iter().filter_map(|(_, r)| value(k, r));
            ColumnUnit::for_values(a.metrics[k].unit, values)
        })
        .collect();
    let mut heads: Vec<String> = ["configuration", "run", "status", "exit"]
        .map(String::from)
        .into();
    heads.extend(columns.iter().map(|&k| escape(&a.metrics[k].label)));
    heads.push("stdout / stderr".to_string());
    let rows = runs.iter().map(|&(name, run)| {
        let rec = &run.record;
        let exit = match (rec.exit_code, rec.signal) {
            (Some(code), _) => code.to_string(),
            (None, Some(sig)) => format!("signal {sig}"),
            (None, None) => "-".into(),
        };
        let message = rec.failure_words().map(|m| format!(": {}", escape(&m)));
        let status = format!("{}{}", rec.status.as_str(), message.unwrap_or_default());
        let mut cells = vec![escape(name), rec.index.to_string(), status, exit];
        for (&k, unit) in columns.iter().zip(&units) {
            cells.push(value(k, run).map_or("-".to_string(), |v| unit.show(v)));
        }
        let links = [&rec.stdout_path, &rec.stderr_path].map(|p| file_link(p));
        cells.push(links.join("<br>"));
        cells
    });
    out.push_str("<table>");
    super::section::html(out, &heads, rows)?;
    writeln!(out, "</table>")?;
    Ok(())
}

/// A plot with its caption.
pub(super) fn figure(out: &mut String, p: &super::svg::plot::Plot) -> std::fmt::Result {
    writeln!(
        out,
        "<figure id=\"plot-{}\">\n{}<figcaption>{}</figcaption></figure>",
        p.name,
        p.svg,
        escape(&p.title)
    )
}

impl Reporter for HtmlReporter {
    fn render(&self, a: &Analysis) -> Result<Vec<u8>> {
        let e = &a.experiment;
        let mut out = String::new();
        let title = format!(
            "allocscope experiment {}{}",
            e.id,
            e.info
                .name
                .as_deref()
                .map(|n| format!(": {n}"))
                .unwrap_or_default()
        );
        out.push_str(&page_head(&title));
        // The answer first: the card, where the memory went, the table.
        super::screen::html_card(&mut out, a, escape)?;
        let plots = plots::all(a);
        let (bars, plots): (Vec<_>, Vec<_>) =
            plots.into_iter().partition(|p| p.name == "breakdown");
        for p in bars {
            figure(&mut out, &p)?;
        }
        writeln!(out, "<h2>Comparison</h2>")?;
        table(&mut out, a)?;
        service_table(&mut out, a)?;
        super::breakdown_table::breakdown_html(&mut out, a, escape)?;
        limit_table(&mut out, a)?;
        writeln!(out, "<h2>Experiment</h2>")?;
        experiment(&mut out, a)?;
        let notes = notes(a);
        if !notes.is_empty() {
            writeln!(out, "<h2>Notes</h2><ul class=\"note\">")?;
            for n in notes {
                writeln!(out, "<li>{}</li>", escape(&n))?;
            }
            writeln!(out, "</ul>")?;
        }
        verdict(&mut out, a)?;
        writeln!(out, "<h2>Plots</h2>")?;
        for p in plots {
            figure(&mut out, &p)?;
        }
        writeln!(out, "<h2>Runs</h2>")?;
        runs(&mut out, a)?;
        writeln!(out, "</body></html>")?;
        Ok(out.into_bytes())
    }
}
