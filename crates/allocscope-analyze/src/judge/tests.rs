//! The judge ranks by the rows it is given, and by no other measure.

use super::*;
use crate::choice::Measures;
use crate::metric_table::{self, find};
use crate::metrics;
use allocscope_core::fixture;

/// The fixture with a spike in jemalloc's PSS at its last sample: its peak
/// PSS is far above glibc's while its mean PSS, and its RSS, stay below.
fn spiky() -> StoredExperiment {
    let mut e = fixture::experiment();
    for run in &mut e.configs[1].runs {
        run.record.samples[3].pss_bytes = Some(4 << 30);
    }
    e
}

/// jemalloc's memory ratio to glibc when judged by row `id`.
fn judged_ratio(e: &StoredExperiment, id: &str) -> f64 {
    let table = metric_table::of_experiment(&e.info);
    let row = |id: &str| find(&table, id).cloned().expect("a built-in row");
    let measures = Measures {
        memory: row(id),
        perf: row("wall_s"),
    };
    let judged = judge_all(e, 0, &measures, &JudgeSettings::default());
    judged[0]
        .memory
        .as_ref()
        .expect("paired runs")
        .ratio()
        .value
}

/// jemalloc's ratio to glibc of `pick`, computed from the runs directly.
fn direct_ratio(e: &StoredExperiment, pick: fn(&allocscope_core::model::RunMetrics) -> f64) -> f64 {
    let values = |c: &StoredConfig| -> Vec<(u32, f64)> {
        ok_runs(c)
            .map(|r| (r.record.index, pick(&metrics::of(r))))
            .collect()
    };
    let r = log_ratio(&values(&e.configs[1]), &values(&e.configs[0])).expect("pairs");
    r.ratio().value
}

#[test]
fn the_memory_ratio_is_the_given_rows() {
    let e = spiky();
    let peak_pss = direct_ratio(&e, |m| m.peak_pss_bytes.unwrap_or(0) as f64);
    let mean_pss = direct_ratio(&e, |m| m.mean_pss_bytes.unwrap_or(0) as f64);
    let peak_rss = direct_ratio(&e, |m| m.peak_rss_bytes as f64);
    // Three measures that disagree, so a judge reading another would show.
    assert!(peak_pss > 10.0 && mean_pss < peak_pss / 2.0 && peak_rss < 1.0);
    assert!((judged_ratio(&e, "peak_pss_bytes") - peak_pss).abs() < 1e-9);
    assert!((judged_ratio(&e, "mean_pss_bytes") - mean_pss).abs() < 1e-9);
    assert!((judged_ratio(&e, "peak_rss_bytes") - peak_rss).abs() < 1e-9);
}

#[test]
fn a_row_where_higher_is_better_is_judged_by_its_cost() {
    let e = fixture::with_user_metric(true);
    let table = metric_table::of_experiment(&e.info);
    let ops = find(&table, "user.ops").expect("the --metric row");
    let cost = cost_ratio(&e.configs[1], &e.configs[0], ops).expect("pairs");
    // jemalloc does about 10% more: a cost of about 1/1.1, shown as 1.10x.
    assert!(
        (cost.ratio().value - 1.0 / 1.1).abs() < 0.01,
        "{}",
        cost.ratio().value
    );
    assert!((shown(ops, &cost).value - 1.1).abs() < 0.01);
}

/// A neighbour's burst beside jemalloc's run 2 made it 60% slower: the
/// performance ratio leaves its round out, the memory ratio keeps it.
#[test]
fn a_disturbed_round_is_left_out_of_the_performance_ratio_only() {
    let mut e = fixture::experiment();
    for config in &mut e.configs {
        for run in &mut config.runs {
            run.record.foreign_cpu_s = Some(0.05 * run.record.wall_s);
        }
    }
    let slowed = &mut e.configs[1].runs[1].record;
    slowed.wall_s *= 1.6;
    slowed.foreign_cpu_s = Some(1.0 * slowed.wall_s);
    let table = metric_table::of_experiment(&e.info);
    let row = |id: &str| find(&table, id).cloned().expect("a built-in row");
    let measures = Measures {
        memory: row("mean_rss_bytes"),
        perf: row("wall_s"),
    };
    let judged = &judge_all(&e, 0, &measures, &JudgeSettings::default())[0];
    let perf = judged.perf.as_ref().expect("pairs");
    let wall = |c: &StoredConfig| -> Vec<(u32, f64)> {
        ok_runs(c)
            .filter(|r| r.record.index != 2)
            .map(|r| (r.record.index, r.record.wall_s))
            .collect()
    };
    let clean = log_ratio(&wall(&e.configs[1]), &wall(&e.configs[0])).expect("pairs");
    assert_eq!(perf.n, clean.n);
    assert!((perf.centre - clean.centre).abs() < 1e-12);
    let all = cost_ratio(&e.configs[1], &e.configs[0], &measures.perf).expect("pairs");
    assert!(all.n == perf.n + 1 && all.centre > perf.centre + 0.05);
    // Memory: every round, the disturbed one included.
    let memory = judged.memory.as_ref().expect("pairs");
    assert_eq!(memory.n, all.n);
}
