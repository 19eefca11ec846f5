//! Snapshot tests (insta) of every reporter on the fixture experiment, the
//! snapshots committed in `snapshots/`. Timestamps and run paths are
//! redacted, and in HTML the host line and allocator versions too. A
//! mismatch fails (under `CI=true` nothing is written); update them with
//! `INSTA_UPDATE=always cargo test --release -p allocscope-report --lib`
//! or `cargo insta review` (docs/ARCHITECTURE.md, "Report snapshots").

use super::*;
use allocscope_analyze::analyze;
use allocscope_analyze::types::Analysis;
use allocscope_core::fixture;
use anyhow::anyhow;
use anyhow::Result;

fn analysis() -> Result<Analysis> {
    analyze(fixture::experiment(), "glibc")
}

/// What varies between machines and runs, and its placeholder.
const TIMESTAMP: (&str, &str) = (
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})",
    "[timestamp]",
);
/// In HTML, the host line and each configuration's allocator version too.
pub(super) const HTML: [(&str, &str); 2] = [
    (
        r"<dt>host</dt><dd><code>[^<]*</code>",
        "<dt>host</dt><dd>[host]",
    ),
    (
        r"(<li><b>[^<]*</b>: [^ ]+) [^<]* <code>",
        "$1 [version] <code>",
    ),
];

/// `reporter`'s output for `analysis` against snapshot `name`, the parts
/// that change run to run redacted by `filters` (and always timestamps and
/// the run directory).
pub(super) fn snapshot(
    name: &str,
    reporter: &dyn Reporter,
    analysis: &Analysis,
    filters: &[(&str, &str)],
) -> Result<()> {
    let text = String::from_utf8(reporter.render(analysis)?)?;
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.add_filter(&regex::escape(fixture::RUN_DIR), "[rundir]");
    for (pattern, replacement) in [TIMESTAMP].iter().chain(filters) {
        settings.add_filter(pattern, *replacement);
    }
    settings.bind(|| insta::assert_snapshot!(name, text));
    Ok(())
}

fn check(name: &str, reporter: &dyn Reporter) -> Result<()> {
    snapshot(name, reporter, &analysis()?, &[])
}

#[test]
fn table_matches_its_snapshot() -> Result<()> {
    check("table", &TableReporter)
}

#[test]
fn json_matches_its_snapshot() -> Result<()> {
    check(
        "report_json",
        &JsonReporter {
            include_samples: false,
        },
    )
}

#[test]
fn json_with_samples_matches_its_snapshot() -> Result<()> {
    check(
        "report_with_samples_json",
        &JsonReporter {
            include_samples: true,
        },
    )
}

#[test]
fn markdown_matches_its_snapshot() -> Result<()> {
    check("report_md", &MarkdownReporter)
}

#[test]
fn markdown_escapes_the_command_and_names() -> Result<()> {
    let mut e = fixture::experiment();
    e.info.command = vec!["./x".into(), "<script>alert(1)</script>|`rm`".into()];
    e.configs[1].config.name = "je|malloc".into();
    let text = String::from_utf8(MarkdownReporter.render(&analyze(e, "glibc")?)?)?;
    assert!(
        text.contains("&lt;script&gt;alert(1)&lt;/script&gt;\\|\\`rm\\`"),
        "{text}"
    );
    // Raw only inside fenced code blocks (the deploy lines), which Markdown
    // renders as text.
    let outside: Vec<&str> = text.split("```").step_by(2).collect();
    assert!(outside.iter().all(|t| !t.contains("<script>")), "{text}");
    assert!(text.contains("| je\\|malloc |"), "{text}");
    Ok(())
}

/// Renders one plot of the fixture by name.
struct PlotReporter(&'static str);

impl Reporter for PlotReporter {
    fn render(&self, analysis: &Analysis) -> Result<Vec<u8>> {
        svg::plots::all(analysis)
            .into_iter()
            .find(|p| p.name == self.0)
            .map(|p| p.svg.into_bytes())
            .ok_or_else(|| anyhow!("no plot {}", self.0))
    }
}

#[test]
fn every_plot_matches_its_snapshot() -> Result<()> {
    for plot in svg::plots::all(&analysis()?) {
        check(&format!("{}_svg", plot.name), &PlotReporter(plot.name))?;
    }
    Ok(())
}

#[test]
fn html_matches_its_snapshot() -> Result<()> {
    snapshot("report_html", &HtmlReporter, &analysis()?, &HTML)
}

#[test]
fn every_plot_applies_to_the_fixture_and_has_lines() -> Result<()> {
    let plots = svg::plots::all(&analysis()?);
    let names: Vec<&str> = plots.iter().map(|p| p.name).collect();
    assert_eq!(
        names,
        [
            "rss_over_time",
            "pss_over_time",
            "memory_at_markers",
            "ratios",
            "memory_vs_time",
            "faults_over_time"
        ]
    );
    for p in &plots {
        assert!(p.svg.starts_with("<svg "), "{}", p.name);
        let drawn = p.svg.contains("<path d=\"M") || p.svg.contains("<circle");
        assert!(drawn, "{} draws nothing", p.name);
        assert!(p.svg.contains("mimalloc,eager"), "{} has no legend", p.name);
    }
    Ok(())
}

#[test]
fn html_is_self_contained_and_escapes_the_workload() -> Result<()> {
    let mut e = fixture::experiment();
    e.info.command = vec!["./x".into(), "<script>alert(1)</script>".into()];
    e.configs[1].config.name = "<b>je</b>".into();
    let html = String::from_utf8(HtmlReporter.render(&analyze(e, "glibc")?)?)?;
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<b>je</b>"), "{html}");
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{html}"
    );
    for external in ["http://", "https://", "src=", "<link"] {
        let outside_svg_ns = html.replace("http://www.w3.org/2000/svg", "");
        assert!(!outside_svg_ns.contains(external), "{external}");
    }
    assert_eq!(html.matches("<svg ").count(), 6);
    assert!(html.contains("crashed (killed by SIGSEGV"), "notes: {html}");
    assert!(html.contains("href=\"file:///tmp/allocscope-fixture/glibc/1.out\""));
    Ok(())
}

#[test]
fn csv_matches_its_snapshot() -> Result<()> {
    check("summary_csv", &CsvReporter)
}

#[test]
fn samples_csv_matches_its_snapshot() -> Result<()> {
    check("samples_csv", &SamplesCsvReporter)
}

#[test]
fn markers_csv_matches_its_snapshot() -> Result<()> {
    check("markers_csv", &MarkersCsvReporter)
}

#[test]
fn json_lists_markers_per_run_and_their_summary() -> Result<()> {
    let bytes = JsonReporter {
        include_samples: false,
    }
    .render(&analysis()?)?;
    let v: serde_json::Value = serde_json::from_slice(&bytes)?;
    let m = &v["configs"][0]["runs"][0]["markers"][2];
    assert_eq!(m["label"], "done");
    for key in ["t_s", "rss_bytes", "pss_bytes", "vsz_bytes"] {
        assert!(m.get(key).is_some(), "markers[].{key}");
    }
    let s = &v["configs"][1]["summary"]["markers"][2];
    assert_eq!((&s["label"], &s["runs"]), (&"done".into(), &3.into()));
    assert!(s["rss_bytes_median"].as_f64().is_some());
    assert!(v["warnings"][0]
        .as_str()
        .is_some_and(|w| w.contains("MemoryCheck")));
    assert_eq!(v["experiment"]["marks"][0], r"MemoryCheck: event (\d+)");
    Ok(())
}

#[test]
fn table_shows_markers_and_thins_a_long_series() -> Result<()> {
    let text = String::from_utf8(TableReporter.render(&analysis()?)?)?;
    assert!(text.contains("memory at markers"), "{text}");
    assert!(text.contains("warning: --mark 'MemoryCheck"), "{text}");
    let mut e = fixture::experiment();
    for run in &mut e.configs[0].runs {
        let first = run.record.markers[0].clone();
        run.record.markers = (1..=100)
            .map(|i| allocscope_core::model::Marker {
                label: format!("event {i}"),
                ..first.clone()
            })
            .collect();
    }
    let text = String::from_utf8(TableReporter.render(&analyze(e, "glibc")?)?)?;
    let shown = text.lines().filter(|l| l.starts_with("  event ")).count();
    assert!((30..=41).contains(&shown), "{shown} rows:\n{text}");
    assert!(text.contains("  event 100 "), "{text}");
    assert!(text.contains("of 104 markers"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    Ok(())
}

/// Beyond 400 labels the markers plot draws every k-th and the last, and
/// says so; a plot of 10^6 points was an SVG the PNG renderer refused.
#[test]
fn markers_plot_thins_a_long_series_and_says_so() -> Result<()> {
    let mut e = fixture::experiment();
    for run in &mut e.configs[0].runs {
        let first = run.record.markers[0].clone();
        run.record.markers = (1..=3000)
            .map(|i| allocscope_core::model::Marker {
                label: format!("event {i}"),
                ..first.clone()
            })
            .collect();
    }
    let a = analyze(e, "glibc")?;
    let plot = svg::plots::all(&a)
        .into_iter()
        .find(|p| p.name == "memory_at_markers")
        .ok_or_else(|| anyhow!("no markers plot"))?;
    let points = plot.svg.matches("<circle").count();
    assert!(
        points <= 400 * a.experiment.configs.len(),
        "{points} points"
    );
    let last = a.markers.label(a.markers.len() - 1);
    assert!(
        plot.svg.contains(&format!(">{last}<")),
        "the last label {last}"
    );
    let note = format!("of {}, and the last", a.markers.len());
    assert!(plot.svg.contains(&note), "no note '{note}'");
    Ok(())
}

#[test]
fn json_has_the_documented_keys() -> Result<()> {
    let bytes = JsonReporter {
        include_samples: false,
    }
    .render(&analysis()?)?;
    let v: serde_json::Value = serde_json::from_slice(&bytes)?;
    assert_eq!(v["schema"], "allocscope/1");
    let e = &v["experiment"];
    for key in [
        "id",
        "command",
        "name",
        "started_at",
        "finished_at",
        "status",
        "baseline",
    ] {
        assert!(e.get(key).is_some(), "experiment.{key}");
    }
    for key in [
        "kernel",
        "glibc",
        "cpus",
        "thp",
        "cgroup_memory_limit_bytes",
        "hostname",
    ] {
        assert!(e["host"].get(key).is_some(), "host.{key}");
    }
    let c = &v["configs"][1];
    assert_eq!(c["env"]["LD_PRELOAD"], "/usr/lib/libjemalloc.so.2");
    assert_eq!(c["runs"][0]["samples"], 4);
    assert!(c["runs"][0].get("timeline").is_none());
    assert_eq!(c["runs"][2]["status"], "crashed");
    assert_eq!(c["summary"]["ok_runs"], 4);
    assert!(c["summary"]["ratio"]["peak_rss_bytes"]["value"]
        .as_f64()
        .is_some());
    assert!(c["summary"]["ratio"]["wall_s"]["ci_low"].as_f64().is_some());
    // Four ok runs: a median without an interval, its bounds null.
    assert!(c["summary"]["wall_s"]["median"].as_f64().is_some());
    assert!(c["summary"]["wall_s"]["ci_low"].is_null());
    Ok(())
}

#[test]
fn json_timeline_lists_every_sample() -> Result<()> {
    let bytes = JsonReporter {
        include_samples: true,
    }
    .render(&analysis()?)?;
    let v: serde_json::Value = serde_json::from_slice(&bytes)?;
    let timeline = &v["configs"][0]["runs"][0]["timeline"];
    assert_eq!(timeline.as_array().map(Vec::len), Some(4));
    assert!(timeline[0]["pss_bytes"].is_null());
    assert!(timeline[1]["pss_bytes"].as_u64().is_some());
    Ok(())
}

#[test]
fn table_marks_failed_runs_and_linked_allocators() -> Result<()> {
    let text = String::from_utf8(TableReporter.render(&analysis()?)?)?;
    assert!(
        text.contains("jemalloc run 3: crashed, signal 11 (SIGSEGV)"),
        "{text}"
    );
    assert!(
        text.contains("warning: the program links jemalloc itself"),
        "{text}"
    );
    assert!(text.contains("baseline"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    Ok(())
}

#[test]
fn write_output_writes_files_and_names_bad_paths() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("out.csv");
    write_output(&path, b"a,b\n")?;
    assert_eq!(std::fs::read(&path)?, b"a,b\n");
    let bad = dir.path().join("missing").join("out.csv");
    let msg = format!(
        "{:#}",
        write_output(&bad, b"x")
            .err()
            .ok_or_else(|| anyhow!("no error"))?
    );
    assert!(msg.contains("missing/out.csv"), "{msg}");
    Ok(())
}

#[test]
fn table_warns_about_an_incomplete_experiment() -> Result<()> {
    let mut e = fixture::experiment();
    e.status = "incomplete".to_string();
    let text = String::from_utf8(TableReporter.render(&analyze(e, "glibc")?)?)?;
    assert!(
        text.contains("warning: the experiment is incomplete"),
        "{text}"
    );
    Ok(())
}

#[test]
fn table_says_when_a_configuration_has_no_successful_runs() -> Result<()> {
    let mut e = fixture::experiment();
    for run in &mut e.configs[1].runs {
        run.record.status = allocscope_core::model::RunStatus::Failed;
    }
    let text = String::from_utf8(TableReporter.render(&analyze(e, "glibc")?)?)?;
    assert!(text.contains("0/5 runs ok"), "{text}");
    assert!(text.contains("no successful runs"), "{text}");
    Ok(())
}

#[test]
fn a_ratio_without_interval_prints_alone_and_unstarred() {
    let lone = allocscope_analyze::types::Ratio {
        value: 0.5,
        ci_low: f64::NAN,
        ci_high: f64::NAN,
    };
    assert_eq!(super::format::ratio_cell(lone), "0.50x");
    let paired = allocscope_analyze::types::Ratio {
        ci_low: 0.45,
        ci_high: 0.55,
        ..lone
    };
    assert_eq!(super::format::ratio_cell(paired), "0.50x [0.45, 0.55] *");
}

#[test]
fn every_verdict_heading_states_the_budget_and_the_saving_threshold() -> Result<()> {
    let judging = allocscope_core::judging::JudgeSettings {
        max_slowdown_pct: 10.0,
        min_saving_pct: 7.0,
        ..Default::default()
    };
    let a = allocscope_analyze::analyze_with(fixture::experiment(), "glibc", &judging)?;
    let heading = "(budget: at most 10% slower; saving counts from 7%)";
    for (name, reporter) in [
        ("table", &TableReporter as &dyn Reporter),
        ("markdown", &MarkdownReporter),
        ("html", &HtmlReporter),
    ] {
        let text = String::from_utf8(reporter.render(&a)?)?;
        assert!(text.contains(heading), "{name}: {text}");
    }
    Ok(())
}

/// Every human-readable report prints a column in one unit with three
/// significant digits, the bounds without it: the peaks of the old tables'
/// `1.2 GiB [1.2 GiB, 1.2 GiB]` and `1.0 GiB [1001.2 MiB, 1.0 GiB]`.
#[test]
fn a_column_has_one_unit_and_three_significant_digits_in_every_report() -> Result<()> {
    const GIB: f64 = 1073741824.0;
    let mut a = analysis()?;
    let k = a
        .metrics
        .iter()
        .position(|m| m.id == "peak_rss_bytes")
        .ok_or_else(|| anyhow!("no peak RSS row"))?;
    let peaks = [
        (1.18, 1.15, 1.24),
        (1001.2 / 1024.0, 0.95, 1.02),
        (0.5, 0.49, 0.52),
    ];
    for (s, (median, low, high)) in a.summaries.iter_mut().zip(peaks) {
        s.metrics[k].1.estimate = Some(allocscope_analyze::types::Estimate {
            median: median * GIB,
            ci_low: low * GIB,
            ci_high: high * GIB,
        });
    }
    let cells = [
        "1.18 GiB [1.15, 1.24]",
        "0.978 GiB [0.950, 1.02]",
        "0.500 GiB [0.490, 0.520]",
    ];
    let table = String::from_utf8(TableReporter.render(&a)?)?;
    let block: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with("peak RSS"))
        .take(4)
        .collect();
    assert!(block[0].contains("95% CI"), "{table}");
    for (line, cell) in block[1..].iter().zip(cells) {
        // The terminal table has the bounds in a column of their own.
        let words: Vec<&str> = line.split_whitespace().collect();
        assert!(words.windows(4).any(|w| w.join(" ") == cell), "{table}");
    }
    let markdown = String::from_utf8(MarkdownReporter.render(&a)?)?;
    let html = String::from_utf8(HtmlReporter.render(&a)?)?;
    for cell in cells {
        assert!(markdown.contains(&format!("| {cell}<br>")), "{markdown}");
        let (value, bounds) = cell.split_at(cell.find(" [").unwrap_or(cell.len()));
        assert!(
            html.contains(&format!(
                "<td>{value} <span class=\"ratio\">{}</span>",
                bounds.trim_start()
            )),
            "{html}"
        );
    }
    Ok(())
}

/// The fixture as a service experiment: with latency (mimalloc's runs
/// measured none), or driven by a `--load` command (a load duration).
fn service_analysis(latency: bool) -> Result<Analysis> {
    use allocscope_analyze::service::{LatencySummary, ServiceSummary};
    use allocscope_analyze::types::{Estimate, MetricSummary, Ratio};
    let mut a = analysis()?;
    a.experiment.info.service = Some(allocscope_core::model::ServiceInfo {
        ready: "tcp:127.0.0.1:8080".into(),
        load: "http://127.0.0.1:8080/ x 2000 requests, 4 connections".into(),
        settle_s: 1.0,
        grace_s: 5.0,
    });
    let at = |median: f64| Estimate {
        median,
        ci_low: median * 0.9,
        ci_high: median * 1.1,
    };
    let ratio = |i: usize, value: f64| {
        (i > 0).then_some(Ratio {
            value,
            ci_low: value * 0.95,
            ci_high: value * 1.05,
        })
    };
    a.service = (0..3)
        .map(|i| {
            let f = 1.0 + i as f64;
            ServiceSummary {
                latency: (latency && i != 2).then_some(LatencySummary {
                    p50_ms: at(0.4 * f),
                    p90_ms: at(0.8 * f),
                    p95_ms: at(1.2 * f),
                    p99_ms: at(2.0 * f),
                    p999_ms: at(4.0 * f),
                    max_ms: at(20.0 * f),
                    requests: at(2000.0),
                    errors: at(i as f64),
                    throughput_rps: at(900.0 / f),
                }),
                rss_end_settle_bytes: Some(at(50e6 * f)),
                pss_end_settle_bytes: None,
                errors: i as u64,
                requests: 2000,
            }
        })
        .collect();
    // The service's rows of the metric table, with their figures.
    a.metrics
        .extend(allocscope_analyze::metric_table::service_rows());
    for (i, summary) in a.summaries.iter_mut().enumerate() {
        let f = 1.0 + i as f64;
        let timed = latency && i != 2;
        let rows = [
            ("rss_end_load_bytes", Some(at(60e6 * f)), ratio(i, f)),
            ("pss_end_load_bytes", None, None),
            (
                "p50_ms",
                timed.then(|| at(0.4 * f)),
                ratio(i, f).filter(|_| timed),
            ),
            (
                "p95_ms",
                timed.then(|| at(1.2 * f)),
                ratio(i, 1.1 * f).filter(|_| timed),
            ),
            ("p99_ms", timed.then(|| at(2.0 * f)), None),
            (
                "load_s",
                (!latency).then(|| at(2.0 * f)),
                ratio(i, f).filter(|_| !latency),
            ),
        ];
        summary.metrics.extend(
            rows.map(|(id, estimate, ratio)| (id.to_string(), MetricSummary { estimate, ratio })),
        );
    }
    a.end_of_load = allocscope_analyze::service::RSS_END_OF_LOAD.to_string();
    Ok(a)
}

#[test]
fn every_format_of_a_service_experiment_matches_its_snapshot() -> Result<()> {
    let json = JsonReporter {
        include_samples: false,
    };
    for (latency, kind) in [(true, "latency"), (false, "load_command")] {
        let a = service_analysis(latency)?;
        for (name, reporter) in [
            ("table", &TableReporter as &dyn Reporter),
            ("md", &MarkdownReporter),
            ("csv", &CsvReporter),
            ("json", &json),
        ] {
            snapshot(&format!("service_{kind}_{name}"), reporter, &a, &[])?;
        }
        snapshot(&format!("service_{kind}_html"), &HtmlReporter, &a, &HTML)?;
    }
    Ok(())
}
