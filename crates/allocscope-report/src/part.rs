//! What the terminal prints of an experiment (`View`): the one screen by
//! default, the complete report with `--full`, or one part of it with
//! `report --section NAME` (`Section`, laid out by `SectionReporter` with the
//! complete report's own blocks).

use super::reporter::Reporter;
use allocscope_analyze::types::Analysis;
use anyhow::Result;

/// What the terminal shows of an experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    /// The answer on one screen (`screen.rs`).
    #[default]
    Screen,
    /// Every table, the verdict per configuration, every deploy target.
    Full,
    /// One part of the complete report.
    Section(Section),
}

/// A part of the complete report, by the name `--section` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The memory at each marker.
    Markers,
    /// Where the memory went.
    Breakdown,
    /// The memory limit each configuration needs.
    Limits,
    /// The heap probe's figures.
    Heap,
    /// The pick's deploy lines (or the kept default's limit).
    Deploy,
    /// The command, the host, the configurations with their runs, failed
    /// runs, warnings and the sampler's overhead.
    Runs,
}

impl Section {
    pub const ALL: [Section; 6] = [
        Section::Markers,
        Section::Breakdown,
        Section::Limits,
        Section::Heap,
        Section::Deploy,
        Section::Runs,
    ];

    /// Its name, as `--section` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Section::Markers => "markers",
            Section::Breakdown => "breakdown",
            Section::Limits => "limits",
            Section::Heap => "heap",
            Section::Deploy => "deploy",
            Section::Runs => "runs",
        }
    }
}

/// One part of the complete report, as the complete report lays it out.
pub struct SectionReporter(pub Section);

impl Reporter for SectionReporter {
    fn render(&self, analysis: &Analysis) -> Result<Vec<u8>> {
        let mut out = String::new();
        let width = super::table::name_width(&analysis.experiment);
        match self.0 {
            Section::Markers => super::markers_table::markers_block(&mut out, analysis)?,
            Section::Breakdown => {
                super::breakdown_table::breakdown_block(&mut out, analysis, width)?
            }
            Section::Limits => super::limits::block(&mut out, analysis, width)?,
            Section::Heap => super::heap_table::heap_block(&mut out, analysis, width)?,
            Section::Deploy => super::verdict_text::deploy(&mut out, &analysis.verdict)?,
            Section::Runs => {
                super::table::header(&mut out, analysis)?;
                super::table::runs_notes(&mut out, analysis)?;
                super::foreign_table::foreign_block(&mut out, analysis, width)?;
            }
        }
        if out.trim().is_empty() {
            out = format!(
                "experiment {} has no {} section\n",
                analysis.experiment.id,
                self.0.name()
            );
        }
        Ok(out.trim_start_matches('\n').as_bytes().to_vec())
    }
}
