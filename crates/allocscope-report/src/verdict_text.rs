//! The verdict as plain text for the terminal table: the reason, one line
//! per configuration on what it saved and cost, where each configuration's
//! memory went and what the recommendation removed, and the winner's deploy
//! lines (without a winner, the memory limit lines of the configuration
//! kept).

use super::format::wrap;
use super::verdict_words::{deploy_snippets, explanation, kept_words, reason};
use allocscope_analyze::verdict::LimitLines;
use allocscope_analyze::verdict::Verdict;
use anyhow::Result;
use std::fmt::Write as _;

/// The thresholds the verdict judged by, for its heading in every format:
/// `budget: at most 5% slower; saving counts from 3%`.
pub fn thresholds(v: &Verdict) -> String {
    format!(
        "budget: at most {}% slower; saving counts from {}%",
        v.max_slowdown_pct, v.min_saving_pct
    )
}

/// The heading of the verdict's cause lines in every format.
pub(crate) const WHY_HEAD: &str = "why (each configuration's median run, time-weighted mean)";

/// The verdict, its reasons, where the memory went, and the deploy lines
/// of the winner.
pub fn verdict(out: &mut String, v: &Verdict) -> Result<()> {
    writeln!(out, "\nverdict ({})", thresholds(v))?;
    for line in wrap(&reason(v), 86) {
        writeln!(out, "  {line}")?;
    }
    for sentence in explanation(v) {
        for (i, line) in wrap(&sentence, 84).iter().enumerate() {
            writeln!(out, "  {} {line}", if i == 0 { "-" } else { " " })?;
        }
    }
    if let Some(cause) = &v.cause {
        writeln!(out, "  {WHY_HEAD}:")?;
        for sentence in super::cause_words::lines(cause) {
            for (i, line) in wrap(&sentence, 84).iter().enumerate() {
                writeln!(out, "  {} {line}", if i == 0 { "-" } else { " " })?;
            }
        }
    }
    deploy(out, v)
}

/// The winner's deploy lines, or without a winner the memory limit lines of
/// the configuration kept (`report --section deploy`).
pub fn deploy(out: &mut String, v: &Verdict) -> Result<()> {
    if let Some(kept) = &v.kept_limit {
        writeln!(out, "{}:", kept_words(kept))?;
        for (title, text) in LimitLines::of(&kept.memory_limit).targets() {
            for (i, line) in text.lines().enumerate() {
                let head = if i == 0 { title } else { "" };
                writeln!(out, "  {head:<11} {line}")?;
            }
        }
    }
    let Some(d) = v.deploy.as_ref().map(deploy_snippets) else {
        return Ok(());
    };
    writeln!(out, "deploy {}:", v.config.as_deref().unwrap_or_default())?;
    for (title, text) in [
        ("shell", &d.shell),
        ("systemd", &d.systemd),
        ("Dockerfile", &d.dockerfile),
        ("Kubernetes", &d.kubernetes),
    ] {
        for (i, line) in text.lines().enumerate() {
            let head = if i == 0 { title } else { "" };
            writeln!(out, "  {head:<11} {line}")?;
        }
    }
    Ok(())
}
