//! The budget's default figure on a real program: the tree's CPU time,
//! guarded by its wall time. Threads serialized on one arena's lock spend
//! no more CPU and take far longer (tests/programs/arena_serial.c, its
//! threads holding their arena's lock across a wait): the CPU figure alone
//! would pass glibc:arena_max=1, which saves memory; the guard settles it
//! out, over the budget on its wall time.

use crate::common::*;

/// The place of `config` in the verdict's notes.
fn place<'a>(json: &'a serde_json::Value, config: &str) -> &'a serde_json::Value {
    let notes = json["verdict"]["explanation_data"]
        .as_array()
        .expect("notes");
    let note = notes.iter().find(|n| n["config"] == config);
    &note.unwrap_or_else(|| panic!("no note on {config}: {json}"))["place"]
}

#[test]
fn a_configuration_that_serializes_threads_is_over_the_budget_on_wall_time_though_its_cpu_is_not() {
    let _heavy = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let program = program("arena_serial");
    // 16 threads, 4 rounds each of 4 ms of computing and a 60 ms wait
    // holding their arena's lock: about 0.3 s of CPU under either; the
    // waits side by side (0.25 s) or one after another (3.8 s).
    let (output, json) = scratch.compare(
        &["-a", "glibc", "-a", "glibc:arena_max=1", "-r", "5"],
        &[program.to_str().expect("utf-8"), "16", "4", "4000", "60000"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let verdict = &json["verdict"];
    assert_eq!(verdict["performance_metric"], "cpu_s", "{verdict}");
    assert_eq!(verdict["performance_guard"], "wall_s", "{verdict}");
    assert_ne!(verdict["config"], "glibc:arena_max=1", "{verdict}");
    let serial = place(&json, "glibc:arena_max=1");
    assert_eq!(serial["performance"], "bad", "{verdict}");
    assert_eq!(serial["guard_over"], true, "{verdict}");
    let words = stdout(&output);
    assert!(
        words.contains("over the 5% budget on wall time"),
        "the screen says which figure put it over: {words}"
    );
    // Judged by its CPU time alone, it would not be over the budget.
    let (db, path) = (scratch.db(), scratch.path("alone.json"));
    let alone = scratch.run(&[
        "report",
        "--db",
        db.to_str().expect("utf-8"),
        "--perf-metric",
        "cpu",
        "--export-json",
        path.to_str().expect("utf-8"),
    ]);
    assert!(alone.status.success(), "{}", stderr(&alone));
    let text = std::fs::read_to_string(&path).expect("the JSON export");
    let alone: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(
        alone["verdict"]["performance_guard"],
        serde_json::Value::Null
    );
    assert_ne!(
        place(&alone, "glibc:arena_max=1")["performance"],
        "bad",
        "{}",
        alone["verdict"]
    );
}
