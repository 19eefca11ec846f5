//! The table's service blocks (`compare --server`): first the Ruby report's
//! table, one line per configuration with its RSS at the end of the load,
//! median and p95 response time as multipliers of the baseline with their
//! 95% CIs; then the latency percentiles and throughput (medians over the
//! ok runs), or the load's duration for a `--load` command.

use super::format::{duration, size};
use crate::analyze::service::ServiceSummary;
use crate::analyze::types::{Analysis, Estimate, Ratio};
use std::fmt::Write;

const TITLE: &str = "service: memory vs latency";

pub fn service_blocks(out: &mut String, analysis: &Analysis, width: usize) -> std::fmt::Result {
    if analysis.service.is_empty() {
        return Ok(());
    }
    if let Some(info) = &analysis.experiment.info.service {
        writeln!(out)?;
        writeln!(out, "load: {}", info.load)?;
        writeln!(
            out,
            "ready: {}; settle {}; stop: SIGTERM, SIGKILL after {}",
            info.ready,
            duration(info.settle_s),
            duration(info.grace_s)
        )?;
    }
    multipliers(out, analysis, width)?;
    let has_latency = analysis.service.iter().any(|s| s.latency.is_some());
    if has_latency {
        percentiles(out, analysis, width)?;
    }
    Ok(())
}

/// `0.87x [0.85, 0.90] *`, `baseline`, or `-`.
fn cell(ratio: Option<Ratio>, baseline: bool) -> String {
    match ratio {
        _ if baseline => "baseline".to_string(),
        Some(r) => super::table::ratio_cell(r),
        None => "-".to_string(),
    }
}

fn multipliers(out: &mut String, analysis: &Analysis, width: usize) -> std::fmt::Result {
    let latency = analysis.service.iter().any(|s| s.latency.is_some());
    let (second, third): (&str, &str) = if latency {
        ("median response time", "p95 response time")
    } else {
        ("load duration", "")
    };
    let rows: Vec<[String; 4]> = analysis
        .experiment
        .configs
        .iter()
        .zip(&analysis.service)
        .enumerate()
        .map(|(i, (config, s))| {
            let base = i == analysis.baseline;
            let end = analysis.end_of_load;
            let rss = (end.estimate)(s).map_or("-".to_string(), |e| size(e.median));
            let (second, third) = if latency {
                (cell(s.ratio_p50_ms, base), cell(s.ratio_p95_ms, base))
            } else {
                (cell(s.ratio_load_s, base), String::new())
            };
            [
                config.config.name.clone(),
                format!("{rss:>9}  {}", cell((end.ratio)(s), base)),
                second,
                third,
            ]
        })
        .collect();
    let col = |k: usize, head: &str| {
        rows.iter()
            .map(|r| r[k].chars().count())
            .max()
            .unwrap_or(0)
            .max(head.len())
    };
    let first = if analysis.end_of_load.metric == "pss_end_load_bytes" {
        "PSS at end of load"
    } else {
        "RSS at end of load"
    };
    let (w1, w2, w3) = (col(1, first), col(2, second), col(3, third));
    let width = width.max(TITLE.len().saturating_sub(2));
    writeln!(out)?;
    let head = format!(
        "{TITLE:<w$}  {first:<w1$}  {second:<w2$}  {third:<w3$}",
        w = width + 2
    );
    writeln!(out, "{}", head.trim_end())?;
    for [name, a, b, c] in rows {
        let line = format!("  {name:<width$}  {a:<w1$}  {b:<w2$}  {c:<w3$}");
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

fn percentiles(out: &mut String, analysis: &Analysis, width: usize) -> std::fmt::Result {
    const HEAD: &str = "latency (medians over runs)";
    let width = width.max(HEAD.len().saturating_sub(2));
    writeln!(out)?;
    writeln!(
        out,
        "{HEAD:<w$}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>7}",
        "p50",
        "p90",
        "p95",
        "p99",
        "p99.9",
        "max",
        "req/s",
        "errors",
        w = width + 2
    )?;
    for (config, s) in analysis.experiment.configs.iter().zip(&analysis.service) {
        let Some(l) = &s.latency else {
            writeln!(out, "  {:<width$}  no successful runs", config.config.name)?;
            continue;
        };
        let ms = |e: Estimate| milliseconds(e.median);
        writeln!(
            out,
            "  {:<width$}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9.0}  {:>7}",
            config.config.name,
            ms(l.p50_ms),
            ms(l.p90_ms),
            ms(l.p95_ms),
            ms(l.p99_ms),
            ms(l.p999_ms),
            ms(l.max_ms),
            l.throughput_rps.median,
            errors(s),
        )?;
    }
    Ok(())
}

/// `0.352 ms`, `3.21 ms`, `123.4 ms`, `1.25 s`: sub-millisecond latencies
/// keep their digits.
pub fn milliseconds(ms: f64) -> String {
    if !ms.is_finite() {
        "-".to_string()
    } else if ms < 1.0 {
        format!("{ms:.3} ms")
    } else if ms < 10.0 {
        format!("{ms:.2} ms")
    } else if ms < 1000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

/// Errors over the ok runs' requests, e.g. `0` or `12/30000`.
fn errors(s: &ServiceSummary) -> String {
    if s.errors == 0 {
        "0".to_string()
    } else {
        format!("{}/{}", s.errors, s.requests)
    }
}
