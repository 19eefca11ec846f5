//! Human-readable numbers for the text reports: estimates in their column's
//! unit (`allocscope_core::units::ColumnUnit`), ratios as `0.52x` (with their interval
//! and the beyond-noise mark in a table cell), and CSV field quoting.

use allocscope_analyze::types::{Estimate, Ratio};
use allocscope_analyze::verdict::sh_quote;
use allocscope_core::units::{ColumnUnit, Unit};

/// The unit of a column of estimates in `unit`: from their medians and
/// interval bounds (docs/report.md, "Numbers").
pub(crate) fn estimates_unit(
    unit: Unit,
    estimates: impl IntoIterator<Item = Estimate>,
) -> ColumnUnit {
    ColumnUnit::for_values(
        unit,
        estimates
            .into_iter()
            .flat_map(|e| [e.median, e.ci_low, e.ci_high]),
    )
}

/// An estimate in its column's unit: `1.18 GiB [1.15, 1.24]`, or
/// `1.18 GiB` without an interval.
pub fn estimate(column: ColumnUnit, e: Estimate) -> String {
    match column.bounds(e.ci_low, e.ci_high) {
        Some(ci) => format!("{} {ci}", column.show(e.median)),
        None => column.show(e.median),
    }
}

/// A ratio's interval as `[0.85, 0.90]`, `None` without one.
pub(crate) fn ratio_bounds(r: &Ratio) -> Option<String> {
    ColumnUnit::of(Unit::Ratio, r.value).bounds(r.ci_low, r.ci_high)
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
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
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

/// `text` wrapped to `width` columns after `indent`, its later lines two
/// further in.
pub fn hanging(text: &str, width: usize, indent: &str) -> Vec<String> {
    (wrap(text, width - indent.len()).iter().enumerate())
        .map(|(i, line)| format!("{indent}{}{line}", if i == 0 { "" } else { "  " }))
        .collect()
}

/// The command as a shell would need it typed, quoting words that need it.
pub(crate) fn shell_line(words: &[String]) -> String {
    let words: Vec<String> = words.iter().map(|w| sh_quote(w)).collect();
    words.join(" ")
}

/// One CSV field, quoted when it holds a comma, quote or line break.
pub(crate) fn csv_field(text: &str) -> String {
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

/// What marks a ratio whose 95% interval excludes 1.0 (the tables' footer
/// explains it).
pub(crate) const MARK: &str = "*";

/// `0.87x [0.85, 0.90] *`, or `0.99x` alone without an interval.
pub(crate) fn ratio_cell(r: Ratio) -> String {
    let Some(ci) = ratio_bounds(&r) else {
        return ratio(r.value);
    };
    let mark = if r.excludes_one() {
        format!(" {MARK}")
    } else {
        String::new()
    };
    format!("{} {ci}{mark}", ratio(r.value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_share_their_column_unit_and_bounds_drop_it() {
        const GIB: f64 = 1073741824.0;
        let peaks = [
            Estimate {
                median: 1.18 * GIB,
                ci_low: 1.15 * GIB,
                ci_high: 1.24 * GIB,
            },
            Estimate {
                median: 1001.2 * 1048576.0,
                ci_low: 990.0 * 1048576.0,
                ci_high: f64::NAN,
            },
        ];
        let column = estimates_unit(Unit::Bytes, peaks);
        assert_eq!(estimate(column, peaks[0]), "1.18 GiB [1.15, 1.24]");
        assert_eq!(estimate(column, peaks[1]), "0.978 GiB");
        let r = allocscope_analyze::types::Ratio {
            value: 0.523,
            ci_low: 0.5,
            ci_high: 0.551,
        };
        assert_eq!(ratio_bounds(&r).as_deref(), Some("[0.50, 0.55]"));
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
