//! Runs `wrk --latency` and reads its requests per second, mean latency and
//! latency distribution.

use allocscope_core::load::Percentiles;
use std::process::Command;
use std::time::Duration;

pub struct Wrk {
    pub rps: f64,
    /// wrk's `Latency Avg`.
    pub mean_ms: f64,
    pub latency: Percentiles,
}

pub fn wrk(
    url: &str,
    threads: u32,
    connections: u32,
    script: Option<&std::path::Path>,
    run_for: Duration,
) -> Result<Wrk, String> {
    let mut command = Command::new("wrk");
    command.args([
        format!("-t{threads}"),
        format!("-c{connections}"),
        format!("-d{}s", run_for.as_secs()),
        "--latency".to_string(),
    ]);
    if let Some(script) = script {
        command.arg("-s").arg(script);
    }
    let output = command
        .arg(url)
        .output()
        .map_err(|e| format!("running wrk: {e}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    parse_wrk(&text).ok_or_else(|| format!("could not read wrk's output:\n{text}"))
}

/// Reads `Requests/sec:` and the `Latency Distribution` block of
/// `wrk --latency`.
fn parse_wrk(text: &str) -> Option<Wrk> {
    let mut rps = None;
    let mut mean_ms = None;
    let mut at = std::collections::HashMap::new();
    for line in text.lines().map(str::trim) {
        if let Some(value) = line.strip_prefix("Requests/sec:") {
            rps = value.trim().parse::<f64>().ok();
        }
        // `Latency  159.83us  333.83us ...` (not `Latency Distribution`).
        if let Some(stats) = line.strip_prefix("Latency ") {
            mean_ms = mean_ms.or(stats.split_whitespace().next().and_then(wrk_ms));
        }
        let mut words = line.split_whitespace();
        if let (Some(q @ ("50%" | "75%" | "90%" | "99%")), Some(v), None) =
            (words.next(), words.next(), words.next())
        {
            at.insert(q, wrk_ms(v)?);
        }
    }
    let p = |q| at.get(q).copied();
    Some(Wrk {
        rps: rps?,
        mean_ms: mean_ms?,
        latency: Percentiles {
            p50_ms: p("50%")?,
            p90_ms: p("90%")?,
            p95_ms: f64::NAN,
            p99_ms: p("99%")?,
            p999_ms: f64::NAN,
            max_ms: f64::NAN,
        },
    })
}

/// `123.45us`, `1.20ms`, `2.00s`, `1.5m` to milliseconds.
fn wrk_ms(value: &str) -> Option<f64> {
    let split = value.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = value.split_at(split);
    let n: f64 = number.parse().ok()?;
    Some(match unit {
        "us" => n / 1000.0,
        "ms" => n,
        "s" => n * 1000.0,
        "m" => n * 60_000.0,
        _ => return None,
    })
}
