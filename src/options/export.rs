//! Every output option as one list of (format, destination), in the style of
//! hyperfine's `ExportManager`: `--export-json`, `--export-csv` (and the
//! sample and marker CSVs beside it), `--export-markdown`, `--html` and
//! `--plots`, plus `--quiet`. `compare`, `report`,
//! `demo` and the recordings reports all write from this list, so a new
//! format is one variant here, its flag and its renderer.

use crate::cli::ExportArgs;
use allocscope_core::usage_error::UsageError;
use allocscope_report::part::View;
use std::path::{Path, PathBuf};

/// What an export renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Schema allocscope/1; with every run's timeline when `samples`.
    Json {
        samples: bool,
    },
    /// One row per configuration.
    Csv,
    /// Every sample in long format (`--samples` beside `--export-csv FILE`).
    SamplesCsv,
    /// Every marker (beside `--export-csv FILE`; written only when a run has one).
    MarkersCsv,
    Markdown,
    /// One self-contained HTML report.
    Html,
    /// Each plot as SVG and PNG; the destination is a directory.
    Plots,
}

impl Format {
    /// The option that asked for it, for messages.
    pub fn flag(self) -> &'static str {
        match self {
            Format::Json { .. } => "--export-json",
            Format::Csv => "--export-csv",
            Format::SamplesCsv => "--samples",
            Format::MarkersCsv => "--export-csv (markers)",
            Format::Markdown => "--export-markdown",
            Format::Html => "--html",
            Format::Plots => "--plots",
        }
    }
}

/// Where an export goes: `-` is stdout (for files; `--plots` always names a
/// directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    Stdout,
    Path(PathBuf),
}

impl Destination {
    /// The path `report::write_output` takes: `-` for stdout.
    pub fn as_path(&self) -> &Path {
        match self {
            Destination::Stdout => Path::new("-"),
            Destination::Path(path) => path,
        }
    }

    fn file(path: &Path) -> Destination {
        if path == Path::new("-") {
            Destination::Stdout
        } else {
            Destination::Path(path.to_path_buf())
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    pub format: Format,
    pub destination: Destination,
}

/// The exports in the order they are written; no two share a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportList(Vec<Export>);

impl ExportList {
    /// Checks that no two exports write the same file (several may go to stdout).
    pub fn new(exports: Vec<Export>) -> Result<ExportList, UsageError> {
        for (i, export) in exports.iter().enumerate() {
            let Destination::Path(path) = &export.destination else {
                continue;
            };
            if let Some(earlier) = exports[..i]
                .iter()
                .find(|e| e.destination == export.destination)
            {
                return Err(UsageError::ExportsCollide {
                    first: earlier.format.flag(),
                    second: export.format.flag(),
                    path: path.clone(),
                });
            }
        }
        Ok(ExportList(exports))
    }

    /// The list the export flags ask for, in the order they have always been
    /// written: JSON, HTML, plots, Markdown, CSV and the CSVs beside it.
    pub fn parse(args: &ExportArgs) -> Result<ExportList, UsageError> {
        let file = |format: Format, path: &Option<PathBuf>| {
            path.as_deref().map(|p| Export {
                format,
                destination: Destination::file(p),
            })
        };
        let mut exports: Vec<Export> = [
            file(
                Format::Json {
                    samples: args.samples,
                },
                &args.export_json,
            ),
            file(Format::Html, &args.html),
            args.plots.as_ref().map(|dir| Export {
                format: Format::Plots,
                destination: Destination::Path(dir.clone()),
            }),
            file(Format::Markdown, &args.export_markdown),
            file(Format::Csv, &args.export_csv),
        ]
        .into_iter()
        .flatten()
        .collect();
        if let Some(csv) = &args.export_csv {
            exports.extend(beside_the_csv(csv, args.samples));
        }
        ExportList::new(exports)
    }

    /// The exports a command renders, each converted by `supported`; the
    /// first one it does not render is refused with `refusal`.
    pub fn supported<'a, T>(
        &'a self,
        supported: impl Fn(&'a Export) -> Option<T>,
        refusal: impl FnOnce(Format) -> UsageError,
    ) -> Result<Vec<T>, UsageError> {
        let mut taken = Vec::with_capacity(self.0.len());
        for export in &self.0 {
            match supported(export) {
                Some(t) => taken.push(t),
                None => return Err(refusal(export.format)),
            }
        }
        Ok(taken)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Export> {
        self.0.iter()
    }

    /// Whether an export takes stdout, which then carries only exports so
    /// that it stays machine-readable.
    pub fn uses_stdout(&self) -> bool {
        self.0.iter().any(|e| e.destination == Destination::Stdout)
    }
}

/// The sample (with `--samples`) and marker CSVs beside `--export-csv FILE`
/// (`results.csv` -> `results.samples.csv`); none beside stdout.
fn beside_the_csv(csv: &Path, samples: bool) -> Vec<Export> {
    if csv == Path::new("-") {
        return Vec::new();
    }
    let stem = csv.file_stem().unwrap_or_default().to_string_lossy();
    let beside = |format, kind| Export {
        format,
        destination: Destination::Path(csv.with_file_name(format!("{stem}.{kind}.csv"))),
    };
    let mut exports = Vec::new();
    if samples {
        exports.push(beside(Format::SamplesCsv, "samples"));
    }
    exports.push(beside(Format::MarkersCsv, "markers"));
    exports
}

/// What to write after the analysis.
#[derive(Debug, Clone)]
pub struct OutputSettings {
    pub exports: ExportList,
    /// No progress lines.
    pub quiet: bool,
    /// What the terminal shows: the one screen, or with `--full` all of it
    /// (`report --section` sets one part).
    pub view: View,
}

impl OutputSettings {
    pub fn parse(args: &ExportArgs) -> Result<OutputSettings, UsageError> {
        Ok(OutputSettings {
            exports: ExportList::parse(args)?,
            quiet: args.quiet,
            view: if args.full { View::Full } else { View::Screen },
        })
    }
}

#[cfg(test)]
mod tests;
