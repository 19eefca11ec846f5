//! The user's own metric as a row of every report: a real program that
//! prints its throughput, `--metric` reading it and `--higher-is-better`
//! turning the verdict's reading of it, in the terminal table, JSON, CSV,
//! Markdown, and `report` of the stored experiment.

use crate::common::{config, program, runs, stderr, stdout, Scratch};
use serde_json::Value;

const CONFIGS: [&str; 2] = ["glibc", "glibc:arena_max=1"];

/// Each ok run's `ops` keyed by its round.
fn ops_by_round(json: &Value, name: &str) -> Vec<(u64, f64)> {
    runs(config(json, name))
        .iter()
        .filter(|r| r["status"] == "ok")
        .filter_map(|r| Some((r["index"].as_u64()?, r["user_metrics"]["ops"].as_f64()?)))
        .collect()
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[test]
fn a_higher_is_better_metric_is_a_row_of_every_report() {
    let scratch = Scratch::new();
    let workload = program("throughput");
    let csv = scratch.path("summary.csv");
    let md = scratch.path("report.md");
    let plots = scratch.path("plots");
    let (output, json) = scratch.compare(
        &[
            "-a",
            CONFIGS[0],
            "-a",
            CONFIGS[1],
            "--runs",
            "3",
            "--metric",
            "ops=([0-9.]+) ops/sec",
            "--higher-is-better",
            "ops",
            "--perf-metric",
            "ops",
            "--export-csv",
            csv.to_str().expect("utf-8"),
            "--export-markdown",
            md.to_str().expect("utf-8"),
            "--plots",
            plots.to_str().expect("utf-8"),
        ],
        &[workload.to_str().expect("utf-8"), "2", "400000"],
    );
    let (log, table) = (stderr(&output), stdout(&output));
    assert!(output.status.success(), "{log}");

    // Every run printed its figure; the last line wins over the warm-up's.
    let base = ops_by_round(&json, CONFIGS[0]);
    let cand = ops_by_round(&json, CONFIGS[1]);
    assert_eq!((base.len(), cand.len()), (3, 3), "{log}");
    assert!(
        base.iter().chain(&cand).all(|&(_, v)| v > 1000.0),
        "{base:?} {cand:?}"
    );

    // JSON: the spec, and a summary with a median and a paired ratio with
    // its interval, like wall time's.
    let spec = &json["experiment"]["user_metrics"][0];
    assert_eq!(spec["name"], "ops", "{spec}");
    assert_eq!(spec["higher_is_better"], true, "{spec}");
    let summary = &config(&json, CONFIGS[1])["summary"];
    let values: Vec<f64> = cand.iter().map(|&(_, v)| v).collect();
    let est = summary["user.ops"]["median"].as_f64().expect("a median");
    assert!((est - median(&values)).abs() < 1e-6, "{summary}");
    let ratio = &summary["ratio"]["user.ops"];
    let paired: f64 = cand
        .iter()
        .zip(&base)
        .map(|(&(rc, c), &(rb, b))| {
            assert_eq!(rc, rb, "paired by round");
            (c / b).ln()
        })
        .sum::<f64>()
        / 3.0;
    let value = ratio["value"].as_f64().expect("a ratio");
    assert!((value - paired.exp()).abs() < 1e-9, "{ratio}");
    let (low, high) = (
        ratio["ci_low"].as_f64().expect("an interval from 3 pairs"),
        ratio["ci_high"].as_f64().expect("an interval from 3 pairs"),
    );
    assert!(low < value && value < high, "{ratio}");
    assert_eq!(
        config(&json, CONFIGS[0])["summary"]["ratio"]["user.ops"]["value"],
        1.0
    );

    // The verdict judges by it and reads it as the table does: more ops/s
    // is better.
    let verdict = &json["verdict"];
    assert_eq!(verdict["performance_metric"], "ops", "{verdict}");
    let sentence = verdict["explanation"][0].as_str().unwrap_or_default();
    let direction = if value >= 1.0 {
        "better by"
    } else {
        "worse by"
    };
    assert!(
        sentence.contains(&format!(
            "ops {value:.2}x [{low:.2}, {high:.2}] ({direction}"
        )),
        "{sentence}"
    );

    // The terminal table: a block titled with the direction.
    assert!(
        table.contains("ops (--metric, higher is better)"),
        "{table}"
    );
    assert!(
        table.contains(&format!("{value:.2}x [{low:.2}, {high:.2}]")),
        "{table}"
    );

    // CSV: the estimate and ratio columns, the same figures as JSON.
    let text = std::fs::read_to_string(&csv).expect("the CSV export");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let row: Vec<&str> = lines
        .find(|l| l.starts_with(CONFIGS[1]))
        .unwrap_or_default()
        .split(',')
        .collect();
    let column = |name: &str| -> f64 {
        let i = header.iter().position(|h| *h == name);
        let i = i.unwrap_or_else(|| panic!("no column {name}: {header:?}"));
        row[i].parse().unwrap_or_else(|_| panic!("{name}: {row:?}"))
    };
    assert!((column("user.ops_median") - est).abs() < 1e-6, "{text}");
    assert!((column("ratio_user.ops") - value).abs() < 1e-9, "{text}");
    assert!(
        (column("ratio_user.ops_ci_low") - low).abs() < 1e-9,
        "{text}"
    );

    // Markdown: a column, and which way is better.
    let markdown = std::fs::read_to_string(&md).expect("the Markdown export");
    assert!(markdown.contains("| wall time | ops |"), "{markdown}");
    assert!(
        markdown.contains("ops: a figure the program prints (--metric), higher is better."),
        "{markdown}"
    );

    // The memory-against-performance plot shows what the verdict weighed:
    // throughput, where more is better, not wall time.
    // Its memory is the one the verdict judged by: the mean, or for runs
    // too short for one the peak.
    let memory = match json["verdict"]["memory_metric"].as_str() {
        Some("peak_rss_bytes") => "peak RSS",
        _ => "mean RSS",
    };
    let svg = std::fs::read_to_string(plots.join("memory_vs_time.svg")).expect("the plot");
    assert!(svg.contains(&format!("{memory} against ops (")), "{svg}");
    assert!(svg.contains("lower right is better"), "{svg}");
    assert!(!svg.contains("wall time"), "{svg}");

    // `report` of the stored experiment shows the same row, and re-judging
    // by it keeps the stored direction.
    let db = scratch.db();
    let db = db.to_str().expect("utf-8");
    let again = scratch.run(&["report", "--full", "--db", db, "--perf-metric", "ops"]);
    assert!(again.status.success(), "{}", stderr(&again));
    let again = stdout(&again);
    assert!(
        again.contains("ops (--metric, higher is better)"),
        "{again}"
    );
    assert!(again.contains(&format!("ops {value:.2}x")), "{again}");
    let exported = scratch.run(&["report", "--db", db, "--export-json", "-"]);
    assert!(exported.status.success(), "{}", stderr(&exported));
    let stored: Value = serde_json::from_slice(&exported.stdout).expect("JSON");
    assert_eq!(
        config(&stored, CONFIGS[1])["summary"]["ratio"]["user.ops"],
        *ratio
    );
}

/// A RocksDB-style compare judged by the program's own `ops` (`--metric`),
/// of five configurations: its final screen fits 40 lines of 100 columns.
#[test]
fn a_metric_compare_of_five_configurations_fits_one_screen() {
    let scratch = Scratch::new();
    let workload = program("throughput");
    let mut options = vec!["--runs", "3"];
    let configs = ["glibc", "glibc:arena_max=1", "glibc:arena_max=2"];
    let others = crate::common::installed_allocators();
    for config in configs
        .iter()
        .chain(others.iter().filter(|a| **a != "glibc"))
        .take(5)
    {
        options.extend(["-a", config]);
    }
    options.extend([
        "--metric",
        "ops=([0-9.]+) ops/sec",
        "--higher-is-better",
        "ops",
        "--perf-metric",
        "ops",
    ]);
    let (output, json) = scratch.compare(
        &options,
        &[workload.to_str().expect("utf-8"), "2", "200000"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(json["verdict"]["performance_metric"], "ops");
    let screen = scratch.screen();
    crate::common::fits_one_screen(&screen);
    // The table's head names the figure judged by.
    let head = screen.lines().nth(2).unwrap_or_default();
    assert!(head.contains("ops"), "{screen}");
}
