//! Durations and sizes as users type them (`100ms`, `1.5s`, `2h`, `512M`),
//! parsed once into typed values, and their human-readable forms.

use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum UnitError {
    #[error("'{0}' is not a duration; use a number with a unit: ms, s, m, h or d (e.g. 100ms, 2s, 1.5h)")]
    BadDuration(String),
    #[error(
        "'{0}' is not a size; use a number with an optional unit: K, M, G or T (e.g. 512M, 2G)"
    )]
    BadSize(String),
}

/// Splits `"1.5h"` into `(1.5, "h")`. The number must be finite and non-negative.
fn split_number(text: &str) -> Option<(f64, &str)> {
    let text = text.trim();
    let end = text
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map_or(text.len(), |(i, _)| i);
    let (number, unit) = text.split_at(end);
    if number.is_empty() || number.starts_with('.') && number.len() == 1 {
        return None;
    }
    let value: f64 = number.parse().ok()?;
    value.is_finite().then_some((value, unit.trim()))
}

/// Parses `10ms`, `2s`, `1.5m`, `3h`, `1d`. A bare number is seconds.
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    let bad = || UnitError::BadDuration(text.to_string());
    let (value, unit) = split_number(text).ok_or_else(bad)?;
    let seconds_per_unit = match unit {
        "ms" => 0.001,
        "" | "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        _ => return Err(bad()),
    };
    let seconds = value * seconds_per_unit;
    // Durations beyond a century are typos, not plans.
    if seconds > 100.0 * 365.0 * 86_400.0 {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Parses `4096`, `64K`, `512M`, `2G`, `1T` (powers of 1024; `KiB`, `MB` and
/// `MiB` spellings accepted) into bytes.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let bad = || UnitError::BadSize(text.to_string());
    let (value, unit) = split_number(text).ok_or_else(bad)?;
    let unit = unit.to_ascii_lowercase();
    let shift = match unit.trim_end_matches("ib").trim_end_matches('b') {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err(bad()),
    };
    let bytes = value * (1u64 << shift) as f64;
    if bytes > u64::MAX as f64 / 2.0 {
        return Err(bad());
    }
    Ok(bytes.round() as u64)
}

/// `1536` -> `1.5 KiB`; three significant figures.
pub fn format_bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes;
    let mut unit = 0;
    while value.abs() >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{} {}", three_figures(value), UNITS[unit])
    }
}

/// `0.01234` -> `12.3 ms`, `83.2` -> `83.2 s`, `4000` -> `1.11 h`.
pub fn format_seconds(seconds: f64) -> String {
    let abs = seconds.abs();
    if abs < 1.0 {
        format!("{} ms", three_figures(seconds * 1000.0))
    } else if abs < 600.0 {
        format!("{} s", three_figures(seconds))
    } else if abs < 36_000.0 {
        format!("{} min", three_figures(seconds / 60.0))
    } else {
        format!("{} h", three_figures(seconds / 3600.0))
    }
}

fn three_figures(value: f64) -> String {
    let abs = value.abs();
    if abs >= 100.0 {
        format!("{value:.0}")
    } else if abs >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_durations_with_units() {
        assert_eq!(parse_duration("100ms"), Ok(Duration::from_millis(100)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1.5m"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration("1d"), Ok(Duration::from_secs(86_400)));
    }

    #[test]
    fn rejects_malformed_durations() {
        for bad in [
            "", "5parsecs", "-1s", "ms", "1..2s", "1e3s", "s5", "nan", ".",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn parses_sizes_in_powers_of_1024() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(65_536));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("1.5g"), Ok(3 << 29));
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("-5M").is_err());
    }

    #[test]
    fn formats_for_humans() {
        assert_eq!(format_bytes(512.0), "512 B");
        assert_eq!(format_bytes(1536.0), "1.50 KiB");
        assert_eq!(format_bytes(45.25 * 1048576.0), "45.2 MiB");
        assert_eq!(format_seconds(0.01234), "12.3 ms");
        assert_eq!(format_seconds(83.2), "83.2 s");
        assert_eq!(format_seconds(7200.0), "120 min");
    }

    proptest! {
        #[test]
        fn duration_parser_never_panics(text in ".{0,20}") {
            let _ = parse_duration(&text);
            let _ = parse_size(&text);
        }

        #[test]
        fn millisecond_durations_round_trip(ms in 0u64..10_000_000) {
            prop_assert_eq!(parse_duration(&format!("{ms}ms")), Ok(Duration::from_millis(ms)));
        }
    }
}
