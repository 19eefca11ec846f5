//! Foreign CPU: what ran on the machine beside each run, measured and
//! named. A neighbour the test starts (two busy loops, outside allocscope's
//! tree) beside one run makes that run disturbed on the screen and in the
//! JSON, and every run carries its foreign CPU.

use crate::common::*;
use std::path::Path;
use std::process::{Child, Command};
use std::time::Duration;

/// A workload that counts its runs in `count`, and on its third asks the
/// test for a neighbour (`busy`) and waits until it runs (`started`); then
/// about half a second of shell arithmetic.
const WORKLOAD: &str = r#"n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count
if [ $n = 3 ]; then
  echo neighbour; touch busy
  while [ ! -e started ]; do sleep 0.01; done
fi
i=0; while [ $i -lt 250000 ]; do i=$((i+1)); done
rm -f busy started
"#;

/// Two busy loops while `busy` exists in `dir`, until `done` exists. At a
/// higher priority where allows (root): on a machine other work already
/// keeps busy, loops of equal priority would take their CPU from that work
/// as much as from the run, and the burst would not stand out.
fn neighbour_on_request(dir: &Path) {
    let mut loops: Vec<Child> = Vec::new();
    while !dir.join("done").exists() {
        let asked = dir.join("busy").exists();
        if asked && loops.is_empty() {
            for _ in 0..2 {
                let child = Command::new("nice")
                    .args(["-n", "-10", "sh", "-c", "while :; do :; done"])
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .expect("sh runs");
                loops.push(child);
            }
            std::fs::write(dir.join("started"), "").expect("scratch is writable");
        } else if !asked && !loops.is_empty() {
            for mut child in loops.drain(..) {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    for mut child in loops {
        let _ = child.kill();
        let _ = child.wait();
    }
}

#[test]
fn a_busy_neighbour_beside_one_run_makes_it_disturbed_on_the_screen_and_in_the_json() {
    let _heavy = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let dir = scratch.dir.path().to_path_buf();
    let watcher = std::thread::spawn(move || neighbour_on_request(&dir));
    let (output, json) = scratch.compare(
        &["-a", "glibc", "-a", "glibc:arena_max=2", "-r", "3"],
        &["sh", "-c", WORKLOAD],
    );
    std::fs::write(scratch.path("done"), "").expect("scratch is writable");
    watcher.join().expect("the watcher ends");
    assert!(output.status.success(), "{}", stderr(&output));
    let all: Vec<&serde_json::Value> = configs(&json).iter().flat_map(runs).collect();
    assert_eq!(all.len(), 6);
    for run in &all {
        let foreign = run["foreign_cpu_s"].as_f64();
        assert!(foreign.is_some_and(|f| f >= 0.0), "{run}");
    }
    // The run the neighbour ran beside said so on its stdout.
    let beside: Vec<&&serde_json::Value> = all
        .iter()
        .filter(|run| {
            let path = run["stdout_path"].as_str().expect("a path");
            std::fs::read_to_string(path).is_ok_and(|text| text.contains("neighbour"))
        })
        .collect();
    assert_eq!(beside.len(), 1, "{all:?}");
    let run = beside[0];
    let cores =
        run["foreign_cpu_s"].as_f64().unwrap_or(0.0) / run["wall_s"].as_f64().unwrap_or(1.0);
    assert!(cores > 0.5, "two busy loops ran beside it: {run}");
    let loads: Vec<String> = all
        .iter()
        .map(|r| {
            let f = r["foreign_cpu_s"].as_f64().unwrap_or(0.0);
            format!("{:.2}", f / r["wall_s"].as_f64().unwrap_or(1.0))
        })
        .collect();
    assert_eq!(
        run["disturbed"], true,
        "foreign cores of the runs: {loads:?}; {run}"
    );
    // Counted on the screen's first line, and by configuration below.
    let name = configs(&json)
        .iter()
        .find(|c| runs(c).iter().any(|r| r == *run))
        .and_then(|c| c["name"].as_str())
        .expect("its configuration");
    let disturbed =
        |c: &serde_json::Value| runs(c).iter().filter(|r| r["disturbed"] == true).count();
    let total: usize = configs(&json).iter().map(disturbed).sum();
    let of_name = configs(&json)
        .iter()
        .find(|c| c["name"] == name)
        .map_or(0, disturbed);
    let screen = scratch.screen();
    let first = screen.lines().next().unwrap_or_default();
    assert!(
        first.contains(&format!("6/6 ok, {total} disturbed, ")),
        "{first}"
    );
    let joined = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        joined.contains(&format!(
            "{total} of 6 runs disturbed by other work on the machine"
        )) && joined.contains(&format!(" {name} {of_name}")),
        "{name} not counted in:\n{screen}"
    );
    // `report --section runs` lists what ran beside each run.
    let db = scratch.db();
    let report = scratch.run(&[
        "report",
        "--db",
        db.to_str().expect("utf-8"),
        "--section",
        "runs",
    ]);
    let text = stdout(&report);
    assert!(report.status.success(), "{}", stderr(&report));
    let named = format!("{name} #{}", run["index"]);
    assert!(
        text.contains("foreign cores")
            && text
                .lines()
                .any(|l| l.contains(&named) && l.trim_end().ends_with("disturbed")),
        "{named} not marked in:\n{text}"
    );
}
