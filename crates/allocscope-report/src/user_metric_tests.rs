//! Every reporter on the fixture with a `--metric` (`ops`, higher is
//! better): a row of the metric table like the built-in ones, in the
//! terminal table, JSON, CSV, Markdown and HTML.

use super::tests::snapshot;
use super::*;
use allocscope_analyze::analyze;
use allocscope_analyze::types::Analysis;
use allocscope_core::fixture;
use anyhow::Result;

fn analysis() -> Result<Analysis> {
    analyze(fixture::with_user_metric(true), "glibc")
}

#[test]
fn every_format_with_a_user_metric_matches_its_snapshot() -> Result<()> {
    let a = analysis()?;
    let json = JsonReporter {
        include_samples: false,
    };
    for (name, reporter) in [
        ("table_user_metric", &TableReporter as &dyn Reporter),
        ("summary_user_metric_csv", &CsvReporter),
        ("report_user_metric_md", &MarkdownReporter),
        ("report_user_metric_json", &json),
    ] {
        snapshot(name, reporter, &a, &[])?;
    }
    Ok(())
}

#[test]
fn the_table_shows_the_metric_its_direction_and_ratios() -> Result<()> {
    let text = String::from_utf8(TableReporter.render(&analysis()?)?)?;
    assert!(text.contains("ops (--metric, higher is better)"), "{text}");
    assert!(text.contains("1.10x [1.10, 1.10] *"), "{text}");
    assert!(text.contains("1000"), "3 significant digits: {text}");
    Ok(())
}

#[test]
fn json_has_the_metric_with_its_ratio_and_interval() -> Result<()> {
    let bytes = JsonReporter {
        include_samples: false,
    }
    .render(&analysis()?)?;
    let v: serde_json::Value = serde_json::from_slice(&bytes)?;
    let listed = &v["experiment"]["user_metrics"][0];
    assert_eq!(listed["name"], "ops");
    assert_eq!(listed["higher_is_better"], true);
    let jemalloc = &v["configs"][1];
    assert_eq!(jemalloc["runs"][0]["user_metrics"]["ops"], 1104.4);
    let summary = &jemalloc["summary"];
    assert!(
        summary["user.ops"]["median"].as_f64().is_some(),
        "{summary}"
    );
    let ratio = &summary["ratio"]["user.ops"];
    for key in ["value", "ci_low", "ci_high"] {
        let r = ratio[key].as_f64().unwrap_or_default();
        assert!((r - 1.1).abs() < 1e-9, "{key}: {ratio}");
    }
    // mimalloc's run 2 matched nothing: its run lists no value.
    let mimalloc_run_2 = &v["configs"][2]["runs"][1];
    assert_eq!(mimalloc_run_2["user_metrics"], serde_json::json!({}));
    Ok(())
}

#[test]
fn html_has_a_column_and_says_which_way_is_better() -> Result<()> {
    let html = String::from_utf8(HtmlReporter.render(&analysis()?)?)?;
    assert!(html.contains("<th>ops</th>"), "{html}");
    assert!(
        html.contains("ops: a figure the program prints (--metric), higher is better."),
        "{html}"
    );
    Ok(())
}

#[test]
fn without_a_metric_no_report_mentions_one() -> Result<()> {
    let plain = analyze(fixture::experiment(), "glibc")?;
    let json = JsonReporter {
        include_samples: false,
    }
    .render(&plain)?;
    let text = String::from_utf8(json)?;
    assert!(!text.contains("user_metrics"), "{text}");
    assert!(!text.contains("user."), "{text}");
    Ok(())
}
