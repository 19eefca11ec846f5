//! allocscope's own faults and the workload's: nothing finished is lost,
//! nothing is left running (docs/reliability.md lists each case).

use crate::common::*;
use std::process::Stdio;
use std::time::Duration;

/// True when some process's command line contains `marker`.
pub fn process_with_marker_exists(marker: &str) -> bool {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .any(|cmdline| String::from_utf8_lossy(&cmdline).contains(marker))
}

/// How many finished runs the store holds.
fn stored_runs(db: &std::path::Path) -> usize {
    rusqlite::Connection::open(db)
        .and_then(|c| c.query_row("SELECT count(*) FROM runs", [], |row| row.get::<_, i64>(0)))
        .map_or(0, |n| n as usize)
}

/// Lets the long matrix store at least two runs (a loaded CI machine may be
/// slow), then holds it: the next run's workload sleeps until it is killed,
/// so the number of finished runs stands still. Returns that number.
fn hold_matrix_after_two_runs(scratch: &Scratch, marker: &str) -> usize {
    let db = scratch.db();
    assert!(
        wait_until(Duration::from_secs(30), || stored_runs(&db) >= 2),
        "no 2 runs stored in 30 s"
    );
    std::fs::write(scratch.path("hold"), b"").expect("hold file");
    // The held workload starts only after the run before it was stored.
    assert!(
        wait_until(Duration::from_secs(30), || process_with_marker_exists(
            &format!("{marker}-held")
        )),
        "no held run in 30 s"
    );
    stored_runs(&db)
}

/// Starts a long matrix of short runs; returns the child and the JSON path.
/// Once the scratch directory has a file `hold`, each run sleeps a minute.
fn long_matrix(scratch: &Scratch, marker: &str) -> (std::process::Child, std::path::PathBuf) {
    let json = scratch.path("partial.json");
    let db = scratch.db();
    let script = format!(
        "if [ -e {hold} ]; then exec -a {marker}-held sleep 60; fi; exec -a {marker} sleep 0.3",
        hold = scratch.path("hold").display()
    );
    let child = scratch
        .command(&[
            "compare",
            "--db",
            db.to_str().expect("utf-8"),
            "-a",
            "glibc",
            "-a",
            "glibc:arena_max=1",
            "-r",
            "50",
            "--export-json",
            json.to_str().expect("utf-8"),
            "--",
            "bash",
            "-c",
            &script,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawns");
    (child, json)
}

/// Interrupts a long matrix with `signal` and checks what was kept.
fn interrupted_matrix_keeps_finished_runs(signal: i32, expected_code: i32) {
    let scratch = Scratch::new();
    let marker = format!("allocscope-signal{signal}-{}", std::process::id());
    let (mut child, json) = long_matrix(&scratch, &marker);
    let finished_before = hold_matrix_after_two_runs(&scratch, &marker);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    assert_eq!(child.wait().expect("waits").code(), Some(expected_code));
    assert!(
        !process_with_marker_exists(&marker),
        "the workload outlived signal {signal}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).expect("exported")).expect("valid");
    assert_eq!(json["experiment"]["status"], "interrupted");
    let finished: usize = configs(&json).iter().map(|c| runs(c).len()).sum();
    assert_eq!(finished, finished_before, "finished runs exported");
    assert_eq!(
        stored_runs(&scratch.db()),
        finished_before,
        "finished runs stored"
    );
    let db = scratch.db();
    let list = scratch.run(&["report", "--list", "--db", db.to_str().expect("utf-8")]);
    assert!(stdout(&list).contains("interrupted"), "{}", stdout(&list));
}

#[test]
fn ctrl_c_keeps_finished_runs_ends_the_workload_and_exits_130() {
    interrupted_matrix_keeps_finished_runs(libc::SIGINT, 130);
}

#[test]
fn sigterm_keeps_finished_runs_and_exits_143() {
    interrupted_matrix_keeps_finished_runs(libc::SIGTERM, 143);
}

#[test]
fn sigkill_of_allocscope_takes_the_workload_and_leaves_an_incomplete_experiment() {
    let scratch = Scratch::new();
    let marker = format!("allocscope-sigkill-{}", std::process::id());
    let (mut child, _) = long_matrix(&scratch, &marker);
    let finished_before = hold_matrix_after_two_runs(&scratch, &marker);
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    assert!(
        wait_until(Duration::from_secs(3), || !process_with_marker_exists(
            &marker
        )),
        "the workload outlived allocscope"
    );
    let db = scratch.db();
    let db = db.to_str().expect("utf-8");
    let list = scratch.run(&["report", "--list", "--db", db]);
    assert!(list.status.success(), "{}", stderr(&list));
    assert!(stdout(&list).contains("incomplete"), "{}", stdout(&list));
    let again = scratch.path("after-kill.json");
    let report = scratch.run(&[
        "report",
        "--db",
        db,
        "--export-json",
        again.to_str().expect("utf-8"),
    ]);
    assert!(report.status.success(), "{}", stderr(&report));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(again).expect("rendered")).expect("valid");
    let finished: usize = configs(&json).iter().map(|c| runs(c).len()).sum();
    assert_eq!(finished, finished_before, "runs that survived the kill");
}

#[test]
fn two_compares_on_one_store_both_complete() {
    let scratch = Scratch::new();
    let db = scratch.db();
    let db = db.to_str().expect("utf-8");
    let start = |name: &str| {
        scratch
            .command(&[
                "compare",
                "--db",
                db,
                "-a",
                "glibc",
                "-a",
                "glibc:arena_max=1",
                "-r",
                "6",
                "--name",
                name,
                "--",
                "sh",
                "-c",
                "sleep 0.1",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawns")
    };
    let (first, second) = (start("one"), start("two"));
    for child in [first, second] {
        let output = child.wait_with_output().expect("waits");
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let list = stdout(&scratch.run(&["report", "--list", "--db", db]));
    for name in ["one", "two"] {
        let line = list
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name} in {list}"));
        assert!(
            line.contains("complete") && line.contains("12/12"),
            "{line}"
        );
    }
}

#[test]
fn read_only_store_is_a_clear_error_before_the_first_run() {
    let scratch = Scratch::new();
    let db = scratch.db();
    std::fs::write(&db, b"").expect("creates");
    let mut permissions = std::fs::metadata(&db).expect("stat").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o444);
    std::fs::set_permissions(&db, permissions).expect("chmod");
    let marker = scratch.path("ran");
    let script = format!("touch {}", marker.display());
    let output = scratch.run(&[
        "compare",
        "--db",
        db.to_str().expect("utf-8"),
        "-a",
        "glibc",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert_ne!(output.status.code(), Some(0));
    let err = stderr(&output);
    assert!(
        err.contains("read-only") || err.contains("readonly"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        !marker.exists(),
        "the workload ran despite the unusable store"
    );
}

#[test]
fn stderr_output_with_exit_0_is_ok_and_kept() {
    let scratch = Scratch::new();
    let (output, json) = scratch.compare(
        &["-a", "glibc", "-r", "1"],
        &["sh", "-c", "echo warning-text >&2"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let run = &configs(&json)[0]["runs"][0];
    assert_eq!(run["status"], "ok");
    let kept = std::fs::read_to_string(run["stderr_path"].as_str().expect("path")).expect("kept");
    assert_eq!(kept.trim(), "warning-text");
}

#[test]
fn children_that_outlive_their_parent_are_sampled_until_they_end() {
    let scratch = Scratch::new();
    // The parent exits at once; its two children hold 32 MiB each for a second.
    let forks = program("forks");
    let (output, json) = scratch.compare(
        &["-a", "glibc", "-r", "1", "--interval", "20ms"],
        &[forks.to_str().expect("utf-8"), "2", "32", "1000", "0"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let run = &configs(&json)[0]["runs"][0];
    assert!(run["wall_s"].as_f64().is_some_and(|w| w >= 0.9), "{run}");
    assert!(
        run["peak_rss_bytes"]
            .as_u64()
            .is_some_and(|p| p >= 64 << 20),
        "{run}"
    );
}

#[test]
fn abort_and_outside_sigkill_are_crashes_with_their_signal() {
    let scratch = Scratch::new();
    let (output, json) = scratch.compare(
        &["-a", "glibc", "-a", "glibc:arena_max=1", "-r", "1"],
        &[
            "sh",
            "-c",
            "case \"$GLIBC_TUNABLES\" in *arena_max=1*) kill -KILL $$;; *) kill -ABRT $$;; esac",
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(config(&json, "glibc")["runs"][0]["signal"], libc::SIGABRT);
    assert_eq!(
        config(&json, "glibc:arena_max=1")["runs"][0]["signal"],
        libc::SIGKILL
    );
    for c in configs(&json) {
        assert_eq!(c["runs"][0]["status"], "crashed");
    }
}

#[test]
fn running_out_of_memory_under_a_limit_is_oom_and_says_how_it_was_enforced() {
    let scratch = Scratch::new();
    let single = program("single");
    let (output, json) = scratch.compare(
        &[
            "-a",
            "glibc",
            "-a",
            "glibc:arena_max=1",
            "-r",
            "1",
            "--memory-limit",
            "64M",
        ],
        &[single.to_str().expect("utf-8"), "200", "50"],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    for config in configs(&json) {
        let run = &config["runs"][0];
        let message = run["message"].as_str().unwrap_or_default();
        if message.contains("cgroup") {
            assert_eq!(run["status"], "oom", "{run}");
            assert!(message.contains("OOM killer"), "{message}");
        } else {
            // No writable memory cgroup: the rlimit makes malloc fail.
            assert!(message.contains("RLIMIT_AS"), "{message}");
            assert!(
                run["status"] == "failed" || run["status"] == "crashed",
                "{run}"
            );
        }
    }
    // Within the limit the run is ok and still says how it was limited.
    let (output, json) = scratch.compare(
        &["-a", "glibc", "-r", "1", "--memory-limit", "256M"],
        &[single.to_str().expect("utf-8"), "16", "50"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let run = &configs(&json)[0]["runs"][0];
    assert_eq!(run["status"], "ok");
    assert!(
        run["message"]
            .as_str()
            .is_some_and(|m| m.contains("memory limit 256 MiB")),
        "{run}"
    );
}

#[test]
fn a_store_that_fills_up_mid_matrix_keeps_the_finished_runs_and_says_so() {
    let scratch = Scratch::new();
    let db = scratch.db();
    let single = program("single");
    // A file-size limit stands in for a full disk: SQLite's writes fail
    // with EFBIG once the store passes 400 KiB (SIGXFSZ ignored, as a full
    // disk sends no signal).
    let script = format!(
        "ulimit -f 400; trap '' XFSZ; exec {} compare --db {} -a glibc -a glibc:arena_max=1 \
         -r 60 --interval 10ms -q -- {} 16 200",
        env!("CARGO_BIN_EXE_allocscope"),
        db.display(),
        single.display()
    );
    let output = std::process::Command::new("bash")
        .args(["-c", &script])
        .current_dir(scratch.dir.path())
        .output()
        .expect("runs");
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // SQLite's write failed with EFBIG: the one case called a full store.
    assert!(
        err.contains("could not be stored")
            && err.contains("are kept")
            && err.contains("(disk full or over a file-size limit)"),
        "{err}"
    );
    let list = stdout(&scratch.run(&["report", "--list", "--db", db.to_str().expect("utf-8")]));
    let line = list
        .lines()
        .nth(1)
        .unwrap_or_else(|| panic!("no experiment in {list}"));
    assert!(line.contains("incomplete"), "{line}");
    let report = scratch.run(&["report", "--full", "--db", db.to_str().expect("utf-8")]);
    assert!(report.status.success(), "{}", stderr(&report));
    // Each configuration's `OK/ALL runs ok`: every stored run is ok, and
    // together they are the runs the store kept, at least one.
    let table = stdout(&report);
    let counts: Vec<(usize, usize)> = table
        .lines()
        .filter_map(|l| l.split_once(" runs ok")?.0.split_whitespace().last())
        .filter_map(|w| {
            let (ok, all) = w.split_once('/')?;
            Some((ok.parse().ok()?, all.parse().ok()?))
        })
        .collect();
    assert_eq!(counts.len(), 2, "{table}");
    let kept: usize = counts.iter().map(|(ok, _)| ok).sum();
    assert!(counts.iter().all(|(ok, all)| ok == all), "{table}");
    assert!(kept >= 1, "{table}");
    assert_eq!(kept, stored_runs(&db), "{table}");
}
