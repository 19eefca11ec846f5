//! `allocscope report`: re-render a stored experiment, or list them; with
//! `--recordings [ID ...]`, load the given recordings, analyse them side by
//! side and print or export them (text to stdout, `--export-json`, `--html`,
//! `--plots DIR`).

use crate::options::export::{Destination, Export, ExportList, Format};
use crate::options::judge::JudgeFlags;
use crate::options::report::ReportSettings;
use allocscope_analyze::recordings::analyze_recordings;
use allocscope_analyze::{analyze_with, metric_table};
use allocscope_core::store::Store;
use allocscope_core::units::{ColumnUnit, Unit};
use allocscope_core::usage_error::UsageError;
use allocscope_report::recordings::{render_html, render_json, render_text};
use allocscope_report::svg::recordings as plots;
use allocscope_report::write_output;
use anyhow::bail;
use std::path::Path;

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
        return recordings(&store, ids, &output.exports);
    }
    if let Some(id) = args.soak {
        return super::soak_report::report(&store, id, &output.exports);
    }
    if args.list {
        let listing = super::listing::render(&store.list()?, &store.list_recordings()?);
        allocscope_report::reporter::print(&listing)?;
        return Ok(0);
    }
    let experiment = store.load_experiment(args.experiment)?;
    // How compare judged stays the default when re-judging; the metric
    // words name rows of this experiment's table.
    let environment = store.load_environment(experiment.id)?;
    let stored = JudgeFlags::stored(&environment)?;
    let table = metric_table::of_experiment(&experiment.info);
    let mut judge = args.judge.clone().or(stored).settle(&table)?;
    judge.unresolvable = allocscope_core::judging::unresolvable_of(&environment);
    let baseline = args
        .baseline
        .clone()
        .unwrap_or_else(|| experiment.info.baseline.clone());
    // A race (`tune`) is re-judged at the level it raced at, with its phases.
    if let Some((analysis, record, earlier)) =
        super::tune::stored_race(&store, experiment.id, &judge, &baseline)?
    {
        super::tune::print_race(&analysis, &record, earlier.as_ref(), output, &args.db)?;
        return Ok(0);
    }
    let analysis = analyze_with(experiment, &baseline, &judge)?;
    crate::exports::print_table_and_export(&analysis, output, &args.db)?;
    Ok(0)
}

fn recordings(store: &Store, ids: &[i64], exports: &ExportList) -> anyhow::Result<i32> {
    // The per-configuration formats (CSV, Markdown and any new one) are for
    // experiments.
    let renders =
        |e: &Export| matches!(e.format, Format::Json { .. } | Format::Html | Format::Plots);
    let outputs = exports.supported(
        |e| renders(e).then_some(e),
        |_| UsageError::RecordingsExport,
    )?;
    if ids.is_empty() {
        allocscope_report::reporter::print(&listing(store)?)?;
        return Ok(0);
    }
    let mut recordings = Vec::with_capacity(ids.len());
    for &id in ids {
        recordings.push(store.load_recording(id)?);
    }
    let analysis = analyze_recordings(recordings);
    // Keep stdout machine-readable when an export goes there.
    if !exports.uses_stdout() {
        write_output(Path::new("-"), render_text(&analysis).as_bytes())?;
    }
    for export in outputs {
        let to = export.destination.as_path();
        match export.format {
            Format::Json { .. } => write_output(to, render_json(&analysis)?.as_bytes())?,
            Format::Html => {
                write_output(to, render_html(&analysis).as_bytes())?;
                if let Destination::Path(path) = &export.destination {
                    eprintln!("allocscope: HTML report in {}", path.display());
                }
            }
            // `--plots`, the one other format `renders` lets through.
            _ => crate::exports::write_plots(
                to,
                plots::all(&analysis).into_iter().map(|p| (p.name, p.svg)),
            )?,
        }
    }
    Ok(0)
}

/// One line per stored recording.
fn listing(store: &Store) -> anyhow::Result<String> {
    let all = store.list_recordings()?;
    if all.is_empty() {
        return Ok("no recordings yet; start one with `allocscope record`\n".into());
    }
    let elapsed = ColumnUnit::for_values(Unit::Seconds, all.iter().map(|r| r.elapsed_s));
    let mut out = String::new();
    for r in all {
        out.push_str(&format!(
            "{:>4}  {:<24}  {:<18}  {:<11}  {:>9}  started {}\n",
            r.id,
            r.name,
            r.config,
            r.status,
            elapsed.show(r.elapsed_s),
            r.started_at
        ));
    }
    Ok(out)
}
