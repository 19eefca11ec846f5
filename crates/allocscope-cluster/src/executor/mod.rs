//! `--executor`: the engine chosen once, from the `Executor` enum, with
//! every engine's flags declared once (`EngineArgs` flattens each engine's
//! own; the nodes' arguments leave out exactly these, read from these
//! definitions). The engines that submit rounds as jobs live beside this
//! file, one file each (`slurm.rs`, `k8s.rs`). Adding an engine is its file
//! here (its flags, `impl Engine`) plus one arm in this one: its `mod`
//! line, its variant, its flags and its line in `engine` and `check`.

mod k8s;
mod slurm;

use super::batch::{BatchFlags, BatchPlan, JobRequest};
use crate::error::ClusterError;
use allocscope_core::usage_error::UsageError;
use allocscope_rounds::engine::Engine;
use clap::{Args, ValueEnum};
use k8s::{K8s, K8sFlags};
use serde::Serialize;
use slurm::{Slurm, SlurmFlags};
use std::ffi::OsString;

/// Where the rounds run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum, Serialize)]
pub enum Executor {
    /// Here, one round after the other.
    #[default]
    Local,
    /// One Slurm job-array task per round (a job per round when adaptive).
    Slurm,
    /// A Kubernetes Indexed Job, one completion per round.
    K8s,
}

/// `compare --executor` and every engine's flags (see docs/cluster.md).
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize)]
#[command(next_help_heading = "Cluster (--executor)")]
pub struct EngineArgs {
    /// Where the rounds run: local (default), slurm (one job-array task per
    /// round; with --runs auto, and for tune, one job per round) or k8s (an
    /// Indexed Job, one completion per round; --runs N only).
    #[arg(
        long,
        value_name = "ENGINE",
        value_enum,
        default_value_t,
        hide_possible_values = true
    )]
    pub executor: Executor,
    #[command(flatten)]
    pub batch: BatchFlags,
    #[command(flatten)]
    pub slurm: SlurmFlags,
    #[command(flatten)]
    pub k8s: K8sFlags,
}

impl EngineArgs {
    /// Refuses a flag of another engine (it would be ignored), an engine's
    /// missing flag, and adaptive rounds (`runs_auto`: `--runs auto`, tune)
    /// where they cannot run: on Kubernetes, and with `--dry-run`.
    pub fn check(&self, runs_auto: bool) -> Result<(), UsageError> {
        for &other in Executor::value_variants() {
            if let Some(flag) = self
                .own_flags(other)
                .first()
                .filter(|_| other != self.executor)
            {
                return Err(ClusterError::OtherEngineFlag {
                    flag: flag.clone(),
                    executor: name(other),
                }
                .into());
            }
        }
        match self.executor {
            Executor::Local => match given(&self.batch).first() {
                Some(flag) => Err(ClusterError::BatchFlagHere(flag.clone())),
                None => Ok(()),
            },
            Executor::Slurm => Ok(()),
            Executor::K8s => self.k8s.check(),
        }?;
        if runs_auto && self.executor == Executor::K8s {
            return Err(ClusterError::AdaptiveOnK8s.into());
        }
        if runs_auto && self.batch.dry_run {
            return Err(ClusterError::AdaptiveDryRun.into());
        }
        Ok(())
    }

    /// The flags given of those `executor` has of its own.
    fn own_flags(&self, executor: Executor) -> Vec<String> {
        match executor {
            Executor::Local => Vec::new(),
            Executor::Slurm => given(&self.slurm),
            Executor::K8s => given(&self.k8s),
        }
    }

    /// The chosen engine. Rounds run here need the binary's settings, so
    /// the local engine is handed in; the others write the plan `job`
    /// describes before submitting (Slurm a job per round when it is
    /// adaptive).
    pub fn engine<'a>(
        &self,
        local: Box<dyn Engine + 'a>,
        job: impl FnOnce() -> anyhow::Result<JobRequest>,
    ) -> anyhow::Result<Box<dyn Engine + 'a>> {
        Ok(self.submitter(job)?.unwrap_or(local))
    }

    /// The engine that submits jobs, having written the plan `job`
    /// describes; `None` to run here.
    pub fn submitter(
        &self,
        job: impl FnOnce() -> anyhow::Result<JobRequest>,
    ) -> anyhow::Result<Option<Box<dyn Engine>>> {
        // Every engine named: a new one does not compile until it has its arm.
        let submitted = |job: &JobRequest| BatchPlan::write(&self.batch, job);
        Ok(match self.executor {
            Executor::Local => None,
            Executor::Slurm => {
                let job = job()?;
                Some(Box::new(Slurm::new(
                    &self.slurm,
                    submitted(&job)?,
                    job.adaptive,
                )?))
            }
            Executor::K8s => Some(Box::new(K8s::new(&self.k8s, submitted(&job()?)?)?)),
        })
    }
}

/// The `compare` arguments the nodes re-run: this process's arguments
/// `argv` after the `command` word (`compare`, `tune`), less the engine
/// flags and `also` (each with whether it takes a value; `-a` style short
/// flags too).
pub fn node_arguments(
    argv: &[OsString],
    command: &str,
    also: &[(String, bool)],
) -> anyhow::Result<Vec<String>> {
    let mut dropped = flag_words();
    dropped.extend_from_slice(also);
    super::plan_file::node_arguments(argv, command, &dropped)
}

/// `slurm`, as typed.
fn name(executor: Executor) -> String {
    executor
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

/// Every long flag of `command` as typed (`--image`), and whether it takes
/// a value.
pub fn long_flags(command: &clap::Command) -> Vec<(String, bool)> {
    (command.get_arguments())
        .filter_map(|arg| {
            Some((
                format!("--{}", arg.get_long()?),
                arg.get_action().takes_values(),
            ))
        })
        .collect()
}

/// Every flag of `EngineArgs`, as `long_flags` gives them.
fn flag_words() -> Vec<(String, bool)> {
    long_flags(&EngineArgs::augment_args(clap::Command::new("compare")))
}

/// The flags of one engine's `flags` that differ from their defaults, as
/// typed: each field is its flag's id, so the definitions name them.
fn given<T: Args + Serialize + Default>(flags: &T) -> Vec<String> {
    let (Ok(now), Ok(default)) = (
        serde_json::to_value(flags),
        serde_json::to_value(T::default()),
    ) else {
        return Vec::new();
    };
    T::augment_args(clap::Command::new("flags"))
        .get_arguments()
        .filter(|arg| now.get(arg.get_id().as_str()) != default.get(arg.get_id().as_str()))
        .filter_map(|arg| arg.get_long().map(|long| format!("--{long}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(words: &[&str]) -> EngineArgs {
        #[derive(clap::Parser)]
        struct Line {
            #[command(flatten)]
            engine: EngineArgs,
        }
        use clap::Parser;
        let line = Line::try_parse_from(std::iter::once("compare").chain(words.iter().copied()));
        line.map(|l| l.engine)
            .unwrap_or_else(|e| panic!("{words:?}: {e}"))
    }

    fn refusal(words: &[&str], auto: bool) -> String {
        parsed(words)
            .check(auto)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn every_engine_flag_is_a_node_argument_to_drop() {
        let words: Vec<String> = flag_words().into_iter().map(|(w, _)| w).collect();
        for flag in [
            "--executor",
            "--dry-run",
            "--shards",
            "--slurm-arg",
            "--shared-node",
            "--image",
            "--k8s-volume-claim",
        ] {
            assert!(words.iter().any(|w| w == flag), "{flag} not in {words:?}");
        }
        let takes_value = |flag: &str| flag_words().into_iter().find(|(w, _)| w == flag);
        assert_eq!(takes_value("--image").map(|f| f.1), Some(true));
        assert_eq!(takes_value("--dry-run").map(|f| f.1), Some(false));
    }

    #[test]
    fn a_flag_of_another_engine_is_refused_by_its_name() {
        assert!(refusal(&["--dry-run"], false).contains("--dry-run applies only with --executor"));
        assert!(refusal(&["--executor", "slurm", "--image", "x"], false)
            .contains("--image applies only with --executor k8s"));
        assert!(refusal(&["--shared-node"], false)
            .contains("--shared-node applies only with --executor slurm"));
        assert!(
            refusal(&["--executor", "k8s", "--image", "x"], false).contains("--k8s-volume-claim")
        );
        assert_eq!(refusal(&["--executor", "slurm"], true), "");
        let k8s = refusal(
            &[
                "--executor",
                "k8s",
                "--image",
                "x",
                "--k8s-volume-claim",
                "c",
            ],
            true,
        );
        assert!(k8s.contains("cannot run adaptive rounds"), "{k8s}");
        assert!(k8s.contains("use --executor slurm"), "{k8s}");
        let dry = refusal(&["--executor", "slurm", "--dry-run"], true);
        assert!(
            dry.contains("--dry-run cannot plan adaptive rounds"),
            "{dry}"
        );
        assert_eq!(
            refusal(
                &["--executor", "slurm", "--shared-node", "--dry-run"],
                false
            ),
            ""
        );
        assert_eq!(refusal(&[], true), "");
    }
}
