//! The Slurm engine: one job array, one task per round (`sbatch --array`),
//! `--exclusive` by default so no other job shares the node during a round,
//! `--export=ALL` so the environment (LD_PRELOAD, SLURM_CONF, PATH) reaches
//! the nodes. It follows the tasks with `squeue`, reads how each ended from
//! `sacct` (or `scontrol` where accounting is disabled), and cancels the
//! array with `scancel`. Only the Slurm commands are spoken to, never the
//! daemons.

use crate::usage_error::UsageError;
use anyhow::Context;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the batch script needs.
pub struct ArrayJob<'a> {
    pub name: &'a str,
    /// The allocscope binary the nodes run (same path on every node).
    pub allocscope: &'a Path,
    pub plan: &'a Path,
    /// Shared directory: shards `round-N.db`, task logs `round-N.out`.
    pub dir: &'a Path,
    /// The working directory of the tasks (where compare was started).
    pub workdir: &'a Path,
    pub rounds: u32,
    pub exclusive: bool,
}

/// The shard a round writes.
pub fn shard_path(dir: &Path, round: u32) -> PathBuf {
    dir.join(format!("round-{round}.db"))
}

/// The batch script; `--slurm-arg` options go on sbatch's command line,
/// where they override these directives.
pub fn batch_script(job: &ArrayJob) -> String {
    let quote = |p: &Path| shell_quote(&p.to_string_lossy());
    let mut script = String::from("#!/bin/sh\n");
    script.push_str(&format!("#SBATCH --job-name={}\n", job.name));
    script.push_str(&format!(
        "#SBATCH --array=0-{}\n",
        job.rounds.saturating_sub(1)
    ));
    if job.exclusive {
        script.push_str("#SBATCH --exclusive\n");
    }
    script.push_str("#SBATCH --export=ALL\n");
    script.push_str("#SBATCH --nodes=1\n");
    script.push_str(&format!("#SBATCH --chdir={}\n", job.workdir.display()));
    script.push_str(&format!(
        "#SBATCH --output={}\n",
        job.dir.join("round-%a.out").display()
    ));
    script.push_str("# One round per task: every configuration once, interleaved, on this node.\n");
    script.push_str(&format!(
        "exec {} cell --plan {} --round \"$SLURM_ARRAY_TASK_ID\" --out {}/round-\"$SLURM_ARRAY_TASK_ID\".db\n",
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
        UsageError::Cluster(format!(
            "cannot run {program} ({e}); --executor slurm needs the Slurm client commands \
             on the PATH (package slurm-client)"
        ))
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

/// Submits the script; returns the array's job id.
pub fn submit(script: &Path, extra: &[String]) -> anyhow::Result<String> {
    let mut args = vec!["--parsable".to_string()];
    args.extend(extra.iter().cloned());
    args.push(script.to_string_lossy().into_owned());
    let out = slurm("sbatch", &args).context("submitting the job array")?;
    // `--parsable` prints `ID` or `ID;CLUSTER`.
    let id = out.trim().split(';').next().unwrap_or_default().to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        anyhow::bail!("sbatch printed '{}' instead of a job id", out.trim());
    }
    Ok(id)
}

/// The array's tasks still known to squeue: round -> state (PENDING,
/// RUNNING, ...). Empty once every task has left the queue.
pub fn queued(job: &str) -> anyhow::Result<BTreeMap<u32, String>> {
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
pub fn final_states(job: &str) -> anyhow::Result<BTreeMap<u32, String>> {
    let sacct = ["-n", "-P", "-X", "-j", job, "--format=JobID,State"].map(String::from);
    if let Ok(text) = slurm("sacct", &sacct) {
        let states = parse_task_states(&text);
        if !states.is_empty() {
            return Ok(states);
        }
    }
    let text = slurm(
        "scontrol",
        &["-o".into(), "show".into(), "job".into(), job.into()],
    )?;
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

/// Cancels every task of the array that has not ended.
pub fn cancel(job: &str) -> anyhow::Result<()> {
    slurm("scancel", &[job.to_string()]).map(|_| ())
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
            rounds: 4,
            exclusive: true,
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
