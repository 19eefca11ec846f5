//! Fixed-duration programs: when every run's wall time is within 2% of the
//! others, the throughput figures the program printed (`analyze::throughput`)
//! are read from each ok run's stdout (stderr when stdout has none) and
//! offered under the verdict as ready `--metric` flags; `--perf-metric auto`
//! judges by the most-varying one present in every run.

use crate::analyze::throughput::{self, Figure, Suggestion};
use crate::analyze::types::Analysis;
use crate::judging::JudgeSettings;
use crate::model::{RunStatus, StoredExperiment};
use crate::user_metric::{Extracted, UserMetric};

/// The figures of every ok run, per configuration, most-varying first.
pub fn suggestions(experiment: &StoredExperiment) -> Vec<Suggestion> {
    let runs: Vec<Vec<Vec<Figure>>> = experiment
        .configs
        .iter()
        .map(|c| {
            c.runs
                .iter()
                .filter(|r| r.record.status == RunStatus::Ok)
                .map(|r| {
                    let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap_or_default();
                    let found = throughput::find(&read(&r.record.stdout_path));
                    if found.is_empty() {
                        throughput::find(&read(&r.record.stderr_path))
                    } else {
                        found
                    }
                })
                .collect()
        })
        .collect();
    throughput::suggest(&runs)
}

/// The lines under the verdict: which figures differ between
/// configurations, each with the flags that judge by it; none unless wall
/// time judged a fixed-duration program that printed such figures.
pub fn advice(analysis: &Analysis) -> Vec<String> {
    let e = &analysis.experiment;
    if analysis.verdict.performance.id != "wall_s" || !crate::analyze::verdict::walls_flat(e) {
        return Vec::new();
    }
    let found = suggestions(e);
    if found.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!(
        "the wall times barely move (within {:.0}%), and the program prints throughput figures; \
         judge by one of them (--perf-metric auto takes the first):",
        100.0 * crate::analyze::verdict::FLAT_WALLS
    )];
    for s in &found {
        let values: Vec<String> = e
            .configs
            .iter()
            .zip(&s.medians)
            .map(|(c, m)| format!("{} {m}", c.config.name))
            .collect();
        let differs = if s.differs {
            "differs between configurations"
        } else {
            "within the runs' own noise"
        };
        out.push(format!(
            "  {}: {} ({differs}, spread {:.1}%)",
            s.name,
            values.join(", "),
            100.0 * s.spread
        ));
        out.push(format!("    {}", s.flags()));
    }
    out
}

/// `--perf-metric auto`'s figure in `experiment`: the most-varying one
/// present in every ok run of the configurations that have one (a
/// configuration whose runs all failed does not hide it).
pub fn choose(experiment: &StoredExperiment) -> Option<UserMetric> {
    let mut ran = experiment.clone();
    ran.configs
        .retain(|c| c.runs.iter().any(|r| r.record.status == RunStatus::Ok));
    let chosen = suggestions(&ran).into_iter().next()?;
    Some(UserMetric {
        pattern: regex::Regex::new(&chosen.pattern).ok()?,
        name: chosen.name,
        higher_is_better: true,
    })
}

/// The `--metric` flags that judge by `metric`, as the user would type them.
pub fn flags(metric: &UserMetric) -> String {
    format!(
        "--metric '{}={}' --higher-is-better {} --perf-metric {}",
        metric.name,
        metric.pattern.as_str(),
        metric.name,
        metric.name
    )
}

/// The metric-table row `--perf-metric` names for `metric`.
pub fn row(metric: &UserMetric) -> String {
    format!("user.{}", metric.name)
}

/// `metric` as one of `experiment`'s `--metric`s, in memory: its spec, and
/// each run's value read from its output.
pub fn apply(experiment: &mut StoredExperiment, metric: &UserMetric) {
    if !experiment
        .info
        .user_metrics
        .iter()
        .any(|m| m.name == metric.name)
    {
        experiment.info.user_metrics.push(metric.info());
    }
    for run in experiment.configs.iter_mut().flat_map(|c| &mut c.runs) {
        if let Extracted::Value(v) = extract(&metric.pattern, &run.record) {
            run.record.user_metrics.insert(metric.name.clone(), v);
        }
    }
}

fn extract(pattern: &regex::Regex, record: &crate::model::RunRecord) -> Extracted {
    let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap_or_default();
    let (out, err) = (read(&record.stdout_path), read(&record.stderr_path));
    crate::user_metric::extract_from(pattern, &out, &err)
}

/// `metric` made one of stored experiment `id`'s `--metric`s (its spec and
/// each run's value) and its judged performance row, so `report` re-judges
/// it the same way.
pub fn store_metric(
    store: &mut crate::store::Store,
    id: i64,
    metric: &UserMetric,
) -> anyhow::Result<()> {
    let experiment = store.load_experiment(Some(id))?;
    let mut specs = experiment.info.user_metrics.clone();
    if !specs.iter().any(|m| m.name == metric.name) {
        specs.push(metric.info());
    }
    store.set_environment(
        id,
        crate::user_metric::ENVIRONMENT_KEY,
        &serde_json::to_string(&specs)?,
    )?;
    for run in experiment.configs.iter().flat_map(|c| &c.runs) {
        if let Extracted::Value(v) = extract(&metric.pattern, &run.record) {
            store.add_run_value(run.id, &metric.name, v)?;
        }
    }
    store.set_environment(id, crate::judging::PERF_METRIC_KEY, &row(metric))?;
    Ok(())
}

/// `--perf-metric auto`, once the runs are over: the figure `choose` finds
/// becomes a higher-is-better `--metric` of the stored experiment
/// (`store_metric`). Without one, wall time stays.
pub fn adopt(
    store: &mut crate::store::Store,
    id: i64,
    judge: &JudgeSettings,
) -> anyhow::Result<JudgeSettings> {
    let experiment = store.load_experiment(Some(id))?;
    let Some(chosen) = choose(&experiment) else {
        eprintln!("{NONE_FOUND}");
        return Ok(judge.clone());
    };
    store_metric(store, id, &chosen)?;
    eprintln!(
        "allocscope: --perf-metric auto judges by {} (higher is better), the most-varying \
         throughput figure in every run: {}",
        chosen.name,
        flags(&chosen)
    );
    Ok(JudgeSettings {
        perf_metric: Some(row(&chosen)),
        ..judge.clone()
    })
}

/// The note when no figure was found: wall time judges.
pub const NONE_FOUND: &str = "note: --perf-metric auto: no throughput figure (ops/sec, \
     req/s, tps, MB/s, ...) in every run's output; judged by wall time";
