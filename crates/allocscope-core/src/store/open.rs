//! Opening a store file: the `Store` handle, WAL journal mode, foreign
//! keys, and the schema brought up to date (`schema.rs`).

use super::convert::Unstorable;
use super::schema;
use anyhow::{bail, Context, Result};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another allocscope holding the file's lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// An open store file. The other files of `store` add its methods: what is
/// written (`write.rs`), read back (`load.rs`), recorded (`recordings.rs`).
pub struct Store {
    pub(super) conn: Connection,
    pub(super) path: PathBuf,
    /// The recording's figures stored as unknown so far, for the message
    /// `finish_recording` stores (`convert::Unstorable`).
    pub(super) unstorable: Unstorable,
}

/// Switches the database to WAL and returns the journal mode it is in. Two
/// allocscope processes opening a new file at once both hold its shared
/// lock when they ask for the exclusive one the switch needs; SQLite fails
/// one of them at once with "database is locked" rather than wait (that
/// wait could deadlock), so the switch is retried until `BUSY_TIMEOUT`.
fn enable_wal(conn: &Connection) -> rusqlite::Result<String> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0)) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            result => return result,
        }
    }
}

impl Store {
    /// Opens (creating if needed) the database at `path` and brings its schema
    /// up to date.
    pub fn open(path: &Path) -> Result<Store> {
        let shown = path.display();
        if path.is_dir() {
            bail!("'{shown}' is a directory; give a database file such as '{shown}/allocscope.db'");
        }
        if let Ok(meta) = std::fs::metadata(path) {
            if meta.permissions().readonly() {
                bail!("'{shown}' is read-only; make it writable or choose another database file");
            }
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(path, flags)
            .with_context(|| format!("opening database '{shown}'"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .with_context(|| format!("configuring database '{shown}'"))?;
        let mode = enable_wal(&conn)
            .with_context(|| format!("enabling WAL on '{shown}' (is it writable?)"))?;
        if !mode.eq_ignore_ascii_case("wal") {
            bail!(
                "'{shown}' refused WAL journal mode (got '{mode}'); is it on a network filesystem?"
            );
        }
        conn.pragma_update(None, "foreign_keys", true)
            .with_context(|| format!("configuring database '{shown}'"))?;
        schema::migrate(&mut conn).with_context(|| format!("preparing database '{shown}'"))?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            unstorable: Unstorable::default(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}
