//! `allocscope report --list`: every stored experiment and recording, one
//! line each, each table followed by the command that shows one of them.

use allocscope_core::recorded::RecordingInfo;
use allocscope_core::store::ExperimentListing;
use allocscope_core::units::{ColumnUnit, Unit};

pub fn render(experiments: &[ExperimentListing], recordings: &[RecordingInfo]) -> String {
    if experiments.is_empty() && recordings.is_empty() {
        return "nothing stored yet; run `allocscope compare -- COMMAND` \
                or `allocscope record -- COMMAND`\n"
            .to_string();
    }
    let mut out = String::new();
    if !experiments.is_empty() {
        out += &render_experiments(experiments);
        out += "show an experiment with `allocscope report ID`\n";
    }
    if !recordings.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        out += &render_recordings(recordings);
        out += "show a recording with `allocscope report --recordings ID`\n";
    }
    out
}

fn shortened(command: &[String]) -> String {
    let command = command.join(" ");
    if command.chars().count() > 60 {
        command.chars().take(57).collect::<String>() + "..."
    } else {
        command
    }
}

fn render_experiments(experiments: &[ExperimentListing]) -> String {
    let mut out = format!(
        "{:>4}  {:<20}  {:<11}  {:>7}  {:>7}  {:<24}  {}\n",
        "id", "started", "status", "configs", "runs ok", "name", "command"
    );
    for e in experiments {
        out += &format!(
            "{:>4}  {:<20}  {:<11}  {:>7}  {:>7}  {:<24}  {}\n",
            e.id,
            e.started_at,
            e.status,
            e.configs,
            format!("{}/{}", e.ok_runs, e.total_runs),
            e.name.as_deref().unwrap_or("-"),
            shortened(&e.command)
        );
    }
    out
}

fn render_recordings(recordings: &[RecordingInfo]) -> String {
    let mut out = format!(
        "{:>4}  {:<20}  {:<11}  {:>9}  {:<18}  {:<24}  {}\n",
        "id", "started", "status", "elapsed", "config", "name", "command"
    );
    // One unit for the whole elapsed column, as in the reports.
    let elapsed = ColumnUnit::for_values(Unit::Seconds, recordings.iter().map(|r| r.elapsed_s));
    for r in recordings {
        let command = match &r.command {
            Some(command) => shortened(command),
            None => format!("pid {}", r.target_pid),
        };
        out += &format!(
            "{:>4}  {:<20}  {:<11}  {:>9}  {:<18}  {:<24}  {}\n",
            r.id,
            r.started_at,
            r.status,
            elapsed.show(r.elapsed_s),
            r.config,
            r.name,
            command
        );
    }
    out
}
