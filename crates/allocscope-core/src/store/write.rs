//! Writing an experiment as it runs: begun as `running` with its host
//! environment and configurations, each finished run committed in its own
//! transaction with its samples, markers, service record and `--metric`
//! values (a crash in run 37 keeps runs 1-36), then finished.

use super::convert::{to_i64, with_note, Unstorable};
use super::full;
use super::open::Store;
use super::sample_rows;
use crate::model::{Config, ExperimentInfo, Marker, RunRecord, Sample};
use anyhow::{anyhow, bail, Context, Result};
use rusqlite::{params, Connection, TransactionBehavior};

/// A run just stored: its id, and the note on the figures that were too
/// large to store (stored as unknown), also added to its stored message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRunId {
    pub id: i64,
    pub note: Option<String>,
}

impl Store {
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
        let experiment_id = insert_experiment(&tx, info)?;
        insert_environment(&tx, experiment_id, info)?;
        let config_ids = insert_configs(&tx, experiment_id, configs)?;
        insert_variants(&tx, experiment_id, configs)?;
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
        self.store_run(config_id, record).map(|stored| stored.id)
    }

    /// `add_run`, saying which figures were too large to store: those are
    /// stored as unknown (`convert::Unstorable`), the run keeps its status
    /// and its message says so.
    pub fn store_run(&mut self, config_id: i64, record: &RunRecord) -> Result<StoredRunId> {
        let context = || format!("storing run {} of configuration {config_id}", record.index);
        // Borrowed shared (`new_unchecked`: nothing else uses the
        // connection meanwhile), so a failure can still ask it for its
        // last system error.
        let begun =
            rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
                .map_err(|e| anyhow!(e).context(context()));
        let tx = match begun {
            Ok(tx) => tx,
            Err(e) => return Err(full::classify(&self.conn, e)),
        };
        let stored = match write_run(&tx, config_id, record) {
            Ok(stored) => stored,
            Err(e) => return Err(full::classify(&tx, e.context(context()))),
        };
        match tx.commit() {
            Ok(()) => Ok(stored),
            Err(e) => Err(full::classify(&self.conn, anyhow!(e).context(context()))),
        }
    }

    /// Adds one `--metric` value to a stored run (`--perf-metric auto`
    /// adopts a figure once the runs are over).
    pub fn add_run_value(&mut self, run_id: i64, name: &str, value: f64) -> Result<()> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO run_values (run_id, name, value) VALUES (?1, ?2, ?3)",
                params![run_id, name, value],
            )
            .with_context(|| format!("storing '{name}' of run {run_id}"))?;
        Ok(())
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

/// The experiment's row, owned by this process; its id.
fn insert_experiment(conn: &Connection, info: &ExperimentInfo) -> Result<i64> {
    conn.execute(
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
    Ok(conn.last_insert_rowid())
}

/// The host facts, the `--mark` patterns, the service settings and the
/// `--metric` specs, as `environment` entries.
fn insert_environment(conn: &Connection, experiment_id: i64, info: &ExperimentInfo) -> Result<()> {
    let host = &info.host;
    let service = info
        .service
        .as_ref()
        .map(serde_json::to_string)
        .transpose()?;
    let cpus_emulated = host
        .cpus_emulated
        .as_ref()
        .map(serde_json::to_string)
        .transpose()?;
    let env: [(&str, Option<String>); 11] = [
        ("kernel", Some(host.kernel.clone())),
        ("glibc", Some(host.glibc.clone())),
        ("cpus", Some(host.cpus.to_string())),
        ("thp", Some(host.thp.clone())),
        (
            "cgroup_memory_limit_bytes",
            host.cgroup_memory_limit_bytes.map(|b| b.to_string()),
        ),
        ("hostname", Some(host.hostname.clone())),
        ("run_cgroup", host.run_cgroup.clone()),
        (
            "run_memory_limit_bytes",
            host.run_memory_limit_bytes.map(|b| b.to_string()),
        ),
        ("cpus_emulated", cpus_emulated),
        ("marks", Some(serde_json::to_string(&info.marks)?)),
        ("service", service),
    ];
    let mut insert =
        conn.prepare("INSERT INTO environment (experiment_id, key, value) VALUES (?1, ?2, ?3)")?;
    for (key, value) in env {
        insert
            .execute(params![experiment_id, key, value])
            .context("storing the host environment")?;
    }
    if !info.user_metrics.is_empty() {
        insert
            .execute(params![
                experiment_id,
                crate::user_metric::ENVIRONMENT_KEY,
                serde_json::to_string(&info.user_metrics)?
            ])
            .context("storing the --metric specs")?;
    }
    Ok(())
}

/// One row per configuration, in order; their ids.
/// The `--variant` configurations' command lines, as the environment entry
/// `variants` (a JSON object, configuration name to its words), which the
/// `configs` table predates; no entry without variants.
fn insert_variants(conn: &Connection, experiment_id: i64, configs: &[Config]) -> Result<()> {
    let variants: std::collections::BTreeMap<&str, &Vec<String>> = configs
        .iter()
        .filter_map(|c| c.command.as_ref().map(|command| (c.name.as_str(), command)))
        .collect();
    if variants.is_empty() {
        return Ok(());
    }
    conn.execute(
        "INSERT INTO environment (experiment_id, key, value) VALUES (?1, ?2, ?3)",
        params![
            experiment_id,
            VARIANTS_KEY,
            serde_json::to_string(&variants)?
        ],
    )
    .context("storing the variants' command lines")?;
    Ok(())
}

/// The environment entry holding the `--variant` command lines.
pub(super) const VARIANTS_KEY: &str = "variants";

fn insert_configs(conn: &Connection, experiment_id: i64, configs: &[Config]) -> Result<Vec<i64>> {
    let mut insert = conn.prepare(
        "INSERT INTO configs (experiment_id, position, name, allocator, library, version, env)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    let mut config_ids = Vec::with_capacity(configs.len());
    for (position, config) in configs.iter().enumerate() {
        insert
            .execute(params![
                experiment_id,
                i64::try_from(position)?,
                config.name,
                config.allocator,
                config
                    .library
                    .as_ref()
                    .map(|p| p.to_string_lossy().into_owned()),
                config.version,
                serde_json::to_string(&config.env)?,
            ])
            .with_context(|| format!("storing configuration '{}'", config.name))?;
        config_ids.push(conn.last_insert_rowid());
    }
    Ok(config_ids)
}

/// The run, its samples, markers, service record and `--metric` values,
/// in `tx`. The samples come after the run's row: the note on figures too
/// large to store joins its message once they are all in.
fn write_run(tx: &Connection, config_id: i64, record: &RunRecord) -> Result<StoredRunId> {
    let mut unstorable = Unstorable::default();
    let run_id = insert_run(tx, config_id, record, &mut unstorable)?;
    insert_samples(tx, run_id, &record.samples, &mut unstorable)?;
    insert_markers(tx, run_id, &record.markers, &mut unstorable)?;
    if let Some(service) = &record.service {
        tx.execute(
            "INSERT INTO run_services (run_id, record) VALUES (?1, ?2)",
            params![run_id, serde_json::to_string(service)?],
        )?;
    }
    for (name, value) in &record.user_metrics {
        tx.execute(
            "INSERT INTO run_values (run_id, name, value) VALUES (?1, ?2, ?3)",
            params![run_id, name, value],
        )?;
    }
    let note = unstorable.sentence();
    if note.is_some() {
        tx.execute(
            "UPDATE runs SET message = ?1 WHERE id = ?2",
            params![with_note(record.message.as_deref(), note.clone()), run_id],
        )?;
    }
    Ok(StoredRunId { id: run_id, note })
}

/// The run's own row; its id.
fn insert_run(
    conn: &Connection,
    config_id: i64,
    record: &RunRecord,
    u: &mut Unstorable,
) -> Result<i64> {
    conn.execute(
        "INSERT INTO runs (config_id, idx, status, exit_code, signal, wall_s, user_s, sys_s,
             max_hwm_bytes, minor_faults, major_faults, stdout_path, stderr_path, message,
             linked_allocators, sampler_cpu_s, started_at, probe_mode, probe_cpu_s,
             cgroup_peak_kernel_bytes, served_by, reclaim, stderr_tail, served_tree,
             foreign_cpu_s, cpu_pressure_s)
         VALUES (:config_id, :idx, :status, :exit_code, :signal, :wall_s, :user_s, :sys_s,
             :max_hwm_bytes, :minor_faults, :major_faults, :stdout_path, :stderr_path,
             :message, :linked_allocators, :sampler_cpu_s, :started_at, :probe_mode,
             :probe_cpu_s, :cgroup_peak_kernel_bytes, :served_by, :reclaim, :stderr_tail, :served_tree,
             :foreign_cpu_s, :cpu_pressure_s)",
        rusqlite::named_params! {
            ":config_id": config_id,
            ":idx": record.index,
            ":status": record.status.as_str(),
            ":exit_code": record.exit_code,
            ":signal": record.signal,
            ":wall_s": record.wall_s,
            ":user_s": record.user_s,
            ":sys_s": record.sys_s,
            ":max_hwm_bytes": u.saturating(record.max_hwm_bytes, "max_hwm_bytes"),
            ":minor_faults": u.saturating(record.minor_faults, "minor_faults"),
            ":major_faults": u.saturating(record.major_faults, "major_faults"),
            ":stdout_path": record.stdout_path.to_string_lossy(),
            ":stderr_path": record.stderr_path.to_string_lossy(),
            ":message": record.message,
            ":linked_allocators": serde_json::to_string(&record.linked_allocators)?,
            ":sampler_cpu_s": record.sampler_cpu_s,
            ":started_at": record.started_at,
            ":probe_mode": record.probe_mode,
            ":probe_cpu_s": record.probe_cpu_s,
            ":cgroup_peak_kernel_bytes": u.opt(
                record.cgroup_peak_kernel_bytes,
                "cgroup_peak_kernel_bytes"
            ),
            ":served_by": record.served_by,
            ":reclaim": record.reclaim.as_ref().map(serde_json::to_string).transpose()?,
            ":stderr_tail": record.stderr_tail,
            ":served_tree": record.served_tree.as_ref().map(serde_json::to_string).transpose()?,
            ":foreign_cpu_s": record.foreign_cpu_s,
            ":cpu_pressure_s": record.cpu_pressure_s,
        },
    )?;
    Ok(conn.last_insert_rowid())
}

fn insert_samples(
    conn: &Connection,
    run_id: i64,
    samples: &[Sample],
    u: &mut Unstorable,
) -> Result<()> {
    let mut insert =
        conn.prepare_cached(&sample_rows::insert_sql("INSERT", "samples", "run_id"))?;
    for s in samples {
        insert.execute(rusqlite::params_from_iter(sample_rows::values(
            run_id, s, u,
        )))?;
    }
    Ok(())
}

/// Every marker, numbered in the order read, through one prepared
/// statement: a run may hold a million of them.
fn insert_markers(
    conn: &Connection,
    run_id: i64,
    markers: &[Marker],
    u: &mut Unstorable,
) -> Result<()> {
    let mut insert = conn.prepare_cached(
        "INSERT INTO markers (run_id, seq, pattern, label, t_s, rss_bytes, pss_bytes, vsz_bytes)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for (seq, m) in markers.iter().enumerate() {
        insert.execute(params![
            run_id,
            i64::try_from(seq)?,
            m.pattern,
            m.label,
            m.t_s,
            u.saturating(m.rss_bytes, "marker rss_bytes"),
            u.opt(m.pss_bytes, "marker pss_bytes"),
            u.saturating(m.vsz_bytes, "marker vsz_bytes"),
        ])?;
    }
    Ok(())
}
