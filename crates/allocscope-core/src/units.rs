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

/// What a figure measures, for formatting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Bytes,
    Seconds,
    Milliseconds,
    Ratio,
    Count,
    /// A plain number of the workload's own (a `--metric`): each figure to
    /// 3 significant digits, without a unit.
    Number,
}

/// Binary size units and their bytes.
const SIZES: [(&str, f64); 5] = [
    ("B", 1.0),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
    ("TiB", 1099511627776.0),
];

/// Time units, each with its seconds and the largest column maximum (in
/// seconds) it prints: below 999.5 of it, so no figure rounds to 4 digits,
/// and minutes from 10 minutes, hours from 10 hours.
const TIMES: [(&str, f64, f64); 5] = [
    ("µs", 1e-6, 999.5e-6),
    ("ms", 1e-3, 0.9995),
    ("s", 1.0, 600.0),
    ("min", 60.0, 36_000.0),
    ("h", 3600.0, f64::INFINITY),
];

/// The unit every figure of one report column prints in, chosen from the
/// column's largest absolute finite value (intervals' bounds included): the
/// largest stays under 1000 in it, so each figure has three significant
/// digits and at most four digit characters (`1.18 GiB`, `0.984 GiB`,
/// `512 MiB`, `12.3 ms`, `0.450 s`). Sizes take B, KiB, MiB, GiB or TiB
/// (byte counts as integers); times µs, ms, s (below 10 min), min (below
/// 10 h) or h; ratios two decimals, counts integers and plain numbers (a
/// `--metric`) three significant digits each, without a unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColumnUnit {
    unit: Unit,
    /// The unit's name (`MiB`, `ms`), empty for ratios and counts.
    name: &'static str,
    /// How many of the column's own units (bytes, s, ms) one of it holds.
    scale: f64,
}

impl ColumnUnit {
    /// The unit for a column of `values` measured in `unit`; NaN and
    /// infinities are ignored, and a column without a nonzero value keeps
    /// the measure's own unit (B, s, ms).
    pub fn for_values(unit: Unit, values: impl IntoIterator<Item = f64>) -> ColumnUnit {
        let max = values
            .into_iter()
            .filter(|v| v.is_finite())
            .fold(0.0_f64, |m, v| m.max(v.abs()));
        let (name, scale) = match unit {
            Unit::Ratio | Unit::Count | Unit::Number => ("", 1.0),
            Unit::Bytes => SIZES
                .iter()
                .copied()
                .find(|&(_, bytes)| max / bytes < 999.5)
                .unwrap_or(SIZES[SIZES.len() - 1]),
            Unit::Seconds | Unit::Milliseconds => {
                let per_second = if unit == Unit::Seconds { 1.0 } else { 1e3 };
                let (name, seconds, _) = match TIMES.iter().find(|t| max / per_second < t.2) {
                    _ if max == 0.0 && unit == Unit::Seconds => TIMES[2],
                    _ if max == 0.0 => TIMES[1],
                    Some(&t) => t,
                    None => TIMES[TIMES.len() - 1],
                };
                (name, seconds * per_second)
            }
        };
        ColumnUnit { unit, name, scale }
    }

    /// The unit of a column of one figure.
    pub fn of(unit: Unit, value: f64) -> ColumnUnit {
        ColumnUnit::for_values(unit, [value])
    }

    /// `value` in this unit without the unit's name, e.g. `1.18`; `-` when
    /// it is not finite.
    pub fn number(&self, value: f64) -> String {
        if !value.is_finite() {
            return "-".to_string();
        }
        if self.unit == Unit::Number {
            return significant(value);
        }
        self.fixed(value, self.decimals(value))
    }

    /// `value` in this unit with the decimals `reference` gets: the terms
    /// of a sum as precise as the sum, `434 = 197 + 210 + 27`, not `27.0`.
    pub fn number_like(&self, value: f64, reference: f64) -> String {
        if !value.is_finite() || self.unit == Unit::Number {
            return self.number(value);
        }
        self.fixed(value, self.decimals(reference))
    }

    /// Three significant digits of `value` in this unit (fixed for ratios,
    /// counts and bytes).
    fn decimals(&self, value: f64) -> usize {
        let a = (value / self.scale).abs();
        match self.unit {
            // Three significant digits from 10x up: an interval of a few
            // noisy rounds can reach [0.00, 294947.91], which is no
            // narrower for its decimals.
            Unit::Ratio if a >= 99.95 => 0,
            Unit::Ratio if a >= 9.995 => 1,
            Unit::Ratio => 2,
            Unit::Count => 0,
            Unit::Bytes if self.name == "B" => 0,
            _ if a >= 99.95 => 0,
            _ if a >= 9.995 => 1,
            _ if a >= 0.9995 => 2,
            _ => 3,
        }
    }

    fn fixed(&self, value: f64, decimals: usize) -> String {
        let x = value / self.scale;
        let text = format!("{x:.decimals$}");
        // -0.000 is 0.000: rounding leaves no sign to show.
        match text.strip_prefix('-') {
            Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_string(),
            _ => text,
        }
    }

    /// The unit's name (`MiB`, `ms`), empty for ratios and counts.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// `value` with the unit's name, e.g. `1.18 GiB`; `-` when it is not finite.
    pub fn show(&self, value: f64) -> String {
        if !value.is_finite() {
            "-".to_string()
        } else if self.name.is_empty() {
            self.number(value)
        } else {
            format!("{} {}", self.number(value), self.name)
        }
    }

    /// An interval's bounds in this unit, without its name: `[1.15, 1.24]`;
    /// `None` when either is not finite (too few runs for an interval).
    pub fn bounds(&self, low: f64, high: f64) -> Option<String> {
        (low.is_finite() && high.is_finite())
            .then(|| format!("[{}, {}]", self.number(low), self.number(high)))
    }
}

/// A plain number to 3 significant digits: `812000`, `12.3`, `0.00456`;
/// beyond 1e15 or below 1e-4, `1.23e-5`.
fn significant(value: f64) -> String {
    if value == 0.0 {
        return "0".to_string();
    }
    let magnitude = value.abs().log10().floor();
    if !(-4.0..15.0).contains(&magnitude) {
        return format!("{value:.2e}");
    }
    // Digits after the point for 3 significant ones; none from 100 up,
    // where the value is rounded to its 3 leading digits.
    let decimals = (2.0 - magnitude).max(0.0) as usize;
    if decimals > 0 {
        return format!("{value:.decimals$}");
    }
    let scale = 10f64.powi(magnitude as i32 - 2);
    format!("{:.0}", (value / scale).round() * scale)
}

/// One size on its own, e.g. `1.50 KiB`, `512 B`.
pub fn format_bytes(bytes: f64) -> String {
    ColumnUnit::of(Unit::Bytes, bytes).show(bytes)
}

/// One duration on its own: `0.01234` -> `12.3 ms`, `83.2` -> `83.2 s`,
/// `7200` -> `120 min`.
pub fn format_seconds(seconds: f64) -> String {
    ColumnUnit::of(Unit::Seconds, seconds).show(seconds)
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
        assert_eq!(format_seconds(0.000_25), "250 µs");
        assert_eq!(format_seconds(36_000.0), "10.0 h");
    }

    /// Each of `values` shown in the unit of their column.
    fn column(unit: Unit, values: &[f64]) -> Vec<String> {
        let column = ColumnUnit::for_values(unit, values.iter().copied());
        values.iter().map(|&v| column.show(v)).collect()
    }

    const MIB: f64 = 1048576.0;
    const GIB: f64 = 1073741824.0;

    #[test]
    fn every_figure_has_three_significant_digits() {
        assert_eq!(
            column(Unit::Bytes, &[1.18 * GIB, 1.24 * GIB]),
            ["1.18 GiB", "1.24 GiB"]
        );
        assert_eq!(
            column(Unit::Seconds, &[0.45, 0.0123, 0.9]),
            ["450 ms", "12.3 ms", "900 ms"]
        );
        assert_eq!(
            column(Unit::Seconds, &[1.5, 0.45, 12.34, 123.4]),
            ["1.50 s", "0.450 s", "12.3 s", "123 s"]
        );
        // Rounding up to the next digit takes one decimal fewer: never 10.00.
        assert_eq!(
            column(Unit::Seconds, &[9.996, 99.96, 0.99996]),
            ["10.0 s", "100 s", "1.00 s"]
        );
    }

    #[test]
    fn the_largest_value_chooses_the_unit_of_the_column() {
        // The mixed cell of the old tables, `1.0 GiB [1001.2 MiB, 1.0 GiB]`.
        assert_eq!(
            column(Unit::Bytes, &[1.0 * GIB, 1001.2 * MIB, 1.02 * GIB]),
            ["1.00 GiB", "0.978 GiB", "1.02 GiB"]
        );
        // 1000 MiB would take four digits: GiB from 999.5 MiB on.
        assert_eq!(
            column(Unit::Bytes, &[999.4 * MIB, 512.0 * MIB]),
            ["999 MiB", "512 MiB"]
        );
        assert_eq!(
            column(Unit::Bytes, &[999.6 * MIB, 512.0 * MIB]),
            ["0.976 GiB", "0.500 GiB"]
        );
        // A figure far below the largest keeps three decimals, no more.
        assert_eq!(
            column(Unit::Bytes, &[2.0 * GIB, 5.0 * MIB]),
            ["2.00 GiB", "0.005 GiB"]
        );
        // Byte counts under 1 KiB are integers; 1000 B is 0.977 KiB.
        assert_eq!(column(Unit::Bytes, &[512.0, 64.4]), ["512 B", "64 B"]);
        assert_eq!(
            column(Unit::Bytes, &[1000.0, 512.0]),
            ["0.977 KiB", "0.500 KiB"]
        );
        // Times: ms below a second, s below 10 min, min below 10 h, then h.
        assert_eq!(column(Unit::Seconds, &[599.0, 1.0]), ["599 s", "1.00 s"]);
        assert_eq!(
            column(Unit::Seconds, &[600.0, 30.0]),
            ["10.0 min", "0.500 min"]
        );
        assert_eq!(column(Unit::Seconds, &[40_000.0]), ["11.1 h"]);
        assert_eq!(
            column(Unit::Seconds, &[0.9994, 0.0005]),
            ["999 ms", "0.500 ms"]
        );
        // A millisecond column: µs below 1 ms, s from 999.5 ms on.
        assert_eq!(
            column(Unit::Milliseconds, &[0.352, 0.0415]),
            ["352 µs", "41.5 µs"]
        );
        assert_eq!(
            column(Unit::Milliseconds, &[3.21, 0.352, 123.4]),
            ["3.21 ms", "0.352 ms", "123 ms"]
        );
        assert_eq!(
            column(Unit::Milliseconds, &[1250.0, 80.0]),
            ["1.25 s", "0.080 s"]
        );
    }

    #[test]
    fn absent_values_print_a_dash_and_do_not_choose_the_unit() {
        let values = [f64::NAN, 3.0 * MIB, f64::INFINITY, f64::NEG_INFINITY];
        assert_eq!(column(Unit::Bytes, &values), ["-", "3.00 MiB", "-", "-"]);
        // Nothing finite, or only zeros: the measure's own unit.
        assert_eq!(column(Unit::Bytes, &[f64::NAN]), ["-"]);
        assert_eq!(column(Unit::Bytes, &[0.0]), ["0 B"]);
        assert_eq!(column(Unit::Seconds, &[0.0]), ["0.000 s"]);
        assert_eq!(column(Unit::Milliseconds, &[0.0]), ["0.000 ms"]);
    }

    #[test]
    fn negative_values_choose_by_their_size_and_keep_their_sign() {
        assert_eq!(
            column(Unit::Bytes, &[-1.5 * GIB, 100.0 * MIB]),
            ["-1.50 GiB", "0.098 GiB"]
        );
        // A figure that rounds to zero shows no sign.
        assert_eq!(
            column(Unit::Bytes, &[-1.0, 2.0 * GIB]),
            ["0.000 GiB", "2.00 GiB"]
        );
    }

    #[test]
    fn bounds_drop_the_unit_they_share_with_the_value() {
        let column = ColumnUnit::for_values(Unit::Bytes, [1.15 * GIB, 1.24 * GIB]);
        assert_eq!(column.show(1.2 * GIB), "1.20 GiB");
        assert_eq!(
            column.bounds(1.15 * GIB, 1.24 * GIB).as_deref(),
            Some("[1.15, 1.24]")
        );
        assert_eq!(column.bounds(f64::NAN, 1.24 * GIB), None);
    }

    #[test]
    fn plain_numbers_keep_three_significant_digits() {
        assert_eq!(significant(812_345.0), "812000");
        assert_eq!(significant(1234.0), "1230");
        assert_eq!(significant(999.6), "1000");
        assert_eq!(significant(123.4), "123");
        assert_eq!(significant(12.345), "12.3");
        assert_eq!(significant(1.0), "1.00");
        assert_eq!(significant(0.004567), "0.00457");
        assert_eq!(significant(-2.5), "-2.50");
        assert_eq!(significant(0.0), "0");
        assert_eq!(significant(1.5e-7), "1.50e-7");
        assert_eq!(ColumnUnit::of(Unit::Number, f64::NAN).show(f64::NAN), "-");
    }

    #[test]
    fn ratios_keep_two_decimals_below_10x_then_three_digits_and_counts_none() {
        assert_eq!(column(Unit::Ratio, &[0.523, 12.0]), ["0.52", "12.0"]);
        assert_eq!(column(Unit::Ratio, &[9.99, 294947.91]), ["9.99", "294948"]);
        assert_eq!(column(Unit::Count, &[16.0, 2.4]), ["16", "2"]);
    }

    #[test]
    fn terms_of_a_sum_take_the_decimals_of_the_sum() {
        let mib = ColumnUnit::of(Unit::Bytes, 434.0 * 1048576.0);
        assert_eq!(mib.number_like(9.0 * 1048576.0, 434.0 * 1048576.0), "9");
        assert_eq!(mib.number_like(9.0 * 1048576.0, 43.4 * 1048576.0), "9.0");
        assert_eq!(mib.number(9.0 * 1048576.0), "9.00");
    }

    proptest! {
        #[test]
        fn duration_parser_never_panics(text in ".{0,20}") {
            let _ = parse_duration(&text);
            let _ = parse_size(&text);
        }

        #[test]
        fn a_column_never_prints_more_than_four_digits(
            values in proptest::collection::vec(-1e15f64..1e15, 1..6),
            bytes in any::<bool>(),
        ) {
            let unit = if bytes { Unit::Bytes } else { Unit::Seconds };
            let column = ColumnUnit::for_values(unit, values.iter().copied());
            for v in values {
                let text = column.number(v);
                let digits = text.chars().filter(char::is_ascii_digit).count();
                prop_assert!(digits <= 4 || column.show(v).ends_with(" h"), "{v} -> {text}");
            }
        }

        #[test]
        fn millisecond_durations_round_trip(ms in 0u64..10_000_000) {
            prop_assert_eq!(parse_duration(&format!("{ms}ms")), Ok(Duration::from_millis(ms)));
        }
    }
}
