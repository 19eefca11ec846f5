//! `allocscope report --recordings [ID ...]`: list the stored recordings, or
//! load the given ones, analyse them side by side and print or export them
//! (text to stdout, `--export-json`, `--html`, `--plots DIR`).

use crate::analyze::recordings::analyze_recordings;
use crate::cli::ExportArgs;
use crate::usage_error::UsageError;
use crate::report::recordings::{render_html, render_json, render_text};
use crate::report::svg::recordings as plots;
use crate::report::{png, write_output};
use crate::store::Store;
use crate::units::format_seconds;
use anyhow::Context;
use std::path::Path;

pub fn report(store: &Store, ids: &[i64], exports: &ExportArgs) -> anyhow::Result<i32> {
    if exports.export_csv.is_some() || exports.export_markdown.is_some() {
        return Err(UsageError::Record(
            "--recordings renders text, --export-json, --html and --plots; CSV and Markdown \
             exports are for experiments"
                .into(),
        )
        .into());
    }
    if ids.is_empty() {
        print!("{}", listing(store)?);
        return Ok(0);
    }
    let mut recordings = Vec::with_capacity(ids.len());
    for &id in ids {
        recordings.push(store.load_recording(id)?);
    }
    let analysis = analyze_recordings(recordings);
    if exports.export_json.as_deref() != Some(Path::new("-")) {
        write_output(Path::new("-"), render_text(&analysis).as_bytes())?;
    }
    if let Some(path) = &exports.export_json {
        write_output(path, render_json(&analysis)?.as_bytes())?;
    }
    if let Some(path) = &exports.html {
        write_output(path, render_html(&analysis).as_bytes())?;
        eprintln!("allocscope: HTML report in {}", path.display());
    }
    if let Some(dir) = &exports.plots {
        std::fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
        for plot in plots::all(&analysis) {
            write_output(&dir.join(format!("{}.svg", plot.name)), plot.svg.as_bytes())?;
            let png = png::render(&plot.svg, 1.5)?;
            write_output(&dir.join(format!("{}.png", plot.name)), &png)?;
        }
        eprintln!("allocscope: plots in {}", dir.display());
    }
    Ok(0)
}

/// One line per stored recording.
fn listing(store: &Store) -> anyhow::Result<String> {
    let all = store.list_recordings()?;
    if all.is_empty() {
        return Ok("no recordings yet; start one with `allocscope record`\n".into());
    }
    let mut out = String::new();
    for r in all {
        out.push_str(&format!(
            "{:>4}  {:<24}  {:<18}  {:<11}  {:>9}  started {}\n",
            r.id,
            r.name,
            r.config,
            r.status,
            format_seconds(r.elapsed_s),
            r.started_at
        ));
    }
    Ok(out)
}
