//! Fixed-duration programs: wall time holds still across configurations
//! while the throughput the program prints moves; allocscope finds those
//! figures, offers each as ready flags, and `--perf-metric auto` judges by
//! the most-varying one.

use crate::common::{program, require_allocator, stderr, stdout, Scratch};

/// tests/programs/fixed_ops.c churns small blocks for 1.5 s and prints
/// `churn : N ops/sec`; jemalloc's N is several times glibc's here.
#[test]
fn a_fixed_duration_program_gets_its_throughput_suggested_and_auto_judges_by_it() {
    if !require_allocator("jemalloc") {
        return;
    }
    let _heavy = crate::common::one_heavy_test_at_a_time();
    let fixed = program("fixed_ops");
    let workload = [fixed.to_str().unwrap_or_default(), "1500"];
    let scratch = Scratch::new();
    let (output, json) = scratch.compare(&["-r", "2", "-a", "glibc", "-a", "jemalloc"], &workload);
    assert!(output.status.success(), "{}", stderr(&output));
    let table = stdout(&output);
    assert_eq!(json["verdict"]["performance_metric"], "wall_s");
    assert!(table.contains("wall times barely move"), "{table}");
    assert!(
        table.contains("churn_ops_sec: glibc") && table.contains("differs between configurations"),
        "{table}"
    );
    assert!(
        table.contains("--higher-is-better churn_ops_sec --perf-metric churn_ops_sec"),
        "{table}"
    );

    let scratch = Scratch::new();
    let options = [
        "-r",
        "2",
        "-a",
        "glibc",
        "-a",
        "jemalloc",
        "--perf-metric",
        "auto",
    ];
    let (output, json) = scratch.compare(&options, &workload);
    assert!(output.status.success(), "{}", stderr(&output));
    let v = &json["verdict"];
    assert_eq!(v["performance_metric"], "churn_ops_sec", "{v}");
    let ratio = &crate::common::config(&json, "jemalloc")["summary"]["ratio"];
    let ops = ratio["user.churn_ops_sec"]["value"]
        .as_f64()
        .unwrap_or_default();
    assert!(ops > 1.5, "jemalloc's throughput over glibc's: {ratio}");
    // `report` re-judges the stored experiment by the same figure.
    let db = scratch.db();
    let again = scratch.run(&[
        "report",
        "--db",
        db.to_str().unwrap_or_default(),
        "--export-json",
        "-",
    ]);
    let text = stdout(&again);
    assert!(
        text.contains("\"performance_metric\": \"churn_ops_sec\"")
            || text.contains("\"performance_metric\":\"churn_ops_sec\""),
        "{text}"
    );
}
