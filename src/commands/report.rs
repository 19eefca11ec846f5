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
    // `--perf-metric NAME` may name one of the experiment's stored `--metric`s.
    let names: Vec<String> = experiment
        .info
        .user_metrics
        .iter()
        .map(|m| m.name.clone())
        .collect();
    // How compare judged stays the default when re-judging.
    let environment = store.load_environment(experiment.id)?;
    let stored = |wanted: &str| {
        environment
            .iter()
            .filter(|(key, _)| key == wanted)
            .find_map(|(_, v)| v.clone())
    };
    let given = &args.judge;
    let judge_args = crate::cli::JudgeArgs {
        memory_metric: given
            .memory_metric
            .clone()
            .or_else(|| stored(crate::judging::MEMORY_METRIC_KEY)),
        perf_metric: given
            .perf_metric
            .clone()
            .or_else(|| stored(crate::judging::PERF_METRIC_KEY)),
        min_saving: given
            .min_saving
            .clone()
            .or_else(|| stored(crate::judging::MIN_SAVING_KEY)),
    };
    let max_slowdown_pct = match (
        &args.export.max_slowdown,
        stored(crate::judging::MAX_SLOWDOWN_KEY),
    ) {
        (None, Some(pct)) => crate::options::export::parse_max_slowdown(&pct)?,
        _ => output.max_slowdown_pct,
    };
    let judge = crate::options::rounds::parse_judge(&judge_args, max_slowdown_pct, &names)?;
    let baseline = args
        .baseline
        .clone()
        .unwrap_or_else(|| experiment.info.baseline.clone());
    let analysis = analyze_with(experiment, &baseline, &judge)?;
    super::exports::print_table_and_export(&analysis, &output.exports)?;
    Ok(0)
}
