//! Fixed-duration programs and loads: when every configuration's wall time
//! (or a server's load duration), at its fastest, is within 2% of the others, the throughput
//! and latency figures the program (or the `--load` command) printed
//! (`analyze::throughput`) are read from each ok run's output
//! (`user_metric::outputs`: the first text that has any) and offered under
//! the verdict as ready `--metric` flags; `--perf-metric auto` judges by the
//! most informative one present in every run.

use allocscope_analyze::throughput::{self, Figure, Suggestion};
use allocscope_analyze::types::Analysis;
use allocscope_core::judging::JudgeSettings;
use allocscope_core::model::{RunStatus, StoredExperiment};
use allocscope_core::units::{format_seconds, ColumnUnit, Unit};
use allocscope_core::user_metric::{outputs, Extracted, UserMetric};
use allocscope_report::format::hanging;

/// The figures of every ok run, per configuration, the most informative
/// first.
pub(crate) fn suggestions(experiment: &StoredExperiment) -> Vec<Suggestion> {
    let runs: Vec<Vec<Vec<Figure>>> = experiment
        .configs
        .iter()
        .map(|c| {
            c.runs
                .iter()
                .filter(|r| r.record.status == RunStatus::Ok)
                .map(|r| {
                    (outputs(&r.record).iter())
                        .map(|text| throughput::find(text))
                        .find(|found| !found.is_empty())
                        .unwrap_or_default()
                })
                .collect()
        })
        .collect();
    throughput::suggest(&runs)
}

/// The lines under the verdict: which figures differ between
/// configurations, each with the flags that judge by it; none unless wall
/// time (a server's load duration) judged a fixed-duration program (load)
/// that printed such figures.
pub fn advice(analysis: &Analysis) -> Vec<String> {
    let e = &analysis.experiment;
    let performance = &analysis.verdict.performance;
    let Some(seconds) = allocscope_analyze::verdict::fixed_duration(e, performance) else {
        return Vec::new();
    };
    let found = suggestions(e);
    if found.is_empty() {
        return Vec::new();
    }
    let within = 100.0 * allocscope_analyze::verdict::FLAT_WALLS;
    let head = match performance.id.as_str() {
        "load_s" => format!(
            "the load duration is fixed (within {within:.0}%: {} every run), and the load prints \
             throughput or latency figures; judge by one of them",
            format_seconds(seconds)
        ),
        _ => format!(
            "the wall times barely move (within {within:.0}%), and the program prints throughput \
             figures; judge by one of them"
        ),
    };
    let mut out = hanging(
        &format!("{head} (--perf-metric auto takes the first):"),
        WIDTH,
        "",
    );
    for s in found.iter().take(OFFERED) {
        let values: Vec<String> = e
            .configs
            .iter()
            .zip(&s.medians)
            .map(|(c, &m)| {
                format!(
                    "{} {}",
                    c.config.name,
                    ColumnUnit::of(Unit::Number, m).number(m)
                )
            })
            .collect();
        let differs = if s.differs {
            "differs between configurations"
        } else {
            "within the runs' own noise"
        };
        let line = format!(
            "{}: {} ({differs}, spread {:.1}%)",
            s.name,
            values.join(", "),
            100.0 * s.spread
        );
        out.extend(hanging(&line, WIDTH, "  "));
        // Past 100 columns, the flags go on two lines of one shell command.
        let flags = s.flags();
        match flags.split_once("' --") {
            Some((metric, rest)) if flags.len() + 4 > WIDTH => {
                out.push(format!("    {metric}' \\"));
                out.push(format!("      --{rest}"));
            }
            _ => out.push(format!("    {flags}")),
        }
    }
    let rest: Vec<&str> = found
        .iter()
        .skip(OFFERED)
        .map(|s| s.name.as_str())
        .collect();
    if !rest.is_empty() {
        out.extend(hanging(&format!("and {}", rest.join(", ")), WIDTH, "  "));
    }
    out
}

/// How many figures the advice offers with their flags; the rest are named.
const OFFERED: usize = 3;

/// The advice stays within 100 columns.
const WIDTH: usize = 98;

/// `--perf-metric auto`'s figure in `experiment`: the most informative one
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
        higher_is_better: chosen.higher_is_better,
    })
}

/// The `--metric` flags that judge by `metric`, as the user would type them.
pub fn flags(metric: &UserMetric) -> String {
    throughput::flags(
        &metric.name,
        metric.pattern.as_str(),
        metric.higher_is_better,
    )
}

/// `higher is better` or `lower is better`: which way `metric` is judged.
pub fn direction(metric: &UserMetric) -> &'static str {
    match metric.higher_is_better {
        true => "higher is better",
        false => "lower is better",
    }
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

fn extract(pattern: &regex::Regex, record: &allocscope_core::model::RunRecord) -> Extracted {
    allocscope_core::user_metric::extract_from(pattern, &outputs(record))
}

/// `metric` made one of stored experiment `id`'s `--metric`s (its spec and
/// each run's value) and its judged performance row, so `report` re-judges
/// it the same way.
pub fn store_metric(
    store: &mut allocscope_core::store::Store,
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
        allocscope_core::user_metric::ENVIRONMENT_KEY,
        &serde_json::to_string(&specs)?,
    )?;
    for run in experiment.configs.iter().flat_map(|c| &c.runs) {
        if let Extracted::Value(v) = extract(&metric.pattern, &run.record) {
            store.add_run_value(run.id, &metric.name, v)?;
        }
    }
    store.set_environment(id, allocscope_core::judging::PERF_METRIC_KEY, &row(metric))?;
    Ok(())
}

/// `--perf-metric auto`, once the runs are over: the figure `choose` finds
/// becomes a `--metric` of the stored experiment (`store_metric`), a
/// throughput higher-is-better, a latency lower. Without one, the
/// performance row stays as without auto.
pub fn adopt(
    store: &mut allocscope_core::store::Store,
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
        "allocscope: --perf-metric auto judges by {} ({}), the most informative figure in \
         every run's output: {}",
        chosen.name,
        direction(&chosen),
        flags(&chosen)
    );
    Ok(JudgeSettings {
        perf_metric: Some(row(&chosen)),
        ..judge.clone()
    })
}

/// The note when no figure was found: the performance row stays as
/// without auto.
pub const NONE_FOUND: &str = "note: --perf-metric auto: no throughput or latency figure \
     (ops/sec, req/s, tps, MB/s, 99% 3.1ms, ...) in every run's output; judged by wall time (a \
     server's latency or load duration)";
