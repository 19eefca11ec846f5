//! `allocscope report --recordings [ID ...]`: list the stored recordings, or
//! load the given ones, analyse them side by side and print or export them
//! (text to stdout, `--export-json`, `--html`, `--plots DIR`).

use crate::analyze::recordings::analyze_recordings;
use crate::options::export::{Destination, Export, ExportList, Format};
use crate::report::recordings::{render_html, render_json, render_text};
use crate::report::svg::recordings as plots;
use crate::report::write_output;
use crate::store::Store;
use crate::units::{ColumnUnit, Unit};
use crate::usage_error::UsageError;
use std::path::Path;

/// What the recordings report renders besides its text.
enum Output<'a> {
    Json(&'a Destination),
    Html(&'a Destination),
    Plots(&'a Path),
}

/// The exports the recordings report renders; CSV and Markdown are refused.
fn outputs(exports: &ExportList) -> Result<Vec<Output<'_>>, UsageError> {
    exports.supported(output, |_| UsageError::RecordingsExport)
}

fn output(export: &Export) -> Option<Output<'_>> {
    match export.format {
        Format::Json { .. } => Some(Output::Json(&export.destination)),
        Format::Html => Some(Output::Html(&export.destination)),
        Format::Plots => Some(Output::Plots(export.destination.as_path())),
        // The per-configuration formats (CSV, Markdown and any new one) are
        // for experiments.
        _ => None,
    }
}

pub fn report(store: &Store, ids: &[i64], exports: &ExportList) -> anyhow::Result<i32> {
    let outputs = outputs(exports)?;
    if ids.is_empty() {
        print!("{}", listing(store)?);
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
    for output in outputs {
        match output {
            Output::Json(to) => write_output(to.as_path(), render_json(&analysis)?.as_bytes())?,
            Output::Html(to) => {
                write_output(to.as_path(), render_html(&analysis).as_bytes())?;
                if let Destination::Path(path) = to {
                    eprintln!("allocscope: HTML report in {}", path.display());
                }
            }
            Output::Plots(dir) => super::exports::write_plots(
                dir,
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
