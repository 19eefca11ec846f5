//! `soak --executor slurm`: each instance a job of its own on the test
//! suite's single-node Slurm cluster (slurm_cluster.rs), their shards
//! merged into one soak with the verdict of the same soak run here; under
//! `--until settled` the jobs stop once every configuration settled; and
//! `--executor k8s --dry-run`'s manifest, one pod per instance, whose pods'
//! `cell` runs here.

use crate::common::{one_heavy_test_at_a_time, program, stderr, stdout, Scratch};
use crate::record::db_arg;
use crate::slurm_cluster::SlurmCluster;
use crate::soak_launched::{glibc_soak_args, recordings};
use serde_json::Value;

/// `soak` of `grow arenas` (4 MiB a second for 15 s) under glibc and
/// glibc:arena_max=1, two instances each, for 14 s, with `executor`'s flags.
fn soak_grow(scratch: &Scratch, cluster: &SlurmCluster, executor: &[&str]) -> (String, String) {
    let grow = program("grow");
    let db = db_arg(scratch);
    let mut args = glibc_soak_args(&db, "2", "14s");
    args.extend_from_slice(executor);
    args.extend(["--", grow.to_str().expect("utf-8"), "arenas", "1000", "4"]);
    let output = (scratch.command(&args))
        .env("SLURM_CONF", &cluster.conf)
        .output()
        .expect("allocscope runs");
    assert!(output.status.success(), "{}", stderr(&output));
    (stdout(&output), stderr(&output))
}

/// The verdict's pick: its first clause up to the figures (`Use X`,
/// `Keep X: ...`, `All configurations grow ...`).
fn pick(report: &str) -> String {
    let verdict = report.lines().last().unwrap_or_default();
    let first = verdict.split(';').next().unwrap_or_default();
    let pick = first.split(": plateau").next().unwrap_or_default();
    pick.trim_end_matches('.').to_string()
}

#[test]
fn a_soak_of_four_slurm_jobs_merges_into_the_verdict_of_a_local_soak() {
    let Some(cluster) = SlurmCluster::start() else {
        return;
    };
    let _heavy = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let (report, said) = soak_grow(&scratch, &cluster, &["--executor", "slurm"]);
    assert!(
        said.contains("4 instances of 2 configurations as Slurm job array"),
        "{said}"
    );
    for name in [
        "glibc#1",
        "glibc#2",
        "glibc:arena_max=1#1",
        "glibc:arena_max=1#2",
    ] {
        assert!(
            said.contains(&format!("allocscope: {name}: merged as recording ")),
            "{said}"
        );
        assert!(
            report.contains(&format!("  {name} ran to the end: RSS ")),
            "{name}:\n{report}"
        );
    }
    let stored = recordings(&scratch);
    assert_eq!(stored.len(), 4, "{stored:?}");
    for (name, status, samples, live) in &stored {
        assert_eq!(status, "complete", "{name}");
        assert!(
            *samples >= 35 && *live >= 35,
            "{name}: {samples} samples, {live} live"
        );
    }

    let here = Scratch::new();
    let (local, _) = soak_grow(&here, &cluster, &[]);
    assert!(pick(&local).starts_with("Use glibc:arena_max=1"), "{local}");
    assert_eq!(
        pick(&report),
        pick(&local),
        "Slurm:\n{report}\nhere:\n{local}"
    );
}

#[test]
fn a_slurm_soak_until_settled_stops_its_jobs_once_every_configuration_settled() {
    let Some(cluster) = SlurmCluster::start() else {
        return;
    };
    let _heavy = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let grow = program("grow");
    let db = db_arg(&scratch);
    // 4 MiB a second for 15 s, then held: settled long before 150 s. The
    // four jobs share the test's one node, so all of them run at once.
    let args = [
        "soak",
        "-a",
        "glibc",
        "-a",
        "glibc:arena_max=1",
        "--replicas",
        "2",
        "--duration",
        "150s",
        "--interval",
        "200ms",
        "--db",
        &db,
        "--executor",
        "slurm",
        "--shared-node",
        "--",
        grow.to_str().expect("utf-8"),
        "arenas",
        "1000",
        "4",
    ];
    let output = (scratch.command(&args))
        .env("SLURM_CONF", &cluster.conf)
        .output()
        .expect("allocscope runs");
    let (report, said) = (stdout(&output), stderr(&output));
    assert!(output.status.success(), "{said}");
    assert!(
        said.contains("allocscope: every configuration settled (use glibc:arena_max=1)"),
        "{said}"
    );
    let line = (said.lines())
        .find(|l| l.starts_with("allocscope: soak settled after "))
        .unwrap_or_else(|| panic!("the soak did not stop on settling:\n{said}"));
    let seconds: f64 = line["allocscope: soak settled after ".len()..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!((20.0..120.0).contains(&seconds), "{said}");
    println!("{line}");
    assert!(
        pick(&report).starts_with("Use glibc:arena_max=1"),
        "{report}"
    );
    let stored = recordings(&scratch);
    assert_eq!(stored.len(), 4, "{stored:?}");
    for (name, status, samples, _) in &stored {
        assert_eq!(status, "complete", "{name}");
        // Stopped with the others, not at 150 s (750 samples).
        assert!(*samples < 600, "{name}: {samples} samples");
    }
}

#[test]
fn a_k8s_dry_run_writes_one_pod_per_instance_each_running_its_configuration() {
    let scratch = Scratch::new();
    let db = db_arg(&scratch);
    let mut args = vec![
        "soak",
        "-a",
        "glibc",
        "-a",
        "glibc:arena_max=2",
        "--replicas",
        "2",
        "--duration",
        "2s",
        "--interval",
        "200ms",
        "--db",
        &db,
        "--executor",
        "k8s",
        "--image",
        "registry.example/allocscope:1",
        "--k8s-volume-claim",
        "shards",
        "--dry-run",
        "--",
        "sleep",
        "30",
    ];
    let output = scratch.run(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let manifest: Value = serde_json::from_str(&stdout(&output)).expect("a JSON manifest");
    let job = &manifest["items"][1]["spec"];
    assert_eq!(
        (job["completions"].as_u64(), job["parallelism"].as_u64()),
        (Some(4), Some(4))
    );
    let container = &job["template"]["spec"]["containers"][0];
    assert_eq!(container["args"][0], "cell", "{container}");
    let plan_text = manifest["items"][0]["data"]["plan.json"]
        .as_str()
        .expect("the plan");
    let plan: Value = serde_json::from_str(plan_text).expect("plan.json");
    assert_eq!(plan["command"], "soak");
    assert_eq!(
        plan["configs"],
        serde_json::json!(["glibc", "glibc:arena_max=2"])
    );
    let kept: Vec<&str> = plan["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        kept.windows(2).any(|w| w == ["--replicas", "2"]) && !kept.contains(&"--executor"),
        "{kept:?}"
    );

    // The pod of completion index 3 runs glibc:arena_max=2's second replica
    // with its environment; its shard merges by hand.
    let id = plan["plan_id"].as_str().expect("plan id");
    let plan_path = scratch.path(&format!("allocscope-cluster/{}/plan.json", &id[..12]));
    let cell = scratch.run(&[
        "cell",
        "--plan",
        plan_path.to_str().expect("utf-8"),
        "--round",
        "3",
        "--out",
        "pod-3.db",
    ]);
    assert!(cell.status.success(), "{}", stderr(&cell));
    assert!(
        stderr(&cell).contains("instance glibc:arena_max=2#2 complete after"),
        "{}",
        stderr(&cell)
    );
    let conn = rusqlite::Connection::open(scratch.path("pod-3.db")).expect("shard opens");
    let (config, env): (String, String) = conn
        .query_row("SELECT config, env FROM recordings", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .expect("one recording");
    assert_eq!(config, "glibc:arena_max=2");
    assert!(env.contains("glibc.malloc.arena_max=2"), "{env}");
    let merged = scratch.run(&["merge", "pod-3.db", "--db", "merged.db"]);
    assert!(merged.status.success(), "{}", stderr(&merged));
    assert!(
        stdout(&merged).starts_with("glibc:arena_max=2 (1 instances, "),
        "{}",
        stdout(&merged)
    );

    args.retain(|a| *a != "--dry-run");
    let refused = scratch.run(&args);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("only writes the manifest (--dry-run)"),
        "{}",
        stderr(&refused)
    );
}
