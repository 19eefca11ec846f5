//! What the cluster merge needs from a store file besides the record-level
//! API: the schema version of a shard read without migrating it (a shard
//! from a newer allocscope is refused, never rewritten), and the experiment
//! a plan id was merged into.

use super::open::Store;
use super::schema;
use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// The schema version of the store file at `path`, opened read-only.
pub fn schema_version_of(path: &Path) -> Result<u32> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .with_context(|| format!("opening '{}'", path.display()))?;
    schema::version(&conn).with_context(|| format!("reading '{}'", path.display()))
}

impl Store {
    /// The experiment whose environment has `key` = `value` (the newest
    /// when several do), e.g. the one a cluster plan was merged into.
    pub fn find_experiment_by_environment(&self, key: &str, value: &str) -> Result<Option<i64>> {
        let mut found = None;
        for listing in self.list()? {
            let environment = self.load_environment(listing.id)?;
            if environment
                .iter()
                .any(|(k, v)| k == key && v.as_deref() == Some(value))
            {
                found = Some(found.map_or(listing.id, |f: i64| f.max(listing.id)));
            }
        }
        Ok(found)
    }
}
