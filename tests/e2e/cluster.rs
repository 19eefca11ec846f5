//! The experiment matrix on a cluster: `compare --executor slurm` against a
//! real single-node Slurm cluster (see slurm_cluster.rs), `cell` and `merge`
//! on their own, and the Kubernetes manifest, checked by parsing it (no
//! Kubernetes cluster is available to the tests).

use crate::common::{config, configs, runs, stderr, stdout, wait_until, Scratch};
use crate::slurm_cluster::SlurmCluster;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

const ALLOCSCOPE: &str = env!("CARGO_BIN_EXE_allocscope");

/// The churn scenario at a size that runs in about 0.2 s.
fn churn() -> Vec<&'static str> {
    vec![
        ALLOCSCOPE,
        "workload",
        "churn",
        "--threads",
        "4",
        "--hot-threads",
        "2",
        "--ops",
        "200000",
        "--live-mib",
        "16",
        "--hold-ms",
        "50",
    ]
}

const THREE_CONFIGS: [&str; 6] = [
    "-a",
    "glibc",
    "-a",
    "glibc:arena_max=2",
    "-a",
    "glibc:arena_max=1",
];

fn median(json: &Value, config_name: &str, metric: &str) -> f64 {
    config(json, config_name)["summary"][metric]["median"]
        .as_f64()
        .unwrap_or_else(|| panic!("{metric} median of {config_name}"))
}

fn statuses(json: &Value) -> Vec<(String, Vec<String>)> {
    configs(json)
        .iter()
        .map(|c| {
            let statuses = runs(c)
                .iter()
                .map(|r| r["status"].as_str().unwrap_or_default().to_string())
                .collect();
            (c["name"].as_str().unwrap_or_default().to_string(), statuses)
        })
        .collect()
}

#[test]
fn slurm_rounds_give_the_statuses_and_medians_of_a_local_run() {
    let Some(cluster) = SlurmCluster::start() else {
        return;
    };
    let _heavy = crate::common::one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let mut options = THREE_CONFIGS.to_vec();
    options.extend(["-r", "4", "--interval", "50ms"]);
    let (child, log) = spawn_slurm_compare(&scratch, &cluster, &options, &churn());
    let (output, text) = finish(child, &log);
    assert_eq!(output.status.code(), Some(0), "{text}");
    let on_slurm = exported(&scratch);
    assert!(text.contains("as Slurm job array"), "{text}");
    assert!(text.contains("merged 4 of 4 rounds"), "{text}");
    assert!(
        stdout(&output).contains("rounds 0, 1, 2, 3: "),
        "{}",
        stdout(&output)
    );

    let local_scratch = Scratch::new();
    let (output, local) = local_scratch.compare(&options, &churn());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(statuses(&on_slurm), statuses(&local));
    for name in ["glibc", "glibc:arena_max=2", "glibc:arena_max=1"] {
        let indexes: Vec<u64> = runs(config(&on_slurm, name))
            .iter()
            .filter_map(|r| r["index"].as_u64())
            .collect();
        assert_eq!(indexes, [1, 2, 3, 4], "{name}: one run per round");
        // The same allocation sequence under the same allocator: peak RSS
        // varies by a few percent from run to run, whichever node ran it.
        let (remote, here) = (
            median(&on_slurm, name, "peak_rss_bytes"),
            median(&local, name, "peak_rss_bytes"),
        );
        assert!(
            (remote - here).abs() <= 0.15 * here,
            "{name}: peak RSS median {remote} on Slurm, {here} locally"
        );
    }
    // The merged experiment re-renders like a local one.
    let report = scratch.run(&["report", "--db", scratch.db().to_str().expect("utf-8")]);
    assert_eq!(report.status.code(), Some(0), "{}", stderr(&report));
    assert!(
        stdout(&report).contains("4/4 runs ok"),
        "{}",
        stdout(&report)
    );
}

/// `compare --executor slurm` in the background, its stderr in a file.
fn spawn_slurm_compare(
    scratch: &Scratch,
    cluster: &SlurmCluster,
    options: &[&str],
    workload: &[&str],
) -> (std::process::Child, PathBuf) {
    let log = scratch.path("compare.stderr");
    let db = scratch.db();
    let json = scratch.path("out.json");
    let mut args = vec![
        "compare",
        "--executor",
        "slurm",
        "--db",
        db.to_str().expect("utf-8"),
        "--export-json",
        json.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(options);
    args.push("--");
    args.extend_from_slice(workload);
    let child = scratch
        .command(&args)
        .env("SLURM_CONF", &cluster.conf)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).expect("log"))
        .spawn()
        .expect("allocscope starts");
    (child, log)
}

/// The job id from `... as Slurm job array N (...)`, once it is printed.
fn job_id(log: &Path) -> String {
    let mut id = None;
    let found = wait_until(Duration::from_secs(30), || {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        id = text
            .split("as Slurm job array ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_string);
        id.is_some()
    });
    assert!(
        found,
        "no job id: {}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
    id.unwrap_or_default()
}

fn finish(child: std::process::Child, log: &Path) -> (Output, String) {
    let output = child.wait_with_output().expect("allocscope ends");
    (output, std::fs::read_to_string(log).unwrap_or_default())
}

#[test]
fn a_task_cancelled_with_scancel_is_recorded_and_the_other_rounds_merged() {
    let Some(cluster) = SlurmCluster::start() else {
        return;
    };
    let scratch = Scratch::new();
    let mut options = THREE_CONFIGS.to_vec();
    options.extend(["-r", "4"]);
    let (child, log) = spawn_slurm_compare(&scratch, &cluster, &options, &["sleep", "0.3"]);
    let job = job_id(&log);
    // One node, exclusive rounds: round 3 is still pending now.
    let cancel = cluster
        .command("scancel")
        .arg(format!("{job}_3"))
        .status()
        .expect("scancel runs");
    assert!(cancel.success());
    let (output, text) = finish(child, &log);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("merged 3 of 4 rounds"), "{text}");
    assert!(
        stdout(&output).contains("round 3: CANCELLED (no shard)"),
        "{}",
        stdout(&output)
    );
    let json: Value = serde_json::from_str(
        &std::fs::read_to_string(scratch.path("out.json")).expect("JSON export"),
    )
    .expect("valid JSON");
    for (name, statuses) in statuses(&json) {
        assert_eq!(statuses, ["ok", "ok", "ok"], "{name}");
    }
}

#[test]
fn ctrl_c_cancels_the_job_array() {
    let Some(cluster) = SlurmCluster::start() else {
        return;
    };
    let scratch = Scratch::new();
    let (child, log) = spawn_slurm_compare(
        &scratch,
        &cluster,
        &["-a", "glibc", "-r", "3"],
        &["sleep", "5"],
    );
    let job = job_id(&log);
    let running = wait_until(Duration::from_secs(30), || {
        std::fs::read_to_string(&log).is_ok_and(|t| t.contains("1 running"))
    });
    assert!(
        running,
        "{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    // SAFETY: signalling the allocscope we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let (output, text) = finish(child, &log);
    assert_eq!(output.status.code(), Some(130), "{text}");
    assert!(text.contains("cancelling job array"), "{text}");
    let queue = cluster
        .command("squeue")
        .args(["-h", "-j", &job])
        .output()
        .expect("squeue runs");
    assert_eq!(stdout(&queue).trim(), "", "tasks left in the queue");
}

/// A plan written by `compare --executor slurm --dry-run` into `dir`.
fn dry_run_plan(scratch: &Scratch, dir: &str) -> PathBuf {
    let shards = scratch.path(dir);
    let mut args = vec![
        "compare",
        "--executor",
        "slurm",
        "--dry-run",
        "--shards",
        shards.to_str().expect("utf-8"),
        "-a",
        "glibc",
        "-a",
        "glibc:arena_max=2",
        "-r",
        "2",
        "--",
    ];
    args.extend(churn());
    let output = scratch.run(&args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("#SBATCH --array=0-1"),
        "{}",
        stdout(&output)
    );
    let plan_dir = std::fs::read_dir(&shards)
        .expect("shards dir")
        .next()
        .expect("one plan")
        .expect("entry")
        .path();
    plan_dir.join("plan.json")
}

fn cell(scratch: &Scratch, plan: &Path, round: &str, out: &str) -> PathBuf {
    let shard = scratch.path(out);
    let output = scratch.run(&[
        "cell",
        "--plan",
        plan.to_str().expect("utf-8"),
        "--round",
        round,
        "--out",
        shard.to_str().expect("utf-8"),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    shard
}

fn merge(scratch: &Scratch, shards: &[&Path]) -> Output {
    let db = scratch.db();
    let mut args = vec!["merge", "--db", db.to_str().expect("utf-8")];
    args.extend(shards.iter().map(|s| s.to_str().expect("utf-8")));
    scratch.run(&args)
}

fn exported(scratch: &Scratch) -> Value {
    let db = scratch.db();
    let output = scratch.run(&[
        "report",
        "--db",
        db.to_str().expect("utf-8"),
        "--export-json",
        "-",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).expect("JSON")
}

#[test]
fn merge_is_idempotent_refuses_foreign_and_newer_shards_and_warns_of_mixed_hardware() {
    let scratch = Scratch::new();
    let plan = dry_run_plan(&scratch, "plan-a");
    let other_plan = dry_run_plan(&scratch, "plan-b");
    let round0 = cell(&scratch, &plan, "0", "a0.db");
    let round1 = cell(&scratch, &plan, "1", "a1.db");
    let foreign = cell(&scratch, &other_plan, "0", "b0.db");

    let first = merge(&scratch, &[&round0]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let second = merge(&scratch, &[&round0, &round1]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    assert!(
        stdout(&second).contains("already merged, skipped: 0"),
        "{}",
        stdout(&second)
    );
    let merged = exported(&scratch);
    for (name, statuses) in statuses(&merged) {
        assert_eq!(statuses, ["ok", "ok"], "{name}");
    }

    let again = merge(&scratch, &[&round0, &round1]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(stdout(&again).contains("nothing new"), "{}", stdout(&again));
    assert_eq!(
        exported(&scratch),
        merged,
        "merging twice changed the store"
    );

    let db = scratch.db();
    let not_this_plan = scratch.run(&[
        "merge",
        "--db",
        db.to_str().expect("utf-8"),
        "--plan",
        other_plan.to_str().expect("utf-8"),
        round0.to_str().expect("utf-8"),
    ]);
    assert_eq!(not_this_plan.status.code(), Some(2));
    assert!(
        stderr(&not_this_plan).contains("the --plan file"),
        "{}",
        stderr(&not_this_plan)
    );
    let outside = scratch.run(&[
        "cell",
        "--plan",
        plan.to_str().expect("utf-8"),
        "--round",
        "2",
        "--out",
        scratch.path("r2.db").to_str().expect("utf-8"),
    ]);
    assert_eq!(outside.status.code(), Some(2));
    assert!(
        stderr(&outside).contains("outside plan"),
        "{}",
        stderr(&outside)
    );

    let refused = merge(&scratch, &[&round0, &foreign]);
    assert_eq!(refused.status.code(), Some(2));
    let reason = stderr(&refused);
    assert_eq!(reason.lines().count(), 1, "{reason}");
    assert!(reason.contains("belongs to plan"), "{reason}");

    let newer = scratch.path("newer.db");
    std::fs::copy(&round1, &newer).expect("copy");
    rusqlite::Connection::open(&newer)
        .and_then(|c| c.pragma_update(None, "user_version", 999))
        .expect("schema version set");
    let refused = merge(&scratch, &[&newer]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("newer than"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(
        exported(&scratch),
        merged,
        "a refused merge changed the store"
    );

    // A round from a node with another CPU (the shard says so) is merged
    // with a warning naming which rounds ran where.
    let elsewhere = cell(&scratch, &plan, "1", "a1-elsewhere.db");
    rusqlite::Connection::open(&elsewhere)
        .and_then(|c| {
            c.execute(
                "UPDATE environment SET value = 'Other CPU 9000' WHERE key = 'cpu_model'",
                [],
            )
        })
        .expect("cpu model changed");
    let fresh = Scratch::new();
    let mixed = merge(&fresh, &[&round0, &elsewhere]);
    assert_eq!(mixed.status.code(), Some(0), "{}", stderr(&mixed));
    assert!(
        stderr(&mixed).contains("different hardware"),
        "{}",
        stderr(&mixed)
    );
    let places = stdout(&mixed);
    assert!(
        places.contains("round 0: ") && places.contains("round 1: "),
        "{places}"
    );
    assert!(places.contains("Other CPU 9000"), "{places}");
}

#[test]
fn the_kubernetes_executor_writes_an_indexed_job() {
    let scratch = Scratch::new();
    let shards = scratch.path("k8s");
    let mut args = vec![
        "compare",
        "--executor",
        "k8s",
        "--image",
        "registry.example/allocscope:1",
        "--k8s-volume-claim",
        "allocscope-shards",
        "--shards",
        shards.to_str().expect("utf-8"),
        "--dry-run",
        "-a",
        "glibc",
        "-r",
        "3",
        "--",
    ];
    args.extend(churn());
    let output = scratch.run(&args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let manifest: Value = serde_json::from_slice(&output.stdout).expect("a JSON manifest");
    assert_eq!(manifest["kind"], "List");
    let job = &manifest["items"][1];
    assert_eq!(job["kind"], "Job");
    assert_eq!(job["spec"]["completionMode"], "Indexed");
    assert_eq!(job["spec"]["completions"], 3);
    let pod = &job["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(container["image"], "registry.example/allocscope:1");
    let args: Vec<&str> = container["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(args[..2], ["cell", "--plan"]);
    assert!(args.contains(&"$(JOB_COMPLETION_INDEX)"), "{args:?}");
    assert_eq!(
        pod["volumes"][1]["persistentVolumeClaim"]["claimName"],
        "allocscope-shards"
    );
    let plan: Value = serde_json::from_str(
        manifest["items"][0]["data"]["plan.json"]
            .as_str()
            .expect("the plan in the ConfigMap"),
    )
    .expect("plan JSON");
    assert_eq!(plan["rounds"], 3);
    assert!(
        !plan["args"]
            .as_array()
            .expect("args")
            .iter()
            .any(|a| a == "--executor" || a == "--image"),
        "cluster flags left in the nodes' arguments: {plan}"
    );
    assert!(
        stderr(&output).contains("allocscope merge"),
        "{}",
        stderr(&output)
    );

    // Without --image the engine cannot run anything: a usage error.
    let missing = scratch.run(&["compare", "--executor", "k8s", "--", "true"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("--image"), "{}", stderr(&missing));
    // A cluster flag without an engine would be ignored: refused instead.
    let local = scratch.run(&["compare", "--dry-run", "--", "true"]);
    assert_eq!(local.status.code(), Some(2));
    assert!(
        stderr(&local).contains("--dry-run applies only with --executor"),
        "{}",
        stderr(&local)
    );
}
