//! Integers between Rust and SQLite: sizes and counts are `u64` in the
//! model and signed 64-bit integers in SQLite, so each crossing is checked,
//! with an error naming the value or the column.

use anyhow::{Context, Result};
use rusqlite::{Row, RowIndex};

pub(super) fn to_i64(value: u64, what: &str) -> Result<i64> {
    i64::try_from(value).with_context(|| format!("{what} = {value} is too large to store"))
}

pub(super) fn opt_i64(value: Option<u64>, what: &str) -> Result<Option<i64>> {
    value.map(|v| to_i64(v, what)).transpose()
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
