//! A race in figures: per phase, each candidate's ratios to the baseline
//! (95% intervals) and how it ended (dropped in which round and why, or
//! raced to the end), the Pareto front of memory against performance of
//! the last phase, and the recommendation. One summary (`TuneSummary`)
//! that the text below and the JSON export (`tune`) both show.

use super::pareto::front;
use super::race::Dropped;
use super::record::TuneRecord;
use allocscope_analyze::figures::Ratio;
use allocscope_analyze::types::Analysis;
use serde::Serialize;
use std::fmt::Write;

/// One phase's analysis (judged at the record's verdict level) and record.
pub struct Phase<'a> {
    pub analysis: &'a Analysis,
    pub record: &'a TuneRecord,
}

/// One candidate of a phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub config: String,
    pub runs: usize,
    pub memory_ratio: Option<Ratio>,
    pub performance_ratio: Option<Ratio>,
    /// Absent when it raced to the end.
    pub dropped: Option<Dropped>,
    /// What its settings bought on their own: its figures over its
    /// allocator's plain configuration in the same phase.
    pub over_plain: Option<OverPlain>,
}

/// A candidate's memory and performance over its allocator's plain
/// configuration (glibc's is the baseline): the quotient of the two point
/// estimates of their ratios to the baseline, so from the runs each had
/// (one, for most candidates the halving dropped), with no interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverPlain {
    /// The plain configuration's name.
    pub against: String,
    pub memory: Option<f64>,
    pub performance: Option<f64>,
}

/// One phase in figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseSummary {
    pub phase: u32,
    pub experiment: i64,
    pub candidates: usize,
    /// The two-sided level each candidate was settled at in the verdict.
    pub verdict_level: f64,
    pub rows: Vec<Row>,
}

/// The race in figures, as the JSON export's `tune` carries it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TuneSummary {
    pub baseline: String,
    pub memory_metric: String,
    pub performance_metric: String,
    pub phases: Vec<PhaseSummary>,
    /// The last phase's configurations on the front, by memory (the
    /// baseline included).
    pub pareto_front: Vec<String>,
    /// The verdict's configuration when it recommends one.
    pub recommended: Option<String>,
    /// Runs over every phase.
    pub runs: usize,
}

/// Configuration `i`'s ratio to the baseline of the metric-table row `id`.
pub fn ratio_of(a: &Analysis, i: usize, id: &str) -> Option<Ratio> {
    a.summaries.get(i).and_then(|s| s.ratio(id))
}

/// Configuration `i`'s figures over its allocator's plain configuration
/// (the one named by the allocator alone, or the baseline when that is
/// it); `None` for a plain configuration or when none raced beside it.
fn over_plain(a: &Analysis, i: usize) -> Option<OverPlain> {
    let name = |j: usize| a.experiment.configs[j].config.name.as_str();
    let (allocator, _) = name(i).split_once(':')?;
    let plain = (0..a.experiment.configs.len()).find(|&j| name(j) == allocator)?;
    let quotient = |id: &str| -> Option<f64> {
        let of = |j: usize| {
            if j == a.baseline {
                Some(1.0)
            } else {
                ratio_of(a, j, id).map(|r| r.value)
            }
        };
        Some(of(i)? / of(plain)?)
    };
    Some(OverPlain {
        against: allocator.to_string(),
        memory: quotient(&a.verdict.memory.id),
        performance: quotient(&a.verdict.performance.id),
    })
}

fn rows(phase: &Phase) -> PhaseSummary {
    let a = phase.analysis;
    let (memory, perf) = (&a.verdict.memory.id, &a.verdict.performance.id);
    let rows = a
        .experiment
        .configs
        .iter()
        .zip(&a.summaries)
        .enumerate()
        .filter(|&(i, _)| i != a.baseline)
        .map(|(i, (c, s))| Row {
            config: c.config.name.clone(),
            runs: s.total_runs,
            memory_ratio: ratio_of(a, i, memory),
            performance_ratio: ratio_of(a, i, perf),
            dropped: phase.record.dropped(&c.config.name).cloned(),
            over_plain: over_plain(a, i),
        })
        .collect();
    PhaseSummary {
        phase: phase.record.phase,
        experiment: a.experiment.id,
        candidates: phase.record.candidates,
        verdict_level: 1.0 - phase.record.verdict_alpha,
        rows,
    }
}

/// The phases (phase one first) in figures; `last` holds the verdict.
pub fn summarize(last: &Phase, first: Option<&Phase>) -> TuneSummary {
    let a = last.analysis;
    let phases: Vec<PhaseSummary> = first.into_iter().chain([last]).map(rows).collect();
    let (memory, perf) = (&a.verdict.memory.id, &a.verdict.performance.id);
    let points: Vec<Option<(f64, f64)>> = a
        .summaries
        .iter()
        .enumerate()
        .map(|(i, _)| {
            if i == a.baseline {
                return Some((1.0, 1.0));
            }
            // A candidate dropped after one run has a reading, not an
            // interval: one noisy reading would put it on the front.
            let with_interval =
                |r: Ratio| (r.ci_low.is_finite() && r.ci_high.is_finite()).then_some(r.value);
            Some((
                with_interval(ratio_of(a, i, memory)?)?,
                with_interval(ratio_of(a, i, perf)?)?,
            ))
        })
        .collect();
    let name = |i: usize| a.experiment.configs[i].config.name.clone();
    let runs = first
        .into_iter()
        .chain([last])
        .flat_map(|p| &p.analysis.summaries)
        .map(|s| s.total_runs)
        .sum();
    TuneSummary {
        baseline: name(a.baseline),
        memory_metric: a.verdict.memory.label.clone(),
        performance_metric: a.verdict.performance.label.clone(),
        phases,
        pareto_front: front(&points).into_iter().map(name).collect(),
        recommended: (a.verdict.outcome == allocscope_analyze::verdict::Outcome::Recommend)
            .then(|| a.verdict.config.clone())
            .flatten(),
        runs,
    }
}

fn cell(r: Option<Ratio>) -> String {
    match r {
        Some(r) if r.ci_low.is_finite() => {
            format!("{:.2}x [{:.2}, {:.2}]", r.value, r.ci_low, r.ci_high)
        }
        Some(r) => format!("{:.2}x", r.value),
        None => "-".into(),
    }
}

/// `0.93x, 1.02x`: memory then performance over the plain configuration.
fn over_plain_cell(o: Option<&OverPlain>) -> String {
    let x = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}x"));
    o.map_or_else(
        || "-".to_string(),
        |o| format!("{}, {}", x(o.memory), x(o.performance)),
    )
}

/// The race as text, after the verdict's table.
pub fn text(s: &TuneSummary) -> String {
    let mut out = String::new();
    let width = s
        .phases
        .iter()
        .flat_map(|p| &p.rows)
        .map(|r| r.config.len())
        .max()
        .unwrap_or(13)
        .max(13);
    for p in &s.phases {
        let title = match p.phase {
            1 => "each setting on its own",
            _ => "the finalists and the combinations of the settings that helped",
        };
        let _ = writeln!(
            out,
            "\ntune, phase {} ({title}; experiment {}): {} candidates against {}, each judged at \
             {:.2}% so that a wrong recommendation stays within 5%",
            p.phase,
            p.experiment,
            p.candidates,
            s.baseline,
            100.0 * p.verdict_level
        );
        let _ = writeln!(
            out,
            "  {:width$}  runs  {:22}  {:22}  {:13}  outcome",
            "configuration", s.memory_metric, s.performance_metric, "over plain"
        );
        for r in &p.rows {
            let outcome = match &r.dropped {
                Some(d) => format!("dropped after round {}: {}", d.round, d.reason),
                None if s.recommended.as_ref() == Some(&r.config) => "recommended".into(),
                None => "raced to the end".into(),
            };
            let _ = writeln!(
                out,
                "  {:width$}  {:4}  {:22}  {:22}  {:13}  {outcome}",
                r.config,
                r.runs,
                cell(r.memory_ratio),
                cell(r.performance_ratio),
                over_plain_cell(r.over_plain.as_ref())
            );
        }
        if p.rows.iter().any(|r| r.over_plain.is_some()) {
            let _ = writeln!(
                out,
                "  over plain: what the settings bought on their own, {} then {} over their \
                 allocator's plain configuration; point estimates from the runs each had",
                s.memory_metric, s.performance_metric
            );
        }
    }
    let _ = writeln!(
        out,
        "\nPareto front ({} against {}, nothing with an interval beats these on both): {}",
        s.memory_metric,
        s.performance_metric,
        s.pareto_front.join(", ")
    );
    let _ = writeln!(
        out,
        "tune: {} runs; {}",
        s.runs,
        match &s.recommended {
            Some(c) => format!("recommended: {c} (deploy lines in the verdict above)"),
            None => "no configuration qualifies beyond noise at the race's level".into(),
        }
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_fixture::{experiment, with_runs};
    use allocscope_core::judging::JudgeSettings;
    use allocscope_core::model::{ServiceInfo, ServiceRecord};

    /// The summary of a race of one phase, over `analysis`, nothing dropped.
    fn one_phase(analysis: &Analysis) -> TuneSummary {
        let record = TuneRecord {
            phase: 1,
            candidates: analysis.experiment.configs.len() - 1,
            race_alpha: 0.05,
            verdict_alpha: 0.05,
            dropped: Vec::new(),
            earlier: None,
            combined: Vec::new(),
        };
        summarize(
            &Phase {
                analysis,
                record: &record,
            },
            None,
        )
    }

    /// A service's race: its verdict judges the RSS at the end of the load
    /// and the load's duration, which the analysis keeps in its service
    /// summaries, not in the metric table's.
    #[test]
    fn a_services_figures_fill_the_race_and_its_front() -> anyhow::Result<()> {
        let mut e = experiment(vec![
            with_runs("glibc", &[(100.0, 1.0), (101.0, 1.0), (99.0, 1.0)]),
            with_runs("lean", &[(10.0, 1.0), (10.1, 1.0), (9.9, 1.0)]),
        ]);
        e.info.service = Some(ServiceInfo::default());
        for config in &mut e.configs {
            for run in &mut config.runs {
                let rss = run.record.samples.first().map_or(0, |s| s.rss_bytes);
                run.record.service = Some(ServiceRecord {
                    load_start_s: Some(0.1),
                    load_end_s: Some(1.1 + f64::from(run.record.index) * 0.01),
                    rss_end_load_bytes: Some(rss),
                    ..ServiceRecord::default()
                });
            }
        }
        let analysis = allocscope_analyze::analyze_with(e, "glibc", &JudgeSettings::default())?;
        assert_eq!(analysis.verdict.memory.id, "rss_end_load_bytes");
        let summary = one_phase(&analysis);
        let row = &summary.phases[0].rows[0];
        let memory = row.memory_ratio.map(|r| r.value).unwrap_or_default();
        assert!((memory - 0.1).abs() < 0.01, "{row:?}");
        assert!(row.performance_ratio.is_some(), "{row:?}");
        assert_eq!(summary.pareto_front, ["lean"]);
        Ok(())
    }

    /// Each setting's figures over its own allocator's plain configuration:
    /// jemalloc's for a jemalloc key, the baseline for a glibc one; none for
    /// a plain configuration.
    #[test]
    fn a_setting_is_shown_over_its_allocators_plain_configuration() -> anyhow::Result<()> {
        let e = experiment(vec![
            with_runs("glibc", &[(100.0, 1.0), (100.0, 1.0), (100.0, 1.0)]),
            with_runs(
                "glibc:arena_max=2",
                &[(80.0, 1.1), (80.0, 1.1), (80.0, 1.1)],
            ),
            with_runs("jemalloc", &[(50.0, 1.0), (50.0, 1.0), (50.0, 1.0)]),
            with_runs(
                "jemalloc:narenas=1",
                &[(40.0, 1.2), (40.0, 1.2), (40.0, 1.2)],
            ),
        ]);
        let analysis = allocscope_analyze::analyze_with(e, "glibc", &JudgeSettings::default())?;
        let summary = one_phase(&analysis);
        let row = |name: &str| {
            summary.phases[0]
                .rows
                .iter()
                .find(|r| r.config == name)
                .cloned()
                .expect("a row")
        };
        let near = |v: Option<f64>, want: f64| v.is_some_and(|v| (v - want).abs() < 1e-6);
        let je = row("jemalloc:narenas=1").over_plain.expect("over jemalloc");
        assert_eq!(je.against, "jemalloc");
        assert!(near(je.memory, 0.8) && near(je.performance, 1.2), "{je:?}");
        let gl = row("glibc:arena_max=2").over_plain.expect("over glibc");
        assert!(near(gl.memory, 0.8) && near(gl.performance, 1.1), "{gl:?}");
        assert_eq!(row("jemalloc").over_plain, None);
        assert!(
            text(&summary).contains("0.80x, 1.20x"),
            "{}",
            text(&summary)
        );
        Ok(())
    }

    /// A candidate dropped after one run is a reading, not an interval:
    /// however good, it is left off the front.
    #[test]
    fn a_candidate_with_one_run_is_not_on_the_front() -> anyhow::Result<()> {
        let e = experiment(vec![
            with_runs("glibc", &[(100.0, 1.0), (101.0, 1.01), (99.0, 0.99)]),
            with_runs("lean", &[(60.0, 1.0), (61.0, 1.01), (59.0, 0.99)]),
            with_runs("lucky", &[(10.0, 0.5)]),
        ]);
        let analysis = allocscope_analyze::analyze_with(e, "glibc", &JudgeSettings::default())?;
        let summary = one_phase(&analysis);
        assert_eq!(summary.pareto_front, ["lean"]);
        Ok(())
    }
}
