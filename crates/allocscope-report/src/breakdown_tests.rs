//! "Where the memory went" in every format, on the fixture experiment with
//! a breakdown at every tick: the terminal block, the verdict's why lines,
//! the Markdown and HTML sections and the two plots.

use super::*;
use allocscope_analyze::analyze;
use allocscope_analyze::types::Analysis;
use allocscope_core::fixture;
use allocscope_core::model::{Breakdown, Reclaim, StoredExperiment};
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

/// The fixture with a breakdown at every tick and a reclaim test at the
/// end of glibc's runs that returned 30 MiB.
pub(super) fn experiment() -> StoredExperiment {
    let mut e = fixture::experiment();
    for c in &mut e.configs {
        let free_share = if c.config.name == "jemalloc" { 5 } else { 40 };
        let glibc = c.config.name == "glibc";
        for r in &mut c.runs {
            for s in &mut r.record.samples {
                s.breakdown = Some(split(s.rss_bytes, free_share));
                s.arenas = glibc.then_some(16);
            }
            let last = r.record.samples.last().map_or(0, |s| s.rss_bytes);
            // What the probe measured just before: the free part of the
            // last tick before it, as the snapshots were made.
            let free_before = r
                .record
                .samples
                .iter()
                .filter(|s| s.t_s <= 0.2)
                .filter_map(|s| s.breakdown)
                .next_back()
                .map(|b| b.allocator_free_bytes);
            r.record.reclaim = glibc.then(|| Reclaim {
                t_s: 0.2,
                trigger: "exit".into(),
                rss_before_bytes: last,
                rss_after_bytes: last - 30 * MIB,
                processes: 1,
                free_before_bytes: free_before,
                live_before_bytes: None,
                free_counted_bytes: None,
                reach: allocscope_core::model::ReclaimReach::Whole,
                unavailable_processes: 0,
            });
        }
    }
    e
}

pub(super) fn analysis() -> Result<Analysis> {
    analyze(experiment(), "glibc")
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
        [
            "RSS",
            "live",
            "free",
            "other",
            "file",
            "arenas",
            "reclaimed"
        ],
        "{text}"
    );
    let glibc: Vec<&str> = block[2].split_whitespace().collect();
    assert_eq!(glibc[..2], ["glibc", "mean"], "{text}");
    // 90 MiB RSS = 36 live + 36 free + 0.1 file + the rest.
    let figures: Vec<f64> = glibc[2..7]
        .iter()
        .map(|v| v.parse().unwrap_or(0.0))
        .collect();
    let sum: f64 = figures[1..].iter().sum();
    assert!((sum - figures[0]).abs() < 0.2, "{figures:?}: {text}");
    assert_eq!(glibc[7], "16", "{text}");
    assert_eq!(glibc[8..], ["30.0", "(83%)"], "{text}");
    assert!(block[3].trim_start().starts_with("peak"), "{text}");
    assert!(block[4].starts_with("  jemalloc"), "{text}");
    Ok(())
}

#[test]
fn every_format_with_breakdowns_matches_its_snapshot() -> Result<()> {
    let a = analysis()?;
    for (name, reporter) in [
        ("table_breakdown", &TableReporter as &dyn Reporter),
        ("report_breakdown_md", &MarkdownReporter),
        ("summary_breakdown_csv", &CsvReporter),
    ] {
        super::tests::snapshot(name, reporter, &a, &[])?;
    }
    super::tests::snapshot(
        "report_breakdown_html",
        &HtmlReporter,
        &a,
        &super::tests::HTML,
    )
}

#[test]
fn the_verdict_text_says_why_under_its_own_head() -> Result<()> {
    let text = String::from_utf8(TableReporter.render(&analysis()?)?)?;
    let why = text
        .find(&format!(
            "  {}:\n  - glibc: 80.8 MiB RSS",
            verdict_text::WHY_HEAD
        ))
        .expect("the why lines after the verdict's reasons");
    assert!(
        text[why..].contains("  - What jemalloc removed: 37.6 MiB"),
        "{text}"
    );
    Ok(())
}

/// The analysis with the third configuration named `my<lib>|x`.
fn with_odd_name() -> Result<Analysis> {
    let mut e = experiment();
    e.configs[2].config.name = "my<lib>|x".to_string();
    analyze(e, "glibc")
}

#[test]
fn markdown_has_the_section_and_the_why_lines_escaped() -> Result<()> {
    let md = String::from_utf8(MarkdownReporter.render(&with_odd_name()?)?)?;
    assert!(
        md.contains("### Where the memory went (MiB; median run)"),
        "{md}"
    );
    assert!(md.contains("| my&lt;lib&gt;\\|x | mean | 79.2 |"), "{md}");
    assert!(md.contains("- my&lt;lib&gt;\\|x: 79.2 MiB RSS"), "{md}");
    Ok(())
}

#[test]
fn html_has_the_table_the_why_lines_and_both_breakdown_plots() -> Result<()> {
    let html = String::from_utf8(HtmlReporter.render(&with_odd_name()?)?)?;
    assert!(html.contains("<h2 id=\"breakdown\">Where the memory went</h2>"));
    assert!(html.contains("<td>my&lt;lib&gt;|x</td><td>mean</td><td>79.2</td>"));
    assert!(
        html.contains("<li>my&lt;lib&gt;|x: 79.2 MiB RSS"),
        "the why line, escaped"
    );
    let figure = |name: &str| -> String {
        let start = html
            .find(&format!("<figure id=\"plot-{name}\">"))
            .unwrap_or_else(|| panic!("{name} missing"));
        let rest = &html[start..];
        rest[..rest.find("</figure>").unwrap_or(rest.len())].to_string()
    };
    // Stacked bars: mean and peak per configuration, a rect per part.
    let bars = figure("breakdown");
    assert_eq!(bars.matches("<rect").count() - 2, 3 * 2 * 4, "{bars}");
    // Over time: a panel per configuration, a band per part in each.
    let over = figure("breakdown_over_time");
    assert_eq!(over.matches("<g transform=").count(), 3, "{over}");
    assert!(
        over.contains("glibc: where the memory went, run 3"),
        "{over}"
    );
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

#[test]
fn a_run_whose_probe_was_stale_on_most_ticks_is_shown_at_its_reclaim_test() -> Result<()> {
    let mut e = experiment();
    for c in e.configs.iter_mut().filter(|c| c.config.name == "glibc") {
        for r in &mut c.runs {
            // Fresh on the first tick only: 25% coverage.
            for s in r.record.samples.iter_mut().skip(1) {
                s.breakdown = None;
                s.heap_stale_processes = 1;
            }
            if let Some(reclaim) = r.record.reclaim.as_mut() {
                reclaim.live_before_bytes = Some(MIB);
                reclaim.free_before_bytes = Some(reclaim.rss_before_bytes - 2 * MIB);
            }
        }
    }
    let a = analyze(e, "glibc")?;
    let text = String::from_utf8(TableReporter.render(&a)?)?;
    let glibc = text
        .lines()
        .find(|l| l.trim_start().starts_with("glibc ") && l.contains("reclaim"))
        .unwrap_or_else(|| panic!("no reclaim row: {text}"));
    let cells: Vec<&str> = glibc.split_whitespace().collect();
    assert_eq!(cells[..2], ["glibc", "reclaim"], "{glibc}");
    // Its one row, no peak row after it.
    let after = text
        .lines()
        .skip_while(|l| *l != glibc)
        .nth(1)
        .unwrap_or_default();
    assert!(!after.trim_start().starts_with("peak"), "{text}");
    Ok(())
}

#[test]
fn no_cause_is_named_for_a_saving_within_noise() -> Result<()> {
    let mut e = experiment();
    // Every candidate's runs hold glibc's RSS and PSS, 2% less then 1% more in
    // turn: the lowest ratio is below 1 but its interval holds 1.
    let glibc: Vec<Vec<(u64, Option<u64>)>> = e.configs[0]
        .runs
        .iter()
        .map(|r| {
            r.record
                .samples
                .iter()
                .map(|s| (s.rss_bytes, s.pss_bytes))
                .collect()
        })
        .collect();
    for c in e.configs.iter_mut().skip(1) {
        for (k, r) in c.runs.iter_mut().enumerate() {
            let factor = if k % 2 == 0 { 0.98 } else { 1.01 };
            for (s, &(rss, pss)) in r.record.samples.iter_mut().zip(&glibc[k]) {
                s.rss_bytes = (rss as f64 * factor) as u64;
                s.pss_bytes = pss.map(|p| (p as f64 * factor) as u64);
                s.breakdown = Some(split(s.rss_bytes, 40));
            }
        }
    }
    let a = analyze(e, "glibc")?;
    let cause = a.verdict.cause.as_ref().expect("breakdowns");
    assert_eq!(
        cause.difference,
        None,
        "{:?}",
        crate::cause_words::lines(cause)
    );
    assert!(
        !crate::cause_words::lines(cause)
            .iter()
            .any(|l| l.starts_with("What ")),
        "{:?}",
        crate::cause_words::lines(cause)
    );
    Ok(())
}
