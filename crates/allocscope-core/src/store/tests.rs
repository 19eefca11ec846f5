//! Round-trip and error tests for the store, on temporary files.

use super::*;
use crate::model::{
    Config, ExperimentInfo, Host, RunRecord, RunStatus, Sample, StoredConfig, StoredExperiment,
    StoredRun,
};
use anyhow::{anyhow, Context, Result};
use rusqlite::params;

fn info() -> ExperimentInfo {
    ExperimentInfo {
        name: Some("nightly".into()),
        command: vec!["./bench".into(), "--size".into(), "big data".into()],
        started_at: "2026-01-02T03:04:05Z".into(),
        host: Host {
            kernel: "6.1.0-18-amd64".into(),
            glibc: "2.36".into(),
            cpus: 2,
            thp: "madvise".into(),
            cgroup_memory_limit_bytes: Some(4 << 30),
            run_cgroup: Some("v1".into()),
            run_memory_limit_bytes: Some(64 << 20),
            hostname: "box".into(),
            // Round-trips through the environment entry `cpus_emulated`.
            cpus_emulated: Some(crate::model::CpuEmulation {
                cpus: 16,
                pinned: false,
                configs: vec![crate::model::CpuSizing {
                    config: "glibc".into(),
                    action: crate::model::CpuSizingAction::Set,
                    setting: Some("arena_max=128".into()),
                }],
            }),
        },
        runs_per_config: 3,
        warmup: 1,
        interval_ms: 50,
        baseline: "glibc".into(),
        marks: vec![r"MemoryCheck: event (\d+)".into()],
        service: None,
        user_metrics: vec![crate::model::UserMetricInfo {
            name: "ops".into(),
            pattern: "ops: ([0-9.]+)".into(),
            higher_is_better: true,
        }],
    }
}

fn configs() -> Vec<Config> {
    vec![
        Config {
            name: "glibc".into(),
            allocator: "glibc".into(),
            library: Some("/lib/x86_64-linux-gnu/libc.so.6".into()),
            version: Some("2.36".into()),
            env: vec![],
            command: None,
        },
        Config {
            name: "jemalloc:dirty_decay_ms=0".into(),
            allocator: "jemalloc".into(),
            library: Some("/usr/lib/libjemalloc.so.2".into()),
            version: None,
            env: vec![
                ("LD_PRELOAD".into(), "/usr/lib/libjemalloc.so.2".into()),
                ("MALLOC_CONF".into(), "dirty_decay_ms:0".into()),
            ],
            command: None,
        },
        // A `--variant`: its command line round-trips through the
        // environment entry `variants`.
        Config {
            name: "je-build".into(),
            allocator: "variant".into(),
            library: None,
            version: None,
            env: vec![],
            command: Some(vec!["./bench-je".into(), "big data".into()]),
        },
    ]
}

fn record(index: u32, status: RunStatus) -> RunRecord {
    RunRecord {
        index,
        status,
        exit_code: if status == RunStatus::Crashed {
            None
        } else {
            Some(0)
        },
        signal: if status == RunStatus::Crashed {
            Some(11)
        } else {
            None
        },
        wall_s: 1.25 * f64::from(index),
        user_s: 0.5,
        sys_s: 0.125,
        max_hwm_bytes: 10 << 20,
        minor_faults: 1000,
        major_faults: 2,
        samples: vec![
            Sample {
                t_s: 0.0,
                rss_bytes: 1 << 20,
                vsz_bytes: 8 << 20,
                processes: 1,
                threads: 1,
                ..Sample::default()
            },
            Sample {
                t_s: 0.05,
                rss_bytes: 3 << 20,
                pss_bytes: Some(2 << 20),
                uss_bytes: Some(1 << 19),
                swap_bytes: Some(0),
                vsz_bytes: 9 << 20,
                processes: 2,
                threads: 5,
                minor_faults: 700,
                major_faults: 1,
                cpu_s: Some(0.25),
                live_heap_bytes: Some(1 << 20),
                allocator_resident_bytes: Some(2 << 20),
                allocator_retained_bytes: None,
                arenas: Some(4),
                pss_estimated_processes: 2,
                arenas_pid: Some(4321),
                arenas_process: Some(crate::model::ProcessName::new("db_bench")),
                // Parts of distinct sizes: a column read into the wrong
                // part shows. The last, the kernel part, is the cgroup's
                // kernel memory below, stored once.
                breakdown: Some(crate::model::Breakdown::from_parts(
                    [1, 2, 3, 4, 5, 6, 7, 8, 9, 2].map(|k| k << 16),
                )),
                heapless_processes: 1,
                heap_stale_processes: 3,
                cgroup: Some(crate::model::CgroupSample {
                    charge_bytes: 3 << 20,
                    working_set_bytes: 5 << 19,
                    anon_bytes: 2 << 20,
                    file_bytes: 1 << 20,
                    shmem_bytes: 1 << 18,
                    kernel_bytes: 1 << 17,
                    huge_pages_bytes: 0,
                }),
            },
        ],
        markers: vec![
            crate::model::Marker {
                label: "loaded".into(),
                pattern: 0,
                t_s: 0.01,
                rss_bytes: 2 << 20,
                pss_bytes: None,
                vsz_bytes: 8 << 20,
            },
            crate::model::Marker {
                label: "7".into(),
                pattern: 1,
                t_s: 0.05,
                rss_bytes: 3 << 20,
                pss_bytes: Some(2 << 20),
                vsz_bytes: 9 << 20,
            },
        ],
        stdout_path: "/tmp/run/1.out".into(),
        stderr_path: "/tmp/run/1.err".into(),
        message: (status != RunStatus::Ok).then(|| "segfault, \"quoted\"".to_string()),
        linked_allocators: if index == 2 {
            vec!["jemalloc".into()]
        } else {
            vec![]
        },
        sampler_cpu_s: 0.01,
        probe_mode: Some("stats".into()),
        probe_cpu_s: Some(0.001),
        service: None,
        user_metrics: [("ops".to_string(), 1234.5)].into_iter().collect(),
        started_at: "2026-01-02T03:04:06Z".into(),
        reclaim: (index == 1).then(|| crate::model::Reclaim {
            t_s: 1.25,
            trigger: "marker freed".into(),
            rss_before_bytes: 300 << 20,
            rss_after_bytes: 30 << 20,
            processes: 2,
            free_before_bytes: Some(280 << 20),
            live_before_bytes: Some(12 << 20),
            free_counted_bytes: None,
            reach: crate::model::ReclaimReach::Whole,
            unavailable_processes: 0,
        }),
        cgroup_peak_kernel_bytes: Some(7 << 20),
        foreign_cpu_s: Some(0.25 * f64::from(index)),
        cpu_pressure_s: (index == 1).then_some(0.125),
        served_by: (index == 2).then(|| "jemalloc".to_string()),
        stderr_tail: (status != RunStatus::Ok)
            .then(|| "initdb: cannot write /nonexistent | end".to_string()),
        served_tree: (index == 2).then(|| crate::model::ServedTree {
            parts: vec![crate::model::ServedPart {
                allocator: "jemalloc".into(),
                via: Some(crate::model::Via::Linked),
                share: 0.97,
                programs: vec!["daemon".into()],
            }],
            weighed_by: "pss".into(),
            own_api: vec![crate::model::OwnApiUse {
                program: "daemon".into(),
                caller: "libisc.so".into(),
                api_of: "jemalloc".into(),
                reach: "jemalloc".into(),
                malloc: "tcmalloc".into(),
                symbols: vec!["mallocx".into(), "sdallocx".into()],
            }],
            programs: vec!["sh".into(), "daemon".into()],
        }),
    }
}

#[test]
fn stored_experiment_loads_back_equal() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("a.db");
    let mut store = Store::open(&path)?;
    let (id, config_ids) = store.begin_experiment(&info(), &configs())?;
    let mut expected_runs = vec![Vec::new(); config_ids.len()];
    for (slot, &config_id) in config_ids.iter().enumerate() {
        for index in 1..=3 {
            let status = if slot == 1 && index == 3 {
                RunStatus::Crashed
            } else {
                RunStatus::Ok
            };
            let r = record(index, status);
            let run_id = store.add_run(config_id, &r)?;
            expected_runs[slot].push(StoredRun {
                id: run_id,
                record: r,
                legacy_metrics: None,
            });
        }
    }
    store.finish_experiment(id, "complete")?;
    let loaded = store.load_experiment(Some(id))?;
    let expected = StoredExperiment {
        id,
        info: info(),
        status: "complete".into(),
        finished_at: loaded.finished_at.clone(),
        configs: configs()
            .into_iter()
            .zip(config_ids)
            .zip(expected_runs)
            .map(|((config, id), runs)| StoredConfig { id, config, runs })
            .collect(),
    };
    assert!(loaded.finished_at.is_some());
    assert_eq!(loaded, expected);
    assert_eq!(store.load_experiment(None)?, expected);

    let listing = store.list()?;
    assert_eq!(listing.len(), 1);
    assert_eq!(listing[0].configs, 3);
    assert_eq!((listing[0].ok_runs, listing[0].total_runs), (8, 9));
    assert_eq!(listing[0].status, "complete");
    assert_eq!(listing[0].command, info().command);
    Ok(())
}

/// A run big enough to be read by two connections (`markers.rs`) reads
/// back whole and in order, the halves joined where they meet, next to a
/// small run of the same configuration read by one.
#[test]
fn a_run_of_many_markers_reads_back_whole_and_in_order() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut store = Store::open(&dir.path().join("a.db"))?;
    let (id, config_ids) = store.begin_experiment(&info(), &configs())?;
    let mut big = record(1, RunStatus::Ok);
    let template = big.markers[1].clone();
    big.markers = (0..120_001u64)
        .map(|i| crate::model::Marker {
            label: format!("event {i}"),
            rss_bytes: i,
            pss_bytes: (i % 3 == 0).then_some(2 * i),
            ..template.clone()
        })
        .collect();
    store.add_run(config_ids[0], &big)?;
    store.add_run(config_ids[0], &record(2, RunStatus::Ok))?;
    let loaded = store.load_experiment(Some(id))?;
    let runs = &loaded.configs[0].runs;
    assert_eq!(runs[0].record.markers, big.markers);
    assert_eq!(runs[1].record.markers, record(2, RunStatus::Ok).markers);
    Ok(())
}

#[test]
fn runs_survive_without_finish_and_reopen() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("a.db");
    let (id, ids) = {
        let mut store = Store::open(&path)?;
        let (id, ids) = store.begin_experiment(&info(), &configs())?;
        store.add_run(ids[0], &record(1, RunStatus::Ok))?;
        (id, ids)
    };
    let store = Store::open(&path)?;
    let loaded = store.load_experiment(Some(id))?;
    assert_eq!(loaded.configs[0].id, ids[0]);
    assert_eq!(loaded.configs[0].runs.len(), 1);
    // Our own process still owns it, so it is running.
    assert_eq!(loaded.status, "running");
    Ok(())
}

#[test]
fn running_experiment_of_dead_process_is_incomplete() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut store = Store::open(&dir.path().join("a.db"))?;
    let (id, _) = store.begin_experiment(&info(), &configs())?;
    // pid 1 is alive but is not allocscope; a huge pid is not alive.
    for pid in [1_i64, 4_000_000_000] {
        store.conn.execute(
            "UPDATE experiments SET pid = ?1 WHERE id = ?2",
            params![pid, id],
        )?;
        assert_eq!(store.load_experiment(Some(id))?.status, "incomplete");
        assert_eq!(store.list()?[0].status, "incomplete");
    }
    Ok(())
}

#[test]
fn two_handles_writing_alternately_both_succeed() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("shared.db");
    let mut a = Store::open(&path)?;
    let mut b = Store::open(&path)?;
    let (ea, ca) = a.begin_experiment(&info(), &configs())?;
    let (eb, cb) = b.begin_experiment(&info(), &configs())?;
    for index in 1..=3 {
        a.add_run(ca[0], &record(index, RunStatus::Ok))?;
        b.add_run(cb[1], &record(index, RunStatus::Ok))?;
    }
    a.finish_experiment(ea, "complete")?;
    b.finish_experiment(eb, "interrupted")?;
    assert_eq!(b.load_experiment(Some(ea))?.configs[0].runs.len(), 3);
    assert_eq!(a.load_experiment(Some(eb))?.configs[1].runs.len(), 3);
    assert_eq!(a.load_experiment(Some(eb))?.status, "interrupted");
    assert_eq!(a.list()?.len(), 2);
    Ok(())
}

#[test]
fn missing_experiment_error_names_id_and_list_command() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut store = Store::open(&dir.path().join("a.db"))?;
    let empty = format!(
        "{:#}",
        store
            .load_experiment(None)
            .err()
            .context("expected error")?
    );
    assert!(empty.contains("no experiments"), "{empty}");
    store.begin_experiment(&info(), &configs())?;
    let msg = format!(
        "{:#}",
        store
            .load_experiment(Some(42))
            .err()
            .context("expected error")?
    );
    assert!(
        msg.contains("42") && msg.contains("allocscope report --list"),
        "{msg}"
    );
    Ok(())
}

#[test]
fn open_refuses_a_directory() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let msg = format!(
        "{:#}",
        Store::open(dir.path()).err().context("expected error")?
    );
    assert!(msg.contains("is a directory"), "{msg}");
    Ok(())
}

#[test]
fn open_refuses_a_read_only_file() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("ro.db");
    drop(Store::open(&path)?);
    let mut perms = std::fs::metadata(&path)?.permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&path, perms)?;
    let msg = format!("{:#}", Store::open(&path).err().context("expected error")?);
    assert!(msg.contains("read-only"), "{msg}");
    Ok(())
}

#[test]
fn open_refuses_a_newer_schema() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("new.db");
    {
        let conn = rusqlite::Connection::open(&path)?;
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)?;
    }
    let msg = format!("{:#}", Store::open(&path).err().context("expected error")?);
    assert!(msg.contains("newer allocscope"), "{msg}");
    Ok(())
}

#[test]
fn extra_environment_keys_are_kept() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut store = Store::open(&dir.path().join("a.db"))?;
    let (id, _) = store.begin_experiment(&info(), &configs())?;
    store.set_environment(id, "jemalloc_version", "5.3.0")?;
    let env = store.load_environment(id)?;
    assert!(env.contains(&("jemalloc_version".into(), Some("5.3.0".into()))));
    assert!(env.contains(&(
        "cgroup_memory_limit_bytes".into(),
        Some((4_u64 << 30).to_string())
    )));
    Ok(())
}

#[test]
fn failed_add_run_leaves_no_partial_run() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut store = Store::open(&dir.path().join("a.db"))?;
    let (id, ids) = store.begin_experiment(&info(), &configs())?;
    store.add_run(ids[0], &record(1, RunStatus::Ok))?;
    // A sample SQLite refuses: the whole run rolls back, and the error is
    // its own, not a full store.
    store.conn.execute_batch(
        "CREATE TEMP TRIGGER refuse BEFORE INSERT ON samples WHEN NEW.t_s > 100
             BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;",
    )?;
    let mut bad = record(2, RunStatus::Ok);
    bad.samples[1].t_s = 1000.0;
    let error = store.add_run(ids[0], &bad).expect_err("refused");
    assert!(!is_full(&error), "{error:#}");
    assert!(
        format!("{error:#}").contains("refused by the test"),
        "{error:#}"
    );
    store.add_run(ids[0], &record(3, RunStatus::Ok))?;
    let loaded = store.load_experiment(Some(id))?;
    let indexes: Vec<u32> = loaded.configs[0]
        .runs
        .iter()
        .map(|r| r.record.index)
        .collect();
    assert_eq!(indexes, [1, 3]);
    let orphans: i64 = store.conn.query_row(
        "SELECT count(*) FROM samples WHERE run_id NOT IN (SELECT id FROM runs)",
        [],
        |r| r.get(0),
    )?;
    assert_eq!(orphans, 0);
    Ok(())
}

#[test]
fn finish_rejects_unknown_status_and_missing_experiment() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut store = Store::open(&dir.path().join("a.db"))?;
    let (id, _) = store.begin_experiment(&info(), &configs())?;
    assert!(store.finish_experiment(id, "done").is_err());
    assert!(store.finish_experiment(id + 1, "complete").is_err());
    Ok(())
}

#[test]
fn a_service_experiment_round_trips_its_settings_and_run_records() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let mut store = Store::open(&dir.path().join("s.db"))?;
    let mut info = info();
    info.service = Some(crate::model::ServiceInfo {
        ready: "tcp:127.0.0.1:8080".into(),
        load: "http://127.0.0.1:8080/: 100 requests, 2 connections".into(),
        settle_s: 5.0,
        grace_s: 10.0,
    });
    let configs = vec![crate::model::Config {
        name: "glibc".into(),
        allocator: "glibc".into(),
        library: None,
        version: None,
        env: Vec::new(),
        command: None,
    }];
    let (id, config_ids) = store.begin_experiment(&info, &configs)?;
    let mut run = record(1, RunStatus::Ok);
    run.service = Some(crate::model::ServiceRecord {
        ready_s: Some(0.2),
        load_start_s: Some(0.2),
        load_end_s: Some(3.5),
        rss_end_load_bytes: Some(50 << 20),
        latency: Some(crate::model::Latency {
            p50_ms: 1.5,
            p90_ms: 2.0,
            p95_ms: 2.5,
            p99_ms: 4.0,
            p999_ms: 9.0,
            max_ms: 12.0,
            requests: 100,
            errors: 3,
            throughput_rps: 30.3,
        }),
        errors_by_kind: [("status".to_string(), 3)].into_iter().collect(),
        stopped_by: Some("SIGTERM".into()),
        ..Default::default()
    });
    let plain = record(2, RunStatus::Ok);
    store.add_run(config_ids[0], &run)?;
    store.add_run(config_ids[0], &plain)?;
    let loaded = store.load_experiment(Some(id))?;
    assert_eq!(loaded.info.service, info.service);
    let runs = &loaded.configs[0].runs;
    assert_eq!(runs[0].record.service, run.service);
    assert_eq!(runs[1].record.service, None);
    Ok(())
}

#[test]
fn two_stores_opening_one_new_file_at_once_both_open() -> Result<()> {
    // Two compares started together on a new --db: both switch it to WAL,
    // and SQLite fails one at once (not after the busy timeout) when both
    // hold its shared lock.
    let dir = tempfile::tempdir()?;
    for round in 0..30 {
        let path = dir.path().join(format!("store{round}.db"));
        let start = std::sync::Arc::new(std::sync::Barrier::new(2));
        let opens: Vec<_> = (0..2)
            .map(|_| {
                let (path, start) = (path.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    Store::open(&path).map(|_| ()).map_err(|e| format!("{e:#}"))
                })
            })
            .collect();
        for open in opens {
            open.join()
                .expect("joins")
                .map_err(|e| anyhow!("round {round}: {e}"))?;
        }
    }
    Ok(())
}

#[test]
fn a_figure_too_large_to_store_is_unknown_and_the_run_is_kept_with_a_note() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut store = Store::open(&dir.path().join("a.db"))?;
    let (id, ids) = store.begin_experiment(&info(), &configs())?;
    let mut run = record(1, RunStatus::Ok);
    // mstress under tcmalloc: a live heap of -1200 that wrapped.
    run.samples[1].live_heap_bytes = Some(u64::MAX - 1199);
    run.samples[1].breakdown = Some(crate::model::Breakdown::from_parts(
        [u64::MAX; crate::model::Breakdown::COUNT],
    ));
    run.samples[0].rss_bytes = u64::MAX;
    let stored = store.store_run(ids[0], &run)?;
    let note = stored.note.unwrap_or_default();
    assert!(
        note.contains("live_heap_bytes once (18446744073709550416)")
            && note.contains("rss_bytes once")
            && note.contains("breakdown_live_heap_bytes once"),
        "{note}"
    );
    store.add_run(ids[0], &record(2, RunStatus::Ok))?;
    let loaded = store.load_experiment(Some(id))?;
    let runs = &loaded.configs[0].runs;
    assert_eq!(runs.len(), 2);
    let back = &runs[0].record;
    assert_eq!(back.status, RunStatus::Ok);
    assert_eq!(back.samples.len(), 2);
    assert_eq!(back.samples[1].live_heap_bytes, None);
    assert_eq!(back.samples[1].breakdown, None);
    assert_eq!(
        back.samples[1].pss_bytes, run.samples[1].pss_bytes,
        "the rest kept"
    );
    // A column that cannot be NULL keeps the largest figure it can hold.
    assert_eq!(back.samples[0].rss_bytes, i64::MAX as u64);
    assert_eq!(back.message.as_deref(), Some(note.as_str()));
    Ok(())
}

#[test]
fn only_a_store_that_cannot_grow_is_called_full() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut store = Store::open(&dir.path().join("a.db"))?;
    let (_, ids) = store.begin_experiment(&info(), &configs())?;
    store.add_run(ids[0], &record(1, RunStatus::Ok))?;
    // SQLite's page limit fails writes exactly like a full disk (SQLITE_FULL).
    let pages: i64 = store
        .conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))?;
    store.conn.pragma_update(None, "max_page_count", pages)?;
    let mut big = record(2, RunStatus::Ok);
    big.samples = (0..20_000)
        .map(|i| Sample {
            t_s: f64::from(i) * 0.01,
            ..big.samples[1]
        })
        .collect();
    let error = store.add_run(ids[0], &big).expect_err("full");
    assert!(is_full(&error), "{error:#}");
    Ok(())
}
