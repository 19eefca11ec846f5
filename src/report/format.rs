//! Human-readable numbers for the text reports: sizes in KiB/MiB/GiB, times
//! in ms/s, ratios as `0.52x`, and CSV field quoting.

use crate::analyze::metric_table::Unit;

/// `1536` -> `1.5 KiB`; binary units, one decimal above bytes.
pub fn size(bytes: f64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if !bytes.is_finite() {
        return "-".to_string();
    }
    if bytes.abs() < 1024.0 {
        return format!("{bytes:.0} B");
    }
    let mut value = bytes / 1024.0;
    let mut unit = UNITS[0];
    for next in &UNITS[1..] {
        if value.abs() < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = next;
    }
    format!("{value:.1} {unit}")
}

/// Seconds as `12.3 ms` below one second, `2.35 s` above.
pub fn duration(seconds: f64) -> String {
    if !seconds.is_finite() {
        "-".to_string()
    } else if seconds.abs() < 1.0 {
        format!("{:.1} ms", seconds * 1000.0)
    } else {
        format!("{seconds:.2} s")
    }
}

/// How to print a value measured in `unit`.
pub fn in_unit(unit: Unit) -> fn(f64) -> String {
    match unit {
        Unit::Bytes => size,
        Unit::Seconds => duration,
        Unit::Milliseconds => super::service_table::milliseconds,
        Unit::Ratio => |v| format!("{v:.2}"),
        Unit::Count => |v| format!("{v:.0}"),
        Unit::Number => significant,
    }
}

/// A plain number to 3 significant digits: `812000`, `12.3`, `0.00456`;
/// beyond 1e15 or below 1e-4, `1.23e-5`.
pub fn significant(value: f64) -> String {
    if !value.is_finite() {
        return "-".to_string();
    }
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

/// `[low, high]` of an interval, `None` when it has none (NaN bounds: too
/// few runs for one).
pub fn bounds(low: f64, high: f64, show: impl Fn(f64) -> String) -> Option<String> {
    (low.is_finite() && high.is_finite()).then(|| format!("[{}, {}]", show(low), show(high)))
}

/// A ratio's interval as `[0.85, 0.90]`, `None` without one.
pub fn ratio_bounds(r: &crate::analyze::types::Ratio) -> Option<String> {
    bounds(r.ci_low, r.ci_high, |v| format!("{v:.2}"))
}

/// A number for CSV: empty when absent or not finite (no interval).
pub fn num(value: Option<f64>) -> String {
    opt(value.filter(|v| v.is_finite()))
}

/// A ratio as `0.52x`.
pub fn ratio(value: f64) -> String {
    format!("{value:.2}x")
}

/// Words of `text` on lines of at most `width` characters (a longer word
/// gets a line of its own).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// One CSV field, quoted when it holds a comma, quote or line break.
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// One CSV record from its fields, ended by `\n`.
pub fn csv_line<I: IntoIterator<Item = String>>(fields: I) -> String {
    let mut line = fields
        .into_iter()
        .map(|f| csv_field(&f))
        .collect::<Vec<_>>()
        .join(",");
    line.push('\n');
    line
}

/// An optional number for CSV: empty when absent.
pub fn opt<T: ToString>(value: Option<T>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_use_binary_units() {
        assert_eq!(size(512.0), "512 B");
        assert_eq!(size(1536.0), "1.5 KiB");
        assert_eq!(size(120.0 * 1048576.0), "120.0 MiB");
        assert_eq!(size(3.0 * 1073741824.0), "3.0 GiB");
    }

    #[test]
    fn durations_switch_to_ms_below_a_second() {
        assert_eq!(duration(0.0123), "12.3 ms");
        assert_eq!(duration(2.345), "2.35 s");
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
        assert_eq!(significant(f64::NAN), "-");
    }

    #[test]
    fn wrap_breaks_between_words() {
        assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
        assert_eq!(wrap("", 5), Vec::<String>::new());
    }

    #[test]
    fn csv_quotes_only_when_needed() {
        assert_eq!(csv_field("glibc"), "glibc");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(
            csv_line(["a".to_string(), "b\nc".to_string()]),
            "a,\"b\nc\"\n"
        );
    }
}
