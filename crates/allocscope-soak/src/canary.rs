//! The soak's short report: per configuration its level, growth with its
//! interval, whether it settled, its projection to a day; per instance how
//! it ended or where its memory was at the end (in place, from `/proc`
//! alone: the heap probe cannot be injected into a running process, so
//! those growths carry no cause); then the verdict.

use crate::config::by_label;
use crate::growth::{Settling, PERSISTS_FOR_S};
use crate::projection::{horizons, Basis};
use crate::render::{bytes_text, growth_text, horizon_text, ratio_text, render};
use crate::verdict::{ConfigVerdict, Verdict};
use crate::watched::{ProcSplit, Source, Watched};
use allocscope_core::units::{format_bytes, format_seconds, ColumnUnit, Unit};
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

/// The report: one block per configuration (its instances), then the
/// verdict, or why there is none yet.
pub fn report(watched: &[Watched], verdict: Option<&Verdict>) -> String {
    let mut out = String::new();
    let in_place = watched
        .iter()
        .any(|w| matches!(w.source, Source::Attached(_)));
    let configs = by_label(watched.iter().map(|w| (w.label.as_str(), Some(w), false)));
    for (label, members) in configs.unwrap_or_default() {
        let samples: usize = members.iter().map(|w| w.series.memory.len()).sum();
        let _ = if in_place {
            let pids: Vec<String> = members
                .iter()
                .filter_map(|w| w.pid())
                .map(|p| p.to_string())
                .collect();
            writeln!(out, "{label} (pid {}, {samples} samples)", pids.join(", "))
        } else {
            writeln!(
                out,
                "{label} ({} instances, {samples} samples)",
                members.len()
            )
        };
        let judged = verdict.and_then(|v| v.configs.iter().find(|c| c.label == label));
        figures(&mut out, judged);
        for w in &members {
            instance_lines(&mut out, w);
        }
    }
    if in_place {
        let _ = writeln!(out, "{NO_PROBE_NOTE}");
    }
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

/// How an instance ended, or where its memory was at the end; its restarts.
fn instance_lines(out: &mut String, w: &Watched) {
    let bytes = |b: Option<u64>| b.map_or("-".into(), |b| format_bytes(b as f64));
    let rss = bytes(w.last.map(|l| l.rss_bytes));
    let _ = match (&w.source, &w.ended, &w.split) {
        (Source::Attached(a), Some(_), _) => writeln!(
            out,
            "  pid {} exited during the soak; last RSS {rss}",
            a.pid
        ),
        (Source::Attached(a), None, Some(split)) => {
            writeln!(out, "  pid {} at the end: {}", a.pid, split_text(split))
        }
        (Source::Attached(a), None, None) => {
            writeln!(out, "  pid {}: RSS {rss}, not split by this kernel", a.pid)
        }
        (Source::Launched { .. }, Some(ended), _) => writeln!(
            out,
            "  {} {}: {}; last RSS {rss}",
            w.name,
            ended.status,
            ended.message.as_deref().unwrap_or_default()
        ),
        (Source::Launched { .. }, None, _) => writeln!(
            out,
            "  {} ran to the end: RSS {rss}, live heap {}, allocator free {}",
            w.name,
            bytes(w.last.and_then(|l| l.live_heap_bytes)),
            bytes(
                w.last
                    .and_then(|l| l.breakdown)
                    .map(|b| b.allocator_free_bytes)
            )
        ),
    };
    for restart in &w.restarts {
        let _ = writeln!(out, "  {}: {restart}", w.name);
    }
}

/// A configuration's figures: level, growth, settled, a day's projection.
fn figures(out: &mut String, judged: Option<&ConfigVerdict>) {
    match judged {
        Some(c) => {
            let s = &c.summary;
            let state = match s.settling {
                Settling::Plateau => "settled: flat".to_string(),
                Settling::Grows => "settled: grows beyond noise".to_string(),
                Settling::Rising => format!(
                    "grows beyond noise, seen for {} (not settled until {})",
                    format_seconds(s.seen_s),
                    format_seconds(PERSISTS_FOR_S)
                ),
                Settling::Open => match s.settles_after_s {
                    Some(at) => format!("not settled (would at about {})", format_seconds(at)),
                    None => "not settled".to_string(),
                },
            };
            let _ = writeln!(
                out,
                "  level {}, growth {}, {state}",
                bytes_text(s.level.median, s.level.ci_low, s.level.ci_high),
                growth_text(&s.growth)
            );
            let basis = Basis {
                level: s.level,
                level_at_s: s.level_at_s,
                growth: s.growth,
                settling: s.settling,
                start_s: s.start_s,
                window_start_s: s.window_start_s,
                end_s: s.end_s,
            };
            if let Some(h) = horizons(&basis).first() {
                let _ = writeln!(out, "  {}", horizon_text(h));
            }
            if let Some(cpu) = &c.cpu {
                let against = (cpu.ratio.as_ref())
                    .map(|r| format!(", {} of the baseline's", ratio_text(r)))
                    .unwrap_or_default();
                let _ = writeln!(out, "  CPU time {:.2} cores{against}", cpu.cores);
            }
            for load in &c.load {
                let against = (load.ratio.as_ref())
                    .map(|r| format!(", {} of the baseline's", ratio_text(r)))
                    .unwrap_or_default();
                let better = match load.higher_is_better {
                    true => "higher",
                    false => "lower",
                };
                let _ = writeln!(
                    out,
                    "  load {} {}{against} ({better} is better)",
                    load.name,
                    ColumnUnit::of(Unit::Number, load.value).show(load.value)
                );
            }
        }
        None => {
            let _ = writeln!(out, "  too few samples for a level and a growth rate yet");
        }
    }
}
