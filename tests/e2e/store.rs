//! The SQLite store: runs kept, experiments re-rendered without re-running.

use crate::common::*;

#[test]
fn report_rerenders_a_stored_experiment_to_the_same_json() {
    let scratch = Scratch::new();
    let single = program("single");
    let (output, json) = scratch.compare(
        &[
            "-a",
            "glibc",
            "-a",
            "glibc:arena_max=1",
            "-r",
            "2",
            "--name",
            "rerender",
        ],
        &[single.to_str().expect("utf-8"), "16", "50"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let again = scratch.path("again.json");
    let db = scratch.db();
    let report = scratch.run(&[
        "report",
        "--db",
        db.to_str().expect("utf-8"),
        "--export-json",
        again.to_str().expect("utf-8"),
    ]);
    assert!(report.status.success(), "{}", stderr(&report));
    let rerendered: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&again).expect("written")).expect("valid");
    assert_eq!(json, rerendered);
    assert_eq!(json["schema"], "allocscope/1");
    assert_eq!(json["experiment"]["name"], "rerender");
    for key in ["kernel", "glibc", "cpus", "thp"] {
        assert!(!json["experiment"]["host"][key].is_null(), "host.{key}");
    }
}

#[test]
fn list_shows_each_experiment_and_csv_has_one_row_per_config() {
    let scratch = Scratch::new();
    let db = scratch.db();
    let csv = scratch.path("out.csv");
    for name in ["first", "second"] {
        let output = scratch.run(&[
            "compare",
            "--db",
            db.to_str().expect("utf-8"),
            "-a",
            "glibc",
            "-a",
            "glibc:arena_max=1",
            "-r",
            "1",
            "--name",
            name,
            "--samples",
            "--export-csv",
            csv.to_str().expect("utf-8"),
            "--",
            "sh",
            "-c",
            "true",
        ]);
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let list = stdout(&scratch.run(&["report", "--list", "--db", db.to_str().expect("utf-8")]));
    assert!(
        list.contains("first") && list.contains("second") && list.contains("complete"),
        "{list}"
    );
    let text = std::fs::read_to_string(&csv).expect("csv written");
    let mut lines = text.lines();
    let header = lines.next().expect("header");
    assert!(
        header.contains("peak_rss_bytes_median") && header.contains("config"),
        "{header}"
    );
    assert_eq!(lines.count(), 2, "{text}");
    let samples = std::fs::read_to_string(scratch.path("out.samples.csv")).expect("samples csv");
    assert!(
        samples
            .lines()
            .next()
            .is_some_and(|h| h.contains("rss_bytes")),
        "{samples}"
    );
}

#[test]
fn report_without_a_store_says_how_to_make_one() {
    let scratch = Scratch::new();
    let output = scratch.run(&["report", "--db", "missing.db"]);
    assert_ne!(output.status.code(), Some(0));
    assert!(
        stderr(&output).contains("allocscope compare"),
        "{}",
        stderr(&output)
    );
}
