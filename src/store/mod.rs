//! The SQLite store: one file holding experiments, their host environment,
//! configurations, runs, samples and markers. Each finished run is committed in its own
//! transaction, so a crash in run 37 keeps runs 1-36. Only this module speaks
//! SQL; everything else exchanges the plain records of `crate::model`.

mod load;
mod recordings;
#[cfg(test)]
mod recordings_tests;
mod sample_rows;
mod schema;
mod shard;
#[cfg(test)]
mod tests;

pub use load::ExperimentListing;
pub use recordings::{Ending, NewRecording, MINUTE_WINDOW_S, RAW_WINDOW_S};
pub use schema::SCHEMA_VERSION;
pub use shard::schema_version_of;

use crate::model::{Config, ExperimentInfo, RunRecord};
use anyhow::{anyhow, bail, Context, Result};
use rusqlite::{params, Connection, OpenFlags, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another allocscope holding the file's lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Store {
    conn: Connection,
    path: PathBuf,
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
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records a new experiment as `running`, owned by this process, with its
    /// host environment and configurations. Returns the experiment id and one
    /// config id per configuration, in order.
    pub fn begin_experiment(
        &mut self,
        info: &ExperimentInfo,
        configs: &[Config],
    ) -> Result<(i64, Vec<i64>)> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .context("starting an experiment")?;
        tx.execute(
            "INSERT INTO experiments (name, command, started_at, status, pid, runs_per_config,
                 warmup, interval_ms, baseline)
             VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7, ?8)",
            params![
                info.name,
                serde_json::to_string(&info.command)?,
                info.started_at,
                std::process::id(),
                info.runs_per_config,
                info.warmup,
                to_i64(info.interval_ms, "interval_ms")?,
                info.baseline,
            ],
        )
        .context("storing the experiment")?;
        let experiment_id = tx.last_insert_rowid();
        let host = &info.host;
        let service = info
            .service
            .as_ref()
            .map(serde_json::to_string)
            .transpose()?;
        let env: [(&str, Option<String>); 8] = [
            ("kernel", Some(host.kernel.clone())),
            ("glibc", Some(host.glibc.clone())),
            ("cpus", Some(host.cpus.to_string())),
            ("thp", Some(host.thp.clone())),
            (
                "cgroup_memory_limit_bytes",
                host.cgroup_memory_limit_bytes.map(|b| b.to_string()),
            ),
            ("hostname", Some(host.hostname.clone())),
            ("marks", Some(serde_json::to_string(&info.marks)?)),
            ("service", service),
        ];
        for (key, value) in env {
            tx.execute(
                "INSERT INTO environment (experiment_id, key, value) VALUES (?1, ?2, ?3)",
                params![experiment_id, key, value],
            )
            .context("storing the host environment")?;
        }
        if !info.user_metrics.is_empty() {
            tx.execute(
                "INSERT INTO environment (experiment_id, key, value) VALUES (?1, ?2, ?3)",
                params![
                    experiment_id,
                    crate::user_metric::ENVIRONMENT_KEY,
                    serde_json::to_string(&info.user_metrics)?
                ],
            )
            .context("storing the --metric specs")?;
        }
        let mut config_ids = Vec::with_capacity(configs.len());
        for (position, config) in configs.iter().enumerate() {
            tx.execute(
                "INSERT INTO configs (experiment_id, position, name, allocator, library, version, env)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    experiment_id,
                    i64::try_from(position)?,
                    config.name,
                    config.allocator,
                    config.library.as_ref().map(|p| p.to_string_lossy().into_owned()),
                    config.version,
                    serde_json::to_string(&config.env)?,
                ],
            )
            .with_context(|| format!("storing configuration '{}'", config.name))?;
            config_ids.push(tx.last_insert_rowid());
        }
        tx.commit().context("committing the new experiment")?;
        Ok((experiment_id, config_ids))
    }

    /// Adds (or replaces) one environment entry, e.g. `jemalloc_version`.
    pub fn set_environment(&mut self, experiment_id: i64, key: &str, value: &str) -> Result<()> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO environment (experiment_id, key, value) VALUES (?1, ?2, ?3)",
                params![experiment_id, key, value],
            )
            .with_context(|| format!("storing environment entry '{key}'"))?;
        Ok(())
    }

    /// Stores one finished run, its samples and markers in a single transaction,
    /// committed before returning.
    pub fn add_run(&mut self, config_id: i64, record: &RunRecord) -> Result<i64> {
        let context = || format!("storing run {} of configuration {config_id}", record.index);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .with_context(context)?;
        tx.execute(
            "INSERT INTO runs (config_id, idx, status, exit_code, signal, wall_s, user_s, sys_s,
                 max_hwm_bytes, minor_faults, major_faults, stdout_path, stderr_path, message,
                 linked_allocators, sampler_cpu_s, started_at, probe_mode, probe_cpu_s)
             VALUES (:config_id, :idx, :status, :exit_code, :signal, :wall_s, :user_s, :sys_s,
                 :max_hwm_bytes, :minor_faults, :major_faults, :stdout_path, :stderr_path,
                 :message, :linked_allocators, :sampler_cpu_s, :started_at, :probe_mode,
                 :probe_cpu_s)",
            rusqlite::named_params! {
                ":config_id": config_id,
                ":idx": record.index,
                ":status": record.status.as_str(),
                ":exit_code": record.exit_code,
                ":signal": record.signal,
                ":wall_s": record.wall_s,
                ":user_s": record.user_s,
                ":sys_s": record.sys_s,
                ":max_hwm_bytes": to_i64(record.max_hwm_bytes, "max_hwm_bytes")?,
                ":minor_faults": to_i64(record.minor_faults, "minor_faults")?,
                ":major_faults": to_i64(record.major_faults, "major_faults")?,
                ":stdout_path": record.stdout_path.to_string_lossy(),
                ":stderr_path": record.stderr_path.to_string_lossy(),
                ":message": record.message,
                ":linked_allocators": serde_json::to_string(&record.linked_allocators)?,
                ":sampler_cpu_s": record.sampler_cpu_s,
                ":started_at": record.started_at,
                ":probe_mode": record.probe_mode,
                ":probe_cpu_s": record.probe_cpu_s,
            },
        )
        .with_context(context)?;
        let run_id = tx.last_insert_rowid();
        {
            let mut insert = tx
                .prepare_cached(&sample_rows::insert_sql("INSERT", "samples", "run_id"))
                .with_context(context)?;
            for s in &record.samples {
                insert
                    .execute(rusqlite::params_from_iter(sample_rows::values(run_id, s)?))
                    .with_context(context)?;
            }
        }
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO markers (run_id, seq, pattern, label, t_s, rss_bytes, pss_bytes,
                         vsz_bytes)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .with_context(context)?;
            for (seq, m) in record.markers.iter().enumerate() {
                insert
                    .execute(params![
                        run_id,
                        i64::try_from(seq)?,
                        m.pattern,
                        m.label,
                        m.t_s,
                        to_i64(m.rss_bytes, "rss_bytes")?,
                        opt_i64(m.pss_bytes, "pss_bytes")?,
                        to_i64(m.vsz_bytes, "vsz_bytes")?,
                    ])
                    .with_context(context)?;
            }
        }
        if let Some(service) = &record.service {
            tx.execute(
                "INSERT INTO run_services (run_id, record) VALUES (?1, ?2)",
                params![run_id, serde_json::to_string(service)?],
            )
            .with_context(context)?;
        }
        for (name, value) in &record.user_metrics {
            tx.execute(
                "INSERT INTO run_values (run_id, name, value) VALUES (?1, ?2, ?3)",
                params![run_id, name, value],
            )
            .with_context(context)?;
        }
        tx.commit().with_context(context)?;
        Ok(run_id)
    }

    /// Marks the experiment `complete` or `interrupted` and stamps its end.
    pub fn finish_experiment(&mut self, id: i64, status: &str) -> Result<()> {
        if !matches!(status, "complete" | "interrupted") {
            bail!("unknown final experiment status '{status}' (expected complete or interrupted)");
        }
        let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        let changed = self
            .conn
            .execute(
                "UPDATE experiments SET status = ?1, finished_at = ?2 WHERE id = ?3",
                params![status, now, id],
            )
            .with_context(|| format!("finishing experiment {id}"))?;
        if changed == 0 {
            return Err(anyhow!("no experiment {id} in '{}'", self.path.display()));
        }
        Ok(())
    }
}

fn to_i64(value: u64, what: &str) -> Result<i64> {
    i64::try_from(value).with_context(|| format!("{what} = {value} is too large to store"))
}

fn opt_i64(value: Option<u64>, what: &str) -> Result<Option<i64>> {
    value.map(|v| to_i64(v, what)).transpose()
}
