//! Telling a full store from other write failures: "disk full or over a
//! file-size limit" is said only when SQLite itself says so, never for a
//! figure it could not take (that one is stored as unknown, `convert.rs`)
//! or any other error, whose own words are then the message.

use rusqlite::{Connection, ErrorCode};

/// Marks a write that failed because the store cannot grow: SQLite's
/// `SQLITE_FULL` or `SQLITE_TOOBIG`, or an I/O error whose system error is
/// `ENOSPC`, `EDQUOT` or `EFBIG` (a file-size limit: SQLite reports a
/// write that `EFBIG` cut short as `SQLITE_IOERR_WRITE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StoreFull;

impl std::fmt::Display for StoreFull {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the store cannot grow")
    }
}

impl std::error::Error for StoreFull {}

/// Whether `error` says the store cannot grow (`classify` marked it).
pub fn is_full(error: &anyhow::Error) -> bool {
    // anyhow finds a context type under any later context.
    error.downcast_ref::<StoreFull>().is_some()
}

/// `error` with `StoreFull` on top when SQLite said the store is full;
/// `conn` is the connection that failed, asked for its last system error
/// before anything else runs on it.
pub(super) fn classify(conn: &Connection, error: anyhow::Error) -> anyhow::Error {
    let code = error
        .chain()
        .find_map(|e| match e.downcast_ref::<rusqlite::Error>() {
            Some(rusqlite::Error::SqliteFailure(f, _)) => Some(f.code),
            _ => None,
        });
    let full = match code {
        Some(ErrorCode::DiskFull | ErrorCode::TooBig) => true,
        Some(ErrorCode::SystemIoFailure) => {
            // SAFETY: the handle of a live connection; the call only reads
            // the errno SQLite kept from its last failed system call.
            let errno = unsafe { rusqlite::ffi::sqlite3_system_errno(conn.handle()) };
            matches!(errno, libc::ENOSPC | libc::EDQUOT | libc::EFBIG)
        }
        _ => false,
    };
    if full {
        error.context(StoreFull)
    } else {
        error
    }
}
