//! `allocscope report --list`: one line per stored experiment.

use crate::store::ExperimentListing;

pub fn render(experiments: &[ExperimentListing]) -> String {
    if experiments.is_empty() {
        return "no experiments stored yet; run `allocscope compare -- COMMAND`\n".to_string();
    }
    let mut out = format!(
        "{:>4}  {:<20}  {:<11}  {:>7}  {:>7}  {:<24}  {}\n",
        "id", "started", "status", "configs", "runs ok", "name", "command"
    );
    for e in experiments {
        let mut command = e.command.join(" ");
        if command.chars().count() > 60 {
            command = command.chars().take(57).collect::<String>() + "...";
        }
        out += &format!(
            "{:>4}  {:<20}  {:<11}  {:>7}  {:>7}  {:<24}  {}\n",
            e.id,
            e.started_at,
            e.status,
            e.configs,
            format!("{}/{}", e.ok_runs, e.total_runs),
            e.name.as_deref().unwrap_or("-"),
            command
        );
    }
    out
}
