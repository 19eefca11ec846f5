//! What the cluster merge needs from a store file besides the record-level
//! API: the schema version of a shard read without migrating it (a shard
//! from a newer allocscope is refused, never rewritten), the experiment
//! a plan id was merged into, and the recordings of a soak's shard copied in.

use super::open::Store;
use super::schema;
use anyhow::{bail, Context, Result};
use rusqlite::{params, Connection, OpenFlags};
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

    /// Copies every recording of the store file `shard` (a soak instance's
    /// job wrote it, with this schema version) with its samples and
    /// roll-ups, each made an instance of `soak_id` here; returns their ids
    /// here, in the shard's order.
    pub fn copy_recordings_from(&mut self, shard: &Path, soak_id: Option<i64>) -> Result<Vec<i64>> {
        let (theirs, ours) = (schema_version_of(shard)?, schema::version(&self.conn)?);
        if theirs != ours {
            bail!(
                "shard '{}' has store schema {theirs}, this store {ours}; run the same \
                 allocscope version on every node",
                shard.display()
            );
        }
        let context = || format!("copying the recordings of '{}'", shard.display());
        (self.conn)
            .execute(
                "ATTACH DATABASE ?1 AS shard",
                params![shard.to_string_lossy()],
            )
            .with_context(context)?;
        let copied = copy_attached(&mut self.conn, soak_id).with_context(context);
        self.conn.execute("DETACH DATABASE shard", [])?;
        copied
    }
}

/// A table's columns but those `left_out`, quoted and joined for a column list.
fn columns(conn: &Connection, table: &str, left_out: &[&str]) -> Result<String> {
    let mut query = conn.prepare(&format!("PRAGMA main.table_info({table})"))?;
    let names = query.query_map([], |r| r.get::<_, String>(1))?;
    let kept: Vec<String> = (names.collect::<rusqlite::Result<Vec<_>>>()?.into_iter())
        .filter(|n| !left_out.contains(&n.as_str()))
        .map(|n| format!("\"{n}\""))
        .collect();
    Ok(kept.join(", "))
}

/// The attached `shard`'s recordings inserted here under new ids as
/// instances of `soak_id` (the shard's own soak is not this store's), their
/// samples and roll-ups pointed at those, in one transaction.
fn copy_attached(conn: &mut Connection, soak_id: Option<i64>) -> Result<Vec<i64>> {
    let tx = conn.transaction()?;
    let recording = columns(&tx, "recordings", &["id", "soak_id"])?;
    let ids = (tx.prepare("SELECT id FROM shard.recordings ORDER BY id")?)
        .query_map([], |r| r.get::<_, i64>(0))?
        .collect::<rusqlite::Result<Vec<i64>>>()?;
    let mut copied = Vec::with_capacity(ids.len());
    for old in ids {
        tx.execute(
            &format!(
                "INSERT INTO main.recordings ({recording}, soak_id)
                 SELECT {recording}, ?2 FROM shard.recordings WHERE id = ?1"
            ),
            params![old, soak_id],
        )?;
        let new = tx.last_insert_rowid();
        let tables = [
            "recording_samples",
            "recording_tiers",
            "recording_restarts",
            "recording_readings",
        ];
        for table in tables {
            let kept = columns(&tx, table, &["recording_id"])?;
            tx.execute(
                &format!(
                    "INSERT INTO main.{table} (recording_id, {kept})
                     SELECT ?1, {kept} FROM shard.{table} WHERE recording_id = ?2"
                ),
                params![new, old],
            )?;
        }
        copied.push(new);
    }
    tx.commit()?;
    Ok(copied)
}
