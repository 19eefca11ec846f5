//! Progress markers from a real workload's stdout: the built-in
//! `allocscope:mark LABEL` line and a `--mark REGEX`, with the memory of the
//! tree at each, exported, summarised and kept in the stdout file.

use crate::common::*;

const MIB: i64 = 1 << 20;

fn labels(run: &serde_json::Value) -> Vec<String> {
    run["markers"]
        .as_array()
        .expect("markers array")
        .iter()
        .map(|m| m["label"].as_str().expect("label").to_string())
        .collect()
}

fn rss_at(run: &serde_json::Value, label: &str) -> i64 {
    let markers = run["markers"].as_array().expect("markers array");
    let m = markers
        .iter()
        .find(|m| m["label"] == label)
        .unwrap_or_else(|| panic!("no marker {label} in {run}"));
    m["rss_bytes"].as_i64().expect("rss_bytes")
}

#[test]
fn markers_arrive_in_order_with_the_memory_held_at_each_step() {
    let scratch = Scratch::new();
    let marks = program("marks");
    let csv = scratch.path("out.csv");
    let (output, json) = scratch.compare(
        &[
            "-a",
            "glibc",
            "-r",
            "1",
            "--mark",
            r"MemoryCheck: event (\d+)",
            "--export-csv",
            csv.to_str().expect("utf-8"),
        ],
        &[marks.to_str().expect("utf-8"), "4", "150"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let run = &runs(config(&json, "glibc"))[0];
    assert_eq!(
        labels(run),
        [
            "step-1",
            "1",
            "step-2",
            "2",
            "step-3",
            "3",
            "step-4",
            "4",
            "child-done"
        ]
    );
    let ts: Vec<f64> = run["markers"]
        .as_array()
        .expect("markers")
        .iter()
        .map(|m| m["t_s"].as_f64().expect("t_s"))
        .collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]), "{ts:?}");
    // Step k holds k touched blocks of 16 MiB on top of the first step.
    let first = rss_at(run, "step-1");
    assert!(first > 16 * MIB && first < 24 * MIB, "step-1 rss {first}");
    for k in 2..=4 {
        let grown = rss_at(run, &format!("step-{k}")) - first;
        let expected = (k - 1) * 16 * MIB;
        assert!(
            (grown - expected).abs() < 3 * MIB,
            "step-{k}: grew {grown}, expected {expected}"
        );
        let by_regex = rss_at(run, &k.to_string()) - first;
        assert!(
            (by_regex - expected).abs() < 3 * MIB,
            "event {k}: {by_regex}"
        );
    }
    // The stdout file keeps every line, the unterminated last one included.
    let path = run["stdout_path"].as_str().expect("stdout_path");
    let text = std::fs::read_to_string(path).expect("stdout file");
    for k in 1..=4 {
        for line in [
            format!("working on step {k}\n"),
            format!("allocscope:mark step-{k}\n"),
            format!("MemoryCheck: event {k} rss-follows\n"),
        ] {
            assert!(text.contains(&line), "{line:?} missing from {text:?}");
        }
    }
    assert!(text.contains("tail-without-newline"), "{text:?}");
    assert!(text.contains("allocscope:mark child-done\n"), "{text:?}");
    // The summary, the table and the long-format CSV.
    let summary = &config(&json, "glibc")["summary"]["markers"];
    assert_eq!(summary[0]["label"], "step-1");
    assert_eq!(summary[0]["runs"], 1);
    let table = stdout(&output);
    assert!(table.contains("memory at markers"), "{table}");
    assert!(!table.contains("warning: --mark"), "{table}");
    let rows = std::fs::read_to_string(scratch.path("out.markers.csv")).expect("markers csv");
    assert_eq!(rows.lines().count(), 1 + 9, "{rows}");
    assert!(rows.contains("glibc,1,step-2,"), "{rows}");
}

#[test]
fn a_mark_regex_that_does_not_compile_is_one_line_exit_2_before_anything_runs() {
    let scratch = Scratch::new();
    let db = scratch.db();
    let output = scratch.run(&[
        "compare",
        "--db",
        db.to_str().expect("utf-8"),
        "--mark",
        "MemoryCheck: (event",
        "--",
        "true",
    ]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line expected: {err}");
    assert!(err.contains("--mark 'MemoryCheck: (event'"), "{err}");
    assert!(!db.exists(), "a store was created");
}

#[test]
fn a_mark_regex_that_never_matches_is_a_warning_not_a_failure() {
    let scratch = Scratch::new();
    let marks = program("marks");
    let db = scratch.db();
    let output = scratch.run(&[
        "compare",
        "--full",
        "--db",
        db.to_str().expect("utf-8"),
        "-a",
        "glibc",
        "-r",
        "1",
        "--mark",
        r"NeverPrinted (\d+)",
        "--",
        marks.to_str().expect("utf-8"),
        "2",
        "20",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let table = stdout(&output);
    assert!(
        table.contains("warning: --mark 'NeverPrinted (\\d+)' never matched"),
        "{table}"
    );
    // The built-in markers still count.
    assert!(table.contains("step-2"), "{table}");
}

/// A job that marks every event: 200,000 marker lines printed as fast as C
/// stdio writes them. Each one is stored and exported, in order, with a
/// reading of the tree; the readings are shared (a walk of /proc per marker
/// took ~600 us, two minutes for this run), and the table thins the rows.
#[test]
fn every_one_of_200000_markers_printed_at_full_speed_is_stored_and_exported() {
    const N: usize = 200_000;
    let scratch = Scratch::new();
    let many = program("many_marks");
    let csv = scratch.path("out.csv");
    let started = std::time::Instant::now();
    let (output, json) = scratch.compare(
        &[
            "-a",
            "glibc",
            "-r",
            "1",
            "--export-csv",
            csv.to_str().expect("utf-8"),
        ],
        &[many.to_str().expect("utf-8"), &N.to_string()],
    );
    let took = started.elapsed();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(took.as_secs() < 30, "compare took {took:?} for {N} markers");

    let conn = rusqlite::Connection::open(scratch.db()).expect("store opens");
    let count = |sql: &str| -> usize {
        let n: i64 = conn.query_row(sql, [], |r| r.get(0)).expect("count");
        usize::try_from(n).expect("non-negative")
    };
    assert_eq!(count("SELECT count(*) FROM markers"), N);
    // Markers share readings: far fewer samples than markers.
    let samples = count("SELECT count(*) FROM samples");
    assert!((1..N / 100).contains(&samples), "{samples} samples");

    let run = &runs(config(&json, "glibc"))[0];
    let markers = run["markers"].as_array().expect("markers array");
    assert_eq!(markers.len(), N);
    for (i, m) in markers.iter().enumerate() {
        assert_eq!(m["label"], format!("event-{}", i + 1), "marker {i}");
        assert!(m["rss_bytes"].as_u64().is_some_and(|b| b > 0), "{m}");
    }
    let summary = config(&json, "glibc")["summary"]["markers"]
        .as_array()
        .expect("summary markers");
    assert_eq!(summary.len(), N);

    let rows = std::fs::read_to_string(scratch.path("out.markers.csv")).expect("markers csv");
    assert_eq!(rows.lines().count(), 1 + N);
    assert!(rows.contains(&format!("glibc,1,event-{N},")), "last row");

    let table = stdout(&output);
    assert!(
        table.contains(&format!("of {N} markers and the last")),
        "{table}"
    );
    let shown = table.lines().filter(|l| l.starts_with("  event-")).count();
    assert!((2..=40).contains(&shown), "{shown} rows:\n{table}");
}
