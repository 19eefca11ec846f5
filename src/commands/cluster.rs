//! `compare --executor slurm|k8s`: write the plan beside the store, hand the
//! rounds to the engine, and for Slurm follow the tasks, merge the shards
//! and print the usual table and verdict. See docs/cluster.md.

use crate::analyze::analyze_with_budget;
use crate::cli::{ClusterArgs, CompareArgs};
use crate::cluster::k8s::IndexedJob;
use crate::cluster::merge::{merge_shards, record_missing_round};
use crate::cluster::plan_file::{node_arguments, ClusterPlan};
use crate::cluster::shard::Shard;
use crate::cluster::{slurm, Refused};
use crate::model::RunStatus;
use crate::options::CompareSettings;
use crate::run::Interrupt;
use crate::store::Store;
use anyhow::Context;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// How often squeue is asked; a round lasts at least seconds.
const POLL: Duration = Duration::from_secs(1);
/// How long to wait for cancelled tasks to leave the queue after Ctrl-C.
const CANCEL_GRACE: Duration = Duration::from_secs(90);

/// Whether `--executor` sends the rounds to a cluster (`local` does not).
pub fn is_remote(args: &ClusterArgs) -> anyhow::Result<bool> {
    match args.executor.as_deref() {
        None | Some("local") => {
            // A local run would ignore them, and a --dry-run that runs the
            // whole matrix would surprise.
            let given = [
                ("--dry-run", args.dry_run),
                ("--slurm-arg", !args.slurm_arg.is_empty()),
                ("--shared-node", args.shared_node),
                ("--image", args.image.is_some()),
                ("--k8s-volume-claim", args.k8s_volume_claim.is_some()),
                ("--shards", args.shards.is_some()),
            ];
            match given.iter().find(|(_, set)| *set) {
                Some((flag, _)) => {
                    Err(Refused(format!("{flag} applies only with --executor slurm or k8s")).into())
                }
                None => Ok(false),
            }
        }
        Some("slurm" | "k8s") => Ok(true),
        Some(other) => Err(Refused(format!(
            "--executor {other} is not an engine; use local, slurm or k8s"
        ))
        .into()),
    }
}

pub fn compare(args: &CompareArgs, settings: &CompareSettings) -> anyhow::Result<i32> {
    for warning in &settings.warnings {
        eprintln!("warning: {warning}");
    }
    let budget = super::exports::max_slowdown(&args.export)?;
    let argv: Vec<_> = std::env::args_os().collect();
    let plan = ClusterPlan::new(
        humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        settings.runs,
        settings.configs.iter().map(|c| c.name.clone()).collect(),
        node_arguments(&argv)?,
    );
    let base = match &args.cluster.shards {
        Some(dir) => dir.clone(),
        None => beside(&settings.db).join("allocscope-cluster"),
    };
    let dir = base.join(plan.short_id());
    std::fs::create_dir_all(&dir).with_context(|| format!("creating '{}'", dir.display()))?;
    let dir = dir.canonicalize()?;
    let plan_path = dir.join("plan.json");
    plan.write(&plan_path)?;
    if args.cluster.executor.as_deref() == Some("k8s") {
        return kubernetes(&args.cluster, &plan, &dir, &settings.db);
    }
    let name = format!("allocscope-{}", plan.short_id());
    let script = slurm::batch_script(&slurm::ArrayJob {
        name: &name,
        allocscope: &std::env::current_exe().context("finding the allocscope binary")?,
        plan: &plan_path,
        dir: &dir,
        workdir: &std::env::current_dir()?,
        rounds: plan.rounds,
        exclusive: !args.cluster.shared_node,
    });
    let script_path = dir.join("job.sh");
    std::fs::write(&script_path, &script)
        .with_context(|| format!("writing '{}'", script_path.display()))?;
    if args.cluster.dry_run {
        print!("{script}");
        eprintln!(
            "allocscope: dry run: plan {} written; submit with `sbatch{} {}`, then \
             `allocscope merge {}/round-*.db --db {}`",
            plan_path.display(),
            args.cluster
                .slurm_arg
                .iter()
                .map(|a| format!(" {a}"))
                .collect::<String>(),
            script_path.display(),
            dir.display(),
            settings.db.display()
        );
        return Ok(0);
    }
    let interrupt = Interrupt::install()?;
    let job = slurm::submit(&script_path, &args.cluster.slurm_arg)?;
    let quiet = args.export.quiet;
    if !quiet {
        eprintln!(
            "allocscope: plan {}: {} rounds x {} configurations as Slurm job array {job} \
             (shards in {})",
            plan.plan_id,
            plan.rounds,
            settings.configs.len(),
            dir.display()
        );
    }
    let (interrupted, last_seen) = follow(&job, plan.rounds, &interrupt, quiet)?;
    let states = slurm::final_states(&job).unwrap_or_default();
    let shards = (0..plan.rounds)
        .map(|round| slurm::shard_path(&dir, round))
        .filter(|path| path.is_file())
        .map(|path| Shard::open(&path))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let missing: Vec<u32> = (0..plan.rounds)
        .filter(|r| !shards.iter().any(|s| s.round == *r))
        .collect();
    // Without accounting, a pending task cancelled before the array was
    // expanded leaves no record at all: it left the queue without running.
    let state_of = |round: u32| match (states.get(&round), last_seen.get(&round)) {
        (Some(state), _) => state.clone(),
        (None, Some(last)) if last == "PENDING" => "CANCELLED".to_string(),
        _ => "UNKNOWN".to_string(),
    };
    let exit_interrupted = interrupted.then(|| interrupt.exit_code());
    if shards.is_empty() {
        for round in &missing {
            eprintln!("allocscope: round {round}: {} (no shard)", state_of(*round));
        }
        eprintln!(
            "error: no round left a shard; the task logs are {}/round-N.out",
            dir.display()
        );
        return Ok(exit_interrupted.unwrap_or(1));
    }
    let mut store = Store::open(&settings.db)?;
    let merged = merge_shards(&mut store, &shards)?;
    let id = merged.experiment_id;
    for round in &missing {
        let state = state_of(*round);
        record_missing_round(&mut store, id, *round, &state)?;
        if state != "CANCELLED" {
            eprintln!(
                "allocscope: round {round} ended {state} without a shard; its log: {}",
                dir.join(format!("round-{round}.out")).display()
            );
        }
    }
    store.finish_experiment(
        id,
        if interrupted {
            "interrupted"
        } else {
            "complete"
        },
    )?;
    if !quiet {
        eprintln!(
            "allocscope: merged {} of {} rounds into experiment {id}",
            shards.len(),
            plan.rounds
        );
    }
    super::merge::print_rounds(&store, id)?;
    let experiment = store.load_experiment(Some(id))?;
    let all_ok = experiment
        .configs
        .iter()
        .flat_map(|c| &c.runs)
        .all(|r| r.record.status == RunStatus::Ok);
    let analysis = analyze_with_budget(experiment, &settings.baseline, budget)?;
    super::exports::print_table_and_export(&analysis, &args.export)?;
    if let Some(code) = exit_interrupted {
        eprintln!(
            "allocscope: interrupted: the job array was cancelled; the finished rounds are \
             stored in experiment {id}"
        );
        return Ok(code);
    }
    Ok(if all_ok && missing.is_empty() { 0 } else { 1 })
}

/// Waits until every task has left the queue, with a progress line each
/// time the counts change; on Ctrl-C cancels the array and waits for the
/// cancelled tasks to go. Returns whether it was interrupted, and the
/// state each round was last seen in.
fn follow(
    job: &str,
    rounds: u32,
    interrupt: &Interrupt,
    quiet: bool,
) -> anyhow::Result<(bool, BTreeMap<u32, String>)> {
    let mut last_seen = BTreeMap::new();
    let mut cancelled_at: Option<Instant> = None;
    let mut last = String::new();
    let mut failures = 0;
    loop {
        if interrupt.requested() && cancelled_at.is_none() {
            eprintln!("allocscope: interrupted: cancelling job array {job} (scancel)");
            slurm::cancel(job)?;
            cancelled_at = Some(Instant::now());
        }
        let queued = match slurm::queued(job) {
            Ok(queued) => {
                failures = 0;
                queued
            }
            // The controller may be busy for a moment; a lasting failure stops.
            Err(e) if failures < 10 => {
                failures += 1;
                eprintln!("warning: {e}; retrying");
                std::thread::sleep(POLL);
                continue;
            }
            Err(e) => return Err(e),
        };
        if queued.is_empty() {
            return Ok((cancelled_at.is_some(), last_seen));
        }
        if cancelled_at.is_some_and(|at| at.elapsed() > CANCEL_GRACE) {
            eprintln!("warning: tasks of job {job} are still in the queue after scancel");
            return Ok((true, last_seen));
        }
        last_seen.extend(queued.iter().map(|(r, s)| (*r, s.clone())));
        let line = progress_line(&queued, rounds);
        if !quiet && line != last {
            eprintln!("allocscope: job {job}: {line}");
            last = line;
        }
        std::thread::sleep(POLL);
    }
}

/// `2 of 4 rounds ended, 1 pending, 1 running` from the tasks still queued
/// (a task ends when it leaves the queue: finished, failed or cancelled).
fn progress_line(queued: &BTreeMap<u32, String>, rounds: u32) -> String {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for state in queued.values() {
        *counts.entry(state.to_lowercase()).or_default() += 1;
    }
    let done = (rounds as usize).saturating_sub(queued.len());
    let mut parts = vec![format!("{done} of {rounds} rounds ended")];
    parts.extend(counts.into_iter().map(|(state, n)| format!("{n} {state}")));
    parts.join(", ")
}

/// `--executor k8s`: the manifest, applied when kubectl reaches a cluster.
fn kubernetes(
    args: &ClusterArgs,
    plan: &ClusterPlan,
    dir: &Path,
    db: &Path,
) -> anyhow::Result<i32> {
    let (Some(image), Some(claim)) = (&args.image, &args.k8s_volume_claim) else {
        return Err(Refused(
            "--executor k8s needs --image IMAGE (holding allocscope and the program) and \
             --k8s-volume-claim NAME (the PersistentVolumeClaim the pods write shards to)"
                .to_string(),
        )
        .into());
    };
    let job = IndexedJob {
        plan,
        image,
        volume_claim: claim,
    };
    let manifest = serde_json::to_string_pretty(&job.manifest()?)?;
    let path = dir.join("job.json");
    std::fs::write(&path, format!("{manifest}\n"))
        .with_context(|| format!("writing '{}'", path.display()))?;
    let name = job.name();
    let merge_step = format!(
        "copy the shards of volume claim {claim} (directory {}/) here, then: \
         allocscope merge round-*.db --db {}",
        plan.short_id(),
        db.display()
    );
    if args.dry_run {
        println!("{manifest}");
        eprintln!(
            "allocscope: dry run: manifest {}; {merge_step}",
            path.display()
        );
        return Ok(0);
    }
    if !kubectl_reaches_a_cluster() {
        eprintln!(
            "allocscope: no reachable Kubernetes cluster (kubectl missing, or `kubectl \
             cluster-info` failed); wrote {}. To run it:\n  kubectl apply -f {}\n  kubectl \
             wait --for=condition=complete --timeout=24h job/{name}\n  then {merge_step}",
            path.display(),
            path.display()
        );
        return Ok(0);
    }
    let path_text = path.to_string_lossy().into_owned();
    kubectl(&["apply", "-f", &path_text])?;
    eprintln!(
        "allocscope: Job {name} applied; waiting for its {} rounds",
        plan.rounds
    );
    let waited = kubectl(&[
        "wait",
        "--for=condition=complete",
        "--timeout=-1s",
        &format!("job/{name}"),
    ]);
    eprintln!("allocscope: {merge_step}");
    Ok(if waited.is_ok() { 0 } else { 1 })
}

/// kubectl's own complaints about an unreachable cluster are not shown:
/// the message that follows says what to do.
fn kubectl_reaches_a_cluster() -> bool {
    std::process::Command::new("kubectl")
        .args(["cluster-info", "--request-timeout=5s"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn kubectl(args: &[&str]) -> anyhow::Result<()> {
    let status = std::process::Command::new("kubectl")
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .context("running kubectl")?;
    anyhow::ensure!(status.success(), "kubectl {} failed", args.join(" "));
    Ok(())
}

/// The store's directory (`.` for a bare file name).
fn beside(db: &Path) -> PathBuf {
    match db.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::progress_line;
    use std::collections::BTreeMap;

    #[test]
    fn the_progress_line_counts_done_rounds_and_queued_states() {
        let queued = BTreeMap::from([(2, "RUNNING".to_string()), (3, "PENDING".to_string())]);
        assert_eq!(
            progress_line(&queued, 4),
            "2 of 4 rounds ended, 1 pending, 1 running"
        );
    }
}
