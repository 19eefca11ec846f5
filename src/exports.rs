//! Where an experiment's rendered bytes go: the table to stdout unless an
//! export takes it, then each export of the list to its destination. Shared
//! by `compare`, `report`, `tune` and `demo`. It stays in the binary: the
//! list is `options`' (parsed from the export flags), and the advice under
//! the table reads the runs' output files, which no reporter does.

use crate::analyze::types::Analysis;
use crate::options::export::{Export, ExportList, Format};
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
use std::path::Path;

pub fn print_table_and_export(analysis: &Analysis, exports: &ExportList) -> anyhow::Result<()> {
    // Keep stdout machine-readable when an export goes there.
    if !exports.uses_stdout() {
        write_output(Path::new("-"), &TableReporter.render(analysis)?)?;
        let advice = crate::rounds::throughput::advice(analysis);
        if !advice.is_empty() {
            println!("\n{}", advice.join("\n"));
        }
    }
    for export in exports.iter() {
        write_export(analysis, export)?;
    }
    Ok(())
}

/// One export: its format's renderer, written to its destination.
fn write_export(analysis: &Analysis, export: &Export) -> anyhow::Result<()> {
    let path = export.destination.as_path();
    let bytes = match export.format {
        Format::Json { samples } => JsonReporter {
            include_samples: samples,
        }
        .render(analysis)?,
        Format::Csv => CsvReporter.render(analysis)?,
        Format::SamplesCsv => SamplesCsvReporter.render(analysis)?,
        Format::MarkersCsv if has_markers(analysis) => MarkersCsvReporter.render(analysis)?,
        Format::MarkersCsv => return Ok(()),
        Format::Markdown => MarkdownReporter.render(analysis)?,
        Format::Html => HtmlReporter.render(analysis)?,
        Format::Plots => {
            return write_plots(
                path,
                plots::all(analysis).into_iter().map(|p| (p.name, p.svg)),
            )
        }
    };
    write_output(path, &bytes)?;
    if export.format == Format::Html && path != Path::new("-") {
        eprintln!("allocscope: HTML report in {}", path.display());
    }
    Ok(())
}

fn has_markers(analysis: &Analysis) -> bool {
    analysis
        .experiment
        .configs
        .iter()
        .flat_map(|c| &c.runs)
        .any(|r| !r.record.markers.is_empty())
}

/// Each plot as DIR/NAME.svg and DIR/NAME.png (experiments and recordings).
pub fn write_plots(
    dir: &Path,
    plots: impl Iterator<Item = (impl std::fmt::Display, String)>,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
    if png::no_fonts() {
        eprintln!(
            "warning: no system fonts found, the PNG plots will have no text; \
             install fonts-dejavu-core (the SVGs are complete)"
        );
    }
    for (name, svg) in plots {
        write_output(&dir.join(format!("{name}.svg")), svg.as_bytes())?;
        let png = png::render(&svg, 1.5)?;
        write_output(&dir.join(format!("{name}.png")), &png)?;
    }
    eprintln!("allocscope: plots in {}", dir.display());
    Ok(())
}
