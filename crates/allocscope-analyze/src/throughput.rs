//! Throughput-like figures a program prints (`218964 ops/sec`, `tps =
//! 1234.56`, `123456.78 requests per second`, `24.2 MB/s`, sysbench's
//! `(617.12 per sec.)`) and latency lines (wrk's `Latency  1.60ms` and
//! `99%  8.23ms`, sysbench's `95th percentile:  4.91`): found in a run's
//! output text, named, and given the `--metric` pattern that reads each one
//! back. A fixed-duration benchmark (or a server's fixed-duration load)
//! holds its duration constant, so these figures are what tells its
//! configurations apart (`suggest`).

use regex::Regex;
use std::sync::LazyLock;

/// The units read as throughput, longest first so `ops/sec` wins over
/// `ops/s`. Matched case-insensitively after a number (or before `=`/`:`
/// and a number, as pgbench's `tps = 1234.56`).
const UNITS: [&str; 14] = [
    "requests per second",
    "per sec",
    "requests/sec",
    "ops/sec",
    "req/sec",
    "ops/s",
    "req/s",
    "rps",
    "tps",
    "qps",
    "MB/s",
    "GB/s",
    "KB/s",
    "MiB/s",
];

/// A number as a figure is printed: `218964`, `1,234`, `1234.56`.
const NUMBER: &str = r"[0-9][0-9,]*(?:\.[0-9]+)?";

static AFTER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let units: Vec<String> = UNITS.iter().map(|u| regex::escape(u)).collect();
    Regex::new(&format!(
        r"(?i)(?:^|[^\w.])({NUMBER})\s*({})(?:$|[^\w/])",
        units.join("|")
    ))
    .ok()
});

static BEFORE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let units: Vec<String> = UNITS.iter().map(|u| regex::escape(u)).collect();
    Regex::new(&format!(
        r"(?i)(?:^|[^\w])({})\s*[=:]\s*({NUMBER})",
        units.join("|")
    ))
    .ok()
});

/// Latency lines, read in milliseconds (a time's unit, as wrk prints it, is
/// read by `user_metric`): (what finds one, its `--metric` name, the pattern
/// that reads it back), `{k}` the line's key (the percentile). wrk's average
/// (`Latency  1.60ms  2.11ms ...`), its `--latency` percentiles
/// (`99%  8.23ms`), sysbench's `95th percentile:  4.91` (under `Latency
/// (ms):`).
const LATENCY: [(&str, &str, &str); 3] = [
    (
        r"^\s*Latency\s+()([0-9.]+(?:us|ms|s))\s",
        "latency_avg_ms",
        r"^\s*Latency\s+([0-9.]+(?:us|ms|s))\s",
    ),
    (
        r"^\s*([0-9]+(?:\.[0-9]+)?)%\s+([0-9.]+(?:us|ms|s))\s*$",
        "latency_p{k}_ms",
        r"^\s*{k}%\s+([0-9.]+(?:us|ms|s))\s*$",
    ),
    (
        r"^\s*([0-9]+)th percentile:\s*([0-9.]+)\s*$",
        "latency_p{k}_ms",
        r"^\s*{k}th percentile:\s*([0-9.]+)\s*$",
    ),
];

static LATENCY_LINES: LazyLock<Vec<Option<Regex>>> =
    LazyLock::new(|| LATENCY.iter().map(|(r, _, _)| Regex::new(r).ok()).collect());

/// One figure of one run's output.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// A `--metric` name: the line's label, if any, and the unit
    /// (`fillrandom_ops_sec`, `tps`, `throughput_summary_requests_per_second`),
    /// or the latency's (`latency_p99_ms`).
    pub name: String,
    /// A `--metric` regex whose first group reads it back.
    pub pattern: String,
    pub value: f64,
    /// A throughput; a latency is lower-is-better.
    pub higher_is_better: bool,
}

/// Every throughput figure in `text`, the last line's value for each name.
pub fn find(text: &str) -> Vec<Figure> {
    let mut out: Vec<Figure> = Vec::new();
    for line in text.lines() {
        for figure in in_line(line).into_iter().chain(latency_in(line)) {
            match out.iter_mut().find(|f| f.name == figure.name) {
                Some(known) => *known = figure,
                None => out.push(figure),
            }
        }
    }
    out
}

fn in_line(line: &str) -> Vec<Figure> {
    let label = label_of(line);
    let prefix = label
        .as_deref()
        .map(|l| format!("{}.*?", regex::escape(l)))
        .unwrap_or_default();
    let named = |unit: &str| {
        let unit = slug(unit);
        match &label {
            Some(l) if slug(l) != unit => format!("{}_{unit}", slug(l)),
            _ => unit,
        }
    };
    let figure = |number: Option<regex::Match>, name: String, pattern: String| {
        Some(Figure {
            name,
            pattern,
            value: number_of(number?.as_str())?,
            higher_is_better: true,
        })
    };
    let mut out = Vec::new();
    // `218964 ops/sec`: the number, then the unit.
    for c in AFTER.iter().flat_map(|r| r.captures_iter(line)) {
        let Some(unit) = c.get(2).map(|u| u.as_str()) else {
            continue;
        };
        let pattern = format!(r"{prefix}({NUMBER})\s*{}", regex::escape(unit));
        out.extend(figure(c.get(1), named(unit), pattern));
    }
    // `tps = 1234.56`: the unit, then the number.
    for c in BEFORE.iter().flat_map(|r| r.captures_iter(line)) {
        let Some(unit) = c.get(1).map(|u| u.as_str()) else {
            continue;
        };
        let pattern = format!(r"{}\s*[=:]\s*({NUMBER})", regex::escape(unit));
        out.extend(figure(c.get(2), slug(unit), pattern));
    }
    out
}

/// A latency line's figure (`LATENCY`), in milliseconds.
fn latency_in(line: &str) -> Option<Figure> {
    let (k, c) = (LATENCY_LINES.iter().enumerate())
        .find_map(|(k, r)| Some((k, r.as_ref()?.captures(line)?)))?;
    let (key, number) = (c.get(1)?.as_str(), c.get(2)?.as_str());
    let (_, name, pattern) = LATENCY[k];
    Some(Figure {
        name: name.replace("{k}", &slug(key)),
        pattern: pattern.replace("{k}", &regex::escape(key)),
        value: number_of(number)?,
        higher_is_better: false,
    })
}

/// The words before a line's first `:` (db_bench's `fillrandom   :`,
/// redis-benchmark's `throughput summary:`), when they are a short label
/// of letters.
fn label_of(line: &str) -> Option<String> {
    let (head, _) = line.split_once(':')?;
    let head = head.trim();
    let words = head.split_whitespace().count();
    // No digits: a counter (`round 3:`) would name each line apart.
    let plain = head
        .chars()
        .all(|c| c.is_ascii_alphabetic() || c == ' ' || c == '_' || c == '-');
    (plain && (1..=3).contains(&words)).then(|| head.to_string())
}

/// `MB/s` -> `mb_s`, `throughput summary` -> `throughput_summary`.
fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

/// A number as `--metric` reads it (`1,234`, `8.33ms` in milliseconds).
fn number_of(text: &str) -> Option<f64> {
    allocscope_core::user_metric::parse_number(text)
}

/// One figure across an experiment's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Suggestion {
    pub name: String,
    pub pattern: String,
    /// Each configuration's median, in configuration order.
    pub medians: Vec<f64>,
    /// (highest median - lowest) / lowest: how much configurations differ.
    pub spread: f64,
    /// The spread is beyond the largest within-configuration spread and
    /// above 1%.
    pub differs: bool,
    pub higher_is_better: bool,
}

impl Suggestion {
    /// The flags that judge the experiment by this figure.
    pub fn flags(&self) -> String {
        flags(&self.name, &self.pattern, self.higher_is_better)
    }
}

/// The flags that judge an experiment by figure `name` read by `pattern`.
pub fn flags(name: &str, pattern: &str, higher_is_better: bool) -> String {
    let better = match higher_is_better {
        true => format!(" --higher-is-better {name}"),
        false => String::new(),
    };
    format!("--metric '{name}={pattern}'{better} --perf-metric {name}")
}

/// The figures present in every run (`runs[config]` holds each of that
/// configuration's runs' figures), not zero throughout, the most
/// informative first: those that differ between configurations beyond the
/// runs' own noise, then the most-varying.
pub fn suggest(runs: &[Vec<Vec<Figure>>]) -> Vec<Suggestion> {
    let Some(first) = runs.iter().flatten().next() else {
        return Vec::new();
    };
    let mut out: Vec<Suggestion> = first
        .iter()
        .filter_map(|figure| across(runs, figure))
        .collect();
    out.sort_by(|a, b| (b.differs.cmp(&a.differs)).then(b.spread.total_cmp(&a.spread)));
    out
}

fn across(runs: &[Vec<Vec<Figure>>], figure: &Figure) -> Option<Suggestion> {
    let mut medians = Vec::new();
    let mut within: f64 = 0.0;
    for config in runs {
        let mut values: Vec<f64> = config
            .iter()
            .map(|run| run.iter().find(|f| f.name == figure.name).map(|f| f.value))
            .collect::<Option<Vec<f64>>>()?;
        values.sort_by(f64::total_cmp);
        let (lo, hi) = (*values.first()?, *values.last()?);
        if lo > 0.0 {
            within = within.max((hi - lo) / lo);
        }
        medians.push(values[values.len() / 2]);
    }
    let lo = medians.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = medians.iter().copied().fold(0.0f64, f64::max);
    if hi <= 0.0 {
        return None;
    }
    let spread = if lo > 0.0 { (hi - lo) / lo } else { 0.0 };
    Some(Suggestion {
        name: figure.name.clone(),
        pattern: figure.pattern.clone(),
        medians,
        spread,
        differs: spread > 0.01 && spread > within,
        higher_is_better: figure.higher_is_better,
    })
}

#[cfg(test)]
mod tests;
