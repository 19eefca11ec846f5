//! The SQLite schema and its migrations. The schema version lives in
//! `PRAGMA user_version`; each step moves the file from one version to the
//! next inside a transaction, so a file is never left half-migrated.

use anyhow::{bail, Context, Result};
use rusqlite::Connection;

/// The schema this build writes. Bump it and add a step to `STEPS`.
pub const SCHEMA_VERSION: u32 = 21;

pub(super) const V1: &str = "
CREATE TABLE experiments (
    id              INTEGER PRIMARY KEY,
    name            TEXT,
    command         TEXT NOT NULL,   -- JSON array of strings
    started_at      TEXT NOT NULL,
    finished_at     TEXT,
    status          TEXT NOT NULL,   -- running | complete | interrupted
    pid             INTEGER NOT NULL,-- the allocscope process that writes it
    runs_per_config INTEGER NOT NULL,
    warmup          INTEGER NOT NULL,
    interval_ms     INTEGER NOT NULL,
    baseline        TEXT NOT NULL
);
CREATE TABLE environment (
    experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    key           TEXT NOT NULL,
    value         TEXT,
    PRIMARY KEY (experiment_id, key)
);
CREATE TABLE configs (
    id            INTEGER PRIMARY KEY,
    experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    position      INTEGER NOT NULL,
    name          TEXT NOT NULL,
    allocator     TEXT NOT NULL,
    library       TEXT,
    version       TEXT,
    env           TEXT NOT NULL      -- JSON array of [key, value] pairs, in order
);
CREATE INDEX configs_experiment ON configs(experiment_id);
CREATE TABLE runs (
    id                INTEGER PRIMARY KEY,
    config_id         INTEGER NOT NULL REFERENCES configs(id) ON DELETE CASCADE,
    idx               INTEGER NOT NULL,
    status            TEXT NOT NULL,
    exit_code         INTEGER,
    signal            INTEGER,
    wall_s            REAL NOT NULL,
    user_s            REAL NOT NULL,
    sys_s             REAL NOT NULL,
    max_hwm_bytes     INTEGER NOT NULL,
    minor_faults      INTEGER NOT NULL,
    major_faults      INTEGER NOT NULL,
    peak_rss_bytes    INTEGER NOT NULL,
    mean_rss_bytes    INTEGER NOT NULL,
    final_rss_bytes   INTEGER NOT NULL,
    peak_pss_bytes    INTEGER,
    mean_pss_bytes    INTEGER,
    stdout_path       TEXT NOT NULL,
    stderr_path       TEXT NOT NULL,
    message           TEXT,
    linked_allocators TEXT NOT NULL, -- JSON array of strings
    sampler_cpu_s     REAL NOT NULL,
    started_at        TEXT NOT NULL
);
CREATE INDEX runs_config ON runs(config_id);
CREATE TABLE samples (
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    t_s          REAL NOT NULL,
    rss_bytes    INTEGER NOT NULL,
    pss_bytes    INTEGER,
    uss_bytes    INTEGER,
    swap_bytes   INTEGER,
    vsz_bytes    INTEGER NOT NULL,
    processes    INTEGER NOT NULL,
    threads      INTEGER NOT NULL,
    minor_faults INTEGER NOT NULL,
    major_faults INTEGER NOT NULL
);
CREATE INDEX samples_run ON samples(run_id);
";

/// Version 2: progress markers, one row per marker line of a run; `pattern`
/// is 0 for the built-in `allocscope:mark` and i for the i-th `--mark` (the
/// experiment's `marks` environment entry lists them).
const V2: &str = "
CREATE TABLE markers (
    run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    pattern   INTEGER NOT NULL,
    label     TEXT NOT NULL,
    t_s       REAL NOT NULL,
    rss_bytes INTEGER NOT NULL,
    pss_bytes INTEGER,
    vsz_bytes INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
);
";

/// Version 3: the heap probe (`compare --heap`): live heap, allocator
/// resident/retained bytes and arenas per sample, and per run the probe's
/// mode, its CPU time and the heap metrics. All NULL without the probe.
const V3: &str = "
ALTER TABLE samples ADD COLUMN live_heap_bytes INTEGER;
ALTER TABLE samples ADD COLUMN allocator_resident_bytes INTEGER;
ALTER TABLE samples ADD COLUMN allocator_retained_bytes INTEGER;
ALTER TABLE samples ADD COLUMN arenas INTEGER;
ALTER TABLE runs ADD COLUMN probe_mode TEXT;
ALTER TABLE runs ADD COLUMN probe_cpu_s REAL;
ALTER TABLE runs ADD COLUMN peak_live_heap_bytes INTEGER;
ALTER TABLE runs ADD COLUMN mean_live_heap_bytes INTEGER;
ALTER TABLE runs ADD COLUMN mean_overhead_ratio REAL;
ALTER TABLE runs ADD COLUMN arenas_max INTEGER;
";

/// Version 4: services (`compare --server`): per run, the phases, the load's
/// latency and its notes as one JSON document (`model::ServiceRecord`). The
/// experiment's service settings live in the environment table (`service`).
const V4: &str = "
CREATE TABLE run_services (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    record TEXT NOT NULL
);
";

/// Version 5: long recordings (`allocscope record`), in tables of their own.
/// `recording_samples` holds raw samples for a recent window only; older
/// ones are rolled up into `recording_tiers` (tier 60: per minute, tier
/// 3600: per hour; min/mean/max), so a month-long recording stays small.
const V5: &str = "
CREATE TABLE recordings (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL,
    config       TEXT NOT NULL,   -- the -a configuration, or 'attached' for --pid
    env          TEXT NOT NULL,   -- JSON array of [key, value] pairs
    command      TEXT,            -- JSON array of strings; NULL when attached
    target_pid   INTEGER NOT NULL,
    target_start INTEGER NOT NULL,-- /proc/PID/stat starttime: tells a reused pid apart
    started_at   TEXT NOT NULL,
    started_unix REAL NOT NULL,   -- t_s of every sample counts from here
    interval_ms  INTEGER NOT NULL,
    status       TEXT NOT NULL,   -- running | complete | exited | interrupted | failed
    pid          INTEGER NOT NULL,-- the allocscope process that writes it
    finished_at  TEXT,
    exit_code    INTEGER,
    signal       INTEGER,
    message      TEXT,
    hostname     TEXT NOT NULL
);
CREATE INDEX recordings_target ON recordings(target_pid, target_start);
CREATE TABLE recording_samples (
    recording_id INTEGER NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
    t_s          REAL NOT NULL,
    rss_bytes    INTEGER NOT NULL,
    pss_bytes    INTEGER,
    uss_bytes    INTEGER,
    swap_bytes   INTEGER,
    vsz_bytes    INTEGER NOT NULL,
    processes    INTEGER NOT NULL,
    threads      INTEGER NOT NULL,
    minor_faults INTEGER NOT NULL,
    major_faults INTEGER NOT NULL,
    PRIMARY KEY (recording_id, t_s)
) WITHOUT ROWID;
CREATE TABLE recording_tiers (
    recording_id INTEGER NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
    tier_s       INTEGER NOT NULL,-- 60 or 3600
    t_s          REAL NOT NULL,   -- start of the bucket
    n            INTEGER NOT NULL,-- raw samples in the bucket
    rss_min      INTEGER NOT NULL,
    rss_mean     INTEGER NOT NULL,
    rss_max      INTEGER NOT NULL,
    pss_n        INTEGER NOT NULL,
    pss_min      INTEGER,
    pss_mean     INTEGER,
    pss_max      INTEGER,
    swap_mean    INTEGER,
    vsz_mean     INTEGER NOT NULL,
    processes    INTEGER NOT NULL,-- the most seen
    threads      INTEGER NOT NULL,
    minor_faults INTEGER NOT NULL,-- cumulative, at the end of the bucket
    major_faults INTEGER NOT NULL,
    PRIMARY KEY (recording_id, tier_s, t_s)
) WITHOUT ROWID;
";

/// Version 6: the store keeps observations only; analysis computes a run's
/// metrics from its samples. The metrics older files stored move to
/// `legacy_run_metrics`, read only for a run that has no samples.
/// `recording_samples` gains the heap columns, so both sample tables have one
/// column list (`sample_rows.rs`).
const V6: &str = "
CREATE TABLE legacy_run_metrics (
    run_id               INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    peak_rss_bytes       INTEGER NOT NULL,
    mean_rss_bytes       INTEGER NOT NULL,
    final_rss_bytes      INTEGER NOT NULL,
    peak_pss_bytes       INTEGER,
    mean_pss_bytes       INTEGER,
    peak_live_heap_bytes INTEGER,
    mean_live_heap_bytes INTEGER,
    mean_overhead_ratio  REAL,
    arenas_max           INTEGER
);
INSERT INTO legacy_run_metrics
    SELECT id, peak_rss_bytes, mean_rss_bytes, final_rss_bytes, peak_pss_bytes, mean_pss_bytes,
           peak_live_heap_bytes, mean_live_heap_bytes, mean_overhead_ratio, arenas_max
    FROM runs;
ALTER TABLE runs DROP COLUMN peak_rss_bytes;
ALTER TABLE runs DROP COLUMN mean_rss_bytes;
ALTER TABLE runs DROP COLUMN final_rss_bytes;
ALTER TABLE runs DROP COLUMN peak_pss_bytes;
ALTER TABLE runs DROP COLUMN mean_pss_bytes;
ALTER TABLE runs DROP COLUMN peak_live_heap_bytes;
ALTER TABLE runs DROP COLUMN mean_live_heap_bytes;
ALTER TABLE runs DROP COLUMN mean_overhead_ratio;
ALTER TABLE runs DROP COLUMN arenas_max;
ALTER TABLE recording_samples ADD COLUMN live_heap_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN allocator_resident_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN allocator_retained_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN arenas INTEGER;
";

/// Version 7: per sample (in both sample tables), how many processes' PSS was estimated between
/// full reads, and the process with the most arenas (pid and name).
const V7: &str = "
ALTER TABLE samples ADD COLUMN pss_estimated_processes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE samples ADD COLUMN arenas_pid INTEGER;
ALTER TABLE samples ADD COLUMN arenas_process TEXT;
ALTER TABLE recording_samples ADD COLUMN pss_estimated_processes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE recording_samples ADD COLUMN arenas_pid INTEGER;
ALTER TABLE recording_samples ADD COLUMN arenas_process TEXT;
";

/// Version 8: the user's own metrics (`compare --metric NAME=REGEX`), one
/// row per run and metric that matched. The experiment's specs live in the
/// environment table (`user_metrics`).
const V8: &str = "
CREATE TABLE run_values (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name   TEXT NOT NULL,
    value  REAL NOT NULL,
    PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
";

/// Version 9: per sample (in both sample tables), where its RSS went
/// (`model::Breakdown`: eight parts, all NULL when the tick had none) and
/// how many processes had no allocator figures for it.
const V9: &str = "
ALTER TABLE samples ADD COLUMN heapless_processes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE samples ADD COLUMN breakdown_live_heap_bytes INTEGER;
ALTER TABLE samples ADD COLUMN breakdown_allocator_free_bytes INTEGER;
ALTER TABLE samples ADD COLUMN breakdown_allocator_metadata_bytes INTEGER;
ALTER TABLE samples ADD COLUMN breakdown_huge_pages_bytes INTEGER;
ALTER TABLE samples ADD COLUMN breakdown_lazy_free_bytes INTEGER;
ALTER TABLE samples ADD COLUMN breakdown_other_anon_bytes INTEGER;
ALTER TABLE samples ADD COLUMN breakdown_file_bytes INTEGER;
ALTER TABLE samples ADD COLUMN breakdown_shmem_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN heapless_processes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE recording_samples ADD COLUMN breakdown_live_heap_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN breakdown_allocator_free_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN breakdown_allocator_metadata_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN breakdown_huge_pages_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN breakdown_lazy_free_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN breakdown_other_anon_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN breakdown_file_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN breakdown_shmem_bytes INTEGER;
";

/// Version 10: the run's memory cgroup, per sample in both sample tables
/// (the charge, the working set and `memory.stat`'s parts; NULL for a run
/// without a group) and per run (the kernel's own peak of the charge).
const V10: &str = "
ALTER TABLE samples ADD COLUMN cgroup_charge_bytes INTEGER;
ALTER TABLE samples ADD COLUMN cgroup_working_set_bytes INTEGER;
ALTER TABLE samples ADD COLUMN cgroup_anon_bytes INTEGER;
ALTER TABLE samples ADD COLUMN cgroup_file_bytes INTEGER;
ALTER TABLE samples ADD COLUMN cgroup_shmem_bytes INTEGER;
ALTER TABLE samples ADD COLUMN cgroup_kernel_bytes INTEGER;
ALTER TABLE samples ADD COLUMN cgroup_huge_pages_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN cgroup_charge_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN cgroup_working_set_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN cgroup_anon_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN cgroup_file_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN cgroup_shmem_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN cgroup_kernel_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN cgroup_huge_pages_bytes INTEGER;
ALTER TABLE runs ADD COLUMN cgroup_peak_kernel_bytes INTEGER;
";

/// Version 11: which allocator served each run's `malloc` (`alloc::served`;
/// NULL for a run stored before, or when it could not be told).
const V11: &str = "
ALTER TABLE runs ADD COLUMN served_by TEXT;
";

/// Version 12: per run, the reclaim test (`model::Reclaim` as JSON; NULL
/// when it did not run).
const V12: &str = "
ALTER TABLE runs ADD COLUMN reclaim TEXT;
";

/// Version 13: per sample (in both sample tables), how many processes'
/// heap probe readings were stale (`Sample::heap_stale_processes`), so a
/// run can say how much of it its breakdown covers.
const V13: &str = "
ALTER TABLE samples ADD COLUMN heap_stale_processes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE recording_samples ADD COLUMN heap_stale_processes INTEGER NOT NULL DEFAULT 0;
";

/// Version 14: per sample (in both sample tables), the breakdown's unknown
/// part (`Breakdown::unknown_bytes`: the anonymous memory of processes
/// without allocator counters holding over a fifth of the tree's RSS);
/// NULL in the rows stored before, read as zero.
const V14: &str = "
ALTER TABLE samples ADD COLUMN breakdown_unknown_bytes INTEGER;
ALTER TABLE recording_samples ADD COLUMN breakdown_unknown_bytes INTEGER;
";

/// Version 15: soaks (`allocscope soak`): one row per soak with the
/// arguments it was started with (so `soak --resume` can start it again),
/// and each recording's soak, NULL for `record`'s.
const V15: &str = "
CREATE TABLE soaks (
    id           INTEGER PRIMARY KEY,
    started_at   TEXT NOT NULL,
    started_unix REAL NOT NULL,
    arguments    TEXT NOT NULL    -- JSON array: allocscope's arguments, `soak` first
);
ALTER TABLE recordings ADD COLUMN soak_id INTEGER REFERENCES soaks(id) ON DELETE CASCADE;
CREATE INDEX recordings_soak ON recordings(soak_id);
";

/// Version 16: each restart of a soak's instance (`--restart`, or the soak
/// resumed after its allocscope died), marked at the recording's `t_s`: the
/// statistics after it start a new plateau.
const V16: &str = "
CREATE TABLE recording_restarts (
    recording_id INTEGER NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
    t_s          REAL NOT NULL,
    why          TEXT NOT NULL,
    PRIMARY KEY (recording_id, t_s)
);
";

/// Version 17: the last lines of a failed run's stderr (`run::stderr_tail`),
/// so that its reports say why in the program's own words.
const V17: &str = "
ALTER TABLE runs ADD COLUMN stderr_tail TEXT;
";

/// Version 19: the CPU that ran on the machine beside each run, outside
/// allocscope and its tree, and the time tasks waited for a CPU
/// (`sample::machine_cpu`); NULL in runs stored before.
const V19: &str = "
ALTER TABLE runs ADD COLUMN foreign_cpu_s REAL;
ALTER TABLE runs ADD COLUMN cpu_pressure_s REAL;
";

/// Version 20: each sample's CPU time of the tree (`model::Sample::cpu_s`;
/// NULL in the rows stored before), for a soak's CPU per instance.
const V20: &str = "
ALTER TABLE samples ADD COLUMN cpu_s REAL;
ALTER TABLE recording_samples ADD COLUMN cpu_s REAL;
";

/// Version 21: what a soak instance's load printed that a `--metric`
/// matched, each match a reading at the time the soak read it.
const V21: &str = "
CREATE TABLE recording_readings (
    recording_id     INTEGER NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
    t_s              REAL NOT NULL,
    name             TEXT NOT NULL,
    value            REAL NOT NULL,
    higher_is_better INTEGER NOT NULL
);
CREATE INDEX recording_readings_recording ON recording_readings(recording_id);
";

/// Reads the file's schema version.
pub fn version(conn: &Connection) -> Result<u32> {
    conn.query_row("PRAGMA user_version", [], |row| row.get::<_, u32>(0))
        .context("reading the schema version")
}

/// Version 18: per run, which allocator served the tree's memory, process
/// by process (`model::ServedTree` as JSON; NULL for a run stored before).
const V18: &str = "
ALTER TABLE runs ADD COLUMN served_tree TEXT;
";

/// Brings the schema up to `SCHEMA_VERSION`, one step at a time. Refuses a
/// file written by a newer allocscope rather than guessing at its layout.
pub(crate) fn migrate(conn: &mut Connection) -> Result<()> {
    let mut current = version(conn)?;
    if current > SCHEMA_VERSION {
        bail!(
            "the database has schema version {current}, but this allocscope only knows \
             version {SCHEMA_VERSION}; use a newer allocscope or another --db file"
        );
    }
    while current < SCHEMA_VERSION {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        // Another process may have migrated while we waited for the lock.
        let seen = version(&tx)?;
        if seen == current {
            migrate_step(&tx, current)?;
            tx.pragma_update(None, "user_version", current + 1)?;
        }
        tx.commit()
            .with_context(|| format!("migrating the schema from version {current}"))?;
        current = version(conn)?;
    }
    Ok(())
}

/// The migration steps: the i-th moves the schema from version i to i + 1,
/// with what it does for the error's context.
const STEPS: [(&str, &str); SCHEMA_VERSION as usize] = [
    (V1, "creating the schema"),
    (V2, "adding the markers table"),
    (V3, "adding the heap probe's columns"),
    (V4, "adding the services table"),
    (V5, "adding the recordings tables"),
    (V6, "moving the stored run metrics to legacy_run_metrics"),
    (V7, "adding the estimated-PSS and arena-process columns"),
    (V8, "adding the run_values table"),
    (V9, "adding the breakdown columns"),
    (V10, "adding the memory cgroup's columns"),
    (V11, "adding the served_by column"),
    (V12, "adding the reclaim column"),
    (V13, "adding the heap_stale_processes column"),
    (V14, "adding the breakdown_unknown_bytes column"),
    (V15, "adding the soaks table"),
    (V16, "adding the recording_restarts table"),
    (V17, "adding the stderr_tail column"),
    (V18, "adding the served_tree column"),
    (V19, "adding the foreign CPU columns"),
    (V20, "adding the samples' CPU column"),
    (V21, "adding the recording_readings table"),
];

/// Moves the schema from `from` to `from + 1`.
fn migrate_step(conn: &Connection, from: u32) -> Result<()> {
    let Some((sql, what)) = STEPS.get(from as usize) else {
        bail!("no migration from schema version {from}");
    };
    conn.execute_batch(sql).context(*what)
}

#[cfg(test)]
mod tests;
