//! `allocscope report`: re-render a stored experiment, or list them.

use crate::analyze::{analyze_with, metric_table};
use crate::options::judge::JudgeFlags;
use crate::options::report::ReportSettings;
use crate::store::Store;
use anyhow::bail;

pub fn report(args: &ReportSettings) -> anyhow::Result<i32> {
    if !args.db.exists() {
        bail!(
            "no store at '{}'; run `allocscope compare` first, or pass --db FILE",
            args.db.display()
        );
    }
    let output = &args.output;
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
    // How compare judged stays the default when re-judging; the metric
    // words name rows of this experiment's table.
    let stored = JudgeFlags::stored(&store.load_environment(experiment.id)?)?;
    let table = metric_table::of_experiment(&experiment.info);
    let judge = args.judge.clone().or(stored).settle(&table)?;
    let baseline = args
        .baseline
        .clone()
        .unwrap_or_else(|| experiment.info.baseline.clone());
    // A race (`tune`) is re-judged at the level it raced at, with its phases.
    if let Some((analysis, record, earlier)) =
        super::tune::stored_race(&store, experiment.id, &judge, &baseline)?
    {
        super::tune::print_race(&analysis, &record, earlier.as_ref(), &output.exports)?;
        return Ok(0);
    }
    let analysis = analyze_with(experiment, &baseline, &judge)?;
    super::exports::print_table_and_export(&analysis, &output.exports)?;
    Ok(0)
}
