//! Every sample of every run in long format (one row per sample), for
//! plotting timelines. Absent PSS/USS/swap readings are empty cells; so is
//! the breakdown (`breakdown_<part>`, where the tick's RSS went) on a tick
//! that had none, after the processes without allocator figures; then the
//! run's memory cgroup (`cgroup_<part>`), empty on a tick without one.

use super::format::{csv_line, opt};
use super::reporter::Reporter;
use allocscope_analyze::types::Analysis;
use allocscope_core::model::{Breakdown, CgroupSample};
use anyhow::Result;

#[derive(Debug, Clone, Copy, Default)]
pub struct SamplesCsvReporter;

const HEADER: [&str; 13] = [
    "config",
    "run",
    "t_s",
    "rss_bytes",
    "pss_bytes",
    "uss_bytes",
    "swap_bytes",
    "vsz_bytes",
    "processes",
    "threads",
    "minor_faults",
    "major_faults",
    "run_status",
];

/// The header: the columns above, then the breakdown's.
fn header() -> Vec<String> {
    let mut h: Vec<String> = HEADER.iter().map(|h| h.to_string()).collect();
    h.push("heapless_processes".to_string());
    h.extend(Breakdown::KEYS.iter().map(|k| format!("breakdown_{k}")));
    h.extend(CGROUP_COLUMNS.iter().map(|(k, _)| k.to_string()));
    h
}

type CgroupPart = fn(&CgroupSample) -> u64;

/// The run's memory cgroup at each tick, after the breakdown; empty cells
/// on a tick without a group.
const CGROUP_COLUMNS: [(&str, CgroupPart); 7] = [
    ("cgroup_charge_bytes", |c| c.charge_bytes),
    ("cgroup_working_set_bytes", |c| c.working_set_bytes),
    ("cgroup_anon_bytes", |c| c.anon_bytes),
    ("cgroup_file_bytes", |c| c.file_bytes),
    ("cgroup_shmem_bytes", |c| c.shmem_bytes),
    ("cgroup_kernel_bytes", |c| c.kernel_bytes),
    ("cgroup_huge_pages_bytes", |c| c.huge_pages_bytes),
];

impl Reporter for SamplesCsvReporter {
    fn render(&self, analysis: &Analysis) -> Result<Vec<u8>> {
        let mut out = csv_line(header());
        for config in &analysis.experiment.configs {
            for run in &config.runs {
                for s in &run.record.samples {
                    let mut row = vec![
                        config.config.name.clone(),
                        run.record.index.to_string(),
                        s.t_s.to_string(),
                        s.rss_bytes.to_string(),
                        opt(s.pss_bytes),
                        opt(s.uss_bytes),
                        opt(s.swap_bytes),
                        s.vsz_bytes.to_string(),
                        s.processes.to_string(),
                        s.threads.to_string(),
                        s.minor_faults.to_string(),
                        s.major_faults.to_string(),
                        run.record.status.as_str().to_string(),
                        opt(s.breakdown.map(|_| s.heapless_processes)),
                    ];
                    let parts = s.breakdown.map(|b| b.parts());
                    row.extend((0..Breakdown::COUNT).map(|i| opt(parts.map(|p| p[i]))));
                    row.extend(
                        CGROUP_COLUMNS
                            .iter()
                            .map(|(_, part)| opt(s.cgroup.as_ref().map(part))),
                    );
                    out.push_str(&csv_line(row));
                }
            }
        }
        Ok(out.into_bytes())
    }
}
