//! How much narrower the ratio intervals are when runs are paired by round
//! than when the same runs are treated as two independent groups, on the
//! built-in scenarios, as plain `name key=value` lines.
//!
//! Each scenario (churn, events, kv, server, at sizes below the demo's
//! `--quick` ones) runs under the real binary with the default
//! configurations and a fixed `-r N` (`RUNS=...`, default 6), exported as
//! JSON. For every metric the report gives a ratio for (and mean PSS, which
//! the verdict ranks a process tree by) and every non-baseline
//! configuration, the 95% interval of the ratio to the baseline is computed
//! from the same runs twice with the library's own functions: paired within
//! rounds (`interval::paired_log_ratio`, what allocscope reports; checked
//! against the JSON's figure) and unpaired (`interval::welch_log_ratio`, the
//! fallback). Printed: both intervals and the ratio of their widths on the
//! log scale (paired / unpaired; below 1 means pairing narrowed it), with
//! the ratio of their standard errors (what pairing removed before the
//! paired t pays for its fewer degrees of freedom), then the median width
//! ratio per scenario, per metric and overall. `SCENARIOS=churn,kv`
//! picks scenarios. About 4 minutes on 2 busy cores.

use allocscope_analyze::interval::{paired_log_ratio, welch_log_ratio, LogRatio};
use anyhow::{bail, ensure, Context, Result};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

const ALLOCSCOPE: &str = env!("CARGO_BIN_EXE_allocscope");

/// A scenario: its workload knobs, and for `server` the load.
struct Scenario {
    name: &'static str,
    knobs: &'static [&'static str],
    server: bool,
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "churn",
        knobs: &["--ops", "1000000", "--seconds", "0"],
        server: false,
    },
    Scenario {
        name: "events",
        knobs: &["--procs", "2", "--events", "20"],
        server: false,
    },
    Scenario {
        name: "kv",
        knobs: &["--items", "100000"],
        server: false,
    },
    Scenario {
        name: "server",
        knobs: &["--threads", "16", "--cache-entries", "4000"],
        server: true,
    },
];

/// Where a run's value of a ratio key sits in the JSON run object.
fn run_value(run: &Value, key: &str) -> Option<f64> {
    match key {
        "p50_ms" | "p95_ms" => run["latency"][key].as_f64(),
        "rss_end_load_bytes" | "pss_end_load_bytes" | "load_s" => run["service"][key].as_f64(),
        _ => run[key].as_f64(),
    }
}

/// One configuration's ok runs' values of `key`, keyed by round.
fn series(config: &Value, key: &str) -> Vec<(u32, f64)> {
    config["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["status"] == "ok")
        .filter_map(|r| {
            let round = u32::try_from(r["index"].as_u64()?).ok()?;
            Some((round, run_value(r, key).filter(|v| *v > 0.0)?))
        })
        .collect()
}

/// The interval's width on the log scale, `None` without one.
fn log_width(r: &LogRatio) -> Option<f64> {
    let ratio = r.ratio();
    (ratio.ci_low.is_finite() && ratio.ci_high.is_finite())
        .then(|| (ratio.ci_high / ratio.ci_low).ln())
}

fn shown(r: &LogRatio) -> String {
    let ratio = r.ratio();
    format!(
        "{:.3}x[{:.3},{:.3}]",
        ratio.value, ratio.ci_low, ratio.ci_high
    )
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Runs one scenario and returns its JSON export.
fn run_scenario(s: &Scenario, runs: u32, dir: &Path) -> Result<Value> {
    let json = dir.join(format!("{}.json", s.name));
    let db = dir.join("paired_width.db");
    let mut cmd = Command::new(ALLOCSCOPE);
    cmd.arg("compare")
        .arg("--db")
        .arg(&db)
        .args(["-r", &runs.to_string(), "--quiet", "--export-json"])
        .arg(&json);
    let mut workload: Vec<String> = vec![ALLOCSCOPE.into(), "workload".into(), s.name.into()];
    workload.extend(s.knobs.iter().map(|k| k.to_string()));
    if s.server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        cmd.args([
            "--server",
            "--http",
            &format!("http://127.0.0.1:{port}/item/{{rand:4000}}"),
            "--requests",
            "5000",
            "--concurrency",
            "16",
            "--settle",
            "1s",
        ]);
        workload.extend(["--port".into(), port.to_string()]);
    }
    cmd.arg("--").args(&workload);
    let output = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("running {ALLOCSCOPE}"))?;
    let text = std::fs::read_to_string(&json).with_context(|| {
        format!(
            "{}: no JSON export ({}): {}",
            s.name,
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
    })?;
    Ok(serde_json::from_str(&text)?)
}

/// One cell: a metric of a candidate, its width ratio and standard error
/// ratio (paired / unpaired).
struct Cell {
    metric: String,
    width: f64,
    se: f64,
}

/// Medians of the cells' ratios: `cells=N median_width_ratio=W median_se_ratio=S`.
fn medians(cells: &[&Cell]) -> String {
    let mut widths: Vec<f64> = cells.iter().map(|c| c.width).collect();
    let mut ses: Vec<f64> = cells.iter().map(|c| c.se).collect();
    format!(
        "cells={} narrower={} median_width_ratio={:.2} median_se_ratio={:.2}",
        cells.len(),
        widths.iter().filter(|&&w| w < 1.0).count(),
        median(&mut widths),
        median(&mut ses)
    )
}

/// One line per (metric, candidate); returns the cells with both intervals.
fn widths(scenario: &str, doc: &Value) -> Result<Vec<Cell>> {
    let configs = doc["configs"].as_array().context("configs")?;
    let base_name = doc["experiment"]["baseline"].as_str().context("baseline")?;
    let base = configs
        .iter()
        .find(|c| c["name"] == base_name)
        .context("the baseline's runs")?;
    let mut keys: Vec<String> = base["summary"]["ratio"]
        .as_object()
        .context("ratio keys")?
        .keys()
        .cloned()
        .collect();
    if !keys.iter().any(|k| k == "mean_pss_bytes") && !series(base, "mean_pss_bytes").is_empty() {
        keys.push("mean_pss_bytes".into());
    }
    let mut out = Vec::new();
    for key in &keys {
        let den = series(base, key);
        for config in configs.iter().filter(|c| c["name"] != base_name) {
            let name = config["name"].as_str().unwrap_or("?");
            let num = series(config, key);
            let (Some(paired), Some(unpaired)) = (
                paired_log_ratio(&num, &den),
                welch_log_ratio(
                    &num.iter().map(|&(_, v)| v).collect::<Vec<_>>(),
                    &den.iter().map(|&(_, v)| v).collect::<Vec<_>>(),
                ),
            ) else {
                println!("paired_width scenario={scenario} metric={key} config={name} skipped=too_few_runs");
                continue;
            };
            // What the report printed is the paired interval (where it has one).
            let reported = &config["summary"]["ratio"][key];
            if let (Some(lo), Some(hi)) =
                (reported["ci_low"].as_f64(), reported["ci_high"].as_f64())
            {
                let p = paired.ratio();
                ensure!(
                    (p.ci_low - lo).abs() <= 1e-9 * lo && (p.ci_high - hi).abs() <= 1e-9 * hi,
                    "{scenario} {key} {name}: the paired interval [{}, {}] is not the report's [{lo}, {hi}]",
                    p.ci_low,
                    p.ci_high
                );
            }
            let ratio = match (log_width(&paired), log_width(&unpaired)) {
                (Some(p), Some(u)) if u > 0.0 => Some(p / u),
                _ => None,
            };
            // The standard errors alone: what the pairing removed, before
            // the paired t's fewer degrees of freedom (n - 1 against
            // Welch's up to 2n - 2) are paid for.
            let se_ratio = match (paired.std_err, unpaired.std_err) {
                (Some(p), Some(u)) if u > 0.0 => Some(p / u),
                _ => None,
            };
            let shown_ratio = |r: Option<f64>| r.map_or("n/a".to_string(), |r| format!("{r:.2}"));
            println!(
                "paired_width scenario={scenario} metric={key} config={name} pairs={} paired={} unpaired={} se_ratio={} width_ratio={}",
                paired.n,
                shown(&paired),
                shown(&unpaired),
                shown_ratio(se_ratio),
                shown_ratio(ratio)
            );
            if let (Some(width), Some(se)) = (ratio, se_ratio) {
                out.push(Cell {
                    metric: key.clone(),
                    width,
                    se,
                });
            }
        }
    }
    Ok(out)
}

fn run() -> Result<()> {
    let runs: u32 = std::env::var("RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    ensure!(runs >= 3, "RUNS must be at least 3 for both intervals");
    let chosen: Vec<&Scenario> = match std::env::var("SCENARIOS") {
        Ok(list) => {
            let names: Vec<&str> = list.split(',').map(str::trim).collect();
            let found: Vec<&Scenario> = SCENARIOS
                .iter()
                .filter(|s| names.contains(&s.name))
                .collect();
            if found.len() != names.len() {
                bail!("SCENARIOS={list}: choose from churn, events, kv, server");
            }
            found
        }
        Err(_) => SCENARIOS.iter().collect(),
    };
    let dir = tempfile::tempdir()?;
    let started = Instant::now();
    let mut all: Vec<Cell> = Vec::new();
    for s in chosen {
        let t = Instant::now();
        let doc = run_scenario(s, runs, dir.path())?;
        let found = widths(s.name, &doc)?;
        println!(
            "paired_width scenario={} runs={runs} {} took_s={:.0}",
            s.name,
            medians(&found.iter().collect::<Vec<_>>()),
            t.elapsed().as_secs_f64()
        );
        all.extend(found);
    }
    let mut metrics: Vec<&str> = all.iter().map(|c| c.metric.as_str()).collect();
    metrics.sort_unstable();
    metrics.dedup();
    for metric in metrics {
        let cells: Vec<&Cell> = all.iter().filter(|c| c.metric == metric).collect();
        println!("paired_width metric={metric} {}", medians(&cells));
    }
    println!(
        "paired_width all {} took_s={:.0}",
        medians(&all.iter().collect::<Vec<_>>()),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
