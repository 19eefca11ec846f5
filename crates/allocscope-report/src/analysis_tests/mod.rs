//! Tests of `analyze` on the shared fixture experiment.

use crate::verdict_words::{explanation, reason};
use allocscope_analyze::summary::BASELINE_RATIO;
use allocscope_analyze::*;
use allocscope_core::fixture;
use allocscope_core::judging::JudgeSettings;
use anyhow::Result;

#[test]
fn unknown_baseline_lists_the_configuration_names() {
    let err = analyze(fixture::experiment(), "tcmalloc").err();
    let msg = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(msg.contains("'tcmalloc'"), "{msg}");
    assert!(msg.contains("glibc, jemalloc, mimalloc,eager"), "{msg}");
}

#[test]
fn summaries_count_only_ok_runs() -> Result<()> {
    let a = analyze(fixture::experiment(), "glibc")?;
    assert_eq!(a.baseline, 0);
    let counts: Vec<_> = a
        .summaries
        .iter()
        .map(|s| (s.ok_runs, s.total_runs))
        .collect();
    assert_eq!(counts, [(5, 5), (4, 5), (5, 5)]);
    Ok(())
}

#[test]
fn baseline_ratios_are_exactly_one() -> Result<()> {
    let a = analyze(fixture::experiment(), "glibc")?;
    let s = &a.summaries[0];
    assert_eq!(s.ratio("peak_rss_bytes"), Some(BASELINE_RATIO));
    assert_eq!(s.ratio("mean_rss_bytes"), Some(BASELINE_RATIO));
    assert_eq!(s.ratio("mean_pss_bytes"), Some(BASELINE_RATIO));
    assert_eq!(s.ratio("wall_s"), Some(BASELINE_RATIO));
    // A metric without a ratio has none, even for the baseline.
    assert_eq!(s.ratio("peak_pss_bytes"), None);
    Ok(())
}

#[test]
fn the_rows_the_verdict_judges_by_have_ratios_whichever_they_are() -> Result<()> {
    let judging = JudgeSettings {
        memory_metric: Some(allocscope_core::judging::MemoryChoice::Row(
            "peak_uss_bytes".into(),
        )),
        perf_metric: Some("cpu_s".into()),
        ..JudgeSettings::default()
    };
    let a = analyze_with(fixture::experiment(), "glibc", &judging)?;
    assert_eq!(a.verdict.memory.id, "peak_uss_bytes");
    assert_eq!(a.summaries[0].ratio("cpu_s"), Some(BASELINE_RATIO));
    assert!(a.summaries[1].ratio("peak_uss_bytes").is_some());
    assert!(a.summaries[1].ratio("cpu_s").is_some());
    // Rows not judged by keep the table's choice.
    assert_eq!(a.summaries[1].ratio("peak_pss_bytes"), None);
    Ok(())
}

#[test]
fn smaller_allocator_has_ratio_below_one_excluding_one() -> Result<()> {
    let a = analyze(fixture::experiment(), "glibc")?;
    let jemalloc = a.summaries[1]
        .ratio("peak_rss_bytes")
        .ok_or_else(|| anyhow::anyhow!("no ratio"))?;
    assert!(
        jemalloc.value < 0.6 && jemalloc.excludes_one(),
        "{jemalloc:?}"
    );
    let mi_wall = a.summaries[2]
        .ratio("wall_s")
        .ok_or_else(|| anyhow::anyhow!("no ratio"))?;
    assert!(mi_wall.value < 0.5, "{mi_wall:?}");
    assert!(a.summaries[0].estimate("mean_pss_bytes").is_some());
    Ok(())
}

#[test]
fn every_summary_follows_the_metric_table() -> Result<()> {
    let a = analyze(fixture::experiment(), "glibc")?;
    let ids: Vec<&str> = a.metrics.iter().map(|m| m.id.as_str()).collect();
    for s in &a.summaries {
        let keys: Vec<&str> = s.metrics.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(keys, ids);
    }
    Ok(())
}

#[test]
fn configuration_without_ok_runs_has_no_estimates() -> Result<()> {
    let mut e = fixture::experiment();
    for run in &mut e.configs[1].runs {
        run.record.status = allocscope_core::model::RunStatus::Failed;
    }
    let a = analyze(e, "glibc")?;
    let s = &a.summaries[1];
    assert_eq!((s.ok_runs, s.total_runs), (0, 5));
    assert_eq!(
        (
            s.estimate("peak_rss_bytes"),
            s.estimate("wall_s"),
            s.ratio("wall_s")
        ),
        (None, None, None)
    );
    Ok(())
}

#[test]
fn marker_summary_keeps_label_order_and_medians_over_ok_runs() -> Result<()> {
    let a = analyze(fixture::experiment(), "glibc")?;
    let labels: Vec<&str> = (0..a.markers.len()).map(|i| a.markers.label(i)).collect();
    assert_eq!(labels, ["load", "build", "done", "build #2"]);
    let done = a.markers.cells(2);
    // jemalloc: run 3 crashed and run 5 never said `done`.
    let runs: Vec<usize> = done.iter().map(|c| c.runs).collect();
    assert_eq!(runs, [5, 3, 5]);
    // glibc at `done` holds 3/4 of 120 MiB plus a wobble of index/4 MiB.
    let mib = 1048576.0;
    assert_eq!(done[0].rss_bytes_median, Some(90.0 * mib + 0.75 * mib));
    assert!(done[0].pss_bytes_median.is_some());
    assert!(a.markers.cells(0)[0].pss_bytes_median.is_none());
    let second_build = a.markers.cells(3);
    assert_eq!((second_build[0].runs, second_build[2].runs), (0, 5));
    Ok(())
}

#[test]
fn a_mark_that_never_matched_is_a_warning() -> Result<()> {
    let marks = |warnings: Vec<String>| -> Vec<String> {
        warnings
            .into_iter()
            .filter(|w| w.starts_with("--mark"))
            .collect()
    };
    let found = marks(analyze(fixture::experiment(), "glibc")?.warnings);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("MemoryCheck"), "{found:?}");
    let mut e = fixture::experiment();
    e.configs[1].runs[3].record.markers[0].pattern = 1;
    assert!(marks(analyze(e, "glibc")?.warnings).is_empty());
    Ok(())
}

#[test]
fn a_user_metric_is_summarised_with_a_paired_ratio() -> Result<()> {
    let a = analyze(fixture::with_user_metric(true), "glibc")?;
    assert_eq!(a.metrics.last().map(|m| m.id.as_str()), Some("user.ops"));
    let glibc = a.summaries[0].estimate("user.ops").expect("measured");
    assert!((glibc.median - 1004.0).abs() < 1e-9, "{glibc:?}");
    assert!(glibc.ci_low.is_nan(), "no interval from 5 runs: {glibc:?}");
    assert_eq!(a.summaries[0].ratio("user.ops"), Some(BASELINE_RATIO));
    // jemalloc's four ok rounds each print 10% more than glibc's.
    let jemalloc = a.summaries[1].ratio("user.ops").expect("a ratio");
    assert!((jemalloc.value - 1.1).abs() < 1e-9, "{jemalloc:?}");
    assert!(jemalloc.excludes_one(), "{jemalloc:?}");
    // mimalloc's run 2 printed nothing: four pairs remain.
    let mimalloc = a.summaries[2].ratio("user.ops").expect("a ratio");
    assert!((mimalloc.value - 0.95).abs() < 1e-9, "{mimalloc:?}");
    Ok(())
}

#[test]
fn higher_is_better_flips_the_verdict_on_a_user_metric() -> Result<()> {
    let judging = allocscope_core::judging::JudgeSettings {
        perf_metric: Some("user.ops".to_string()),
        ..Default::default()
    };
    // 10% more ops/s is 10% better: jemalloc, with far less memory, wins.
    let higher = analyze_with(fixture::with_user_metric(true), "glibc", &judging)?.verdict;
    assert_eq!(higher.performance.id, "user.ops");
    // JSON names a --metric by its NAME.
    let json = serde_json::to_value(crate::verdict_json::VerdictOut::of(&higher))?;
    assert_eq!(json["performance_metric"], "ops");
    assert_eq!(
        higher.config.as_deref(),
        Some("jemalloc"),
        "{}",
        reason(&higher)
    );
    assert!(reason(&higher).contains("ops 1.10x"), "{}", reason(&higher));
    assert!(
        explanation(&higher)[0].contains("ops 1.10x [1.10, 1.10] (better by 10%)"),
        "{:?}",
        explanation(&higher)
    );
    // The same figures where lower is better: jemalloc is 10% over a 5% budget.
    let lower = analyze_with(fixture::with_user_metric(false), "glibc", &judging)?.verdict;
    assert_ne!(
        lower.config.as_deref(),
        Some("jemalloc"),
        "{}",
        reason(&lower)
    );
    assert!(
        explanation(&lower)[0].contains("ops 1.10x [1.10, 1.10] (worse by 10%)"),
        "{:?}",
        explanation(&lower)
    );
    assert!(
        explanation(&lower)[0].contains("over the 5% budget on ops"),
        "{:?}",
        explanation(&lower)
    );
    Ok(())
}

/// `analyze` with a performance budget for the verdict, in percent, and the
/// other judging settings at their defaults: what the verdict's tests vary.
fn analyze_with_budget(
    experiment: allocscope_core::model::StoredExperiment,
    baseline: &str,
    max_slowdown_pct: f64,
) -> Result<types::Analysis> {
    let judging = JudgeSettings {
        max_slowdown_pct,
        ..Default::default()
    };
    analyze_with(experiment, baseline, &judging)
}

mod cause;
mod served;
mod verdict;
