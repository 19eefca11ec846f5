//! "Where the memory went" in every format, on the fixture experiment with
//! a breakdown at every tick: the terminal block, the verdict's why lines,
//! the Markdown and HTML sections and the two plots.

use super::*;
use crate::analyze::cause::{Cause, WhereWent};
use crate::analyze::types::Analysis;
use crate::analyze::{analyze, fixture};
use crate::model::{Breakdown, Reclaim};
use anyhow::Result;

const MIB: u64 = 1 << 20;

/// A breakdown of `rss`: 40% live, 40% free (less under jemalloc), a tenth
/// of a MiB of file pages, the rest other anonymous memory.
fn split(rss: u64, free_share: u64) -> Breakdown {
    let live = rss * 4 / 10;
    let free = rss * free_share / 100;
    let file = MIB / 10;
    Breakdown {
        live_heap_bytes: live,
        allocator_free_bytes: free,
        file_bytes: file,
        other_anon_bytes: rss - live - free - file,
        ..Breakdown::default()
    }
}

/// The fixture with a breakdown at every tick and a reclaim in glibc's
/// runs, and its analysis with the cause analysis gives such runs.
fn analysis() -> Result<Analysis> {
    let mut e = fixture::experiment();
    for c in &mut e.configs {
        let free_share = if c.config.name == "jemalloc" { 5 } else { 40 };
        for r in &mut c.runs {
            for s in &mut r.record.samples {
                s.breakdown = Some(split(s.rss_bytes, free_share));
            }
            if c.config.name == "glibc" {
                let last = r.record.samples.last().map_or(0, |s| s.rss_bytes);
                r.record.reclaim = Some(Reclaim {
                    t_s: 0.2,
                    trigger: "exit".into(),
                    rss_before_bytes: last,
                    rss_after_bytes: last - 30 * MIB,
                    processes: 1,
                });
            }
        }
    }
    let mut a = analyze(e, "glibc")?;
    let configs: Vec<WhereWent> = a
        .experiment
        .configs
        .iter()
        .map(|c| {
            let run = &c.runs[1].record;
            let at = |k: usize| run.samples[k].breakdown.unwrap_or_default();
            WhereWent {
                config: c.config.name.clone(),
                run: run.index,
                mean: at(3),
                peak: Some(at(2)),
                arenas: (c.config.name == "glibc").then_some(16),
                reclaim: run.reclaim.clone(),
                free_before_reclaim_bytes: run.reclaim.as_ref().map(|_| 36 * MIB),
            }
        })
        .collect();
    a.verdict.cause = Some(Cause {
        lines: vec!["glibc: 90.2 MiB RSS = 36 live + 36 free | <b>".into()],
        configs,
        difference: None,
    });
    Ok(a)
}

#[test]
fn the_table_shows_each_configurations_mean_and_peak_parts_in_one_unit() -> Result<()> {
    let a = analysis()?;
    let text = String::from_utf8(TableReporter.render(&a)?)?;
    let start = text
        .find("where the memory went (MiB; median run")
        .expect("the block");
    let block: Vec<&str> = text[start..].lines().take(8).collect();
    let heads = block[1].split_whitespace().collect::<Vec<_>>();
    // Shown: RSS and the parts some breakdown has; not metadata or huge pages.
    assert_eq!(
        heads,
        ["RSS", "live", "free", "other", "file", "arenas", "reclaimed"],
        "{text}"
    );
    let glibc: Vec<&str> = block[2].split_whitespace().collect();
    assert_eq!(glibc[..2], ["glibc", "mean"], "{text}");
    // 90 MiB RSS = 36 live + 36 free + 0.1 file + the rest.
    let figures: Vec<f64> = glibc[2..7].iter().map(|v| v.parse().unwrap_or(0.0)).collect();
    let sum: f64 = figures[1..].iter().sum();
    assert!((sum - figures[0]).abs() < 0.2, "{figures:?}: {text}");
    assert_eq!(glibc[7], "16", "{text}");
    assert_eq!(glibc[8..], ["30.0", "(83%)"], "{text}");
    assert!(block[3].trim_start().starts_with("peak"), "{text}");
    assert!(block[4].starts_with("  jemalloc"), "{text}");
    Ok(())
}

#[test]
fn the_verdict_text_says_why_under_its_own_head() -> Result<()> {
    let text = String::from_utf8(TableReporter.render(&analysis()?)?)?;
    assert!(
        text.contains(&format!(
            "  {}:\n  - glibc: 90.2 MiB RSS",
            verdict_text::WHY_HEAD
        )),
        "{text}"
    );
    Ok(())
}

#[test]
fn markdown_has_the_section_and_the_why_lines_escaped() -> Result<()> {
    let md = String::from_utf8(MarkdownReporter.render(&analysis()?)?)?;
    assert!(
        md.contains("### Where the memory went (MiB; median run)"),
        "{md}"
    );
    assert!(md.contains("| glibc | mean | 90.5 | 36.2 | 36.2 |"), "{md}");
    assert!(md.contains("|  | peak | 120 |"), "{md}");
    assert!(md.contains("36 free \\| &lt;b&gt;"), "{md}");
    Ok(())
}

#[test]
fn html_has_the_table_the_why_lines_and_both_breakdown_plots() -> Result<()> {
    let a = analysis()?;
    let html = String::from_utf8(HtmlReporter.render(&a)?)?;
    assert!(html.contains("<h2 id=\"breakdown\">Where the memory went</h2>"));
    assert!(html.contains("36 free | &lt;b&gt;"), "the why line, escaped");
    let figure = |name: &str| -> String {
        let start = html
            .find(&format!("<figure id=\"plot-{name}\">"))
            .unwrap_or_else(|| panic!("{name} missing"));
        let rest = &html[start..];
        rest[..rest.find("</figure>").unwrap_or(rest.len())].to_string()
    };
    // Stacked bars: mean and peak per configuration, a rect per part.
    let bars = figure("breakdown");
    assert!(bars.matches("fill=\"#0072b2\"").count() >= 6, "{bars}");
    // Over time: a panel per configuration, a band per part in each.
    let over = figure("breakdown_over_time");
    assert_eq!(over.matches("<g transform=").count(), 3, "{over}");
    assert!(over.contains("glibc: where the memory went, run 2"), "{over}");
    assert_eq!(over.matches(" Z\" fill=\"#d55e00\"").count(), 3, "{over}");
    Ok(())
}

#[test]
fn without_breakdowns_no_section_and_no_breakdown_plot() -> Result<()> {
    let a = analyze(fixture::experiment(), "glibc")?;
    assert!(a.verdict.cause.is_none());
    let text = String::from_utf8(TableReporter.render(&a)?)?;
    assert!(!text.contains("where the memory went"), "{text}");
    let names: Vec<&str> = svg::plots::all(&a).iter().map(|p| p.name).collect();
    assert!(!names.contains(&"breakdown"), "{names:?}");
    Ok(())
}

