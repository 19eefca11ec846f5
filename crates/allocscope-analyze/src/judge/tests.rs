//! The judge ranks by the rows it is given, and by no other measure.

use super::*;
use crate::choice::Measures;
use crate::decide::Side;
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
        guard: None,
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
        guard: None,
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

/// glibc and jemalloc over `rounds` rounds, the run of round k taking
/// `wall(k)` / `cpu(k)` seconds under jemalloc and 1 s (0.8 s of CPU)
/// under glibc; memory as in the fixture.
fn timed(rounds: u32, wall: impl Fn(u32) -> f64, cpu: impl Fn(u32) -> f64) -> StoredExperiment {
    let mut e = fixture::experiment();
    e.configs.truncate(2);
    for (c, config) in e.configs.iter_mut().enumerate() {
        let first = config.runs[0].clone();
        config.runs = (1..=rounds)
            .map(|k| {
                let mut run = first.clone();
                run.record.index = k;
                let (w, u) = if c == 0 {
                    (1.0, 0.8)
                } else {
                    (wall(k), cpu(k))
                };
                (run.record.wall_s, run.record.user_s, run.record.sys_s) = (w, u, 0.0);
                run
            })
            .collect();
    }
    e
}

/// The default rows: CPU time guarded by wall time.
fn cpu_guarded_by_wall(e: &StoredExperiment) -> Measures {
    let table = metric_table::of_experiment(&e.info);
    let m = crate::choice::measures(e, 0, &table, &JudgeSettings::default());
    assert_eq!(
        (m.perf.id.as_str(), m.guard.as_ref().map(|g| g.id.as_str())),
        ("cpu_s", Some("wall_s"))
    );
    m
}

/// Threads serialized on one arena's lock: 10% less CPU, 80% more wall
/// time. The CPU figure alone would pass it; the guard settles it out.
#[test]
fn a_candidate_that_spends_less_cpu_and_takes_longer_is_over_the_budget_on_its_wall_time() {
    let wobble = |k: u32| 1.0 + 0.01 * f64::from(k % 3);
    let e = timed(5, |k| 1.8 * wobble(k), |k| 0.72 * wobble(k));
    let measures = cpu_guarded_by_wall(&e);
    let judged = &judge_all(&e, 0, &measures, &JudgeSettings::default())[0];
    assert!(judged.perf.as_ref().expect("cpu").ratio().ci_high < 1.0);
    assert!(judged.guard.as_ref().expect("wall").ratio().ci_low > 1.05);
    assert_eq!(judged.standing.performance, Side::Bad);
    assert!(judged.standing.guard_over && judged.standing.settled_out());
    // Without the guard the CPU figure passes it.
    let alone = Measures {
        guard: None,
        ..measures
    };
    let judged = &judge_all(&e, 0, &alone, &JudgeSettings::default())[0];
    assert_eq!(judged.standing.performance, Side::Good);
}

/// Wall time 30-40% noisy per run, its interval across the budget: the
/// CPU figure settles the budget, and the guard's noise holds nothing open.
#[test]
fn noise_in_wall_time_does_not_hold_open_a_candidate_whose_cpu_settles() {
    let e = timed(
        5,
        |k| [1.5, 0.7, 1.4, 0.8, 1.2][k as usize - 1],
        |k| 0.8 * [0.95, 0.96, 0.95, 0.94, 0.95][k as usize - 1],
    );
    let measures = cpu_guarded_by_wall(&e);
    let judged = &judge_all(&e, 0, &measures, &JudgeSettings::default())[0];
    let wall = judged.guard.as_ref().expect("wall").ratio();
    assert!(wall.ci_low < 1.05 && wall.ci_high > 1.05, "{wall:?}");
    assert_eq!(judged.standing.performance, Side::Good);
    assert!(!judged.standing.guard_over);
}

/// One round of 12 in which jemalloc's run took 60% more CPU (a neighbour
/// the foreign CPU did not catch): the robust ratio keeps the candidate
/// within the 5% budget, where the mean's t interval would reach 1.08x.
#[test]
fn one_far_pair_in_twelve_rounds_moves_the_performance_ratio_little() {
    let cpu = |k: u32| 0.8 * (1.0 + 0.004 * f64::from(k % 4)) * if k == 7 { 1.6 } else { 1.0 };
    let e = timed(12, |k| if k % 2 == 0 { 0.9 } else { 1.1 }, cpu);
    let measures = cpu_guarded_by_wall(&e);
    let judged = &judge_all(&e, 0, &measures, &JudgeSettings::default())[0];
    let perf = judged.perf.as_ref().expect("cpu");
    assert!(perf.robust.is_some());
    assert!(perf.ratio().ci_high < 1.02, "{:?}", perf.ratio());
    assert_eq!(judged.standing.performance, Side::Good);
    let mean = cost_ratio(&e.configs[1], &e.configs[0], &measures.perf).expect("pairs");
    assert!(mean.ratio().ci_high > 1.08, "{:?}", mean.ratio());
}
