//! The cluster's files without a cluster: plans written by `--dry-run`,
//! rounds run by `allocscope cell`, shards merged (idempotent, foreign and
//! newer shards refused, mixed hardware warned of), and the Kubernetes
//! manifest, checked by parsing it (no Kubernetes cluster is available to
//! the tests).

use crate::cluster::{churn, exported, statuses};
use crate::common::{stderr, stdout, Scratch};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

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
        "--max-slowdown",
        "40",
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
    let output = cell_with(scratch, plan, round, out, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    scratch.path(out)
}

/// `allocscope cell` with `extra` arguments.
fn cell_with(scratch: &Scratch, plan: &Path, round: &str, out: &str, extra: &[&str]) -> Output {
    let shard = scratch.path(out);
    let mut args = vec![
        "cell",
        "--plan",
        plan.to_str().expect("utf-8"),
        "--round",
        round,
        "--out",
        shard.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    scratch.run(&args)
}

fn merge(scratch: &Scratch, shards: &[&Path]) -> Output {
    let db = scratch.db();
    let mut args = vec!["merge", "--db", db.to_str().expect("utf-8")];
    args.extend(shards.iter().map(|s| s.to_str().expect("utf-8")));
    scratch.run(&args)
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
    // Merged by hand, the experiment is judged by the budget it was
    // planned with, which the shards carry.
    assert_eq!(
        merged["verdict"]["max_slowdown_pct"], 40.0,
        "{}",
        merged["verdict"]["reason"]
    );

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
fn a_cell_runs_only_the_configurations_given_and_merge_puts_them_under_their_names() {
    let scratch = Scratch::new();
    let plan = dry_run_plan(&scratch, "plan");
    let round0 = cell(&scratch, &plan, "0", "r0.db");
    // Round 1 of an adaptive plan whose first round dropped glibc's default.
    let output = cell_with(&scratch, &plan, "1", "r1.db", &["--configs", "1"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("1 of 2 configurations"),
        "{}",
        stderr(&output)
    );
    let merged = merge(&scratch, &[&round0, &scratch.path("r1.db")]);
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    let json = exported(&scratch);
    let indexes = |name: &str| -> Vec<u64> {
        crate::common::runs(crate::common::config(&json, name))
            .iter()
            .filter_map(|r| r["index"].as_u64())
            .collect()
    };
    assert_eq!(indexes("glibc"), [1], "glibc ran round 0 only");
    assert_eq!(indexes("glibc:arena_max=2"), [1, 2]);

    let outside = cell_with(&scratch, &plan, "1", "r1b.db", &["--configs", "0,2"]);
    assert_eq!(outside.status.code(), Some(2));
    let reason = stderr(&outside);
    assert_eq!(reason.lines().count(), 1, "{reason}");
    assert!(reason.contains("the plan has 2 (0 to 1)"), "{reason}");
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
    // Without the Slurm commands: what to install, before anything runs.
    let no_slurm = scratch
        .command(&[
            "compare",
            "--executor",
            "slurm",
            "-r",
            "2",
            "-a",
            "glibc",
            "--",
            "/bin/true",
        ])
        .env("PATH", scratch.path("empty"))
        .output()
        .expect("allocscope runs");
    assert_eq!(no_slurm.status.code(), Some(2), "{}", stderr(&no_slurm));
    assert!(
        stderr(&no_slurm).contains("cannot run sbatch"),
        "{}",
        stderr(&no_slurm)
    );
    // Adaptive rounds (--runs auto, tune) choose each round from the ones
    // before: Kubernetes' shards are out of reach between rounds, and a dry
    // run cannot plan them.
    let k8s = [
        "--executor",
        "k8s",
        "--image",
        "i",
        "--k8s-volume-claim",
        "c",
    ];
    for command in ["compare", "tune"] {
        let mut args = vec![command];
        args.extend(k8s);
        args.extend(["--", "true"]);
        let refused = scratch.run(&args);
        assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
        let reason = stderr(&refused);
        assert_eq!(reason.lines().count(), 1, "{reason}");
        assert!(
            reason.contains("k8s cannot run adaptive rounds"),
            "{reason}"
        );
        assert!(reason.contains("use --executor slurm"), "{reason}");
        let dry = scratch.run(&[command, "--executor", "slurm", "--dry-run", "--", "true"]);
        assert_eq!(dry.status.code(), Some(2), "{}", stderr(&dry));
        assert!(
            stderr(&dry).contains("--dry-run cannot plan adaptive rounds"),
            "{}",
            stderr(&dry)
        );
    }
    // A cluster flag without an engine would be ignored: refused instead.
    let local = scratch.run(&["compare", "--dry-run", "--", "true"]);
    assert_eq!(local.status.code(), Some(2));
    assert!(
        stderr(&local).contains("--dry-run applies only with --executor"),
        "{}",
        stderr(&local)
    );
}
