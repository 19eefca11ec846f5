//! The table's service blocks (`compare --server`): first the Ruby report's
//! table, one line per configuration with its RSS at the end of the load,
//! median and p95 response time as multipliers of the baseline with their
//! 95% CIs; then the latency percentiles and throughput (medians over the
//! ok runs), or the load's duration for a `--load` command.

use super::columns::Figure;
use super::format::ratio_cell;
use allocscope_analyze::service::{LatencySummary, ServiceSummary};
use allocscope_analyze::types::{Analysis, Estimate};
use allocscope_core::units::{format_seconds, Unit};
use std::fmt::Write;

const TITLE: &str = "service: memory vs latency";

pub(crate) fn service_blocks(
    out: &mut String,
    analysis: &Analysis,
    width: usize,
) -> std::fmt::Result {
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
            format_seconds(info.settle_s),
            format_seconds(info.grace_s)
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
fn cell(f: &Figure) -> String {
    match f.ratio {
        _ if f.baseline => "baseline".to_string(),
        Some(r) => ratio_cell(r),
        None => "-".to_string(),
    }
}

/// The memory at the end of the load, and the ratios of the latency
/// columns (or the load's duration).
fn multipliers(out: &mut String, analysis: &Analysis, width: usize) -> std::fmt::Result {
    let columns = super::columns::service_figures(analysis, false);
    let configs = analysis.experiment.configs.iter();
    let rows: Vec<Vec<String>> = (configs.zip(&columns[0].1).enumerate())
        .map(|(i, (config, memory))| {
            let rss = memory
                .estimate
                .map_or("-".to_string(), |e| memory.unit.show(e.median));
            let mut row = vec![
                config.config.name.clone(),
                format!("{rss:>9}  {}", cell(memory)),
            ];
            row.extend(columns[1..].iter().map(|(_, figures)| cell(&figures[i])));
            row
        })
        .collect();
    let mut heads = vec![TITLE];
    heads.extend(columns.iter().map(|(head, _)| *head));
    writeln!(out)?;
    let width = width.max(TITLE.len().saturating_sub(2));
    super::section::terminal(out, width, &heads, &rows, |_| false)
}

type Percentile = fn(&LatencySummary) -> Estimate;

/// The percentile columns: each head and its figure.
const PERCENTILES: [(&str, Percentile); 6] = [
    ("p50", |l| l.p50_ms),
    ("p90", |l| l.p90_ms),
    ("p95", |l| l.p95_ms),
    ("p99", |l| l.p99_ms),
    ("p99.9", |l| l.p999_ms),
    ("max", |l| l.max_ms),
];

fn percentiles(out: &mut String, analysis: &Analysis, width: usize) -> std::fmt::Result {
    const HEAD: &str = "latency (medians over runs)";
    let width = width.max(HEAD.len().saturating_sub(2));
    let mut head = format!("\n{HEAD:<w$}", w = width + 2);
    for (name, _) in PERCENTILES {
        write!(head, "  {name:>9}")?;
    }
    writeln!(out, "{head}  {:>9}  {:>7}", "req/s", "errors")?;
    // One unit per percentile column, from its medians.
    let columns = PERCENTILES.map(|(_, pick)| {
        let medians = analysis.service.iter().filter_map(|s| s.latency.as_ref());
        allocscope_core::units::ColumnUnit::for_values(
            Unit::Milliseconds,
            medians.map(|l| pick(l).median),
        )
    });
    for (config, s) in analysis.experiment.configs.iter().zip(&analysis.service) {
        let Some(l) = &s.latency else {
            writeln!(out, "  {:<width$}  no successful runs", config.config.name)?;
            continue;
        };
        let mut line = format!("  {:<width$}", config.config.name);
        for ((_, pick), column) in PERCENTILES.iter().zip(&columns) {
            write!(line, "  {:>9}", column.show(pick(l).median))?;
        }
        writeln!(
            out,
            "{line}  {:>9.0}  {:>7}",
            l.throughput_rps.median,
            errors(s),
        )?;
    }
    Ok(())
}

/// Errors over the ok runs' requests, e.g. `0` or `12/30000`.
fn errors(s: &ServiceSummary) -> String {
    if s.errors == 0 {
        "0".to_string()
    } else {
        format!("{}/{}", s.errors, s.requests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocscope_analyze::analyze;
    use allocscope_analyze::service::RSS_END_OF_LOAD;
    use allocscope_analyze::types::MetricSummary;
    use allocscope_core::fixture;

    fn at(median: f64) -> Estimate {
        Estimate {
            median,
            ci_low: f64::NAN,
            ci_high: f64::NAN,
        }
    }

    /// A service summary with `p50` ms and a max of 50x that.
    fn summary(p50: f64) -> ServiceSummary {
        let latency = LatencySummary {
            p50_ms: at(p50),
            p90_ms: at(2.0 * p50),
            p95_ms: at(3.0 * p50),
            p99_ms: at(5.0 * p50),
            p999_ms: at(10.0 * p50),
            max_ms: at(50.0 * p50),
            requests: at(1000.0),
            errors: at(0.0),
            throughput_rps: at(500.0),
        };
        ServiceSummary {
            latency: Some(latency),
            rss_end_settle_bytes: None,
            pss_end_settle_bytes: None,
            errors: 0,
            requests: 1000,
        }
    }

    #[test]
    fn each_latency_column_and_the_memory_have_one_unit() -> anyhow::Result<()> {
        let mut analysis = analyze(fixture::experiment(), "glibc")?;
        analysis.service = [0.35, 2.1, 0.9].map(summary).to_vec();
        // The end of the load's RSS in MiB, the only service row measured.
        let rows = allocscope_analyze::metric_table::service_rows();
        for (s, rss) in analysis.summaries.iter_mut().zip([1020.0, 64.0, 700.0]) {
            s.metrics.extend(rows.iter().map(|row| {
                let estimate = (row.id == RSS_END_OF_LOAD).then(|| at(rss * 1048576.0));
                let ratio = None;
                (row.id.clone(), MetricSummary { estimate, ratio })
            }));
        }
        analysis.metrics.extend(rows);
        analysis.end_of_load = RSS_END_OF_LOAD.to_string();
        let mut out = String::new();
        service_blocks(&mut out, &analysis, 12)?;
        let line = |name: &str| {
            out.lines()
                .filter(|l| l.trim_start().starts_with(name))
                .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
                .collect::<Vec<_>>()
        };
        // RSS in GiB (1020 MiB would take four digits); p50 in ms although
        // two of three are below 1 ms; max (105 ms at most) in ms.
        let glibc = line("glibc");
        assert!(glibc[0].starts_with("0.996 GiB baseline"), "{out}");
        assert_eq!(
            glibc[1], "0.350 ms 0.700 ms 1.05 ms 1.75 ms 3.50 ms 17.5 ms 500 0",
            "{out}"
        );
        let jemalloc = line("jemalloc");
        assert!(jemalloc[0].starts_with("0.062 GiB"), "{out}");
        assert_eq!(
            jemalloc[1], "2.10 ms 4.20 ms 6.30 ms 10.5 ms 21.0 ms 105 ms 500 0",
            "{out}"
        );
        Ok(())
    }
}
