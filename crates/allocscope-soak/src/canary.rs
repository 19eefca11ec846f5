//! The short report of `soak --pid`: per configuration its level, growth
//! with its interval, whether it settled, its projection to a day, and
//! where its memory is from `/proc` alone (the heap probe cannot be
//! injected into a running process); then the verdict, whose growths carry
//! no cause.

use crate::growth::Settling;
use crate::projection::at_horizons;
use crate::render::{growth_text, render};
use crate::verdict::{ConfigVerdict, Verdict};
use crate::watch::{ProcSplit, Watched};
use allocscope_core::units::{format_bytes, format_seconds};
use std::fmt::Write;

/// Said once in every `--pid` report.
pub const NO_PROBE_NOTE: &str = "The heap probe cannot be injected into a running process: \
    live heap and allocator free memory are unknown, so growth is reported without telling \
    a leak from fragmentation.";

/// `anon 610 MiB (huge pages 0 B), file 12.0 MiB, shared 1.00 MiB`.
fn split_text(split: &ProcSplit) -> String {
    format!(
        "anon {} (huge pages {}), file {}, shared {}",
        format_bytes(split.anon_bytes as f64),
        format_bytes(split.huge_pages_bytes as f64),
        format_bytes(split.file_bytes as f64),
        format_bytes(split.shmem_bytes as f64)
    )
}

/// The report: one block per configuration (its instances' pids), then the
/// verdict, or why there is none yet.
pub fn report(watched: &[Watched], verdict: Option<&Verdict>) -> String {
    let mut out = String::new();
    let mut labels: Vec<&str> = Vec::new();
    for w in watched {
        if !labels.contains(&w.attached.label.as_str()) {
            labels.push(&w.attached.label);
        }
    }
    for label in labels {
        let members: Vec<&Watched> = watched
            .iter()
            .filter(|w| w.attached.label == label)
            .collect();
        let pids: Vec<String> = members.iter().map(|w| w.attached.pid.to_string()).collect();
        let samples: usize = members.iter().map(|w| w.memory.len()).sum();
        let _ = writeln!(out, "{label} (pid {}, {samples} samples)", pids.join(", "));
        let judged = verdict.and_then(|v| v.configs.iter().find(|c| c.label == label));
        figures(&mut out, judged);
        for w in &members {
            let pid = w.attached.pid;
            let rss = w
                .last
                .map_or("-".into(), |l| format_bytes(l.rss_bytes as f64));
            let _ = match (&w.split, w.exited) {
                (_, true) => writeln!(out, "  pid {pid} exited during the soak; last RSS {rss}"),
                (Some(split), false) => {
                    writeln!(out, "  pid {pid} at the end: {}", split_text(split))
                }
                (None, false) => writeln!(out, "  pid {pid}: RSS {rss}, not split by this kernel"),
            };
        }
    }
    let _ = writeln!(out, "{NO_PROBE_NOTE}");
    match verdict {
        Some(v) => {
            let _ = writeln!(out, "{}", render(v));
        }
        None => {
            let _ = writeln!(
                out,
                "No verdict: every configuration needs at least 3 samples in the last half of \
                 the soak; soak longer."
            );
        }
    }
    out
}

/// A configuration's figures: level, growth, settled, a day's projection.
fn figures(out: &mut String, judged: Option<&ConfigVerdict>) {
    match judged {
        Some(c) => {
            let s = &c.summary;
            let state = match s.settling {
                Settling::Plateau => "settled: flat".to_string(),
                Settling::Grows => "settled: grows beyond noise".to_string(),
                Settling::Open => match s.settles_after_s {
                    Some(at) => format!("not settled (would at about {})", format_seconds(at)),
                    None => "not settled".to_string(),
                },
            };
            let _ = writeln!(
                out,
                "  level {} [{}, {}], growth {}, {state}",
                format_bytes(s.level.median),
                format_bytes(s.level.ci_low),
                format_bytes(s.level.ci_high),
                growth_text(&s.growth)
            );
            if let Some(p) =
                at_horizons(&s.level, s.level_at_s, &s.growth, s.start_s, s.end_s).first()
            {
                let _ = writeln!(
                    out,
                    "  projection at {}: {} [{}, {}] (a projection of the current growth, not a measurement)",
                    format_seconds(p.at_s - s.start_s),
                    format_bytes(p.value),
                    format_bytes(p.ci_low),
                    format_bytes(p.ci_high)
                );
            }
        }
        None => {
            let _ = writeln!(out, "  too few samples for a level and a growth rate yet");
        }
    }
}
