//! `soak` of the built-in `grow` scenario, two configurations of two
//! instances each: its arenas mode grows under glibc's default and levels
//! off with two arenas, which the verdict picks; its leak mode is a leak
//! under every configuration.

use crate::common::{one_heavy_test_at_a_time, require_allocator, stderr, stdout, Scratch};
use crate::record::db_arg;

/// `soak` for 40 s of `workload grow --mode MODE`, 4 MiB every 2.7 s (15
/// steps, so glibc's default still grows when the soak ends), under glibc
/// and `other`; the report printed.
fn soak_grow(mode: &str, other: &str) -> String {
    let scratch = Scratch::new();
    let db = db_arg(&scratch);
    let output = scratch.run(&[
        "soak",
        "-a",
        "glibc",
        "-a",
        other,
        "--replicas",
        "2",
        "--duration",
        "40s",
        "--until",
        "duration",
        "--interval",
        "250ms",
        "--db",
        &db,
        "--",
        env!("CARGO_BIN_EXE_allocscope"),
        "workload",
        "grow",
        "--mode",
        mode,
        "--step-ms",
        "2700",
        "--step-mib",
        "4",
        "--steps",
        "15",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    stdout(&output)
}

#[test]
fn soaked_grow_scenario_picks_two_arenas_and_calls_its_leak_a_leak() {
    let _heavy = one_heavy_test_at_a_time();
    let text = soak_grow("arenas", "glibc:arena_max=2");
    let verdict = text.lines().last().expect("a verdict");
    assert!(
        verdict.starts_with("Use glibc:arena_max=2: plateau ")
            && verdict.contains("glibc still grows ")
            && verdict.contains(
                " while its live heap is flat: the allocator holds it (fragmentation), not a leak"
            ),
        "{text}"
    );

    // Under another allocator if one is installed, else fewer arenas.
    let other = if require_allocator("jemalloc") {
        "jemalloc"
    } else {
        "glibc:arena_max=2"
    };
    let text = soak_grow("leak", other);
    let verdict = text.lines().last().expect("a verdict");
    assert!(
        verdict.starts_with(
            "All configurations grow with their live heap: a leak in the program, which no \
             allocator fixes (glibc "
        ) && verdict.contains(&format!("; {other} ")),
        "{text}"
    );
}
