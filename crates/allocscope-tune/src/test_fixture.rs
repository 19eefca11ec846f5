//! Experiments with chosen figures for the race's tests: each configuration
//! one run per round, each run a constant RSS (MiB) for its wall time (s),
//! its CPU time 80% of that, so the budget's default figure (CPU time,
//! guarded by wall time) moves with it.

use allocscope_core::fixture;
use allocscope_core::model::{RunStatus, Sample, StoredConfig, StoredExperiment};

/// A configuration named `name` with one run per `(rss_mib, wall_s)`, in
/// round order from 1.
pub(crate) fn with_runs(name: &str, runs: &[(f64, f64)]) -> StoredConfig {
    let template = fixture::experiment().configs[0].clone();
    let mut config = template.clone();
    config.config.name = name.to_string();
    config.runs = runs
        .iter()
        .enumerate()
        .map(|(i, &(mib, wall_s))| {
            let mut run = template.runs[0].clone();
            run.record.index = i as u32 + 1;
            run.record.status = RunStatus::Ok;
            run.record.wall_s = wall_s;
            (run.record.user_s, run.record.sys_s) = (0.8 * wall_s, 0.0);
            run.record.markers.clear();
            run.record.samples = (0..4)
                .map(|k| Sample {
                    t_s: f64::from(k) * 0.1,
                    rss_bytes: (mib * 1048576.0) as u64,
                    processes: 1,
                    threads: 1,
                    ..Sample::default()
                })
                .collect();
            run
        })
        .collect();
    config
}

/// The fixture's experiment with these configurations, the first the baseline.
pub fn experiment(configs: Vec<StoredConfig>) -> StoredExperiment {
    let mut e = fixture::experiment();
    e.info.baseline = configs[0].config.name.clone();
    e.info.marks.clear();
    e.configs = configs;
    e
}
