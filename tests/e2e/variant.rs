//! Builds as configurations: `--variant LABEL=COMMAND` runs another build of
//! the program under glibc with nothing preloaded but the heap probe, and
//! the run says which allocator the build really brought.

use crate::common::{config, jemalloc_dev_present, program_with, runs, stderr, stdout, Scratch};

/// tests/programs/pinned.c built plain and with -ljemalloc: after freeing
/// its pinned 4 KiB blocks, glibc keeps them and jemalloc (purging at once)
/// does not, so the jemalloc build holds a fraction of the plain one's
/// memory and is recommended.
#[test]
fn a_build_linked_against_jemalloc_runs_jemalloc_as_a_variant_and_is_judged_against_glibc() {
    if !jemalloc_dev_present() {
        return;
    }
    let _heavy = crate::common::one_heavy_test_at_a_time();
    let plain = program_with("pinned", &[]);
    let linked = program_with("pinned", &["-ljemalloc"]);
    let scratch = Scratch::new();
    let variant = format!("je-build={} 48 1200", linked.display());
    // The program allocates 48 MiB, then sleeps 1.2 s: its CPU time is the
    // allocation alone, where the jemalloc build spent 1.60-2.07x glibc's
    // in one run (its wall time 1.04x). This test is about variants, so the
    // budget is judged on wall time, as it was before CPU became the default.
    let options = [
        "-r",
        "3",
        "--max-slowdown",
        "50",
        "--perf-metric",
        "wall",
        "-a",
        "glibc",
        "--variant",
        &variant,
    ];
    let (output, json) = scratch.compare(
        &options,
        &[plain.to_str().unwrap_or_default(), "48", "1200"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let je = config(&json, "je-build");
    assert_eq!(je["allocator"], "variant", "{je}");
    assert_eq!(je["served_by"], "jemalloc", "{je}");
    assert_eq!(je["env"], serde_json::json!({}), "nothing preloaded: {je}");
    assert_eq!(
        je["command"][0].as_str(),
        linked.to_str(),
        "the variant ran its own build: {je}"
    );
    for run in runs(je) {
        assert_eq!(run["status"], "ok", "{run}");
        assert_eq!(run["served_by"], "jemalloc", "{run}");
    }
    assert_eq!(config(&json, "glibc")["served_by"], "glibc");
    let table = stdout(&output);
    let row = table
        .lines()
        .find(|l| l.trim_start().starts_with("je-build"))
        .unwrap_or_default();
    assert!(
        row.contains("variant") && row.contains("served by jemalloc"),
        "{table}"
    );
    let v = &json["verdict"];
    assert_eq!(v["outcome"], "recommend", "{v}");
    assert_eq!(v["config"], "je-build", "{v}");
    let shell = v["deploy"]["shell"].as_str().unwrap_or_default();
    assert!(shell.contains(linked.to_str().unwrap_or("?")), "{shell}");
    let warnings = json["warnings"].to_string();
    assert!(!warnings.contains("links jemalloc itself"), "{warnings}");
}
