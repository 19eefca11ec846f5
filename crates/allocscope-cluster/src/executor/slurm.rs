//! The Slurm engine: one job array, one task per round (`sbatch --array`),
//! or, for adaptive rounds (`--runs auto`, tune's race), one job per round
//! submitted when the round before has been merged and judged (a one-task
//! array `--array=K` of the same script, given the configurations still
//! open as `--configs`); `--exclusive` by default so no other job shares
//! the node during a round,
//! `--export=ALL` so the environment (LD_PRELOAD, SLURM_CONF, PATH) reaches
//! the nodes. It follows the tasks with `squeue` (a progress line each time
//! the counts change), reports each round's shard as soon as it appears (a
//! round that finished is merged even if this process dies later), reads
//! how the rounds that left none ended from `sacct` (or `scontrol` where
//! accounting is disabled), and cancels the array with `scancel` on
//! Ctrl-C. Only the Slurm commands are spoken to, never the daemons.

use crate::batch::BatchPlan;
use crate::error::ClusterError;
use allocscope_core::store::Store;
use allocscope_core::usage_error::UsageError;
use allocscope_rounds::engine::{Ended, Engine, Round, RoundEnd, Started};
use anyhow::Context;
use clap::Args;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// `--executor slurm`'s own flags.
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize)]
pub struct SlurmFlags {
    /// An option passed to sbatch as is (partition, time, memory), repeatable:
    /// --slurm-arg=--partition=big --slurm-arg=--time=2:00:00.
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub slurm_arg: Vec<String>,
    /// Let other jobs share a node during a round (default: --exclusive;
    /// with it, --oversubscribe).
    #[arg(long)]
    pub shared_node: bool,
}

/// How often squeue is asked; a round lasts at least seconds.
const POLL: Duration = Duration::from_secs(1);
/// How long to wait for cancelled tasks to leave the queue after Ctrl-C.
const CANCEL_GRACE: Duration = Duration::from_secs(90);
/// squeue failures in a row before giving up (the controller may be busy
/// for a moment).
const SQUEUE_RETRIES: u32 = 10;

/// A plan's rounds as one job array, or as one job per round.
pub struct Slurm {
    plan: BatchPlan,
    /// One job per round, each started after the round before was judged.
    per_round: bool,
    sbatch_args: Vec<String>,
    script: String,
    script_path: PathBuf,
    /// The job last submitted, and its rounds (every round of an array,
    /// one round of a per-round job).
    job: String,
    job_rounds: Vec<u32>,
    /// The state each round of the job was last seen in; a round not yet
    /// seen is pending (a task cancelled before the first poll is never seen).
    last_seen: BTreeMap<u32, String>,
    reported: BTreeSet<u32>,
    queued_before: usize,
    cancelled_at: Option<Instant>,
    last_line: String,
    /// A progress line held back until the rounds it counts as ended are
    /// in the store (the engine stores them after `wait` returns them).
    held_line: Option<String>,
    failures: u32,
}

impl Slurm {
    /// Writes the batch script beside the plan; `per_round` for adaptive
    /// rounds.
    pub fn new(flags: &SlurmFlags, plan: BatchPlan, per_round: bool) -> anyhow::Result<Slurm> {
        let name = format!("allocscope-{}", plan.plan.short_id());
        let script = batch_script(&ArrayJob {
            name: &name,
            allocscope: &std::env::current_exe().context("finding the allocscope binary")?,
            plan: &plan.path,
            dir: &plan.dir,
            workdir: &std::env::current_dir()?,
            rounds: (!per_round).then_some(plan.plan.rounds),
            exclusive: !flags.shared_node,
            soak: plan.plan.command == "soak",
        });
        let script_path = plan.dir.join("job.sh");
        std::fs::write(&script_path, &script)
            .with_context(|| format!("writing '{}'", script_path.display()))?;
        Ok(Slurm {
            last_seen: BTreeMap::new(),
            plan,
            per_round,
            sbatch_args: flags.slurm_arg.clone(),
            script,
            script_path,
            job: String::new(),
            job_rounds: Vec::new(),
            reported: BTreeSet::new(),
            queued_before: usize::MAX,
            cancelled_at: None,
            last_line: String::new(),
            held_line: None,
            failures: 0,
        })
    }

    /// The job's rounds not yet reported whose shard is in place.
    fn new_shards(&mut self) -> Vec<RoundEnd> {
        let ends: Vec<RoundEnd> = (self.job_rounds.iter().copied())
            .filter(|round| !self.reported.contains(round))
            .map(|round| (round, shard_path(&self.plan.dir, round)))
            .filter(|(_, path)| path.is_file())
            .map(|(round, path)| RoundEnd {
                round,
                ended: Ended::Shard(path),
            })
            .collect();
        self.reported.extend(ends.iter().map(|e| e.round));
        ends
    }

    /// Once the job has left the queue: each of its rounds not yet
    /// reported, with its shard or how it ended.
    fn last_ends(&mut self) -> Vec<RoundEnd> {
        let mut ends = self.new_shards();
        let states = final_states(&self.job).unwrap_or_default();
        let left: Vec<u32> = (self.job_rounds.iter().copied())
            .filter(|r| !self.reported.contains(r))
            .collect();
        for round in left {
            // Without accounting, a pending task cancelled before the array
            // was expanded leaves no record: it left the queue without running.
            let state = match (states.get(&round), self.last_seen.get(&round)) {
                (Some(state), _) => state.clone(),
                (None, Some(last)) if last == "PENDING" => "CANCELLED".to_string(),
                _ => "UNKNOWN".to_string(),
            };
            if state != "CANCELLED" {
                eprintln!(
                    "allocscope: round {round} ended {state} without a shard; its log: {}",
                    self.plan.dir.join(format!("round-{round}.out")).display()
                );
            }
            ends.push(RoundEnd {
                round,
                ended: Ended::Lost(state),
            });
        }
        self.reported.extend(ends.iter().map(|e| e.round));
        ends
    }
}

impl Engine for Slurm {
    fn rounds_at_once(&self) -> usize {
        match self.per_round {
            true => 1,
            false => self.plan.plan.rounds as usize,
        }
    }

    fn dry_run(&self) -> anyhow::Result<()> {
        print!("{}", self.script);
        eprintln!(
            "allocscope: dry run: plan {} written; submit with `sbatch{} {}`, then `{}`",
            self.plan.path.display(),
            self.sbatch_args
                .iter()
                .map(|a| format!(" {a}"))
                .collect::<String>(),
            self.script_path.display(),
            self.plan
                .merge_command(&format!("{}/round-*.db", self.plan.dir.display()))
        );
        Ok(())
    }

    /// Submits the whole array (the plan's rounds are the array's tasks),
    /// or, one job per round, the one round given with the configurations
    /// it runs.
    fn start(&mut self, _: &mut Store, rounds: &[Round]) -> anyhow::Result<Started> {
        let plan = &self.plan.plan;
        let (job, line) = match (self.per_round, rounds) {
            (false, _) => {
                let job = submit(&self.script_path, &self.sbatch_args, &[])?;
                let line = format!(
                    "allocscope: plan {}: {} {} {} configurations as Slurm job array {job} \
                     (shards in {})",
                    plan.plan_id,
                    plan.rounds,
                    match plan.command.as_str() {
                        "soak" => "instances of",
                        _ => "rounds x",
                    },
                    plan.configs.len(),
                    self.plan.dir.display()
                );
                (job, line)
            }
            (true, [round]) => {
                let (sbatch, cell) = round_arguments(&self.sbatch_args, round, plan.configs.len());
                let job = submit(&self.script_path, &sbatch, &cell)?;
                let line = format!(
                    "allocscope: plan {}: round {} ({} of {} configurations) as Slurm job {job} \
                     (shards in {})",
                    plan.plan_id,
                    round.index,
                    round.configs.len(),
                    plan.configs.len(),
                    self.plan.dir.display()
                );
                (job, line)
            }
            (true, _) => anyhow::bail!("a job per round takes one round at a time"),
        };
        self.job = job;
        self.job_rounds = rounds.iter().map(|r| r.index).collect();
        self.last_seen = (self.job_rounds.iter())
            .map(|&r| (r, "PENDING".to_string()))
            .collect();
        self.queued_before = usize::MAX;
        self.last_line.clear();
        self.say(&line);
        Ok(Started::Following)
    }

    fn wait(&mut self, _: &mut Store) -> anyhow::Result<Vec<RoundEnd>> {
        if let Some(line) = self.held_line.take() {
            self.say(&line);
        }
        let queued = match queued(&self.job) {
            Ok(queued) => {
                self.failures = 0;
                queued
            }
            Err(e) if self.failures < SQUEUE_RETRIES => {
                self.failures += 1;
                eprintln!("warning: {e}; retrying");
                std::thread::sleep(POLL);
                return Ok(Vec::new());
            }
            Err(e) => return Err(e),
        };
        if queued.is_empty() {
            return Ok(self.last_ends());
        }
        if self
            .cancelled_at
            .is_some_and(|at| at.elapsed() > CANCEL_GRACE)
        {
            eprintln!(
                "warning: tasks of job {} are still in the queue after scancel",
                self.job
            );
            return Ok(self.last_ends());
        }
        self.last_seen
            .extend(queued.iter().map(|(r, s)| (*r, s.clone())));
        let mut ends = Vec::new();
        if queued.len() < self.queued_before {
            ends = self.new_shards();
            self.queued_before = queued.len();
        }
        let line = progress_line(&queued, self.job_rounds.len() as u32);
        if line != self.last_line {
            let said = match (self.per_round, queued.iter().next()) {
                (true, Some((round, state))) => format!(
                    "allocscope: round {round} (job {}): {}",
                    self.job,
                    state.to_lowercase()
                ),
                _ => format!("allocscope: job {}: {line}", self.job),
            };
            if ends.is_empty() {
                self.say(&said);
            } else {
                self.held_line = Some(said);
            }
            self.last_line = line;
        }
        if ends.is_empty() {
            std::thread::sleep(POLL);
        }
        Ok(ends)
    }

    fn cancel(&mut self) -> anyhow::Result<()> {
        let what = match self.per_round {
            true => "Slurm job",
            false => "job array",
        };
        eprintln!(
            "allocscope: interrupted: cancelling {what} {} (scancel)",
            self.job
        );
        slurm("scancel", std::slice::from_ref(&self.job))?;
        self.cancelled_at = Some(Instant::now());
        Ok(())
    }

    fn say(&self, line: &str) {
        if !self.plan.quiet {
            eprintln!("{line}");
        }
    }

    fn shared_dir(&self) -> Option<&Path> {
        Some(&self.plan.dir)
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

/// sbatch's arguments for one round of a per-round job (`--array=K` after
/// the user's, so that it wins) and the cell's (`--configs`, when the round
/// runs fewer than all `configs`).
fn round_arguments(user: &[String], round: &Round, configs: usize) -> (Vec<String>, Vec<String>) {
    let mut sbatch = user.to_vec();
    sbatch.push(format!("--array={}", round.index));
    let cell = match round.configs.len() < configs {
        true => {
            let list: Vec<String> = round.configs.iter().map(usize::to_string).collect();
            vec!["--configs".to_string(), list.join(",")]
        }
        false => Vec::new(),
    };
    (sbatch, cell)
}

/// What the batch script needs.
struct ArrayJob<'a> {
    name: &'a str,
    /// The allocscope binary the nodes run (same path on every node).
    allocscope: &'a Path,
    plan: &'a Path,
    /// Shared directory: shards `round-N.db`, task logs `round-N.out`.
    dir: &'a Path,
    /// The working directory of the tasks (where compare was started).
    workdir: &'a Path,
    /// The array's tasks; `None` for a job per round, whose sbatch line
    /// gives `--array=K`.
    rounds: Option<u32>,
    exclusive: bool,
    /// Each task is one instance of a soak, not a round.
    soak: bool,
}

/// The shard a round writes.
fn shard_path(dir: &Path, round: u32) -> PathBuf {
    dir.join(format!("round-{round}.db"))
}

/// The batch script; `--slurm-arg` options go on sbatch's command line,
/// where they override these directives.
fn batch_script(job: &ArrayJob) -> String {
    let quote = |p: &Path| shell_quote(&p.to_string_lossy());
    let mut script = String::from("#!/bin/sh\n");
    script.push_str(&format!("#SBATCH --job-name={}\n", job.name));
    if let Some(rounds) = job.rounds {
        script.push_str(&format!("#SBATCH --array=0-{}\n", rounds.saturating_sub(1)));
    }
    // Sharing needs asking for where a partition shares nodes only on
    // request (`OverSubscribe=YES`); elsewhere the partition decides.
    script.push_str(match job.exclusive {
        true => "#SBATCH --exclusive\n",
        false => "#SBATCH --oversubscribe\n",
    });
    script.push_str("#SBATCH --export=ALL\n");
    script.push_str("#SBATCH --nodes=1\n");
    script.push_str(&format!("#SBATCH --chdir={}\n", job.workdir.display()));
    script.push_str(&format!(
        "#SBATCH --output={}\n",
        job.dir.join("round-%a.out").display()
    ));
    script.push_str(match job.rounds {
        Some(_) if job.soak => {
            "# One soak instance per task: its configuration's replica, on this node.\n"
        }
        Some(_) => "# One round per task: every configuration once, interleaved, on this node.\n",
        None => {
            "# One round per job (sbatch --array=K job.sh [--configs I,J,...]): the\n\
             # configurations still open once each, interleaved, on this node.\n"
        }
    });
    script.push_str(&format!(
        "exec {} cell --plan {} --round \"$SLURM_ARRAY_TASK_ID\" --out {}/round-\"$SLURM_ARRAY_TASK_ID\".db \"$@\"\n",
        quote(job.allocscope),
        quote(job.plan),
        quote(job.dir)
    ));
    script
}

fn shell_quote(text: &str) -> String {
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:=,".contains(c))
    {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// Runs one Slurm command; its stdout, or why it failed.
fn slurm(program: &str, args: &[String]) -> anyhow::Result<String> {
    let output = Command::new(program).args(args).output().map_err(|e| {
        UsageError::from(ClusterError::NoSlurm {
            program: program.to_string(),
            reason: e.to_string(),
        })
    })?;
    if !output.status.success() {
        anyhow::bail!(
            "{program} {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Submits the script with sbatch's `extra` options and the script's own
/// arguments `script_args` (handed to the cell); returns the job id.
fn submit(script: &Path, extra: &[String], script_args: &[String]) -> anyhow::Result<String> {
    let mut args = vec!["--parsable".to_string()];
    args.extend(extra.iter().cloned());
    args.push(script.to_string_lossy().into_owned());
    args.extend(script_args.iter().cloned());
    let out = slurm("sbatch", &args).context("submitting the job")?;
    // `--parsable` prints `ID` or `ID;CLUSTER`.
    let id = out.trim().split(';').next().unwrap_or_default().to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        anyhow::bail!("sbatch printed '{}' instead of a job id", out.trim());
    }
    Ok(id)
}

/// The array's tasks still known to squeue: round -> state (PENDING,
/// RUNNING, ...). Empty once every task has left the queue.
fn queued(job: &str) -> anyhow::Result<BTreeMap<u32, String>> {
    let args = ["-h", "-r", "-j", job, "-o", "%K %T"].map(String::from);
    match slurm("squeue", &args) {
        Ok(text) => Ok(parse_task_states(&text)),
        // squeue refuses a job id it no longer knows: every task has ended.
        Err(e) if e.to_string().contains("Invalid job id") => Ok(BTreeMap::new()),
        Err(e) => Err(e),
    }
}

/// Lines `ROUND STATE` (squeue) or `JOBID_ROUND|STATE` (sacct).
fn parse_task_states(text: &str) -> BTreeMap<u32, String> {
    text.lines()
        .filter_map(|line| {
            let (task, state) = line.trim().split_once([' ', '|'])?;
            let round = task.rsplit('_').next()?.parse().ok()?;
            let state = state.split_whitespace().next()?.to_string();
            Some((round, state))
        })
        .collect()
}

/// How each task ended: sacct where accounting is on, else scontrol (which
/// keeps finished jobs for MinJobAge, 300 s by default).
fn final_states(job: &str) -> anyhow::Result<BTreeMap<u32, String>> {
    let sacct = ["-n", "-P", "-X", "-j", job, "--format=JobID,State"].map(String::from);
    if let Ok(text) = slurm("sacct", &sacct) {
        let states = parse_task_states(&text);
        if !states.is_empty() {
            return Ok(states);
        }
    }
    let text = slurm("scontrol", &["-o", "show", "job", job].map(String::from))?;
    Ok(parse_scontrol(&text))
}

/// `scontrol -o show job` prints one line per task with `ArrayTaskId=N`
/// and `JobState=STATE` (a still-pending range shows as `ArrayTaskId=2-3`).
fn parse_scontrol(text: &str) -> BTreeMap<u32, String> {
    let field = |line: &str, key: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key).map(str::to_string))
    };
    text.lines()
        .filter_map(|line| {
            let round = field(line, "ArrayTaskId=")?.parse().ok()?;
            Some((round, field(line, "JobState=")?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_runs_one_round_per_task_on_an_exclusive_node() {
        let job = ArrayJob {
            name: "allocscope-abc",
            allocscope: Path::new("/opt/allocscope"),
            plan: Path::new("/shared/p/plan.json"),
            dir: Path::new("/shared/p"),
            workdir: Path::new("/home/u"),
            rounds: Some(4),
            exclusive: true,
            soak: false,
        };
        let script = batch_script(&job);
        assert!(script.contains("#SBATCH --array=0-3\n"), "{script}");
        assert!(script.contains("#SBATCH --exclusive\n"));
        assert!(script.contains("#SBATCH --export=ALL\n"));
        assert!(script.contains(
            "exec /opt/allocscope cell --plan /shared/p/plan.json --round \"$SLURM_ARRAY_TASK_ID\""
        ));
        let shared = batch_script(&ArrayJob {
            exclusive: false,
            ..job
        });
        assert!(!shared.contains("--exclusive"));
        assert!(shared.contains("#SBATCH --oversubscribe\n"));
        // A job per round: no array in the script, the sbatch line gives
        // the round and the cell its configurations.
        let per_round = batch_script(&ArrayJob {
            rounds: None,
            ..job
        });
        assert!(!per_round.contains("#SBATCH --array"), "{per_round}");
        assert!(per_round.contains(".db \"$@\"\n"), "{per_round}");
    }

    #[test]
    fn a_round_of_a_job_per_round_names_its_task_and_the_configurations_left_open() {
        let user = vec!["--partition=test".to_string()];
        let round = Round {
            index: 3,
            configs: vec![0, 2, 5],
        };
        let (sbatch, cell) = round_arguments(&user, &round, 6);
        assert_eq!(sbatch, ["--partition=test", "--array=3"]);
        assert_eq!(cell, ["--configs", "0,2,5"]);
        let every = Round {
            index: 0,
            configs: (0..6).collect(),
        };
        assert_eq!(round_arguments(&[], &every, 6).1, Vec::<String>::new());
    }

    #[test]
    fn the_progress_line_counts_done_rounds_and_queued_states() {
        let queued = BTreeMap::from([(2, "RUNNING".to_string()), (3, "PENDING".to_string())]);
        assert_eq!(
            progress_line(&queued, 4),
            "2 of 4 rounds ended, 1 pending, 1 running"
        );
    }

    #[test]
    fn task_states_are_read_from_squeue_sacct_and_scontrol() {
        let squeue = parse_task_states("0 RUNNING\n1 PENDING\n");
        assert_eq!(squeue.get(&1).map(String::as_str), Some("PENDING"));
        let sacct = parse_task_states("12_0|COMPLETED\n12_1|CANCELLED by 0\n12_[2-3]|PENDING\n");
        assert_eq!(sacct.get(&1).map(String::as_str), Some("CANCELLED"));
        assert_eq!(sacct.len(), 2);
        let scontrol = parse_scontrol(
            "JobId=14 ArrayJobId=12 ArrayTaskId=2 JobName=x JobState=FAILED Reason=None\n\
             JobId=12 ArrayJobId=12 ArrayTaskId=3-4 JobState=PENDING\n",
        );
        assert_eq!(scontrol.len(), 1);
        assert_eq!(scontrol.get(&2).map(String::as_str), Some("FAILED"));
    }
}
