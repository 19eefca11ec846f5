//! Reading experiments back: one whole experiment for analysis, or a short
//! listing of all of them. An experiment still marked `running` whose
//! allocscope process is gone is reported as `incomplete`.

use super::convert::{opt_u64_at, u64_at};
use super::open::Store;
use super::write::VARIANTS_KEY;
use crate::model::{
    Config, ExperimentInfo, Host, RunMetrics, RunRecord, RunStatus, Sample, ServiceRecord,
    StoredConfig, StoredExperiment, StoredRun,
};
use anyhow::{anyhow, bail, Context, Result};
use rusqlite::{params, OptionalExtension, Row};
use std::collections::HashMap;
use std::path::PathBuf;

/// One line of `allocscope report --list`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ExperimentListing {
    pub id: i64,
    pub name: Option<String>,
    pub started_at: String,
    pub status: String,
    pub command: Vec<String>,
    pub configs: usize,
    pub ok_runs: usize,
    pub total_runs: usize,
}

impl Store {
    /// Loads an experiment with all its configurations, runs and samples;
    /// `None` loads the latest one.
    pub fn load_experiment(&self, id: Option<i64>) -> Result<StoredExperiment> {
        let id = match id {
            Some(id) => id,
            None => self
                .conn
                .query_row("SELECT max(id) FROM experiments", [], |r| {
                    r.get::<_, Option<i64>>(0)
                })?
                .ok_or_else(|| {
                    anyhow!(
                        "no experiments in '{}' yet; record one with `allocscope run`",
                        self.path.display()
                    )
                })?,
        };
        let row = self
            .conn
            .query_row(
                "SELECT name, command, started_at, finished_at, status, pid, runs_per_config,
                        warmup, interval_ms, baseline
                 FROM experiments WHERE id = ?1",
                params![id],
                |r| {
                    // What is not a column of this row is filled in below.
                    let info = ExperimentInfo {
                        name: r.get(0)?,
                        command: Vec::new(),
                        started_at: r.get(2)?,
                        host: Host::default(),
                        runs_per_config: r.get(6)?,
                        warmup: r.get(7)?,
                        interval_ms: u64_at(r, 8)?,
                        baseline: r.get(9)?,
                        marks: Vec::new(),
                        service: None,
                        user_metrics: Vec::new(),
                    };
                    let experiment = StoredExperiment {
                        id,
                        info,
                        status: effective_status(&r.get::<_, String>(4)?, r.get(5)?),
                        finished_at: r.get(3)?,
                        configs: Vec::new(),
                    };
                    Ok((experiment, r.get::<_, String>(1)?))
                },
            )
            .optional()
            .with_context(|| format!("reading experiment {id}"))?;
        let Some((mut experiment, command)) = row else {
            bail!(
                "no experiment {id} in '{}'; `allocscope report --list` shows the stored ones",
                self.path.display()
            );
        };
        let info = &mut experiment.info;
        info.command = parse_json(&command, "command")?;
        // Read once: the host and every stored JSON entry come from it.
        let environment = self.load_environment(id)?;
        info.host = host_of(&environment)?;
        info.marks = environment_json(&environment, "marks", "marks")?.unwrap_or_default();
        info.service = environment_json(&environment, "service", "service")?;
        let metrics = crate::user_metric::ENVIRONMENT_KEY;
        info.user_metrics =
            environment_json(&environment, metrics, "--metric specs")?.unwrap_or_default();
        // The `--variant` configurations' command lines by name.
        let variants = environment_json(&environment, VARIANTS_KEY, "--variant command lines")?;
        experiment.configs = self.load_configs(id, variants.unwrap_or_default())?;
        Ok(experiment)
    }

    /// Every environment entry of an experiment, host fields and extras alike.
    pub fn load_environment(&self, experiment_id: i64) -> Result<Vec<(String, Option<String>)>> {
        let mut stmt = self.conn.prepare(
            "SELECT key, value FROM environment WHERE experiment_id = ?1 ORDER BY rowid",
        )?;
        let rows = stmt.query_map(params![experiment_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .with_context(|| format!("reading the environment of experiment {experiment_id}"))
    }

    /// A run's service record; `None` for ordinary runs.
    fn load_run_service(&self, run_id: i64) -> Result<Option<ServiceRecord>> {
        let json: Option<String> = self
            .conn
            .query_row(
                "SELECT record FROM run_services WHERE run_id = ?1",
                params![run_id],
                |r| r.get(0),
            )
            .optional()
            .with_context(|| format!("reading the service record of run {run_id}"))?;
        json.map(|j| parse_json(&j, "service record")).transpose()
    }

    fn load_configs(
        &self,
        experiment_id: i64,
        mut variants: HashMap<String, Vec<String>>,
    ) -> Result<Vec<StoredConfig>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, name, allocator, library, version, env FROM configs
             WHERE experiment_id = ?1 ORDER BY position",
        )?;
        // The env is JSON and the command a variant's, filled in after.
        let rows = stmt
            .query_map(params![experiment_id], |r| {
                let config = Config {
                    name: r.get(1)?,
                    allocator: r.get(2)?,
                    library: r.get::<_, Option<String>>(3)?.map(PathBuf::from),
                    version: r.get(4)?,
                    env: Vec::new(),
                    command: None,
                };
                Ok((r.get::<_, i64>(0)?, config, r.get::<_, String>(5)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()
            .with_context(|| format!("reading configurations of experiment {experiment_id}"))?;
        let mut configs = Vec::with_capacity(rows.len());
        for (id, mut config, env) in rows {
            config.env = parse_json(&env, "configuration env")?;
            config.command = variants.remove(&config.name);
            configs.push(StoredConfig {
                id,
                config,
                runs: self.load_runs(id)?,
            });
        }
        Ok(configs)
    }

    fn load_runs(&self, config_id: i64) -> Result<Vec<StoredRun>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, idx, status, exit_code, signal, wall_s, user_s, sys_s, max_hwm_bytes,
                    minor_faults, major_faults, stdout_path, stderr_path, message,
                    linked_allocators, sampler_cpu_s, started_at, probe_mode, probe_cpu_s,
                    cgroup_peak_kernel_bytes,
                    served_by, reclaim, stderr_tail, served_tree,
                    foreign_cpu_s, cpu_pressure_s
             FROM runs WHERE config_id = ?1 ORDER BY idx, id",
        )?;
        let rows = stmt
            .query_map(params![config_id], run_from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .with_context(|| format!("reading runs of configuration {config_id}"))?;
        let mut runs = Vec::with_capacity(rows.len());
        for (id, status, linked, (reclaim, served_tree), mut record) in rows {
            record.status = RunStatus::parse(&status)
                .ok_or_else(|| anyhow!("run {id} has an unknown status '{status}'"))?;
            record.linked_allocators = parse_json(&linked, "linked_allocators")?;
            record.reclaim = reclaim
                .map(|json| parse_json(&json, "reclaim"))
                .transpose()?;
            record.served_tree = served_tree
                .map(|json| parse_json(&json, "served_tree"))
                .transpose()?;
            record.samples = self.load_samples(id)?;
            record.markers = super::markers::load(&self.conn, &self.path, id)?;
            record.service = self.load_run_service(id)?;
            record.user_metrics = self.load_run_values(id)?;
            runs.push(StoredRun {
                id,
                record,
                legacy_metrics: self.load_legacy_metrics(id)?,
            });
        }
        Ok(runs)
    }

    /// The metrics a pre-version-6 file stored for a run (see `schema::V6`).
    fn load_legacy_metrics(&self, run_id: i64) -> Result<Option<RunMetrics>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT peak_rss_bytes, mean_rss_bytes, final_rss_bytes, peak_pss_bytes,
                    mean_pss_bytes, peak_live_heap_bytes, mean_live_heap_bytes,
                    mean_overhead_ratio, arenas_max
             FROM legacy_run_metrics WHERE run_id = ?1",
        )?;
        stmt.query_row(params![run_id], |r| {
            Ok(RunMetrics {
                peak_rss_bytes: u64_at(r, "peak_rss_bytes")?,
                mean_rss_bytes: u64_at(r, "mean_rss_bytes")?,
                final_rss_bytes: u64_at(r, "final_rss_bytes")?,
                peak_pss_bytes: opt_u64_at(r, "peak_pss_bytes")?,
                mean_pss_bytes: opt_u64_at(r, "mean_pss_bytes")?,
                peak_live_heap_bytes: opt_u64_at(r, "peak_live_heap_bytes")?,
                mean_live_heap_bytes: opt_u64_at(r, "mean_live_heap_bytes")?,
                mean_overhead_ratio: r.get("mean_overhead_ratio")?,
                arenas_max: r.get("arenas_max")?,
                ..RunMetrics::default()
            })
        })
        .optional()
        .with_context(|| format!("reading the stored metrics of run {run_id}"))
    }

    fn load_samples(&self, run_id: i64) -> Result<Vec<Sample>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {} FROM samples WHERE run_id = ?1 ORDER BY rowid",
            super::sample_rows::COLUMNS
        ))?;
        let rows = stmt.query_map(params![run_id], super::sample_rows::from_row)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .with_context(|| format!("reading samples of run {run_id}"))
    }

    /// The run's `--metric` values by name.
    fn load_run_values(&self, run_id: i64) -> Result<std::collections::BTreeMap<String, f64>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT name, value FROM run_values WHERE run_id = ?1")?;
        let rows = stmt.query_map(params![run_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<rusqlite::Result<_>>()
            .with_context(|| format!("reading the --metric values of run {run_id}"))
    }

    /// All experiments, oldest first.
    pub fn list(&self) -> Result<Vec<ExperimentListing>> {
        let mut stmt = self.conn.prepare(
            "SELECT e.id, e.name, e.started_at, e.status, e.pid, e.command,
                    (SELECT count(*) FROM configs c WHERE c.experiment_id = e.id),
                    (SELECT count(*) FROM runs r JOIN configs c ON r.config_id = c.id
                        WHERE c.experiment_id = e.id AND r.status = 'ok'),
                    (SELECT count(*) FROM runs r JOIN configs c ON r.config_id = c.id
                        WHERE c.experiment_id = e.id)
             FROM experiments e ORDER BY e.id",
        )?;
        // The command is JSON, parsed outside the row mapping for its own error.
        let rows = stmt.query_map([], |r| {
            let listing = ExperimentListing {
                id: r.get(0)?,
                name: r.get(1)?,
                started_at: r.get(2)?,
                status: effective_status(&r.get::<_, String>(3)?, r.get(4)?),
                command: Vec::new(),
                configs: u64_at(r, 6)? as usize,
                ok_runs: u64_at(r, 7)? as usize,
                total_runs: u64_at(r, 8)? as usize,
            };
            Ok((listing, r.get::<_, String>(5)?))
        })?;
        rows.map(|row| {
            let (listing, command) = row.context("listing experiments")?;
            let command = parse_json(&command, "command")?;
            Ok(ExperimentListing { command, ..listing })
        })
        .collect()
    }
}

/// (id, status, linked_allocators, (reclaim, served_tree), record).
type RunRow = (
    i64,
    String,
    String,
    (Option<String>, Option<String>),
    RunRecord,
);

/// The scalar columns of a run, by name; status, JSON and samples are
/// filled in after.
fn run_from_row(r: &Row<'_>) -> rusqlite::Result<RunRow> {
    let record = RunRecord {
        index: r.get("idx")?,
        status: RunStatus::Ok,
        exit_code: r.get("exit_code")?,
        signal: r.get("signal")?,
        wall_s: r.get("wall_s")?,
        user_s: r.get("user_s")?,
        sys_s: r.get("sys_s")?,
        max_hwm_bytes: u64_at(r, "max_hwm_bytes")?,
        minor_faults: u64_at(r, "minor_faults")?,
        major_faults: u64_at(r, "major_faults")?,
        samples: Vec::new(),
        markers: Vec::new(),
        stdout_path: PathBuf::from(r.get::<_, String>("stdout_path")?),
        stderr_path: PathBuf::from(r.get::<_, String>("stderr_path")?),
        message: r.get("message")?,
        linked_allocators: Vec::new(),
        sampler_cpu_s: r.get("sampler_cpu_s")?,
        started_at: r.get("started_at")?,
        probe_mode: r.get("probe_mode")?,
        probe_cpu_s: r.get("probe_cpu_s")?,
        served_by: r.get("served_by")?,
        service: None,
        user_metrics: Default::default(),
        reclaim: None,
        cgroup_peak_kernel_bytes: opt_u64_at(r, "cgroup_peak_kernel_bytes")?,
        stderr_tail: r.get("stderr_tail")?,
        served_tree: None,
        foreign_cpu_s: r.get("foreign_cpu_s")?,
        cpu_pressure_s: r.get("cpu_pressure_s")?,
    };
    Ok((
        r.get("id")?,
        r.get("status")?,
        r.get("linked_allocators")?,
        (r.get("reclaim")?, r.get("served_tree")?),
        record,
    ))
}

/// The host an experiment ran on, from its environment entries.
fn host_of(environment: &[(String, Option<String>)]) -> Result<Host> {
    let mut host = Host::default();
    for (key, value) in environment {
        let value = value.clone().unwrap_or_default();
        match key.as_str() {
            "kernel" => host.kernel = value,
            "glibc" => host.glibc = value,
            "cpus" => host.cpus = value.parse().unwrap_or(0),
            "thp" => host.thp = value,
            "cgroup_memory_limit_bytes" => host.cgroup_memory_limit_bytes = value.parse().ok(),
            "hostname" => host.hostname = value,
            "run_cgroup" => host.run_cgroup = Some(value).filter(|v| !v.is_empty()),
            "run_memory_limit_bytes" => host.run_memory_limit_bytes = value.parse().ok(),
            "cpus_emulated" if !value.is_empty() => {
                host.cpus_emulated = Some(parse_json(&value, "cpus_emulated")?);
            }
            _ => {}
        }
    }
    Ok(host)
}

/// The JSON stored under environment `key`, parsed; `None` for files
/// written before the key existed or experiments without it (`what` names
/// it in the error).
fn environment_json<T: serde::de::DeserializeOwned>(
    environment: &[(String, Option<String>)],
    key: &str,
    what: &str,
) -> Result<Option<T>> {
    match environment.iter().find(|(k, _)| k == key) {
        Some((_, Some(json))) => parse_json(json, what).map(Some),
        _ => Ok(None),
    }
}

fn parse_json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_str(text).with_context(|| format!("the stored {what} is not valid JSON"))
}

/// `running` only while the allocscope that owns the experiment is alive;
/// otherwise it died without finishing and the experiment is `incomplete`.
pub(super) fn effective_status(status: &str, pid: i64) -> String {
    if status == "running" && !owner_alive(pid) {
        "incomplete".to_string()
    } else {
        status.to_string()
    }
}

/// True when `pid` is this process or a live process named allocscope (a pid
/// reused by another program does not count).
fn owner_alive(pid: i64) -> bool {
    if pid == i64::from(std::process::id()) {
        return true;
    }
    if pid <= 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/comm")) {
        Ok(comm) => comm.trim_end().starts_with("allocscope"),
        Err(_) => false,
    }
}
