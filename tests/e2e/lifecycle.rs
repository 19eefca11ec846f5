//! Runs that crash, hang or are interrupted: recorded as such, the others go
//! on, nothing is left running.

use crate::common::*;
use crate::reliability::process_with_marker_exists;
use std::time::{Duration, Instant};

#[test]
fn crash_under_one_allocator_is_recorded_and_the_others_go_on() {
    let scratch = Scratch::new();
    let crasher = program("crash_under");
    if !require_allocator("jemalloc") {
        return;
    }
    let victim = "jemalloc";
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
