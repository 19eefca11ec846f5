//! Where the rendered bytes go: the table to stdout, each requested export to
//! its file (`-` is stdout). Shared by `compare` and `report`.

use crate::analyze::types::Analysis;
use crate::cli::ExportArgs;
use crate::usage_error::UsageError;
use crate::report::csv::CsvReporter;
use crate::report::html::HtmlReporter;
use crate::report::json::JsonReporter;
use crate::report::markdown::MarkdownReporter;
use crate::report::markers_csv::MarkersCsvReporter;
use crate::report::samples_csv::SamplesCsvReporter;
use crate::report::svg::plots;
use crate::report::table::TableReporter;
use crate::report::{png, write_output, Reporter};
use anyhow::Context;
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
        && !to_stdout(&exports.html)
    {
        write_output(Path::new("-"), &TableReporter.render(analysis)?)?;
    }
    if let Some(path) = &exports.export_json {
        let reporter = JsonReporter {
            include_samples: exports.samples,
        };
        write_output(path, &reporter.render(analysis)?)?;
    }
    if let Some(path) = &exports.html {
        write_output(path, &HtmlReporter.render(analysis)?)?;
        if path != Path::new("-") {
            eprintln!("allocscope: HTML report in {}", path.display());
        }
    }
    if let Some(dir) = &exports.plots {
        write_plots(analysis, dir)?;
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

/// Each plot as DIR/NAME.svg and DIR/NAME.png.
fn write_plots(analysis: &Analysis, dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
    if png::no_fonts() {
        eprintln!(
            "warning: no system fonts found, the PNG plots will have no text; \
             install fonts-dejavu-core (the SVGs are complete)"
        );
    }
    for plot in plots::all(analysis) {
        write_output(&dir.join(format!("{}.svg", plot.name)), plot.svg.as_bytes())?;
        let png = png::render(&plot.svg, 1.5)?;
        write_output(&dir.join(format!("{}.png", plot.name)), &png)?;
    }
    eprintln!("allocscope: plots in {}", dir.display());
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
