//! `allocscope tune` on the built-in churn scenario with the real binary and
//! every installed allocator: the race considers the default candidates,
//! drops some with the round and the reason, recommends a configuration that
//! ran, and `report` re-renders the stored race; bad `--try` input is a
//! one-line usage error.

use crate::common::{config, installed_allocators, runs, stderr, stdout, Scratch};
use serde_json::Value;

const ALLOCSCOPE: &str = env!("CARGO_BIN_EXE_allocscope");

/// Churn at a size that runs in about 0.2 s, where glibc's default grows
/// arenas that arena_max=1 or 2 avoid (mean RSS about 0.65-0.75x).
fn churn() -> Vec<&'static str> {
    vec![
        ALLOCSCOPE,
        "workload",
        "churn",
        "--threads",
        "8",
        "--live-mib",
        "16",
        "--ops",
        "100000",
        "--seconds",
        "0",
        "--hold-ms",
        "0",
    ]
}

fn read_json(scratch: &Scratch, name: &str) -> Value {
    let text = std::fs::read_to_string(scratch.path(name)).expect("the JSON export");
    serde_json::from_str(&text).expect("valid JSON")
}

#[test]
fn tune_races_the_default_candidates_drops_some_and_recommends_one_that_ran() {
    let _heavy = crate::common::one_heavy_test_at_a_time();
    let installed = installed_allocators();
    let scratch = Scratch::new();
    let db = scratch.db();
    let db = db.to_str().expect("utf-8");
    // A wide budget (3x): wall-time noise of 0.2 s runs on a shared
    // machine cannot keep the race open, so memory decides; a user value
    // that maps every block (about 15x slower here) is over it.
    let mut args = vec![
        "tune",
        "--full",
        "--db",
        db,
        "--export-json",
        "tune.json",
        "--max-runs",
        "6",
        "--max-slowdown",
        "200",
        "--try",
        "glibc:mmap_threshold=0",
        "--",
    ];
    args.extend(churn());
    let output = scratch.run(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let json = read_json(&scratch, "tune.json");
    let tune = &json["tune"];
    let phase_one = tune["phases"][0]["rows"].as_array().expect("phase one");
    if installed.len() == 4 {
        assert!(phase_one.len() >= 21, "{} candidates", phase_one.len());
    }
    assert!(
        phase_one
            .iter()
            .any(|r| r["config"] == "glibc:mmap_threshold=0"),
        "the --try value raced"
    );
    // What each setting bought on its own: over its allocator's plain
    // configuration (the baseline for glibc's).
    for (spec, plain) in [
        ("glibc:arena_max=2", "glibc"),
        ("jemalloc:narenas=1", "jemalloc"),
    ] {
        if let Some(row) = phase_one.iter().find(|r| r["config"] == spec) {
            let over = &row["over_plain"];
            assert_eq!(over["against"], plain, "{row}");
            assert!(over["memory"].as_f64().is_some_and(|m| m > 0.0), "{row}");
        }
    }
    assert!(
        stdout(&output).contains("over plain: what the settings bought on their own"),
        "{}",
        stdout(&output)
    );
    let dropped: Vec<&Value> = phase_one
        .iter()
        .filter(|r| !r["dropped"].is_null())
        .collect();
    assert!(!dropped.is_empty(), "nothing dropped: {tune}");
    for d in &dropped {
        let (round, reason) = (&d["dropped"]["round"], &d["dropped"]["reason"]);
        let round = round.as_u64().expect("a round");
        let reason = reason.as_str().expect("a reason");
        // Rounds 1 and 2 halve by rank; from round 3 the intervals drop.
        if round < 3 {
            assert!(
                reason.starts_with(&format!("round {round}: ranked ")),
                "{d}"
            );
            assert!(reason.contains(" kept "), "{d}");
        } else {
            assert!(round <= 6 && reason.contains("x ["), "{d}");
        }
        // A dropped candidate stops running: fewer runs than the rounds.
        let ran = d["runs"].as_u64().expect("runs");
        assert!(ran <= round, "{d}");
    }
    // The user value mapping every block is far over the budget on its one
    // run, beyond the noise of the others' readings: ranked last, it goes
    // at the first halving.
    let slow = phase_one
        .iter()
        .find(|r| r["config"] == "glibc:mmap_threshold=0")
        .expect("raced");
    assert_eq!(slow["dropped"]["round"], 1, "{slow}");
    assert!(
        slow["dropped"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("over the 200% budget beyond one reading's noise")),
        "{slow}"
    );
    // Halving leaves a sixth of the candidates after round 1, then one
    // finalist, to round 3.
    let reached = |n: u64| {
        phase_one
            .iter()
            .filter(|r| r["runs"].as_u64().is_some_and(|runs| runs >= n))
            .count()
    };
    assert_eq!(reached(2), (phase_one.len() / 6).max(2), "{tune}");
    assert!(
        reached(3) <= 1,
        "{} candidates ran 3 rounds: {tune}",
        reached(3)
    );
    // Under twice compare's 30 runs for its five defaults at 6 rounds.
    let total = tune["runs"].as_u64().expect("runs");
    assert!(total < 60, "{total} runs: {tune}");
    let recommended = tune["recommended"].as_str().expect("a recommendation");
    assert_eq!(json["verdict"]["config"], recommended);
    assert!(json["verdict"]["deploy"]["shell"].as_str().is_some());
    let ran = config(&json, recommended);
    assert!(runs(ran).iter().all(|r| r["status"] == "ok"), "{ran}");
    assert!(runs(ran).len() >= 3);
    // The last phase's verdict settles out every candidate its halving
    // dropped (one or two runs, outside the corrected family), in one line.
    let phases = tune["phases"].as_array().expect("phases");
    let last_dropped: Vec<&str> = phases[phases.len() - 1]["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["dropped"]["round"].as_u64().is_some_and(|n| n < 3))
        .filter_map(|r| r["config"].as_str())
        .collect();
    if !last_dropped.is_empty() {
        let explanation = json["verdict"]["explanation"].to_string();
        for name in &last_dropped {
            assert!(
                explanation.contains("Not chosen, dropped by the race:")
                    && explanation.contains(&format!("{name} (after round ")),
                "{name}: {explanation}"
            );
        }
    }
    let text = stdout(&output);
    assert!(
        text.contains("tune, phase 1") && text.contains("Pareto front"),
        "{text}"
    );

    // The stored race re-renders, judged at the level it raced at.
    let again = scratch.run(&["report", "--db", db, "--export-json", "again.json"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        stdout(&again).contains("dropped after round"),
        "{}",
        stdout(&again)
    );
    let again = read_json(&scratch, "again.json");
    assert_eq!(again["tune"], json["tune"]);
    assert_eq!(again["verdict"]["config"], recommended);
}

/// A candidate under which the program fails is recorded as failed and
/// ranked after every candidate with figures; the race goes on with the
/// others and exits 1, as compare does when a run failed.
#[test]
fn a_candidate_the_program_fails_under_goes_first_and_the_race_exits_1() {
    let scratch = Scratch::new();
    let db = scratch.db();
    let db = db.to_str().expect("utf-8");
    // Fails wherever glibc's tunables are set (arena_max, the thresholds);
    // the baseline and the trim candidates (the heap probe's thread) run.
    let output = scratch.run(&[
        "tune",
        "--full",
        "--db",
        db,
        "--export-json",
        "tune.json",
        "-a",
        "glibc",
        "--max-runs",
        "3",
        "--no-combine",
        "--",
        "sh",
        "-c",
        "test -z \"$GLIBC_TUNABLES\" && sleep 0.05",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let json = read_json(&scratch, "tune.json");
    let rows = json["tune"]["phases"][0]["rows"]
        .as_array()
        .expect("phase one");
    let failing = ["glibc:arena_max=1", "glibc:mmap_threshold=64k"];
    for name in failing {
        let row = rows.iter().find(|r| r["config"] == name).expect("raced");
        assert_eq!(row["dropped"]["round"], 1, "{row}");
        assert!(
            runs(config(&json, name))
                .iter()
                .all(|r| r["status"] == "failed"),
            "{name}"
        );
    }
    // The race went on with the candidates that run: each trim candidate's
    // runs are ok (which of them the race keeps is a matter of noise on a
    // 50 ms program, so the test does not ask for a finalist).
    let trims: Vec<&str> = rows
        .iter()
        .filter_map(|r| r["config"].as_str())
        .filter(|c| c.starts_with("glibc:trim="))
        .collect();
    assert!(!trims.is_empty(), "{rows:?}");
    for name in trims {
        let ran = runs(config(&json, name));
        assert!(
            !ran.is_empty() && ran.iter().all(|r| r["status"] == "ok"),
            "{name}: {ran:?}"
        );
    }
    assert!(
        stdout(&output).contains("failed runs"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn a_key_no_allocator_has_is_a_one_line_usage_error() {
    let scratch = Scratch::new();
    for (flags, words) in [
        (
            &["--try", "nokey=1"][..],
            "no allocator tuned here has a key 'nokey'",
        ),
        (&["--runs", "5"][..], "--max-runs"),
        (&["-a", "glibc:arena_max=2"][..], "--try"),
        (&["--variant", "je=true"][..], "compare --variant"),
    ] {
        let mut args = vec!["tune"];
        args.extend_from_slice(flags);
        args.extend(["--", "true"]);
        let output = scratch.run(&args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{flags:?}: {}",
            stderr(&output)
        );
        let err = stderr(&output);
        assert!(err.contains(words), "{flags:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    assert!(!scratch.db().exists(), "nothing ran");
}

/// tests/programs/fixed_ops.c runs a fixed 300 ms and prints `churn : N
/// ops/sec`: with `--perf-metric auto` the race judges performance by that
/// figure from round 1 on, so glibc:mmap_threshold=0 (a system call per
/// block) goes at the first halving for being over the budget in
/// operations, which its unchanged wall time would never show; `report`
/// re-judges the stored race by the same figure.
#[test]
fn tune_with_perf_metric_auto_races_a_fixed_duration_program_by_its_ops() {
    let _heavy = crate::common::one_heavy_test_at_a_time();
    let fixed = crate::common::program("fixed_ops");
    let scratch = Scratch::new();
    let db = scratch.db();
    let db = db.to_str().expect("utf-8");
    let output = scratch.run(&[
        "tune",
        "--full",
        "--db",
        db,
        "--export-json",
        "tune.json",
        "--perf-metric",
        "auto",
        "--max-runs",
        "3",
        "--no-combine",
        "-a",
        "glibc",
        "--try",
        "glibc:mmap_threshold=0",
        "--",
        fixed.to_str().expect("utf-8"),
        "300",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("the race judges performance by churn_ops_sec"),
        "{}",
        stderr(&output)
    );
    let json = read_json(&scratch, "tune.json");
    assert_eq!(json["verdict"]["performance_metric"], "churn_ops_sec");
    let rows = json["tune"]["phases"][0]["rows"]
        .as_array()
        .expect("phase one");
    let slow = rows
        .iter()
        .find(|r| r["config"] == "glibc:mmap_threshold=0")
        .expect("raced");
    assert_eq!(slow["dropped"]["round"], 1, "{slow}");
    let reason = slow["dropped"]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("churn_ops_sec") && reason.contains("over the 5% budget"),
        "{slow}"
    );
    let again = scratch.run(&["report", "--db", db, "--export-json", "again.json"]);
    assert!(again.status.success(), "{}", stderr(&again));
    let again = read_json(&scratch, "again.json");
    assert_eq!(again["verdict"]["performance_metric"], "churn_ops_sec");
    assert_eq!(again["tune"], json["tune"]);
}
