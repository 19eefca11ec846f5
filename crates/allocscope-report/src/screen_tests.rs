//! The one screen (`screen.rs`) and the parts `report --section` prints
//! (`part.rs`), on the fixture whose verdict recommends jemalloc and names a
//! cause.

use super::part::{Section, SectionReporter};
use super::screen::ScreenReporter;
use super::*;
use anyhow::Result;

fn screen() -> ScreenReporter {
    ScreenReporter {
        report: "allocscope report 7".to_string(),
    }
}

fn text(reporter: &dyn Reporter) -> Result<String> {
    let a = super::breakdown_tests::analysis()?;
    Ok(String::from_utf8(reporter.render(&a)?)?)
}

#[test]
fn the_screen_matches_its_snapshot() -> Result<()> {
    let a = super::breakdown_tests::analysis()?;
    super::tests::snapshot("screen_breakdown", &screen(), &a, &[])
}

/// A service's measures (`PSS at end of load`, `load duration`) make the
/// heads too long for `vs glibc`: the table drops it to stay within 100
/// columns, the baseline row still saying what the ratios are to.
#[test]
fn a_table_too_wide_for_its_vs_heads_drops_them() -> Result<()> {
    let mut a = super::breakdown_tests::analysis()?;
    a.verdict.memory.label = "PSS at end of load".into();
    a.verdict.performance.label = "load duration".into();
    let text = String::from_utf8(screen().render(&a)?)?;
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    let head = text.lines().nth(2).unwrap_or_default();
    assert!(head.contains("PSS at end of load     "), "{text}");
    assert!(!head.contains(" vs glibc"), "{text}");
    Ok(())
}

#[test]
fn the_screen_fits_100_columns_and_says_the_cause_once() -> Result<()> {
    let short = text(&screen())?;
    let full = text(&TableReporter)?;
    assert!(short.lines().count() <= 40, "{short}");
    assert!(short.lines().all(|l| l.chars().count() <= 100), "{short}");
    // The full report gives the cause per configuration and again for the
    // pick; the screen says the pick's cause once.
    let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let cause = "a tuning (trim, decay times, fewer arenas) recovers it";
    assert!(words(&full).matches(cause).count() > 1, "{full}");
    assert_eq!(words(&short).matches(cause).count(), 1, "{short}");
    assert!(
        short.contains("verdict: use jemalloc: mean PSS 0.54x [0.53, 0.54]"),
        "{short}"
    );
    assert!(short.contains("deploy: env LD_PRELOAD="), "{short}");
    assert!(short.contains("allocscope report 7 --full"), "{short}");
    assert!(!short.contains("Kubernetes  env:"), "{short}");
    Ok(())
}

/// A cause that is a sentence of its own ("Most of the difference is not
/// heap ...") continues the why line after its colon in lower case.
#[test]
fn the_why_line_goes_on_in_lower_case_after_its_colon() -> Result<()> {
    let mut a = super::breakdown_tests::analysis()?;
    let cause = a.verdict.cause.as_mut().expect("the fixture names a cause");
    let d = cause.difference.as_mut().expect("a difference");
    d.cause = allocscope_analyze::cause::CauseKind::NotHeap;
    let text = String::from_utf8(screen().render(&a)?)?.replace("\n  ", " ");
    let why = text
        .lines()
        .find(|l| l.starts_with("why: "))
        .unwrap_or_default();
    assert!(
        why.contains(" uses less than glibc: most of the difference is not heap"),
        "{text}"
    );
    Ok(())
}

#[test]
fn each_section_is_the_full_reports_own_part() -> Result<()> {
    let full = text(&TableReporter)?;
    // The fixture measured no heap probe: that part says so.
    let heap = text(&SectionReporter(Section::Heap))?;
    assert_eq!(heap, "experiment 7 has no heap section\n");
    let lines: Vec<&str> = full.lines().collect();
    for section in Section::ALL.into_iter().filter(|&s| s != Section::Heap) {
        let part = text(&SectionReporter(section))?;
        assert!(part.lines().count() > 1, "{}: {part}", section.name());
        for line in part.lines() {
            assert!(lines.contains(&line), "{}: {line}\n{full}", section.name());
        }
    }
    let deploy = text(&SectionReporter(Section::Deploy))?;
    assert!(
        deploy.starts_with("deploy jemalloc:") && deploy.contains("Kubernetes"),
        "{deploy}"
    );
    Ok(())
}

#[test]
fn markdown_puts_the_summary_above_the_fold_and_the_full_report_under_it() -> Result<()> {
    let md = text(&MarkdownReporter)?;
    let fold = md.find("<details><summary>Full report</summary>");
    let summary = md.find("**Verdict:** use jemalloc");
    let deploy = md.find("**Deploy:**\n\n```sh\nenv LD_PRELOAD=");
    let full = md.find("### Verdict (budget");
    assert!(
        summary < deploy && deploy < fold && fold < full && summary.is_some(),
        "{md}"
    );
    assert!(md.trim_end().ends_with("</details>"), "{md}");
    Ok(())
}

#[test]
fn html_opens_with_the_card_then_the_bars_then_the_table_and_plots_have_values_on_hover(
) -> Result<()> {
    let html = text(&HtmlReporter)?;
    let at = |what: &str| html.find(what).unwrap_or(usize::MAX);
    let order = [
        at("<section id=\"answer\""),
        at("<b>Verdict:</b> use jemalloc"),
        at("<b>Why:</b>"),
        at("<figure id=\"plot-breakdown\">"),
        at("<h2>Comparison</h2>"),
        at("<h2>Plots</h2>"),
        at("<h2>Runs</h2>"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert!(at("<h1>") < order[0], "{html}");
    assert!(
        html.contains("<g><title>live heap: "),
        "bars without values"
    );
    assert!(html.contains("<g><title>jemalloc: median of its runs; highest "));
    assert!(
        html.contains("<h3 id=\"deploy\">"),
        "the card's link has no target"
    );
    Ok(())
}
