//! Adaptive rounds on a real single-node Slurm cluster (slurm_cluster.rs):
//! `compare --runs auto --executor slurm` and `tune --executor slurm` run
//! one Slurm job per round, each given the configurations the rounds before
//! left open, and stop when the judge or the race is done.

use crate::common::{config, runs, stderr, stdout, Scratch};
use crate::slurm_cluster::SlurmCluster;
use serde_json::Value;
use std::process::Output;

/// allocscope with `args` against the cluster, to its end.
fn on_slurm(scratch: &Scratch, cluster: &SlurmCluster, args: &[&str]) -> Output {
    scratch
        .command(args)
        .env("SLURM_CONF", &cluster.conf)
        .output()
        .expect("allocscope runs")
}

/// Each `round K (N of M configurations) as Slurm job J` line: (K, N, M, J).
fn submitted(text: &str) -> Vec<(u32, usize, usize, String)> {
    text.lines()
        .filter_map(|line| {
            let rest = line.split(": round ").nth(1)?;
            let (round, rest) = rest.split_once(" (")?;
            let (open, rest) = rest.split_once(" of ")?;
            let (all, rest) = rest.split_once(" configurations) as Slurm job ")?;
            let job = rest.split_whitespace().next()?;
            Some((
                round.parse().ok()?,
                open.parse().ok()?,
                all.parse().ok()?,
                job.to_string(),
            ))
        })
        .collect()
}

fn run_indexes(json: &Value, name: &str) -> Vec<u64> {
    runs(config(json, name))
        .iter()
        .filter_map(|r| r["index"].as_u64())
        .collect()
}

#[test]
fn compare_runs_auto_on_slurm_submits_a_job_per_round_and_stops_when_settled() {
    let Some(cluster) = SlurmCluster::start() else {
        return;
    };
    let scratch = Scratch::new();
    let db = scratch.db();
    // On churn, one arena holds about half the memory of glibc's default
    // (0.5x mean RSS, beyond noise in 3 rounds); within a wide time budget
    // it is recommended at the first look (round 3), well before 8.
    let mut args = vec![
        "compare",
        "--executor",
        "slurm",
        "--db",
        db.to_str().expect("utf-8"),
        "--export-json",
        "out.json",
        "--runs",
        "auto",
        "--max-runs",
        "8",
        "--max-slowdown",
        "200",
        "-a",
        "glibc",
        "-a",
        "glibc:arena_max=1",
        "--",
    ];
    args.extend(crate::cluster::churn());
    let output = on_slurm(&scratch, &cluster, &args);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    let jobs = submitted(&text);
    let rounds = jobs.len();
    assert!((3..8).contains(&rounds), "stopped early: {jobs:?}\n{text}");
    for (i, (round, open, all, _)) in jobs.iter().enumerate() {
        assert_eq!((*round as usize, *open, *all), (i, 2, 2), "{text}");
    }
    let mut ids: Vec<&String> = jobs.iter().map(|j| &j.3).collect();
    ids.dedup();
    assert_eq!(ids.len(), rounds, "one job per round: {jobs:?}");
    assert!(
        text.contains(&format!("merged {rounds} rounds (of at most 8)")),
        "{text}"
    );
    let json: Value = serde_json::from_str(
        &std::fs::read_to_string(scratch.path("out.json")).expect("JSON export"),
    )
    .expect("valid JSON");
    let expected: Vec<u64> = (1..=rounds as u64).collect();
    assert_eq!(run_indexes(&json, "glibc"), expected);
    assert_eq!(run_indexes(&json, "glibc:arena_max=1"), expected);
}

#[test]
fn tune_on_slurm_drops_candidates_between_round_jobs_and_report_rerenders_the_race() {
    let Some(cluster) = SlurmCluster::start() else {
        return;
    };
    let _heavy = crate::common::one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    let db = scratch.db();
    let db = db.to_str().expect("utf-8");
    let mut args = vec![
        "tune",
        "--full",
        "--executor",
        "slurm",
        "--db",
        db,
        "--export-json",
        "tune.json",
        "-a",
        "glibc",
        "--max-runs",
        "3",
        "--no-combine",
        "--max-slowdown",
        "200",
        "--interval",
        "50ms",
        "--",
    ];
    args.extend(crate::cluster::churn());
    let output = on_slurm(&scratch, &cluster, &args);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    // Round 1 runs every candidate; the halving leaves fewer to the jobs
    // of rounds 2 and 3.
    let jobs = submitted(&text);
    assert_eq!(jobs.len(), 3, "{jobs:?}\n{text}");
    let (_, first, all, _) = &jobs[0];
    assert_eq!(first, all, "{text}");
    assert!(jobs[1].1 < *all && jobs[2].1 <= jobs[1].1, "{jobs:?}");
    assert!(text.contains("phase 1: merged rounds [0, 1, 2]"), "{text}");

    let json: Value = serde_json::from_str(
        &std::fs::read_to_string(scratch.path("tune.json")).expect("JSON export"),
    )
    .expect("valid JSON");
    // The stored runs: three of the baseline, one of a candidate the first
    // halving dropped.
    assert_eq!(run_indexes(&json, "glibc"), [1, 2, 3]);
    let rows = json["tune"]["phases"][0]["rows"].as_array().expect("rows");
    assert_eq!(rows.len() + 1, *all, "every candidate raced");
    let dropped_first = rows
        .iter()
        .filter(|r| r["dropped"]["round"] == 1)
        .filter_map(|r| r["config"].as_str())
        .collect::<Vec<_>>();
    assert!(!dropped_first.is_empty(), "{}", json["tune"]);
    for name in dropped_first {
        assert_eq!(run_indexes(&json, name), [1], "{name}");
    }
    // Every run measured the program (exit 0 says every run was ok), so
    // the finalist has figures to be judged by.
    let finalist = rows
        .iter()
        .find(|r| r["dropped"].is_null())
        .expect("a finalist");
    assert!(finalist["memory_ratio"]["value"].is_f64(), "{finalist}");
    let race = stdout(&output);
    assert!(
        race.contains("tune, phase 1") && race.contains("Pareto front"),
        "the race's record: {race}"
    );
    assert!(race.contains("\nverdict ("), "the verdict: {race}");
    assert!(
        json["verdict"]["outcome"].is_string(),
        "{}",
        json["verdict"]
    );

    // The merged race re-renders from the store.
    let again = scratch.run(&["report", "--db", db]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(
        stdout(&again).contains("tune, phase 1"),
        "{}",
        stdout(&again)
    );
}

#[test]
fn ctrl_c_cancels_the_running_round_job_and_keeps_the_rounds_merged() {
    let Some(cluster) = SlurmCluster::start() else {
        return;
    };
    let scratch = Scratch::new();
    let db = scratch.db();
    let log = scratch.path("compare.stderr");
    let child = scratch
        .command(&[
            "compare",
            "--executor",
            "slurm",
            "--db",
            db.to_str().expect("utf-8"),
            "--runs",
            "auto",
            "--max-runs",
            "5",
            "-a",
            "glibc",
            "-a",
            "glibc:arena_max=2",
            "--",
            "sleep",
            "2",
        ])
        .env("SLURM_CONF", &cluster.conf)
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&log).expect("log"))
        .spawn()
        .expect("allocscope starts");
    let second_round = crate::common::wait_until(std::time::Duration::from_secs(60), || {
        std::fs::read_to_string(&log)
            .is_ok_and(|t| t.contains("round 1 (job ") && t.contains("): running"))
    });
    let so_far = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(second_round, "{so_far}");
    let job = submitted(&so_far)
        .into_iter()
        .find(|s| s.0 == 1)
        .map(|s| s.3)
        .expect("round 1's job");
    // SAFETY: signalling the allocscope we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().expect("allocscope ends");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(output.status.code(), Some(130), "{text}");
    assert!(
        text.contains(&format!("cancelling Slurm job {job}")),
        "{text}"
    );
    assert!(text.contains("merged 1 round (of at most 5)"), "{text}");
    assert!(
        stdout(&output).contains("round 1: CANCELLED (no shard)"),
        "{}",
        stdout(&output)
    );
    assert_eq!(submitted(&text).len(), 2, "no round after Ctrl-C: {text}");
    let queue = cluster
        .command("squeue")
        .args(["-h", "-j", &job])
        .output()
        .expect("squeue runs");
    assert_eq!(stdout(&queue).trim(), "", "round 1's job left in the queue");
    let json = crate::cluster::exported(&scratch);
    assert_eq!(run_indexes(&json, "glibc"), [1], "round 0 kept");
}
