//! Where an experiment's rendered bytes go: the table to stdout unless an
//! export takes it, then each export of the list to its destination. Shared
//! by `compare`, `report`, `tune` and `demo`. It stays in the binary: the
//! list is `options`' (parsed from the export flags), and the advice under
//! the table reads the runs' output files, which no reporter does.

use crate::options::export::{Export, Format, OutputSettings};
use allocscope_analyze::types::Analysis;
use allocscope_analyze::verdict::sh_quote;
use allocscope_report::csv::CsvReporter;
use allocscope_report::html::HtmlReporter;
use allocscope_report::json::JsonReporter;
use allocscope_report::markdown::MarkdownReporter;
use allocscope_report::markers_csv::MarkersCsvReporter;
use allocscope_report::part::{SectionReporter, View};
use allocscope_report::samples_csv::SamplesCsvReporter;
use allocscope_report::screen::ScreenReporter;
use allocscope_report::svg::plots;
use allocscope_report::table::TableReporter;
use allocscope_report::{png, write_output, Reporter};
use anyhow::Context;
use std::path::Path;

/// The terminal's view of the experiment (the one screen, all of it, or one
/// part) unless an export takes stdout, then the exports. `db` is the store
/// it is in, for the screen's pointer to the rest.
pub fn print_table_and_export(
    analysis: &Analysis,
    output: &OutputSettings,
    db: &Path,
) -> anyhow::Result<()> {
    let exports = &output.exports;
    // Keep stdout machine-readable when an export goes there.
    if !exports.uses_stdout() {
        let view = match output.view {
            View::Screen => ScreenReporter {
                report: report_command(analysis.experiment.id, db),
            }
            .render(analysis)?,
            View::Full => TableReporter.render(analysis)?,
            View::Section(section) => SectionReporter(section).render(analysis)?,
        };
        write_output(Path::new("-"), &view)?;
        let advice = allocscope_rounds::throughput::advice(analysis);
        if !advice.is_empty() && !matches!(output.view, View::Section(_)) {
            allocscope_report::reporter::print(&format!("\n{}\n", advice.join("\n")))?;
        }
    }
    for export in exports.iter() {
        write_export(analysis, export)?;
    }
    Ok(())
}

/// `allocscope report 7`, with `--db FILE` unless the store is the default
/// (`--db`'s default in `cli.rs`).
fn report_command(id: i64, db: &Path) -> String {
    let mut words = vec!["allocscope".to_string(), "report".into(), id.to_string()];
    if db != Path::new("allocscope.db") {
        words.extend(["--db".to_string(), sh_quote(&db.to_string_lossy())]);
    }
    words.join(" ")
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
