//! Runs that crash, hang or are interrupted: recorded as such, the others go
//! on, nothing is left running.

use crate::common::*;
use crate::reliability::process_with_marker_exists;
use std::time::{Duration, Instant};

#[test]
fn crash_under_one_allocator_is_recorded_and_the_others_go_on() {
    let scratch = Scratch::new();
    let crasher = program("crash_under");
    let allocators = installed_allocators();
    let Some(victim) = allocators.iter().find(|a| **a != "glibc") else {
        eprintln!("skipped: needs an allocator besides glibc");
        return;
    };
    let args = every_allocator_args();
    let mut options: Vec<&str> = args.iter().map(String::as_str).collect();
    options.extend(["-r", "2"]);
    let (output, json) = scratch.compare(&options, &[crasher.to_str().expect("utf-8"), victim]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    for config in configs(&json) {
        let expected = if config["name"] == *victim {
            "crashed"
        } else {
            "ok"
        };
        for run in runs(config) {
            assert_eq!(run["status"], expected, "{}: {run}", config["name"]);
            if expected == "crashed" {
                assert_eq!(run["signal"], 11);
            }
        }
    }
    let victim_summary = &config(&json, victim)["summary"];
    assert_eq!(victim_summary["ok_runs"], 0);
    assert!(stdout(&output).contains("crashed"), "{}", stdout(&output));
}

#[test]
fn failing_exit_code_is_recorded_as_failed() {
    let scratch = Scratch::new();
    let (output, json) = scratch.compare(&["-a", "glibc", "-r", "1"], &["sh", "-c", "exit 3"]);
    assert_eq!(output.status.code(), Some(1));
    let run = &configs(&json)[0]["runs"][0];
    assert_eq!(run["status"], "failed");
    assert_eq!(run["exit_code"], 3);
}

#[test]
fn timeout_kills_the_whole_tree_including_detached_grandchildren() {
    let scratch = Scratch::new();
    let marker = format!("allocscope-timeout-{}", std::process::id());
    let script = format!(
        "setsid sh -c 'exec -a {marker} sleep 60' & sh -c 'exec -a {marker} sleep 60' & exec -a {marker} sleep 60"
    );
    let started = Instant::now();
    let (output, json) = scratch.compare(
        &["-a", "glibc", "-r", "1", "--timeout", "1s"],
        &["bash", "-c", &script],
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let run = &configs(&json)[0]["runs"][0];
    assert_eq!(run["status"], "timeout", "{run}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !process_with_marker_exists(&marker),
        "a workload process outlived the timeout"
    );
}

#[test]
fn ctrl_c_keeps_finished_runs_ends_the_workload_and_exits_130() {
    let _quiet = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let marker = format!("allocscope-sigint-{}", std::process::id());
    let json_path = scratch.path("interrupted.json");
    let db = scratch.db();
    let script = format!("exec -a {marker} sleep 0.4");
    let mut child = scratch
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
            json_path.to_str().expect("utf-8"),
            "--",
            "bash",
            "-c",
            &script,
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawns");
    std::thread::sleep(Duration::from_millis(2200));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().expect("waits");
    assert_eq!(status.code(), Some(130));
    assert!(
        !process_with_marker_exists(&marker),
        "the workload outlived Ctrl-C"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).expect("exported"))
            .expect("valid");
    assert_eq!(json["experiment"]["status"], "interrupted");
    let finished: usize = configs(&json).iter().map(|c| runs(c).len()).sum();
    assert!((2..50).contains(&finished), "{finished} finished runs kept");
    let list = scratch.run(&["report", "--list", "--db", db.to_str().expect("utf-8")]);
    assert!(stdout(&list).contains("interrupted"), "{}", stdout(&list));
}
