//! The memory limit each configuration needs: its highest peak over its
//! `ok` runs plus `--limit-headroom` (20% by default), rounded up to a
//! whole MiB. The peak is the one a container platform limits on where the
//! runs had a memory cgroup: the working set (what Kubernetes counts and
//! evicts on), else the cgroup's charge; without a group, the tree's peak
//! PSS (a tree of several processes) or RSS (`choice::tree_row` for
//! `peak`). The deploy lines carry the recommended configuration's figure.

use super::choice::tree_row;
use super::metric_table::{self, MetricDef};
use allocscope_core::model::{StoredConfig, StoredExperiment};
use serde::Serialize;

const MIB: u64 = 1 << 20;

/// The rows a limit is taken from, best first; the tree's peak PSS or RSS
/// comes after them.
const CGROUP_BASES: [&str; 2] = ["peak_working_set_bytes", "peak_cgroup_bytes"];

/// The limit one configuration needs, and what it was computed from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LimitNeed {
    /// The limit: `peak_bytes` plus `headroom_pct`, a whole number of MiB.
    pub bytes: u64,
    /// The highest peak over the configuration's ok runs.
    pub peak_bytes: u64,
    /// The metric-table row of that peak (`peak_working_set_bytes`,
    /// `peak_cgroup_bytes`, `peak_pss_bytes` or `peak_rss_bytes`).
    pub basis: String,
    /// Its label, for the reports: `peak working set`.
    #[serde(skip)]
    pub basis_label: String,
    pub headroom_pct: f64,
    /// The ok runs the peak is the highest of.
    pub runs: usize,
}

impl LimitNeed {
    /// The limit in MiB, as the deploy lines write it.
    pub fn mib(&self) -> u64 {
        self.bytes / MIB
    }
}

/// `peak_bytes` plus `headroom_pct`, rounded up to a whole MiB (at least 1).
pub(crate) fn with_headroom(peak_bytes: u64, headroom_pct: f64) -> u64 {
    let wanted = peak_bytes as f64 * (1.0 + headroom_pct / 100.0);
    let mib = (wanted / MIB as f64).ceil().max(1.0) as u64;
    mib * MIB
}

/// The limit `config` needs from the first of `rows` that every ok run
/// measured; `None` without ok runs or a row they all measured.
fn of_config(config: &StoredConfig, rows: &[&MetricDef], headroom_pct: f64) -> Option<LimitNeed> {
    let ok: Vec<_> = super::metrics::ok_runs(config).collect();
    rows.iter().find_map(|row| {
        let peaks: Option<Vec<f64>> = ok.iter().map(|r| (row.extract)(r)).collect();
        let peak = peaks?.into_iter().reduce(f64::max)? as u64;
        Some(LimitNeed {
            bytes: with_headroom(peak, headroom_pct),
            peak_bytes: peak,
            basis: row.id.clone(),
            basis_label: row.label.clone(),
            headroom_pct,
            runs: ok.len(),
        })
    })
}

/// One limit per configuration, in order (`None` where no ok run measured
/// a peak); `table` is the experiment's metric table.
pub fn summarize(
    experiment: &StoredExperiment,
    baseline: usize,
    table: &[MetricDef],
    headroom_pct: f64,
) -> Vec<Option<LimitNeed>> {
    let tree =
        metric_table::tree_word("peak").and_then(|w| tree_row(experiment, baseline, table, w));
    let rows: Vec<&MetricDef> = CGROUP_BASES
        .iter()
        .filter_map(|id| metric_table::find(table, id))
        .chain(tree)
        .collect();
    experiment
        .configs
        .iter()
        .map(|c| of_config(c, &rows, headroom_pct))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocscope_core::model::CgroupSample;

    #[test]
    fn the_headroom_is_added_and_rounded_up_to_a_whole_mib() {
        assert_eq!(with_headroom(100 * MIB, 20.0), 120 * MIB);
        assert_eq!(with_headroom(100 * MIB + 1, 20.0), 121 * MIB);
        assert_eq!(with_headroom(0, 20.0), MIB);
        assert_eq!(with_headroom(10 * MIB, 0.0), 10 * MIB);
    }

    #[test]
    fn the_limit_is_the_highest_working_set_peak_else_the_tree_peak() {
        let mut e = allocscope_core::fixture::experiment();
        let table = metric_table::of_experiment(&e.info);
        // Without a cgroup: the fixture's tree of several processes gives
        // its peak PSS, the highest of its ok runs.
        let limits = summarize(&e, 0, &table, 20.0);
        let glibc = limits[0].clone().expect("glibc measured");
        assert_eq!(glibc.basis, "peak_pss_bytes");
        let highest = crate::metrics::ok_runs(&e.configs[0])
            .filter_map(|r| crate::metrics::of(r).peak_pss_bytes)
            .max();
        assert_eq!(Some(glibc.peak_bytes), highest);
        assert_eq!(glibc.bytes, with_headroom(glibc.peak_bytes, 20.0));
        // With a cgroup on every tick of every run: the working set's peak.
        for run in &mut e.configs[0].runs {
            let idx = u64::from(run.record.index);
            for s in &mut run.record.samples {
                s.cgroup = Some(CgroupSample {
                    charge_bytes: 90 * MIB,
                    working_set_bytes: (50 + idx) * MIB,
                    ..CgroupSample::default()
                });
            }
        }
        let glibc = summarize(&e, 0, &table, 50.0)[0].clone().expect("measured");
        let most = crate::metrics::ok_runs(&e.configs[0])
            .map(|r| u64::from(r.record.index))
            .max()
            .unwrap_or(0);
        assert_eq!(
            (glibc.basis.as_str(), glibc.peak_bytes),
            ("peak_working_set_bytes", (50 + most) * MIB)
        );
        assert_eq!(glibc.bytes, with_headroom((50 + most) * MIB, 50.0));
        assert_eq!(glibc.basis_label, "peak working set");
    }
}
