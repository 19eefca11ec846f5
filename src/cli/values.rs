//! The value parsers of the flags that hold a number, a duration, a size or
//! a percentage: the text turned into its type, or the `UsageError` naming
//! the flag and the fix (`main` prints it as it prints any other). Clap
//! runs them on each given value and on each default.

use allocscope_cluster::error::ClusterError;
use allocscope_core::service_error::ServiceError;
use allocscope_core::units::{parse_duration, parse_size};
use allocscope_core::usage_error::{UsageError, MAX_CPUS};
use allocscope_record::error::RecordError;
use std::time::Duration;

pub const MIN_INTERVAL: Duration = Duration::from_millis(10);
pub const MAX_INTERVAL: Duration = Duration::from_secs(3600);

/// The most connections `--concurrency` opens.
pub const MAX_CONCURRENCY: u32 = 4096;

/// `--runs N|auto`: a fixed count of rounds, or until the judge says stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    Auto,
    Fixed(u32),
}

impl std::fmt::Display for Runs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Runs::Auto => f.write_str("auto"),
            Runs::Fixed(n) => write!(f, "{n}"),
        }
    }
}

/// `cell --configs I,J,...`: distinct indices, ascending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indices(pub Vec<usize>);

pub fn parse_count(flag: &'static str, value: &str, min: u32) -> Result<u32, UsageError> {
    match value.trim().parse::<u32>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(UsageError::Count {
            flag,
            value: value.to_string(),
            min,
        }),
    }
}

/// `--runs`: auto (any case) or a whole number 1 or more.
pub fn parse_runs(text: &str) -> Result<Runs, UsageError> {
    if text.trim().eq_ignore_ascii_case("auto") {
        return Ok(Runs::Auto);
    }
    parse_count("--runs", text, 1)
        .map(Runs::Fixed)
        .map_err(|_| UsageError::RunsWord(text.to_string()))
}

pub fn parse_interval(text: &str) -> Result<Duration, UsageError> {
    let interval = parse_duration(text)?;
    if !(MIN_INTERVAL..=MAX_INTERVAL).contains(&interval) {
        return Err(UsageError::IntervalRange(text.to_string()));
    }
    Ok(interval)
}

/// At least 1 MiB: below that nothing starts.
pub fn parse_memory_limit(text: &str) -> Result<u64, UsageError> {
    let bytes = parse_size(text)?;
    if bytes < 1 << 20 {
        return Err(UsageError::MemoryLimitRange(text.to_string()));
    }
    Ok(bytes)
}

/// `--cpus N`: from 1 to `MAX_CPUS`.
pub fn parse_cpus(text: &str) -> Result<u32, UsageError> {
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_CPUS).contains(&n) => Ok(n),
        _ => Err(UsageError::Cpus(text.to_string())),
    }
}

pub fn parse_timeout(text: &str) -> Result<Duration, UsageError> {
    let timeout = parse_duration(text)?;
    if timeout < MIN_INTERVAL {
        return Err(UsageError::TimeoutRange(text.to_string()));
    }
    Ok(timeout)
}

/// Any duration, 0 included (`--settle`).
pub fn parse_any_duration(text: &str) -> Result<Duration, UsageError> {
    Ok(parse_duration(text)?)
}

/// `record --duration`: at least 10ms.
pub fn parse_record_duration(text: &str) -> Result<Duration, UsageError> {
    parse_timeout(text).map_err(|_| RecordError::Duration(text.to_string()).into())
}

/// A duration longer than 0 (`--request-timeout`, `--ready-timeout`, `--grace`).
pub fn parse_positive_duration(flag: &str, text: &str) -> Result<Duration, UsageError> {
    let value = parse_duration(text)?;
    if value.is_zero() {
        return Err(ServiceError::ZeroDuration {
            flag: flag.to_string(),
            text: text.to_string(),
        }
        .into());
    }
    Ok(value)
}

/// `--concurrency`: from 1 to `MAX_CONCURRENCY` connections.
pub fn parse_concurrency(text: &str) -> Result<u32, UsageError> {
    let concurrency = parse_count("--concurrency", text, 1)?;
    if concurrency > MAX_CONCURRENCY {
        return Err(ServiceError::Concurrency(concurrency).into());
    }
    Ok(concurrency)
}

/// `500`, `500/s`: requests per second, more than 0.
pub fn parse_rate(text: &str) -> Result<f64, UsageError> {
    match text.trim().trim_end_matches("/s").parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 && rate <= 10_000_000.0 => Ok(rate),
        _ => Err(ServiceError::Rate(text.to_string()).into()),
    }
}

/// `--speed`: `2`, `2x`, above 0.
pub fn parse_speed(text: &str) -> Result<f64, UsageError> {
    match text.trim().trim_end_matches('x').parse::<f64>() {
        Ok(speed) if speed.is_finite() && speed > 0.0 => Ok(speed),
        _ => Err(ServiceError::Speed(text.to_string()).into()),
    }
}

/// A percentage, `%` optional, within `range`.
fn percent(text: &str, range: impl std::ops::RangeBounds<f64>) -> Option<f64> {
    let pct = text
        .trim()
        .trim_end_matches('%')
        .trim()
        .parse::<f64>()
        .ok()?;
    range.contains(&pct).then_some(pct)
}

/// `--max-slowdown`: a percentage from 0 to 1000, `%` optional.
pub fn parse_max_slowdown(text: &str) -> Result<f64, UsageError> {
    percent(text, 0.0..=1000.0).ok_or_else(|| UsageError::MaxSlowdown(text.trim().to_string()))
}

/// `--min-saving`: a percentage from 0 to 99, `%` optional.
pub fn parse_min_saving(text: &str) -> Result<f64, UsageError> {
    percent(text, 0.0..100.0).ok_or_else(|| UsageError::MinSaving(text.trim().to_string()))
}

/// `--limit-headroom`: a percentage from 0 to 1000, `%` optional.
pub fn parse_limit_headroom(text: &str) -> Result<f64, UsageError> {
    percent(text, 0.0..=1000.0).ok_or_else(|| UsageError::LimitHeadroom(text.trim().to_string()))
}

/// `record --pid`: a positive process id (whether it exists is `options`'s
/// check).
pub fn parse_pid(text: &str) -> Result<i32, UsageError> {
    match text.trim().parse::<i32>() {
        Ok(pid) if pid > 0 => Ok(pid),
        _ => Err(RecordError::NotAPid(text.to_string()).into()),
    }
}

/// `0,3,5`: distinct indices, at least one, kept ascending (the round runs
/// them in the plan's order, as every round interleaves).
pub fn parse_indices(text: &str) -> Result<Indices, UsageError> {
    let mut indices = text
        .split(',')
        .map(|word| word.trim().parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| UsageError::from(ClusterError::NotIndices(text.to_string())))?;
    indices.sort_unstable();
    let count = indices.len();
    indices.dedup();
    if indices.len() != count {
        return Err(ClusterError::IndexTwice(text.to_string()).into());
    }
    Ok(Indices(indices))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_must_be_between_10ms_and_1h() {
        assert_eq!(parse_interval("10ms").ok(), Some(Duration::from_millis(10)));
        assert_eq!(parse_interval("1h").ok(), Some(Duration::from_secs(3600)));
        for bad in ["0", "9ms", "2h", "fast"] {
            assert!(parse_interval(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cpus_take_1_to_1024_and_errors_name_the_fix() {
        assert_eq!(parse_cpus("16").ok(), Some(16));
        assert_eq!(parse_cpus("1024").ok(), Some(1024));
        for bad in ["0", "-1", "abc", "1.5", "1025", ""] {
            let message = parse_cpus(bad).map(|_| ()).unwrap_err().to_string();
            assert!(message.contains(&format!("--cpus '{bad}'")), "{message}");
            assert!(message.contains("e.g. --cpus 16"), "{message}");
            assert_eq!(message.lines().count(), 1, "{message}");
        }
    }

    #[test]
    fn counts_reject_negative_and_garbage() {
        assert_eq!(parse_count("--runs", "3", 1).ok(), Some(3));
        assert!(parse_count("--runs", "-1", 1).is_err());
        assert!(parse_count("--runs", "0", 1).is_err());
        assert_eq!(parse_count("--warmup", "0", 0).ok(), Some(0));
        let message = parse_count("--runs", "x", 1)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(message.contains("--runs 'x'"), "{message}");
    }

    #[test]
    fn runs_are_auto_or_a_count() {
        assert_eq!(parse_runs(" AUTO ").ok(), Some(Runs::Auto));
        assert_eq!(parse_runs("4").ok(), Some(Runs::Fixed(4)));
        assert_eq!(Runs::Fixed(4).to_string(), "4");
        let message = parse_runs("0").map(|_| ()).unwrap_err().to_string();
        assert!(message.contains("--runs '0'"), "{message}");
    }

    #[test]
    fn indices_are_distinct_and_ascending() {
        assert_eq!(parse_indices("5, 0,3").ok(), Some(Indices(vec![0, 3, 5])));
        assert!(parse_indices("1,1").is_err());
        assert!(parse_indices("a").is_err());
    }
}
