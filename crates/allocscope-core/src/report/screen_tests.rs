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
