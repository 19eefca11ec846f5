//! Each run in a memory cgroup of its own: with one (root here) the tree's
//! charge and working set agree with its RSS; without one (`--cgroup off`,
//! and for real an unprivileged user who cannot write the hierarchy) the
//! run goes on from /proc with a one-line note saying why and how.

use super::common::{program, require_program, require_root, stderr, Scratch};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;

const MIB: f64 = 1048576.0;

fn first_run(json: &Value) -> &Value {
    &json["configs"][0]["runs"][0]
}

#[test]
fn a_run_in_its_cgroup_reports_a_charge_and_working_set_consistent_with_its_rss() {
    if !require_root("making a memory cgroup per run") {
        return;
    }
    let scratch = Scratch::new();
    let hold = program("hold");
    let (output, json) = scratch.compare(
        &["-r", "1", "-a", "glibc", "--samples"],
        &[hold.to_str().expect("utf-8"), "blocks", "100", "1500"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!stderr(&output).contains("not in a memory cgroup"));
    let host = &json["experiment"]["host"]["run_cgroup"];
    assert!(host == "v1" || host == "v2", "{host}");
    let run = first_run(&json);
    // The held plateau: the sample of highest RSS.
    let timeline = run["timeline"].as_array().expect("timeline");
    let top = timeline
        .iter()
        .max_by_key(|s| s["rss_bytes"].as_u64().unwrap_or(0))
        .expect("a sample");
    let rss = top["rss_bytes"].as_f64().expect("rss") / MIB;
    let charge = top["cgroup"]["charge_bytes"].as_f64().expect("charge") / MIB;
    let working_set = top["cgroup"]["working_set_bytes"].as_f64().expect("ws") / MIB;
    let anon = top["cgroup"]["anon_bytes"].as_f64().expect("anon") / MIB;
    // RSS also counts the C library's pages, charged to whoever read them
    // first: within 5% of the charge. hold touches no file.
    assert!(
        (charge - rss).abs() / rss < 0.05,
        "charge {charge} rss {rss}"
    );
    assert!(
        (working_set - charge).abs() < 2.0,
        "ws {working_set} charge {charge}"
    );
    assert!(anon >= 100.0, "anon {anon} MiB for 100 MiB held");
    let summary = &json["configs"][0]["summary"];
    let peak_ws = summary["peak_working_set_bytes"]["median"]
        .as_f64()
        .expect("ws")
        / MIB;
    assert!(
        (100.0..110.0).contains(&peak_ws),
        "peak working set {peak_ws}"
    );
    // A run's figures carry the summary's names, the old ones kept as
    // aliases for one version (docs/usage.md, "JSON").
    let run = &json["configs"][0]["runs"][0];
    for (name, alias) in [
        ("peak_cgroup_bytes", "cgroup_peak_bytes"),
        ("mean_cgroup_bytes", "cgroup_mean_bytes"),
        ("peak_working_set_bytes", "working_set_peak_bytes"),
        ("mean_working_set_bytes", "working_set_mean_bytes"),
    ] {
        assert!(run[name].as_u64().is_some_and(|v| v > 0), "{name}: {run}");
        assert_eq!(run[name], run[alias], "{alias}");
    }
}

#[test]
fn without_a_usable_cgroup_every_run_goes_on_with_a_one_line_note() {
    let hold = program("hold");
    let workload = [hold.to_str().expect("utf-8"), "blocks", "20", "300"];
    // Asked for: no note, no group.
    let scratch = Scratch::new();
    let (output, json) = scratch.compare(&["-r", "1", "-a", "glibc", "--cgroup", "off"], &workload);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!stderr(&output).contains("note: runs are not in a memory cgroup"));
    assert_eq!(json["experiment"]["host"]["run_cgroup"], "off");
    let summary = &json["configs"][0]["summary"];
    assert!(summary["peak_working_set_bytes"].is_null());
    assert!(summary["peak_rss_bytes"]["median"].as_f64().is_some());

    // For real: a user who cannot write the cgroup hierarchy.
    if !require_root("running allocscope as user nobody")
        || !require_program("setpriv", "util-linux")
    {
        return;
    }
    let scratch = Scratch::new();
    std::fs::set_permissions(scratch.dir.path(), std::fs::Permissions::from_mode(0o777))
        .expect("chmod");
    let db = scratch.db();
    let json_path = scratch.path("out.json");
    let output = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_allocscope"))
        .args(["compare", "-r", "1", "-a", "glibc", "--db"])
        .arg(&db)
        .arg("--export-json")
        .arg(&json_path)
        .arg("--")
        .args(workload)
        .current_dir(scratch.dir.path())
        .output()
        .expect("setpriv runs");
    let text = stderr(&output);
    assert!(output.status.success(), "{text}");
    let notes: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("note: runs are not in a memory cgroup"))
        .collect();
    assert_eq!(notes.len(), 1, "{text}");
    assert!(
        notes[0].contains("systemd-run --user --scope -p Delegate=yes"),
        "{}",
        notes[0]
    );
    assert!(notes[0].contains("Permission denied"), "{}", notes[0]);
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).expect("json")).expect("JSON");
    let host = json["experiment"]["host"]["run_cgroup"]
        .as_str()
        .unwrap_or("");
    assert!(host.starts_with("none: "), "{host}");
    assert_eq!(first_run(&json)["status"], "ok");
}
