//! Where the rendered bytes go: the table to stdout, each requested export to
//! its file (`-` is stdout). Shared by `compare` and `report`.

use crate::analyze::types::Analysis;
use crate::cli::ExportArgs;
use crate::options::UsageError;
use crate::report::csv::CsvReporter;
use crate::report::json::JsonReporter;
use crate::report::markdown::MarkdownReporter;
use crate::report::markers_csv::MarkersCsvReporter;
use crate::report::samples_csv::SamplesCsvReporter;
use crate::report::table::TableReporter;
use crate::report::{write_output, Reporter};
use std::path::{Path, PathBuf};

/// `--max-slowdown`: a percentage from 0 to 1000, `%` optional.
pub fn max_slowdown(exports: &ExportArgs) -> Result<f64, UsageError> {
    let text = exports.max_slowdown.trim();
    match text.trim_end_matches('%').trim().parse::<f64>() {
        Ok(pct) if (0.0..=1000.0).contains(&pct) => Ok(pct),
        _ => Err(UsageError::Knob(format!(
            "--max-slowdown '{text}' is not a percentage from 0 to 1000; e.g. --max-slowdown 5 \
             accepts configurations at most 5% slower than the baseline"
        ))),
    }
}

pub fn print_table_and_export(analysis: &Analysis, exports: &ExportArgs) -> anyhow::Result<()> {
    let to_stdout = |p: &Option<PathBuf>| p.as_deref() == Some(Path::new("-"));
    // Keep stdout machine-readable when an export goes there.
    if !to_stdout(&exports.export_json)
        && !to_stdout(&exports.export_csv)
        && !to_stdout(&exports.export_markdown)
    {
        write_output(Path::new("-"), &TableReporter.render(analysis)?)?;
    }
    if let Some(path) = &exports.export_json {
        let reporter = JsonReporter {
            include_samples: exports.samples,
        };
        write_output(path, &reporter.render(analysis)?)?;
    }
    if let Some(path) = &exports.export_markdown {
        write_output(path, &MarkdownReporter.render(analysis)?)?;
    }
    if let Some(path) = &exports.export_csv {
        write_output(path, &CsvReporter.render(analysis)?)?;
        if exports.samples && path != Path::new("-") {
            write_output(
                &samples_csv_path(path),
                &SamplesCsvReporter.render(analysis)?,
            )?;
        }
        let has_markers = analysis
            .experiment
            .configs
            .iter()
            .flat_map(|c| &c.runs)
            .any(|r| !r.record.markers.is_empty());
        if has_markers && path != Path::new("-") {
            write_output(
                &beside_csv(path, "markers"),
                &MarkersCsvReporter.render(analysis)?,
            )?;
        }
    }
    Ok(())
}

/// `results.csv` -> `results.samples.csv`.
pub fn samples_csv_path(csv: &Path) -> PathBuf {
    beside_csv(csv, "samples")
}

/// `results.csv` -> `results.KIND.csv`.
pub fn beside_csv(csv: &Path, kind: &str) -> PathBuf {
    let stem = csv
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    csv.with_file_name(format!("{stem}.{kind}.csv"))
}
