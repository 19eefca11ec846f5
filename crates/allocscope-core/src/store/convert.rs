//! Integers between Rust and SQLite: sizes and counts are `u64` in the
//! model and signed 64-bit integers in SQLite, so each crossing is checked.
//!
//! Run figures go through `Unstorable`: one impossible figure (a live heap
//! that wrapped below zero, 2^64 - 1200) must not cost the run, let alone
//! the experiment, so a figure above `i64::MAX` is stored as unknown
//! (NULL) where its column allows it, and at `i64::MAX` where the column
//! cannot be NULL, and the run's message says which figures and how often.
//! Settings (an interval, a pid's start time) still fail loudly: they come
//! from the user or the kernel, and a wrong one is a bug to report.

use anyhow::{Context, Result};
use rusqlite::{Row, RowIndex};
use std::collections::BTreeMap;

/// Now, as the store keeps a start: RFC 3339 seconds for people, and the
/// Unix time in seconds that sample times count from.
pub(crate) fn now_stamp() -> Result<(String, f64)> {
    let now = std::time::SystemTime::now();
    let unix = now
        .duration_since(std::time::UNIX_EPOCH)
        .context("the clock is before 1970")?
        .as_secs_f64();
    Ok((humantime::format_rfc3339_seconds(now).to_string(), unix))
}

pub(super) fn to_i64(value: u64, what: &str) -> Result<i64> {
    i64::try_from(value).with_context(|| format!("{what} = {value} is too large to store"))
}

/// The figures of one run (or one recording) too large to store as they
/// were, by column: how many, and the largest.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Unstorable {
    figures: BTreeMap<&'static str, (u64, u64)>,
}

impl Unstorable {
    /// `value` as a nullable column holds it: `None` (NULL) when it is out
    /// of range, noted.
    pub(super) fn opt(&mut self, value: Option<u64>, what: &'static str) -> Option<i64> {
        let v = value?;
        match i64::try_from(v) {
            Ok(stored) => Some(stored),
            Err(_) => {
                self.note(what, v);
                None
            }
        }
    }

    /// `value` for a column that cannot be NULL: at most `i64::MAX`, noted
    /// when it was more.
    pub(super) fn saturating(&mut self, value: u64, what: &'static str) -> i64 {
        i64::try_from(value).unwrap_or_else(|_| {
            self.note(what, value);
            i64::MAX
        })
    }

    /// Whether every one of `values` can be stored (for a group of columns
    /// that is stored whole or not at all); the first that cannot is noted.
    pub(super) fn all_fit(&mut self, values: &[(u64, &'static str)]) -> bool {
        match values.iter().find(|(v, _)| i64::try_from(*v).is_err()) {
            Some(&(v, what)) => {
                self.note(what, v);
                false
            }
            None => true,
        }
    }

    fn note(&mut self, what: &'static str, value: u64) {
        let entry = self.figures.entry(what).or_insert((0, value));
        entry.0 += 1;
        entry.1 = entry.1.max(value);
    }

    /// Adds `other`'s figures to these.
    pub(super) fn absorb(&mut self, other: &Unstorable) {
        for (what, &(count, largest)) in &other.figures {
            let entry = self.figures.entry(what).or_insert((0, largest));
            entry.0 += count;
            entry.1 = entry.1.max(largest);
        }
    }

    /// `stored as unknown (too large to store): live_heap_bytes on 3 ticks
    /// (up to 18446744073709550416)`; `None` when nothing was out of range.
    pub(super) fn sentence(&self) -> Option<String> {
        if self.figures.is_empty() {
            return None;
        }
        let parts: Vec<String> = self
            .figures
            .iter()
            .map(|(what, (count, largest))| {
                let times = if *count == 1 { "once" } else { "times" };
                if *count == 1 {
                    format!("{what} {times} ({largest})")
                } else {
                    format!("{what} {count} {times} (up to {largest})")
                }
            })
            .collect();
        Some(format!(
            "figures out of range stored as unknown (a counter that wrapped below zero, \
             or an impossible reading): {}",
            parts.join(", ")
        ))
    }
}

/// `message` with `note` after it.
pub(super) fn with_note(message: Option<&str>, note: Option<String>) -> Option<String> {
    match (message, note) {
        (Some(m), Some(n)) => Some(format!("{m}; {n}")),
        (m, n) => m.map(str::to_string).or(n),
    }
}

/// SQLite integers are signed; sizes and counts are stored non-negative.
pub(super) fn u64_at<I: RowIndex + Copy>(r: &Row<'_>, idx: I) -> rusqlite::Result<u64> {
    let v: i64 = r.get(idx)?;
    u64::try_from(v).map_err(|_| out_of_range(r, idx, v))
}

pub(super) fn opt_u64_at<I: RowIndex + Copy>(r: &Row<'_>, idx: I) -> rusqlite::Result<Option<u64>> {
    match r.get::<_, Option<i64>>(idx)? {
        None => Ok(None),
        Some(v) => u64::try_from(v)
            .map(Some)
            .map_err(|_| out_of_range(r, idx, v)),
    }
}

fn out_of_range<I: RowIndex>(r: &Row<'_>, idx: I, v: i64) -> rusqlite::Error {
    match idx.idx(r.as_ref()) {
        Ok(column) => rusqlite::Error::IntegralValueOutOfRange(column, v),
        Err(error) => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_out_of_range_figure_is_unknown_and_noted_once_per_column() {
        let mut u = Unstorable::default();
        assert_eq!(u.opt(Some(5), "live_heap_bytes"), Some(5));
        assert_eq!(u.opt(None, "live_heap_bytes"), None);
        assert_eq!(u.sentence(), None, "nothing out of range yet");
        let wrapped = u64::MAX - 1199;
        assert_eq!(u.opt(Some(wrapped), "live_heap_bytes"), None);
        assert_eq!(u.opt(Some(1 << 63), "live_heap_bytes"), None);
        assert_eq!(u.saturating(u64::MAX, "rss_bytes"), i64::MAX);
        assert_eq!(u.saturating(7, "rss_bytes"), 7);
        assert!(!u.all_fit(&[(1, "a"), (u64::MAX, "breakdown_live_heap_bytes")]));
        assert!(u.all_fit(&[(1, "a"), (i64::MAX as u64, "b")]));
        let sentence = u.sentence().unwrap_or_default();
        assert!(
            sentence.contains("live_heap_bytes 2 times (up to 18446744073709550416)"),
            "{sentence}"
        );
        assert!(
            sentence.contains("rss_bytes once (18446744073709551615)"),
            "{sentence}"
        );
        assert!(
            sentence.contains("breakdown_live_heap_bytes once"),
            "{sentence}"
        );
        let mut total = Unstorable::default();
        total.absorb(&u);
        total.absorb(&u);
        assert!(total
            .sentence()
            .unwrap_or_default()
            .contains("live_heap_bytes 4 times"));
        assert_eq!(
            with_note(Some("exit 1"), Some("n".into())).as_deref(),
            Some("exit 1; n")
        );
        assert_eq!(with_note(None, None), None);
    }
}
