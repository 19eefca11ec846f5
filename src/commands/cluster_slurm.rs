//! `compare --executor slurm`: submit the job array, follow its tasks with a
//! progress line, merge each round's shard as soon as it appears (a round
//! that finished is in the store even if this process dies later), record
//! the rounds that left none with their Slurm state, then print the usual
//! table and verdict. Ctrl-C cancels the array and keeps the finished rounds.

use crate::analyze::analyze_with;
use crate::cli::CompareArgs;
use crate::cluster::merge::{merge_shards, record_missing_round};
use crate::cluster::plan_file::ClusterPlan;
use crate::cluster::shard::Shard;
use crate::cluster::slurm;
use crate::model::RunStatus;
use crate::options::CompareSettings;
use crate::run::Interrupt;
use crate::store::Store;
use anyhow::Context;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

/// How often squeue is asked; a round lasts at least seconds.
const POLL: Duration = Duration::from_secs(1);
/// How long to wait for cancelled tasks to leave the queue after Ctrl-C.
const CANCEL_GRACE: Duration = Duration::from_secs(90);

pub fn run(
    args: &CompareArgs,
    settings: &CompareSettings,
    plan: &ClusterPlan,
    plan_path: &Path,
    dir: &Path,
) -> anyhow::Result<i32> {
    let name = format!("allocscope-{}", plan.short_id());
    let script = slurm::batch_script(&slurm::ArrayJob {
        name: &name,
        allocscope: &std::env::current_exe().context("finding the allocscope binary")?,
        plan: plan_path,
        dir,
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
    // Opened before submitting, so an unwritable store stops us first.
    let mut merger = Merger {
        store: Store::open(&settings.db)?,
        dir,
        rounds: plan.rounds,
        merged: BTreeSet::new(),
        experiment_id: None,
    };
    let interrupt = Interrupt::install()?;
    let job = slurm::submit(&script_path, &args.cluster.slurm_arg)?;
    let quiet = settings.output.quiet;
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
    let (interrupted, last_seen) = follow(&job, plan.rounds, &interrupt, quiet, &mut merger)?;
    // Rounds that ended between the last two polls.
    merger.merge_new()?;
    let states = slurm::final_states(&job).unwrap_or_default();
    let missing: Vec<u32> = (0..plan.rounds)
        .filter(|r| !merger.merged.contains(r))
        .collect();
    // Without accounting, a pending task cancelled before the array was
    // expanded leaves no record at all: it left the queue without running.
    let state_of = |round: u32| match (states.get(&round), last_seen.get(&round)) {
        (Some(state), _) => state.clone(),
        (None, Some(last)) if last == "PENDING" => "CANCELLED".to_string(),
        _ => "UNKNOWN".to_string(),
    };
    let exit_interrupted = interrupted.then(|| interrupt.exit_code());
    let Some(id) = merger.experiment_id else {
        for round in &missing {
            eprintln!("allocscope: round {round}: {} (no shard)", state_of(*round));
        }
        eprintln!(
            "error: no round left a shard; the task logs are {}/round-N.out",
            dir.display()
        );
        return Ok(exit_interrupted.unwrap_or(1));
    };
    let mut store = merger.store;
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
    let status = if interrupted {
        "interrupted"
    } else {
        "complete"
    };
    store.finish_experiment(id, status)?;
    if !quiet {
        eprintln!(
            "allocscope: merged {} of {} rounds into experiment {id}",
            merger.merged.len(),
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
    let analysis = analyze_with(experiment, &settings.baseline, &settings.judge)?;
    super::exports::print_table_and_export(&analysis, &settings.output.exports)?;
    if let Some(code) = exit_interrupted {
        eprintln!(
            "allocscope: interrupted: the job array was cancelled; the finished rounds are \
             stored in experiment {id}"
        );
        return Ok(code);
    }
    Ok(if all_ok && missing.is_empty() { 0 } else { 1 })
}

/// Merges each round's shard into the store once it exists (a cell renames
/// its shard into place only when the round finished).
struct Merger<'a> {
    store: Store,
    dir: &'a Path,
    rounds: u32,
    merged: BTreeSet<u32>,
    /// Created by the first merged round.
    experiment_id: Option<i64>,
}

impl Merger<'_> {
    fn merge_new(&mut self) -> anyhow::Result<()> {
        let shards = (0..self.rounds)
            .filter(|round| !self.merged.contains(round))
            .map(|round| slurm::shard_path(self.dir, round))
            .filter(|path| path.is_file())
            .map(|path| Shard::open(&path))
            .collect::<anyhow::Result<Vec<_>>>()?;
        if shards.is_empty() {
            return Ok(());
        }
        let merged = merge_shards(&mut self.store, &shards)?;
        self.experiment_id = Some(merged.experiment_id);
        self.merged.extend(shards.iter().map(|s| s.round));
        Ok(())
    }
}

/// Waits until every task has left the queue, with a progress line each
/// time the counts change and the new shards merged each time a task
/// leaves; on Ctrl-C cancels the array and waits for the cancelled tasks
/// to go. Returns whether it was interrupted, and the
/// state each round was last seen in.
fn follow(
    job: &str,
    rounds: u32,
    interrupt: &Interrupt,
    quiet: bool,
    merger: &mut Merger,
) -> anyhow::Result<(bool, BTreeMap<u32, String>)> {
    // Submitted, every task is pending until a poll says otherwise: a task
    // cancelled before the first poll is never seen in the queue.
    let mut last_seen: BTreeMap<u32, String> =
        (0..rounds).map(|r| (r, "PENDING".to_string())).collect();
    let mut queued_before = usize::MAX;
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
        if queued.len() < queued_before {
            merger.merge_new()?;
            queued_before = queued.len();
        }
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
