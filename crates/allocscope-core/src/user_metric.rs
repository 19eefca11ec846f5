//! The user's own metrics (`--metric 'NAME=REGEX'`): a figure the workload
//! prints, such as db_bench's `810000 ops/sec` or a latency line, read from
//! the run's stdout and stderr after it ends. The first capture group of the
//! last matching line is the value (a benchmark's summary usually comes last).
//! A pattern that never matches, or matches something that is not a number,
//! gives no value and a note naming the problem; the run itself is not failed.

use crate::usage_error::UsageError;
use regex::Regex;

/// One `--metric NAME=REGEX`, checked.
#[derive(Debug, Clone)]
pub struct UserMetric {
    pub name: String,
    pub pattern: Regex,
    /// `--higher-is-better NAME` (throughput, ops/s); lower is better otherwise.
    pub higher_is_better: bool,
}

/// What one run yielded for one user metric.
#[derive(Debug, Clone, PartialEq)]
pub enum Extracted {
    Value(f64),
    /// The pattern matched no line.
    NoMatch,
    /// The last match's first group was not a number (the text is kept).
    NotANumber(String),
}

/// Parses `NAME=REGEX`. NAME: letters, digits, `_`, `-`, `.`; REGEX must
/// compile and have a capture group. The error is one line naming the fix.
pub fn parse_spec(spec: &str) -> Result<(String, Regex), UsageError> {
    let Some((name, pattern)) = spec.split_once('=') else {
        return Err(UsageError::MetricNoEquals(spec.to_string()));
    };
    let name = name.trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(UsageError::MetricName(name.to_string()));
    }
    let regex = Regex::new(pattern).map_err(|e| UsageError::MetricRegex {
        name: name.to_string(),
        pattern: pattern.to_string(),
        reason: e
            .to_string()
            .lines()
            .last()
            .unwrap_or("")
            .trim()
            .to_string(),
    })?;
    if regex.captures_len() < 2 {
        return Err(UsageError::MetricNoGroup {
            name: name.to_string(),
            pattern: pattern.to_string(),
        });
    }
    Ok((name.to_string(), regex))
}

/// The first capture group of the last line of `text` that matches.
pub fn extract(pattern: &Regex, text: &str) -> Extracted {
    let Some(caps) = text.lines().rev().find_map(|line| pattern.captures(line)) else {
        return Extracted::NoMatch;
    };
    let group = caps.get(1).map(|m| m.as_str()).unwrap_or("");
    match parse_number(group) {
        Some(v) => Extracted::Value(v),
        None => Extracted::NotANumber(group.to_string()),
    }
}

/// A finite decimal number; thousands separators (`1,234,567`) are accepted,
/// and a time unit (`ns`, `us`, `µs`, `ms`, `s`) makes it milliseconds.
pub fn parse_number(text: &str) -> Option<f64> {
    let cleaned: String = text.trim().chars().filter(|&c| c != ',').collect();
    let (number, per_ms) = [
        ("ns", 1e-6),
        ("us", 1e-3),
        ("µs", 1e-3),
        ("ms", 1.0),
        ("s", 1e3),
    ]
    .iter()
    .find_map(|&(unit, ms)| Some((cleaned.strip_suffix(unit)?.trim_end(), ms)))
    .unwrap_or((&cleaned, 1.0));
    number
        .parse::<f64>()
        .ok()
        .map(|v| v * per_ms)
        .filter(|v| v.is_finite())
}

/// Extracts from the first of `texts` that has a match.
pub fn extract_from(pattern: &Regex, texts: &[String]) -> Extracted {
    texts
        .iter()
        .map(|text| extract(pattern, text))
        .find(|found| *found != Extracted::NoMatch)
        .unwrap_or(Extracted::NoMatch)
}

/// The output a run's figures are read from, in order: a server's `--load`
/// command's stdout and stderr (what measured the server), then the run's
/// own stdout and stderr. A file never written reads as empty.
pub fn outputs(record: &crate::model::RunRecord) -> Vec<String> {
    let load = record.service.as_ref().map(|s| {
        let (out, err) = (&s.load_stdout_path, &s.load_stderr_path);
        [out.clone(), err.clone()]
    });
    let own = [
        Some(record.stdout_path.clone()),
        Some(record.stderr_path.clone()),
    ];
    (load.into_iter().flatten().chain(own).flatten())
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect()
}

/// The environment entry that keeps an experiment's `--metric` specs
/// (`ExperimentInfo::user_metrics`), so `report` knows them: a JSON list of
/// `{name, pattern, higher_is_better}`.
pub const ENVIRONMENT_KEY: &str = "user_metrics";

impl UserMetric {
    /// What the store keeps of it.
    pub fn info(&self) -> crate::model::UserMetricInfo {
        crate::model::UserMetricInfo {
            name: self.name.clone(),
            pattern: self.pattern.as_str().to_string(),
            higher_is_better: self.higher_is_better,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_the_first_group_of_the_last_matching_line() {
        let (name, re) = parse_spec("ops=([0-9.,]+) ops/sec").expect("valid");
        assert_eq!(name, "ops");
        let text = "warm 10 ops/sec\nreadwhilewriting : 1.2 micros/op 810,000 ops/sec\n";
        assert_eq!(extract(&re, text), Extracted::Value(810000.0));
    }

    #[test]
    fn no_match_and_not_a_number_are_told_apart() {
        let (_, re) = parse_spec(r"lat=latency: (\S+)").expect("valid");
        assert_eq!(extract(&re, "nothing here"), Extracted::NoMatch);
        assert_eq!(
            extract(&re, "latency: fast"),
            Extracted::NotANumber("fast".into())
        );
        let texts = ["no".to_string(), "latency: 2.5e-3".to_string()];
        assert_eq!(extract_from(&re, &texts), Extracted::Value(0.0025));
    }

    /// wrk prints `378.00us` in one run and `2.43ms` in the next.
    #[test]
    fn a_time_with_its_unit_is_read_in_milliseconds() {
        let (_, re) = parse_spec(r"p50=50%\s+(\S+)").expect("valid");
        for (line, ms) in [
            ("50%  378.00us", 0.378),
            ("50%  2.43ms", 2.43),
            ("50%  1.5s", 1500.0),
            ("50%  7", 7.0),
        ] {
            let Extracted::Value(v) = extract(&re, line) else {
                panic!("{line}: no value");
            };
            assert!((v - ms).abs() < 1e-9, "{line}: {v}");
        }
    }

    #[test]
    fn specs_round_trip_through_the_environment() {
        let (name, pattern) = parse_spec("ops=ops: ([0-9]+)").expect("valid");
        let info = UserMetric {
            name,
            pattern,
            higher_is_better: true,
        }
        .info();
        let value = serde_json::to_string(&[&info]).expect("encodes");
        assert_eq!(
            value,
            r#"[{"name":"ops","pattern":"ops: ([0-9]+)","higher_is_better":true}]"#
        );
        let back: Vec<crate::model::UserMetricInfo> =
            serde_json::from_str(&value).expect("decodes");
        assert_eq!(back, vec![info]);
    }

    #[test]
    fn bad_specs_name_the_fix() {
        for (spec, words) in [
            ("ops", "no '='"),
            ("=(\\d+)", "must be letters"),
            ("a b=(\\d+)", "must be letters"),
            ("ops=\\d+", "no capture group"),
            ("ops=([0-9", "not a valid regex"),
        ] {
            let err = parse_spec(spec).expect_err(spec).to_string();
            assert!(err.contains(words), "{spec}: {err}");
            assert!(!err.contains('\n'), "{spec}: one line: {err}");
        }
    }
}
