//! `allocscope report --soak ID`: a stored soak judged again from its
//! instances' samples (`soak::stored`) and rendered by the soak crate: the
//! Markdown report as text, `--export-json`, `--export-csv`,
//! `--export-markdown` and `--html`.

use crate::options::export::{Export, ExportList, Format};
use allocscope_core::store::Store;
use allocscope_core::usage_error::UsageError;
use allocscope_report::write_output;
use allocscope_soak::error::SoakError;
use allocscope_soak::export::{csv, figures, json, markdown};
use allocscope_soak::page::html;
use allocscope_soak::stored::load;
use std::path::Path;

/// What an export of a soak renders; `None` for the marker CSV written
/// beside `--export-csv`, which a soak has no markers for.
fn rendered(export: &Export) -> Result<Option<Format>, SoakError> {
    match export.format {
        Format::Json { .. } | Format::Csv | Format::Markdown | Format::Html => {
            Ok(Some(export.format))
        }
        Format::MarkersCsv => Ok(None),
        Format::SamplesCsv | Format::Plots => Err(SoakError::ReportExport(export.format.flag())),
    }
}

pub fn report(store: &Store, id: i64, exports: &ExportList) -> anyhow::Result<i32> {
    let mut chosen = Vec::new();
    for export in exports.iter() {
        if let Some(format) = rendered(export).map_err(UsageError::from)? {
            chosen.push((format, export.destination.as_path()));
        }
    }
    let record = load(store, id)?;
    let rendered = figures(&record);
    // Keep stdout machine-readable when an export goes there.
    if !exports.uses_stdout() {
        write_output(Path::new("-"), markdown(&record, &rendered).as_bytes())?;
    }
    for (format, to) in chosen {
        let bytes = match format {
            Format::Json { .. } => json(&record, &rendered)?,
            Format::Csv => csv(&rendered),
            Format::Markdown => markdown(&record, &rendered),
            _ => html(&record, &rendered, None),
        };
        write_output(to, bytes.as_bytes())?;
    }
    Ok(0)
}
