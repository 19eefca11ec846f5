//! A hand-built, deterministic experiment for tests of analysis and of every
//! reporter: three configurations, one crashed run, one linked allocator,
//! markers (one label repeated, one missing from a run) and a `--mark` that
//! never matched.

use crate::model::{
    Config, ExperimentInfo, Host, Marker, RunRecord, RunStatus, Sample, StoredConfig,
    StoredExperiment, StoredRun,
};

/// The directory the fixture's run output paths live under (the report
/// snapshots redact it, as they would a real temporary directory).
pub const RUN_DIR: &str = "/tmp/allocscope-fixture";

const MIB: u64 = 1 << 20;

fn samples(base_mib: u64, index: u32) -> Vec<Sample> {
    let wobble = u64::from(index) * MIB / 4;
    let rss = [base_mib / 4, base_mib / 2, base_mib, base_mib * 3 / 4];
    rss.iter()
        .enumerate()
        .map(|(i, &mib)| Sample {
            t_s: i as f64 * 0.05,
            rss_bytes: mib * MIB + wobble,
            pss_bytes: (i % 2 == 1).then_some(mib * MIB * 9 / 10 + wobble),
            uss_bytes: (i % 2 == 1).then_some(mib * MIB * 8 / 10),
            swap_bytes: (i % 2 == 1).then_some(0),
            vsz_bytes: (mib + 200) * MIB,
            processes: 1 + (i as u32 % 2),
            threads: 4,
            minor_faults: 100 * (i as u64 + 1),
            major_faults: 0,
            ..Sample::default()
        })
        .collect()
}

/// Markers `load`, `build` and `done` at samples 0, 1 and 3 (mimalloc builds
/// twice; jemalloc's run 5 never says `done`).
fn markers(config: &str, samples: &[Sample], index: u32) -> Vec<Marker> {
    let mut at = vec![("load", 0), ("build", 1)];
    if config.starts_with("mimalloc") {
        at.push(("build", 2));
    }
    if !(config == "jemalloc" && index == 5) {
        at.push(("done", 3));
    }
    at.into_iter()
        .map(|(label, i)| Marker {
            label: label.to_string(),
            pattern: 0,
            t_s: samples[i].t_s + 0.01,
            rss_bytes: samples[i].rss_bytes,
            pss_bytes: samples[i].pss_bytes,
            vsz_bytes: samples[i].vsz_bytes,
        })
        .collect()
}

fn run(config: &str, base_mib: u64, wall_s: f64, index: u32, id: i64) -> StoredRun {
    let status = if config == "jemalloc" && index == 3 {
        RunStatus::Crashed
    } else {
        RunStatus::Ok
    };
    let samples = samples(base_mib, index);
    let record = RunRecord {
        index,
        status,
        exit_code: (status == RunStatus::Ok).then_some(0),
        signal: (status == RunStatus::Crashed).then_some(11),
        wall_s: wall_s + f64::from(index) * 0.01,
        user_s: wall_s * 0.8 + f64::from(index) * 0.005,
        sys_s: 0.05,
        max_hwm_bytes: base_mib * MIB * 9 / 10,
        minor_faults: 400 + u64::from(index),
        major_faults: 0,
        markers: markers(config, &samples, index),
        samples,
        stdout_path: format!("{RUN_DIR}/{config}/{index}.out").into(),
        stderr_path: format!("{RUN_DIR}/{config}/{index}.err").into(),
        message: (status == RunStatus::Crashed)
            .then(|| "killed by SIGSEGV, core dumped".to_string()),
        linked_allocators: if config.starts_with("mimalloc") {
            vec!["jemalloc".to_string()]
        } else {
            vec![]
        },
        sampler_cpu_s: 0.002,
        probe_mode: None,
        probe_cpu_s: None,
        service: None,
        user_metrics: Default::default(),
        reclaim: None,
        cgroup_peak_kernel_bytes: None,
        served_tree: None,
        foreign_cpu_s: None,
        cpu_pressure_s: None,
        served_by: None,
        stderr_tail: (status == RunStatus::Crashed)
            .then(|| "tree: building | free(): invalid pointer".to_string()),
        started_at: format!("2026-01-02T03:04:{:02}Z", 10 + index),
    };
    StoredRun {
        id,
        record,
        legacy_metrics: None,
    }
}

fn config(name: &str, allocator: &str, env: &[(&str, &str)]) -> Config {
    Config {
        name: name.to_string(),
        allocator: allocator.to_string(),
        library: Some(if allocator == "glibc" {
            "/lib/x86_64-linux-gnu/libc.so.6".into()
        } else {
            format!("/usr/lib/x86_64-linux-gnu/lib{allocator}.so").into()
        }),
        version: Some("1.0".to_string()),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        command: None,
    }
}

/// Experiment 7: `glibc` (the baseline), `jemalloc` (run 3 crashed) and
/// `mimalloc,eager` (a name that needs CSV quoting; the program links jemalloc).
pub fn experiment() -> StoredExperiment {
    let specs: [(Config, u64, f64); 3] = [
        (config("glibc", "glibc", &[]), 120, 2.0),
        (
            config(
                "jemalloc",
                "jemalloc",
                &[("LD_PRELOAD", "/usr/lib/libjemalloc.so.2")],
            ),
            64,
            2.1,
        ),
        (
            config(
                "mimalloc,eager",
                "mimalloc",
                &[
                    ("LD_PRELOAD", "/usr/lib/libmimalloc.so"),
                    ("MIMALLOC_EAGER_COMMIT", "1"),
                ],
            ),
            118,
            0.6,
        ),
    ];
    let mut next_id = 0;
    let configs = specs
        .into_iter()
        .enumerate()
        .map(|(i, (config, base_mib, wall_s))| {
            let runs = (1..=5)
                .map(|index| {
                    next_id += 1;
                    run(&config.name, base_mib, wall_s, index, next_id)
                })
                .collect();
            StoredConfig {
                id: i as i64 + 1,
                config,
                runs,
            }
        })
        .collect();
    StoredExperiment {
        id: 7,
        info: ExperimentInfo {
            name: Some("nightly".to_string()),
            command: vec!["./bench".into(), "--size".into(), "big data".into()],
            started_at: "2026-01-02T03:04:05Z".to_string(),
            host: Host {
                kernel: "6.1.0-18-amd64".to_string(),
                glibc: "2.36".to_string(),
                cpus: 2,
                thp: "madvise".to_string(),
                cgroup_memory_limit_bytes: Some(4 << 30),
                run_cgroup: None,
                run_memory_limit_bytes: None,
                hostname: "box".to_string(),
                cpus_emulated: None,
            },
            runs_per_config: 5,
            warmup: 1,
            interval_ms: 50,
            baseline: "glibc".to_string(),
            marks: vec![r"MemoryCheck: event (\d+)".to_string()],
            service: None,
            user_metrics: Vec::new(),
        },
        status: "complete".to_string(),
        finished_at: Some("2026-01-02T03:05:00Z".to_string()),
        configs,
    }
}

/// `experiment()` with one `--metric` (`ops`, higher is better when asked):
/// glibc prints about 1000 ops/s, jemalloc about 10% more, and
/// `mimalloc,eager` about 5% less, except its run 2, which printed nothing
/// that matched.
pub fn with_user_metric(higher_is_better: bool) -> StoredExperiment {
    let mut e = experiment();
    e.info.user_metrics = vec![crate::model::UserMetricInfo {
        name: "ops".to_string(),
        pattern: "([0-9.]+) ops/sec".to_string(),
        higher_is_better,
    }];
    for (config, ops) in e.configs.iter_mut().zip([1000.0, 1100.0, 950.0]) {
        let mimalloc = config.config.name.starts_with("mimalloc");
        for run in &mut config.runs {
            let index = run.record.index;
            if mimalloc && index == 2 {
                continue;
            }
            // A small wobble per round, shared by every configuration.
            let value = ops * (1.0 + f64::from(index % 3) * 0.004);
            run.record.user_metrics.insert("ops".to_string(), value);
        }
    }
    e
}
