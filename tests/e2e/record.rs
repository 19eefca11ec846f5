//! `allocscope record` on real workloads: attaching to a running scenario,
//! starting one under a configuration, SIGKILL mid-recording and resuming,
//! bad pids, allocscope's own memory. The Prometheus endpoint is in
//! `record_metrics.rs`.

use crate::common::*;
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const MIB: f64 = 1024.0 * 1024.0;

/// A child killed (and reaped) when dropped, whatever the test's outcome.
pub struct Guard(pub Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `allocscope workload churn` at a small size for about `seconds`.
pub fn churn(scratch: &Scratch, seconds: &str) -> Guard {
    churn_with(scratch, "100000000000", seconds, "0")
}

/// `churn` doing `ops` operations (at most `seconds`), then holding its
/// final state for `hold_ms`.
fn churn_with(scratch: &Scratch, ops: &str, seconds: &str, hold_ms: &str) -> Guard {
    let child = scratch
        .command(&[
            "workload",
            "churn",
            "--threads",
            "4",
            "--hot-threads",
            "2",
            "--live-mib",
            "32",
            "--ops",
            ops,
            "--rotations",
            "4",
            "--seconds",
            seconds,
            "--hold-ms",
            hold_ms,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("churn starts");
    Guard(child)
}

pub fn db_arg(scratch: &Scratch) -> String {
    scratch.db().to_str().expect("utf-8").to_string()
}

/// `report --recordings ID --export-json`, parsed, `None` while it fails
/// (the recording is not stored yet).
fn try_recordings_json(scratch: &Scratch, id: &str) -> Option<Value> {
    let json = scratch.path("poll.json");
    let db = db_arg(scratch);
    let output = scratch.run(&[
        "report",
        "--db",
        &db,
        "--recordings",
        id,
        "--export-json",
        json.to_str().expect("utf-8"),
    ]);
    if !output.status.success() {
        return None;
    }
    serde_json::from_str(&std::fs::read_to_string(&json).ok()?).ok()
}

/// `report --recordings IDS --export-json --html`: the JSON, parsed, after
/// checking that the HTML page has the RSS plot inline.
fn recordings_json(scratch: &Scratch, ids: &[&str]) -> Value {
    let json = scratch.path("recordings.json");
    let html = scratch.path("recordings.html");
    let db = db_arg(scratch);
    let mut args = vec!["report", "--db", &db, "--recordings"];
    args.extend_from_slice(ids);
    args.extend_from_slice(&["--export-json", json.to_str().expect("utf-8")]);
    args.extend_from_slice(&["--html", html.to_str().expect("utf-8")]);
    let output = scratch.run(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let page = std::fs::read_to_string(&html).expect("HTML written");
    assert!(
        page.contains("<figure id=\"plot-recordings_rss\">"),
        "{page}"
    );
    serde_json::from_str(&std::fs::read_to_string(&json).expect("written")).expect("JSON")
}

#[test]
fn record_attaches_to_a_running_scenario_until_it_exits_and_finds_its_steady_state() {
    let scratch = Scratch::new();
    // A burst of work, then its final state held for 5 s: memory climbs,
    // then stays level (whatever the machine's load stretches the burst to).
    let workload = churn_with(&scratch, "3000000", "10", "5000");
    let pid = workload.0.id().to_string();
    let db = db_arg(&scratch);
    let output = scratch.run(&[
        "record",
        "--pid",
        &pid,
        "--interval",
        "100ms",
        "--name",
        "churn",
        "--db",
        &db,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("recording 1 exited"),
        "{}",
        stderr(&output)
    );
    let json = recordings_json(&scratch, &["1"]);
    let r = &json["recordings"][0];
    assert_eq!(r["info"]["name"], "churn");
    assert_eq!(r["info"]["status"], "exited");
    assert_eq!(r["info"]["config"], "attached");
    let samples = r["samples"].as_u64().expect("samples");
    let elapsed = r["info"]["elapsed_s"].as_f64().expect("elapsed");
    assert!((5.0..16.0).contains(&elapsed), "{elapsed} s recorded");
    assert!(
        samples as f64 >= elapsed * 5.0,
        "{samples} samples in {elapsed} s"
    );
    // 32 MiB live: the tree holds at least that once the threads have filled up.
    let peak = r["peak_rss_bytes"].as_f64().expect("peak");
    assert!(peak >= 32.0 * MIB, "peak {peak}");
    // The exited process's last moments (a zombie has no memory) are not a sample.
    assert!(r["last_rss_bytes"].as_f64().expect("last") > 0.0, "{r}");
    let steady = &r["steady"];
    let settled = steady["settled_at_s"].as_f64().expect("churn settles");
    // Level for the last 5 s at least (windows are elapsed/20 wide).
    assert!(settled < elapsed - 4.0, "settled at {settled} of {elapsed}");
    let level = steady["level_bytes"].as_f64().expect("level");
    assert!((32.0 * MIB..=peak).contains(&level), "level {level}");
}

#[test]
fn a_command_started_under_a_configuration_ends_with_its_exit_status() {
    let scratch = Scratch::new();
    let db = db_arg(&scratch);
    let me = env!("CARGO_BIN_EXE_allocscope");
    let output = scratch.run(&[
        "record",
        "-a",
        "glibc:arena_max=1",
        "--interval",
        "100ms",
        "--db",
        &db,
        "--",
        me,
        "workload",
        "churn",
        "--threads",
        "2",
        "--hot-threads",
        "1",
        "--live-mib",
        "8",
        "--ops",
        "200000",
        "--seconds",
        "5",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let json = recordings_json(&scratch, &["1"]);
    let info = &json["recordings"][0]["info"];
    assert_eq!(info["status"], "exited");
    assert_eq!(info["exit_code"], 0);
    assert_eq!(info["config"], "glibc:arena_max=1");
    assert_eq!(info["name"], "allocscope-glibc-arena_max-1");
    let last = json["recordings"][0]["last_rss_bytes"]
        .as_f64()
        .expect("last");
    assert!(last > 0.0, "the zombie's empty reading was stored");
    let stdout = std::fs::read_to_string(
        scratch.path("allocscope-logs/recordings/allocscope-glibc-arena_max-1.stdout"),
    )
    .expect("the command's stdout is kept");
    assert!(stdout.contains("churn"), "{stdout}");
}

#[test]
fn sigkill_mid_recording_keeps_the_store_and_record_pid_resumes_the_same_recording() {
    let scratch = Scratch::new();
    let workload = churn(&scratch, "30");
    let pid = workload.0.id().to_string();
    let db = db_arg(&scratch);
    let mut recorder = Guard(
        scratch
            .command(&["record", "--pid", &pid, "--interval", "100ms", "--db", &db])
            .stderr(Stdio::null())
            .spawn()
            .expect("record starts"),
    );
    // Once the first samples are committed, record for 2 s more and kill it.
    let (mut first_elapsed, mut first_seen) = (0.0, Instant::now());
    let committed = wait_until(Duration::from_secs(15), || {
        let Some(json) = try_recordings_json(&scratch, "1") else {
            return false;
        };
        first_elapsed = json["recordings"][0]["info"]["elapsed_s"]
            .as_f64()
            .unwrap_or(0.0);
        first_seen = Instant::now();
        json["recordings"][0]["samples"].as_u64().unwrap_or(0) > 0
    });
    assert!(committed, "nothing committed within 15 s");
    std::thread::sleep(Duration::from_secs(2));
    let alive_s = first_seen.elapsed().as_secs_f64();
    recorder.0.kill().expect("SIGKILL");
    let _ = recorder.0.wait();
    let listing = stdout(&scratch.run(&["report", "--db", &db, "--recordings"]));
    assert!(listing.contains("incomplete"), "{listing}");
    let before = recordings_json(&scratch, &["1"]);
    let kept = before["recordings"][0]["samples"]
        .as_u64()
        .expect("samples");
    let kept_elapsed = before["recordings"][0]["info"]["elapsed_s"]
        .as_f64()
        .expect("elapsed");
    // Committed every second: at most about a second is lost.
    let lost_s = first_elapsed + alive_s - kept_elapsed;
    assert!(lost_s < 1.6, "the SIGKILL lost {lost_s:.2} s of samples");

    let output = scratch.run(&[
        "record",
        "--pid",
        &pid,
        "--interval",
        "100ms",
        "--duration",
        "1500ms",
        "--db",
        &db,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("resuming 1"),
        "{}",
        stderr(&output)
    );
    let listing = stdout(&scratch.run(&["report", "--db", &db, "--recordings"]));
    assert_eq!(listing.lines().count(), 1, "still one recording: {listing}");
    let after = recordings_json(&scratch, &["1"]);
    let r = &after["recordings"][0];
    assert_eq!(r["info"]["status"], "complete");
    assert!(r["samples"].as_u64().expect("samples") > kept);
    // The same time axis, continued: the 1.5 s of the resumed session more
    // (less a tick), and the gap between the sessions.
    let elapsed = r["info"]["elapsed_s"].as_f64().expect("elapsed");
    assert!(
        elapsed >= kept_elapsed + 1.4,
        "{elapsed} after {kept_elapsed}"
    );
}

#[test]
fn a_pid_that_does_not_exist_or_cannot_be_read_exits_2_with_the_reason() {
    let scratch = Scratch::new();
    let db = db_arg(&scratch);
    let missing = scratch.run(&["record", "--pid", "2147483647", "--db", &db]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("does not exist"),
        "{}",
        stderr(&missing)
    );
    assert!(!scratch.db().exists(), "nothing stored for a bad pid");
    if !require_root("to set up another user's process and record it unprivileged") {
        return;
    }
    let sleeper = Guard(Command::new("sleep").arg("30").spawn().expect("sleep"));
    let denied = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_allocscope"))
        .args([
            "record",
            "--pid",
            &sleeper.0.id().to_string(),
            "--db",
            "/tmp/never.db",
        ])
        .output()
        .expect("setpriv runs");
    assert_eq!(denied.status.code(), Some(2), "{}", stderr(&denied));
    assert!(
        stderr(&denied).contains("belongs to uid 0"),
        "{}",
        stderr(&denied)
    );
}

#[test]
fn allocscope_stays_small_while_recording_a_ten_process_tree() {
    let scratch = Scratch::new();
    let tree = Guard(
        Command::new("sh")
            .args(["-c", "for i in 1 2 3 4 5 6 7 8 9; do sleep 30 & done; wait"])
            .spawn()
            .expect("sh"),
    );
    std::thread::sleep(Duration::from_millis(300));
    let db = db_arg(&scratch);
    let recorder = Guard(
        scratch
            .command(&[
                "record",
                "--pid",
                &tree.0.id().to_string(),
                "--interval",
                "10ms",
                "--db",
                &db,
                "--duration",
                "20s",
            ])
            .stderr(Stdio::null())
            .spawn()
            .expect("record starts"),
    );
    std::thread::sleep(Duration::from_secs(4));
    let status = std::fs::read_to_string(format!("/proc/{}/status", recorder.0.id()))
        .expect("allocscope is running");
    let hwm_kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM");
    assert!(
        hwm_kib < 30.0 * 1024.0,
        "allocscope peaked at {hwm_kib} KiB"
    );
    drop(recorder);
    let json = recordings_json(&scratch, &["1"]);
    let last = &json["recordings"][0];
    assert!(last["samples"].as_u64().expect("samples") >= 100);
}

#[test]
fn two_recordings_on_one_store_both_finish() {
    let scratch = Scratch::new();
    let db = db_arg(&scratch);
    let me = env!("CARGO_BIN_EXE_allocscope");
    let recorders: Vec<Guard> = ["glibc", "glibc:arena_max=2"]
        .iter()
        .map(|config| {
            let child = scratch
                .command(&[
                    "record",
                    "-a",
                    config,
                    "--interval",
                    "10ms",
                    "--db",
                    &db,
                    "--",
                    me,
                    "workload",
                    "churn",
                    "--threads",
                    "2",
                    "--hot-threads",
                    "1",
                    "--live-mib",
                    "8",
                    "--ops",
                    "300000",
                    "--seconds",
                    "5",
                ])
                .stderr(Stdio::piped())
                .spawn()
                .expect("record starts");
            Guard(child)
        })
        .collect();
    for mut recorder in recorders {
        let status = recorder.0.wait().expect("record ends");
        let mut text = String::new();
        if let Some(mut err) = recorder.0.stderr.take() {
            use std::io::Read;
            let _ = err.read_to_string(&mut text);
        }
        assert!(status.success(), "{text}");
    }
    let json = recordings_json(&scratch, &["1", "2"]);
    for r in json["recordings"].as_array().expect("array") {
        assert_eq!(r["info"]["status"], "exited", "{r}");
    }
}
