//! Reading a run's markers back, in the order read. A run may hold a
//! million of them, and reading them is most of what `report` does on such
//! a run (about 1 us a row: SQLite's step and six column reads), so a big
//! run is read by two connections on two threads, each half of its
//! sequence numbers; the machine this runs on has at least two cores more
//! often than not. A run's markers are committed in one transaction with
//! it, so both connections see all of them or none.

use super::convert::{opt_u64_at, u64_at};
use crate::model::Marker;
use anyhow::{Context, Result};
use rusqlite::{params, Connection, OpenFlags};
use std::path::Path;

/// Runs with fewer markers than this are read by one connection: a second
/// one costs about a millisecond to open.
const SPLIT_FROM: i64 = 50_000;

/// The markers of run `run_id`, through `conn` and, for a big run, a
/// second read-only connection to the file at `path`.
pub(super) fn load(conn: &Connection, path: &Path, run_id: i64) -> Result<Vec<Marker>> {
    let context = || format!("reading markers of run {run_id}");
    let end: i64 = conn
        .query_row(
            "SELECT coalesce(max(seq) + 1, 0) FROM markers WHERE run_id = ?1",
            params![run_id],
            |r| r.get(0),
        )
        .with_context(context)?;
    if end < SPLIT_FROM {
        return read(conn, run_id, 0, end).with_context(context);
    }
    let mid = end / 2;
    std::thread::scope(|scope| -> Result<Vec<Marker>> {
        let upper = scope.spawn(|| -> Result<Vec<Marker>> {
            let reader = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?;
            Ok(read(&reader, run_id, mid, end)?)
        });
        let mut markers = read(conn, run_id, 0, mid)?;
        // Should the second reader fail (it cannot open the file read-only,
        // say), the first connection reads its half too.
        let upper = match upper.join() {
            Ok(Ok(upper)) => upper,
            Ok(Err(_)) | Err(_) => read(conn, run_id, mid, end)?,
        };
        markers.extend(upper);
        Ok(markers)
    })
    .with_context(context)
}

/// The markers with sequence numbers in `from..to`, read by column
/// position, not name (six name lookups a row were a tenth of the time).
fn read(conn: &Connection, run_id: i64, from: i64, to: i64) -> rusqlite::Result<Vec<Marker>> {
    let mut stmt = conn.prepare_cached(
        "SELECT label, pattern, t_s, rss_bytes, pss_bytes, vsz_bytes
         FROM markers WHERE run_id = ?1 AND seq >= ?2 AND seq < ?3 ORDER BY seq",
    )?;
    let rows = stmt.query_map(params![run_id, from, to], |r| {
        Ok(Marker {
            label: r.get(0)?,
            pattern: r.get(1)?,
            t_s: r.get(2)?,
            rss_bytes: u64_at(r, 3)?,
            pss_bytes: opt_u64_at(r, 4)?,
            vsz_bytes: u64_at(r, 5)?,
        })
    })?;
    let mut markers = Vec::with_capacity(usize::try_from(to - from).unwrap_or(0));
    for marker in rows {
        markers.push(marker?);
    }
    Ok(markers)
}
