//! `report`'s arguments checked: what to show (an experiment, the list,
//! recordings), the exports, and the judging flags given, which override
//! what `compare` stored with the experiment.

use super::export::OutputSettings;
use super::judge::JudgeFlags;
use crate::cli::{ReportArgs, Section as Choice};
use allocscope_core::usage_error::UsageError;
use allocscope_report::part::{Section, View};
use std::path::PathBuf;

pub struct ReportSettings {
    pub db: PathBuf,
    /// The experiment's id; the latest when `None`.
    pub experiment: Option<i64>,
    /// `--list`: list the stored experiments and recordings.
    pub list: bool,
    /// `--baseline`: instead of the experiment's.
    pub baseline: Option<String>,
    /// `--recordings [ID...]`.
    pub recordings: Option<Vec<i64>>,
    /// `--soak ID`.
    pub soak: Option<i64>,
    pub output: OutputSettings,
    /// The judging flags given (the others: what `compare` stored).
    pub judge: JudgeFlags,
}

impl ReportSettings {
    pub fn from_args(args: &ReportArgs) -> Result<ReportSettings, UsageError> {
        let output = OutputSettings::parse(&args.export)?;
        Ok(ReportSettings {
            db: args.db.clone(),
            experiment: args.experiment,
            list: args.list,
            baseline: args.baseline.clone(),
            recordings: args.recordings.clone(),
            soak: args.soak,
            output: OutputSettings {
                view: args
                    .section
                    .map_or(output.view, |s| View::Section(section(s))),
                ..output
            },
            judge: JudgeFlags::parse(&args.judge)?,
        })
    }
}

/// `--section`'s word as the part the report prints.
fn section(choice: Choice) -> Section {
    match choice {
        Choice::Markers => Section::Markers,
        Choice::Breakdown => Section::Breakdown,
        Choice::Limits => Section::Limits,
        Choice::Heap => Section::Heap,
        Choice::Deploy => Section::Deploy,
        Choice::Runs => Section::Runs,
    }
}
