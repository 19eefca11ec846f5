//! `allocscope report`: re-render a stored experiment, or list them.

use crate::analyze::analyze_with;
use crate::cli::ReportArgs;
use crate::options::export::OutputSettings;
use crate::store::Store;
use anyhow::bail;

pub fn report(args: &ReportArgs) -> anyhow::Result<i32> {
    if !args.db.exists() {
        bail!(
            "no store at '{}'; run `allocscope compare` first, or pass --db FILE",
            args.db.display()
        );
    }
    let output = OutputSettings::parse(&args.export)?;
    let store = Store::open(&args.db)?;
    if let Some(ids) = &args.recordings {
        return super::recordings::report(&store, ids, &output.exports);
    }
    if args.list {
        let listing = super::listing::render(&store.list()?, &store.list_recordings()?);
        print!("{listing}");
        return Ok(0);
    }
    let experiment = store.load_experiment(args.experiment)?;
    let judge = judge_settings(&store, experiment.id, &args.judge, output.max_slowdown_pct)?;
    let baseline = args
        .baseline
        .clone()
        .unwrap_or_else(|| experiment.info.baseline.clone());
    let analysis = analyze_with(experiment, &baseline, &judge)?;
    super::exports::print_table_and_export(&analysis, &output.exports)?;
    Ok(0)
}

/// `--min-saving`, `--memory-metric`, `--perf-metric` for re-judging a stored
/// experiment: `--perf-metric NAME` may name one of its stored `--metric`s.
fn judge_settings(
    store: &Store,
    experiment_id: i64,
    args: &crate::cli::JudgeArgs,
    max_slowdown_pct: f64,
) -> anyhow::Result<crate::options::rounds::JudgeSettings> {
    let environment = store.load_environment(experiment_id)?;
    let value_of = |wanted: &str| {
        environment
            .iter()
            .filter(|(key, _)| key == wanted)
            .filter_map(|(_, value)| value.clone())
            .collect::<Vec<String>>()
    };
    let stored = value_of(crate::user_metric::ENVIRONMENT_KEY);
    let names: Vec<String> = stored
        .iter()
        .flat_map(|value| crate::user_metric::names_in_environment(value))
        .collect();
    // The metrics compare judged by stay the default when re-judging.
    let mut args = args.clone();
    args.memory_metric = args
        .memory_metric
        .or_else(|| value_of(crate::judging::MEMORY_METRIC_KEY).pop());
    args.perf_metric = args
        .perf_metric
        .or_else(|| value_of(crate::judging::PERF_METRIC_KEY).pop());
    let mut judge = crate::options::rounds::parse_judge(&args, max_slowdown_pct, &names)?;
    judge.higher_is_better = stored
        .iter()
        .flat_map(|value| crate::user_metric::higher_is_better_in_environment(value))
        .collect();
    Ok(judge)
}
