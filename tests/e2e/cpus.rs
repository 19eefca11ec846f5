//! `compare --cpus N`: the allocators sized as on a host of N CPUs, on a
//! real 25-thread program under real glibc and jemalloc, with the arena
//! counts read by the heap probe and printed by the program itself.

use crate::common::*;
use serde_json::Value;

/// The program's own report of one run (`tests/programs/arena_threads.c`).
fn program_output(run: &Value) -> String {
    let path = run["stdout_path"].as_str().expect("stdout_path");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

fn arenas_max(json: &Value, name: &str) -> u64 {
    let run = &runs(config(json, name))[0];
    assert_eq!(run["status"], "ok", "{run}");
    run["arenas_max"]
        .as_u64()
        .unwrap_or_else(|| panic!("no arenas_max in {run}"))
}

fn compare_arena_threads(scratch: &Scratch, options: &[&str]) -> (String, Value) {
    let program = program("arena_threads");
    let mut all = vec!["--heap", "-r", "1", "--interval", "50ms"];
    all.extend_from_slice(options);
    let (output, json) = scratch.compare(&all, &[program.to_str().expect("utf-8"), "25", "1500"]);
    assert!(output.status.success(), "{}", stderr(&output));
    (stdout(&output) + &stderr(&output), json)
}

#[test]
fn cpus_16_gives_25_threads_more_than_16_glibc_arenas_and_a_configurations_own_limit_stays() {
    let _one_at_a_time = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let (text, json) = compare_arena_threads(
        &scratch,
        &["--cpus", "16", "-a", "glibc", "-a", "glibc:arena_max=2"],
    );
    // On this 2-CPU machine glibc stops at 16 arenas; as on 16 CPUs (limit
    // 128) each of the 25 threads keeps one of its own.
    let arenas = arenas_max(&json, "glibc");
    assert!(arenas > 16, "glibc under --cpus 16 made {arenas} arenas");
    // The program counts them itself too: its main thread's, one per
    // thread, and the heap probe thread's.
    let own = program_output(&runs(config(&json, "glibc"))[0]);
    let counted: u64 = own
        .split_whitespace()
        .find_map(|w| w.strip_prefix("arenas="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no arena count in {own}"));
    assert!(counted >= 26, "{own}");
    assert!(arenas_max(&json, "glibc:arena_max=2") <= 2);
    // Stored and shown: more CPUs than this machine has, so not pinned.
    let emulated = &json["experiment"]["host"]["cpus_emulated"];
    assert_eq!(emulated["cpus"], 16, "{json}");
    assert_eq!(emulated["pinned"], false, "{emulated}");
    assert_eq!(
        emulated["configs"][0]["setting"], "arena_max=128",
        "{emulated}"
    );
    assert_eq!(emulated["configs"][1]["action"], "kept", "{emulated}");
    for words in [
        "host emulated: --cpus 16, as on 16 CPUs (glibc arena_max=128; glibc:arena_max=2 keeps \
         its own arena_max=2)",
        "only the allocators' sizing is emulated, not CPU contention",
    ] {
        assert!(text.contains(words), "'{words}' missing from:\n{text}");
    }
    // The stored configuration carries no emulation: its deploy lines neither.
    assert_eq!(
        config(&json, "glibc")["env"],
        serde_json::json!({}),
        "{json}"
    );
}

#[test]
fn cpus_1_pins_to_one_cpu_and_gives_glibc_at_most_8_arenas_and_jemalloc_one() {
    if !require_allocator("jemalloc") {
        return;
    }
    let _one_at_a_time = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let (text, json) =
        compare_arena_threads(&scratch, &["--cpus", "1", "-a", "glibc", "-a", "jemalloc"]);
    let arenas = arenas_max(&json, "glibc");
    assert!(
        (1..=8).contains(&arenas),
        "glibc under --cpus 1 made {arenas} arenas"
    );
    // jemalloc 5.3 gives a single CPU one arena, not four; arenas.narenas
    // counts its arena for huge requests too.
    let je = program_output(&runs(config(&json, "jemalloc"))[0]);
    assert!(
        je.contains("jemalloc opt.narenas=1 arenas.narenas=2"),
        "{je}"
    );
    assert_eq!(arenas_max(&json, "jemalloc"), 2);
    // Pinned: the program itself saw one CPU in its affinity mask.
    assert!(je.contains("affinity=1"), "{je}");
    assert_eq!(json["experiment"]["host"]["cpus_emulated"]["pinned"], true);
    assert!(
        text.contains("the runs were pinned to 1 of this machine's"),
        "{text}"
    );
}

#[test]
fn cpus_must_be_a_whole_number_of_at_least_one() {
    let scratch = Scratch::new();
    for bad in ["0", "abc"] {
        let db = scratch.db();
        let output = scratch.run(&[
            "compare",
            "--db",
            db.to_str().expect("utf-8"),
            "--cpus",
            bad,
            "--",
            "true",
        ]);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{bad}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(&format!("--cpus '{bad}'")), "{err}");
        assert!(err.contains("e.g. --cpus 16"), "{err}");
        assert!(!db.exists(), "--cpus {bad} created a store");
    }
}
