//! Migrations: files of every earlier schema version open and keep what
//! they hold.

use super::*;
use crate::store::Store;

#[test]
fn a_version_1_file_opens_and_migrates_keeping_its_runs() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("v1.db");
    {
        let conn = Connection::open(&path)?;
        conn.execute_batch(V1)?;
        conn.pragma_update(None, "user_version", 1)?;
        conn.execute_batch(
            "INSERT INTO experiments VALUES (1, NULL, '[\"./a\"]', '2026-01-01T00:00:00Z',
                 '2026-01-01T00:01:00Z', 'complete', 1, 1, 0, 100, 'glibc');
             INSERT INTO environment VALUES (1, 'kernel', '6.1');
             INSERT INTO configs VALUES (1, 1, 0, 'glibc', 'glibc', NULL, NULL, '[]');
             INSERT INTO runs VALUES (1, 1, 1, 'ok', 0, NULL, 1.0, 0.5, 0.1, 1048576, 10, 0,
                 1048576, 1048576, 1048576, NULL, NULL, '/tmp/o', '/tmp/e', NULL, '[]', 0.0,
                 '2026-01-01T00:00:00Z');
             INSERT INTO samples VALUES (1, 0.0, 1048576, NULL, NULL, NULL, 2097152, 1, 1, 0, 0);",
        )?;
    }
    let store = Store::open(&path)?;
    assert_eq!(version(&store.conn)?, SCHEMA_VERSION);
    let e = store.load_experiment(Some(1))?;
    assert!(e.info.marks.is_empty());
    let run = &e.configs[0].runs[0].record;
    assert_eq!(run.samples.len(), 1);
    assert!(run.markers.is_empty());
    let markers: i64 = store
        .conn
        .query_row("SELECT count(*) FROM markers", [], |r| r.get(0))?;
    assert_eq!(markers, 0);
    Ok(())
}

#[test]
fn a_version_2_file_migrates_and_its_runs_have_no_heap_figures() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("v2.db");
    {
        let conn = Connection::open(&path)?;
        conn.execute_batch(V1)?;
        conn.execute_batch(V2)?;
        conn.pragma_update(None, "user_version", 2)?;
        conn.execute_batch(
            "INSERT INTO experiments VALUES (1, NULL, '[\"./a\"]', '2026-01-01T00:00:00Z',
                 '2026-01-01T00:01:00Z', 'complete', 1, 1, 0, 100, 'glibc');
             INSERT INTO configs VALUES (1, 1, 0, 'glibc', 'glibc', NULL, NULL, '[]');
             INSERT INTO runs VALUES (1, 1, 1, 'ok', 0, NULL, 1.0, 0.5, 0.1, 1048576, 10, 0,
                 1048576, 1048576, 1048576, NULL, NULL, '/tmp/o', '/tmp/e', NULL, '[]', 0.0,
                 '2026-01-01T00:00:00Z');
             INSERT INTO samples VALUES (1, 0.0, 1048576, NULL, NULL, NULL, 2097152, 1, 1, 0, 0);
             INSERT INTO markers VALUES (1, 0, 0, 'start', 0.0, 1048576, NULL, 2097152);",
        )?;
    }
    let store = Store::open(&path)?;
    assert_eq!(version(&store.conn)?, SCHEMA_VERSION);
    let e = store.load_experiment(Some(1))?;
    let run = &e.configs[0].runs[0];
    assert_eq!(run.record.markers.len(), 1);
    assert_eq!(run.record.samples[0].live_heap_bytes, None);
    assert_eq!(
        (
            run.record.probe_mode.clone(),
            run.record
                .samples
                .iter()
                .filter_map(|s| s.live_heap_bytes)
                .max()
        ),
        (None, None)
    );
    Ok(())
}

#[test]
fn a_version_4_file_gains_the_recordings_tables_and_keeps_its_experiments() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("v4.db");
    {
        let conn = Connection::open(&path)?;
        for step in [V1, V2, V3, V4] {
            conn.execute_batch(step)?;
        }
        conn.pragma_update(None, "user_version", 4)?;
        conn.execute_batch(
            "INSERT INTO experiments VALUES (1, 'kept', '[\"./a\"]', '2026-01-01T00:00:00Z',
                 '2026-01-01T00:01:00Z', 'complete', 1, 1, 0, 100, 'glibc');",
        )?;
    }
    let store = Store::open(&path)?;
    assert_eq!(version(&store.conn)?, SCHEMA_VERSION);
    assert_eq!(store.list()?[0].name.as_deref(), Some("kept"));
    assert!(store.list_recordings()?.is_empty());
    Ok(())
}

#[test]
fn a_version_5_file_keeps_its_experiments_and_metrics() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("v5.db");
    {
        let conn = Connection::open(&path)?;
        for step in [V1, V2, V3, V4, V5] {
            conn.execute_batch(step)?;
        }
        conn.pragma_update(None, "user_version", 5)?;
        // Run 1 has samples; run 2's were lost, only its stored metrics remain.
        conn.execute_batch(
            "INSERT INTO experiments VALUES (1, 'old', '[\"./a\"]', '2026-01-01T00:00:00Z',
                 '2026-01-01T00:01:00Z', 'complete', 1, 2, 0, 100, 'glibc');
             INSERT INTO configs VALUES (1, 1, 0, 'glibc', 'glibc', NULL, NULL, '[]');
             INSERT INTO runs VALUES (1, 1, 1, 'ok', 0, NULL, 1.0, 0.5, 0.1, 1000, 10, 0,
                 3000, 2000, 1000, NULL, NULL, '/tmp/o', '/tmp/e', NULL, '[]', 0.0,
                 '2026-01-01T00:00:00Z', NULL, NULL, NULL, NULL, NULL, NULL);
             INSERT INTO runs VALUES (2, 1, 2, 'ok', 0, NULL, 1.0, 0.5, 0.1, 1000, 10, 0,
                 7000, 6000, 5000, 4500, 4000, '/tmp/o', '/tmp/e', NULL, '[]', 0.0,
                 '2026-01-01T00:00:00Z', 'stats', 0.01, 900, 800, 7.5, 4);
             INSERT INTO samples VALUES (1, 0.0, 1000, NULL, NULL, NULL, 2000, 1, 1, 0, 0,
                 NULL, NULL, NULL, NULL);
             INSERT INTO samples VALUES (1, 1.0, 3000, NULL, NULL, NULL, 2000, 1, 1, 0, 0,
                 NULL, NULL, NULL, NULL);",
        )?;
    }
    let store = Store::open(&path)?;
    assert_eq!(version(&store.conn)?, SCHEMA_VERSION);
    let e = store.load_experiment(Some(1))?;
    assert_eq!(e.info.name.as_deref(), Some("old"));
    let runs = &e.configs[0].runs;
    assert_eq!(runs.len(), 2);
    // With samples, the samples are kept (the analysis computes from them).
    let rss: Vec<u64> = runs[0].record.samples.iter().map(|s| s.rss_bytes).collect();
    assert_eq!(rss, [1000, 3000]);
    // Without, the stored figures are kept (the analysis uses them).
    let m = runs[1].legacy_metrics.expect("the stored metrics kept");
    assert_eq!(
        (m.peak_rss_bytes, m.mean_rss_bytes, m.final_rss_bytes),
        (7000, 6000, 5000)
    );
    assert_eq!(
        (m.peak_pss_bytes, m.mean_pss_bytes),
        (Some(4500), Some(4000))
    );
    assert_eq!(
        (m.peak_live_heap_bytes, m.mean_live_heap_bytes),
        (Some(900), Some(800))
    );
    assert_eq!((m.mean_overhead_ratio, m.arenas_max), (Some(7.5), Some(4)));
    assert_eq!(runs[1].record.probe_mode.as_deref(), Some("stats"));
    let columns: i64 = store.conn.query_row(
        "SELECT count(*) FROM pragma_table_info('runs') WHERE name LIKE '%rss%'",
        [],
        |r| r.get(0),
    )?;
    assert_eq!(columns, 0, "the runs table keeps observations only");
    Ok(())
}

#[test]
fn a_version_8_file_gains_the_breakdown_columns_and_its_samples_have_none() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("v8.db");
    {
        let conn = Connection::open(&path)?;
        for step in [V1, V2, V3, V4, V5, V6, V7, V8] {
            conn.execute_batch(step)?;
        }
        conn.pragma_update(None, "user_version", 8)?;
        conn.execute_batch(
            "INSERT INTO experiments VALUES (1, 'v8', '[\"./a\"]', '2026-01-01T00:00:00Z',
                 '2026-01-01T00:01:00Z', 'complete', 1, 1, 0, 100, 'glibc');
             INSERT INTO configs VALUES (1, 1, 0, 'glibc', 'glibc', NULL, NULL, '[]');
             INSERT INTO runs VALUES (1, 1, 1, 'ok', 0, NULL, 1.0, 0.5, 0.1, 1000, 10, 0,
                 '/tmp/o', '/tmp/e', NULL, '[]', 0.0, '2026-01-01T00:00:00Z', 'stats', 0.01);
             INSERT INTO samples (run_id, t_s, rss_bytes, vsz_bytes, processes, threads,
                 minor_faults, major_faults, live_heap_bytes)
                 VALUES (1, 0.0, 1000, 2000, 1, 1, 0, 0, 500);",
        )?;
    }
    let store = Store::open(&path)?;
    assert_eq!(version(&store.conn)?, SCHEMA_VERSION);
    let e = store.load_experiment(Some(1))?;
    let sample = &e.configs[0].runs[0].record.samples[0];
    assert_eq!(sample.live_heap_bytes, Some(500));
    assert_eq!((sample.breakdown, sample.heapless_processes), (None, 0));
    let columns: i64 = store.conn.query_row(
        "SELECT count(*) FROM pragma_table_info('recording_samples')
         WHERE name LIKE 'breakdown_%' OR name = 'heapless_processes'",
        [],
        |r| r.get(0),
    )?;
    // Eight parts then, the unknown part's column since version 14.
    assert_eq!(columns, 10);
    Ok(())
}

#[test]
fn a_version_9_file_gains_the_cgroup_columns_and_its_runs_have_no_cgroup_figures() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("v9.db");
    {
        let conn = Connection::open(&path)?;
        for step in [V1, V2, V3, V4, V5, V6, V7, V8, V9] {
            conn.execute_batch(step)?;
        }
        conn.pragma_update(None, "user_version", 9)?;
        conn.execute_batch(
            "INSERT INTO experiments VALUES (1, 'v9', '[\"./a\"]', '2026-01-01T00:00:00Z',
                 '2026-01-01T00:01:00Z', 'complete', 1, 1, 0, 100, 'glibc');
             INSERT INTO configs VALUES (1, 1, 0, 'glibc', 'glibc', NULL, NULL, '[]');
             INSERT INTO runs VALUES (1, 1, 1, 'ok', 0, NULL, 1.0, 0.5, 0.1, 1000, 10, 0,
                 '/tmp/o', '/tmp/e', NULL, '[]', 0.0, '2026-01-01T00:00:00Z', NULL, NULL);
             INSERT INTO samples (run_id, t_s, rss_bytes, vsz_bytes, processes, threads,
                 minor_faults, major_faults) VALUES (1, 0.0, 1000, 2000, 1, 1, 0, 0);",
        )?;
    }
    let store = Store::open(&path)?;
    assert_eq!(version(&store.conn)?, SCHEMA_VERSION);
    let e = store.load_experiment(Some(1))?;
    let run = &e.configs[0].runs[0];
    assert_eq!(run.record.samples.len(), 1);
    assert_eq!(run.record.samples[0].cgroup, None);
    assert_eq!(run.record.cgroup_peak_kernel_bytes, None);
    assert_eq!(e.info.host.run_cgroup, None);
    Ok(())
}

#[test]
fn a_version_10_file_gains_served_by_and_its_runs_have_none() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("v10.db");
    {
        let conn = Connection::open(&path)?;
        for step in [V1, V2, V3, V4, V5, V6, V7, V8, V9, V10] {
            conn.execute_batch(step)?;
        }
        conn.pragma_update(None, "user_version", 10)?;
        conn.execute_batch(
            "INSERT INTO experiments VALUES (1, 'v10', '[\"./a\"]', '2026-01-01T00:00:00Z',
                 '2026-01-01T00:01:00Z', 'complete', 1, 1, 0, 100, 'glibc');
             INSERT INTO configs VALUES (1, 1, 0, 'glibc', 'glibc', NULL, NULL, '[]');
             INSERT INTO runs VALUES (1, 1, 1, 'ok', 0, NULL, 1.0, 0.5, 0.1, 1000, 10, 0,
                 '/tmp/o', '/tmp/e', NULL, '[]', 0.0, '2026-01-01T00:00:00Z', NULL, NULL, NULL);",
        )?;
    }
    let store = Store::open(&path)?;
    assert_eq!(version(&store.conn)?, SCHEMA_VERSION);
    let e = store.load_experiment(Some(1))?;
    assert_eq!(e.configs[0].runs[0].record.served_by, None);
    Ok(())
}

#[test]
fn a_version_11_file_gains_the_reclaim_column_and_its_runs_have_none() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("v11.db");
    {
        let conn = Connection::open(&path)?;
        for step in [V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11] {
            conn.execute_batch(step)?;
        }
        conn.pragma_update(None, "user_version", 11)?;
        conn.execute_batch(
            "INSERT INTO experiments VALUES (1, 'v11', '[\"./a\"]', '2026-01-01T00:00:00Z',
                 '2026-01-01T00:01:00Z', 'complete', 1, 1, 0, 100, 'glibc');
             INSERT INTO configs VALUES (1, 1, 0, 'glibc', 'glibc', NULL, NULL, '[]');
             INSERT INTO runs VALUES (1, 1, 1, 'ok', 0, NULL, 1.0, 0.5, 0.1, 1000, 10, 0,
                 '/tmp/o', '/tmp/e', NULL, '[]', 0.0, '2026-01-01T00:00:00Z', 'stats', 0.01,
                 NULL, 'glibc');",
        )?;
    }
    let store = Store::open(&path)?;
    assert_eq!(version(&store.conn)?, SCHEMA_VERSION);
    let e = store.load_experiment(Some(1))?;
    assert_eq!(e.configs[0].runs[0].record.reclaim, None);
    assert_eq!(
        e.configs[0].runs[0].record.served_by.as_deref(),
        Some("glibc")
    );
    assert_eq!(e.configs[0].runs[0].record.wall_s, 1.0);
    Ok(())
}

#[test]
fn a_version_13_files_breakdowns_load_with_an_unknown_part_of_zero() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("v13.db");
    {
        let conn = Connection::open(&path)?;
        for step in [V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11, V12, V13] {
            conn.execute_batch(step)?;
        }
        conn.pragma_update(None, "user_version", 13)?;
        conn.execute_batch(
            "INSERT INTO experiments VALUES (1, 'v13', '[\"./a\"]', '2026-01-01T00:00:00Z',
                 '2026-01-01T00:01:00Z', 'complete', 1, 1, 0, 100, 'glibc');
             INSERT INTO configs VALUES (1, 1, 0, 'glibc', 'glibc', NULL, NULL, '[]');
             INSERT INTO runs VALUES (1, 1, 1, 'ok', 0, NULL, 1.0, 0.5, 0.1, 1000, 10, 0,
                 '/tmp/o', '/tmp/e', NULL, '[]', 0.0, '2026-01-01T00:00:00Z', 'stats', 0.01,
                 NULL, 'glibc', NULL);
             INSERT INTO samples (run_id, t_s, rss_bytes, vsz_bytes, processes, threads,
                 minor_faults, major_faults, breakdown_live_heap_bytes,
                 breakdown_allocator_free_bytes, breakdown_allocator_metadata_bytes,
                 breakdown_huge_pages_bytes, breakdown_lazy_free_bytes,
                 breakdown_other_anon_bytes, breakdown_file_bytes, breakdown_shmem_bytes)
                 VALUES (1, 0.5, 100, 200, 1, 1, 0, 0, 60, 10, 0, 0, 0, 20, 10, 0);",
        )?;
    }
    let store = Store::open(&path)?;
    assert_eq!(version(&store.conn)?, SCHEMA_VERSION);
    let e = store.load_experiment(Some(1))?;
    let b = e.configs[0].runs[0].record.samples[0]
        .breakdown
        .expect("the stored breakdown");
    assert_eq!(
        (b.live_heap_bytes, b.unknown_bytes, b.total_bytes()),
        (60, 0, 100)
    );
    Ok(())
}

#[test]
fn a_version_16_file_gains_the_stderr_tail_column_and_its_runs_have_none() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("v16.db");
    {
        let conn = Connection::open(&path)?;
        let steps = [
            V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11, V12, V13, V14, V15, V16,
        ];
        for step in steps {
            conn.execute_batch(step)?;
        }
        conn.pragma_update(None, "user_version", 16)?;
        conn.execute_batch(
            "INSERT INTO experiments VALUES (1, 'v16', '[\"./a\"]', '2026-01-01T00:00:00Z',
                 '2026-01-01T00:01:00Z', 'complete', 1, 1, 0, 100, 'glibc');
             INSERT INTO configs VALUES (1, 1, 0, 'glibc', 'glibc', NULL, NULL, '[]');
             INSERT INTO runs VALUES (1, 1, 1, 'failed', 1, NULL, 1.0, 0.5, 0.1, 1000, 10, 0,
                 '/tmp/o', '/tmp/e', 'exited with code 1', '[]', 0.0, '2026-01-01T00:00:00Z',
                 'stats', 0.01, NULL, 'glibc', NULL);",
        )?;
    }
    let store = Store::open(&path)?;
    assert_eq!(version(&store.conn)?, SCHEMA_VERSION);
    let e = store.load_experiment(Some(1))?;
    let run = &e.configs[0].runs[0].record;
    assert_eq!(run.stderr_tail, None);
    assert_eq!(run.failure_words().as_deref(), Some("exited with code 1"));
    Ok(())
}

#[test]
fn a_version_16_file_gains_the_foreign_cpu_columns_and_its_runs_have_none() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("v16.db");
    {
        let conn = Connection::open(&path)?;
        for step in [
            V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11, V12, V13, V14, V15, V16,
        ] {
            conn.execute_batch(step)?;
        }
        conn.pragma_update(None, "user_version", 16)?;
        conn.execute_batch(
            "INSERT INTO experiments VALUES (1, 'v16', '[\"./a\"]', '2026-01-01T00:00:00Z',
                 '2026-01-01T00:01:00Z', 'complete', 1, 1, 0, 100, 'glibc');
             INSERT INTO configs VALUES (1, 1, 0, 'glibc', 'glibc', NULL, NULL, '[]');
             INSERT INTO runs VALUES (1, 1, 1, 'ok', 0, NULL, 1.0, 0.5, 0.1, 1000, 10, 0,
                 '/tmp/o', '/tmp/e', NULL, '[]', 0.0, '2026-01-01T00:00:00Z', 'stats', 0.01,
                 NULL, 'glibc', NULL);",
        )?;
    }
    let store = Store::open(&path)?;
    assert_eq!(version(&store.conn)?, SCHEMA_VERSION);
    let e = store.load_experiment(Some(1))?;
    let run = &e.configs[0].runs[0].record;
    assert_eq!((run.foreign_cpu_s, run.cpu_pressure_s), (None, None));
    assert_eq!(run.user_s, 0.5);
    Ok(())
}
