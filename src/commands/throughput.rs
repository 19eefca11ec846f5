//! Fixed-duration programs: when every run's wall time is within 1% of the
//! others, the throughput figures the program printed (`analyze::throughput`)
//! are read from each ok run's stdout (stderr when stdout has none) and
//! offered under the verdict as ready `--metric` flags; `--perf-metric auto`
//! judges by the most-varying one present in every run.

use crate::analyze::throughput::{self, Figure, Suggestion};
use crate::analyze::types::Analysis;
use crate::judging::JudgeSettings;
use crate::model::{RunStatus, StoredExperiment};
use crate::user_metric::Extracted;

/// The figures of every ok run, per configuration, most-varying first.
pub(crate) fn suggestions(experiment: &StoredExperiment) -> Vec<Suggestion> {
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
pub(crate) fn advice(analysis: &Analysis) -> Vec<String> {
    let e = &analysis.experiment;
    if analysis.verdict.performance.id != "wall_s" || !crate::analyze::verdict::walls_flat(e) {
        return Vec::new();
    }
    let found = suggestions(e);
    if found.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        "the wall times barely move (within 1%), and the program prints throughput figures; \
         judge by one of them (--perf-metric auto takes the first):"
            .to_string(),
    ];
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

/// `--perf-metric auto`, once the runs are over: the most-varying figure
/// present in every ok run becomes a higher-is-better `--metric` of the
/// stored experiment (its spec, each run's value, and the judged row), so
/// `report` re-judges it the same way. Without one, wall time stays.
pub(crate) fn adopt(
    store: &mut crate::store::Store,
    id: i64,
    judge: &JudgeSettings,
) -> anyhow::Result<JudgeSettings> {
    let experiment = store.load_experiment(Some(id))?;
    let Some(chosen) = suggestions(&experiment).into_iter().next() else {
        eprintln!(
            "note: --perf-metric auto: no throughput figure (ops/sec, req/s, tps, MB/s, ...) \
             in every run's output; judged by wall time"
        );
        return Ok(judge.clone());
    };
    let pattern = regex::Regex::new(&chosen.pattern)?;
    let mut specs = experiment.info.user_metrics.clone();
    if !specs.iter().any(|m| m.name == chosen.name) {
        specs.push(crate::model::UserMetricInfo {
            name: chosen.name.clone(),
            pattern: chosen.pattern.clone(),
            higher_is_better: true,
        });
    }
    store.set_environment(
        id,
        crate::user_metric::ENVIRONMENT_KEY,
        &serde_json::to_string(&specs)?,
    )?;
    for run in experiment.configs.iter().flat_map(|c| &c.runs) {
        let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap_or_default();
        let (out, err) = (read(&run.record.stdout_path), read(&run.record.stderr_path));
        if let Extracted::Value(v) = crate::user_metric::extract_from(&pattern, &out, &err) {
            store.add_run_value(run.id, &chosen.name, v)?;
        }
    }
    let row = format!("user.{}", chosen.name);
    store.set_environment(id, crate::judging::PERF_METRIC_KEY, &row)?;
    eprintln!(
        "allocscope: --perf-metric auto judges by {} (higher is better), the most-varying \
         throughput figure in every run: {}",
        chosen.name,
        chosen.flags()
    );
    Ok(JudgeSettings {
        perf_metric: Some(row),
        ..judge.clone()
    })
}
