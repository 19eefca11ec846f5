//! `soak --executor slurm`: each instance a job of its own on the test
//! suite's single-node Slurm cluster (slurm_cluster.rs), their shards
//! merged into one soak with the verdict of the same soak run here.

use crate::common::{one_heavy_test_at_a_time, program, stderr, stdout, Scratch};
use crate::record::db_arg;
use crate::slurm_cluster::SlurmCluster;
use crate::soak_launched::recordings;

/// `soak` of `grow arenas` (4 MiB a second for 15 s) under glibc and
/// glibc:arena_max=1, two instances each, for 14 s, with `executor`'s flags.
fn soak_grow(scratch: &Scratch, cluster: &SlurmCluster, executor: &[&str]) -> (String, String) {
    let grow = program("grow");
    let db = db_arg(scratch);
    let mut args = vec![
        "soak",
        "-a",
        "glibc",
        "-a",
        "glibc:arena_max=1",
        "--replicas",
        "2",
        "--duration",
        "14s",
        "--until",
        "duration",
        "--interval",
        "200ms",
        "--db",
        &db,
    ];
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
        said.contains("4 rounds x 2 configurations as Slurm job array"),
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
