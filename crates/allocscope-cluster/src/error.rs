//! The user's mistakes with a cluster plan or an engine's flags,
//! each message naming the fix. They reach `main` as usage errors (exit 2)
//! through `FeatureError`.

use allocscope_core::usage_error::FeatureError;
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ClusterError {
    #[error("'{}' is not a plan file: {reason}", .path.display())]
    NotAPlan { path: PathBuf, reason: String },
    #[error(
        "plan '{}' has format {format}, but this allocscope reads format {reads}; run the same allocscope version on every node",
        .path.display()
    )]
    NewerPlan {
        path: PathBuf,
        format: u64,
        reads: u32,
    },
    #[error("argument {0} is not UTF-8; a cluster plan keeps its arguments as text")]
    NotUtf8(String),
    #[error("{flag} applies only with --executor {executor}")]
    OtherEngineFlag { flag: String, executor: String },
    #[error("{0} applies only with --executor slurm or k8s")]
    BatchFlagHere(String),
    #[error("--executor k8s cannot run adaptive rounds (--runs auto, tune): its shards are on a volume this process cannot read between rounds to choose the next; use --executor slurm, or leave out --executor to run here")]
    AdaptiveOnK8s,
    #[error("--dry-run cannot plan adaptive rounds (--runs auto, tune): each round's configurations depend on the rounds before; leave out --dry-run (or, with compare, give --runs N to see the job array)")]
    AdaptiveDryRun,
    #[error("--executor k8s needs --image IMAGE (holding allocscope and the program) and --k8s-volume-claim NAME (the PersistentVolumeClaim the pods write shards to)")]
    K8sFlagsMissing,
    #[error("cannot run {program} ({reason}); --executor slurm needs the Slurm client commands on the PATH (package slurm-client)")]
    NoSlurm { program: String, reason: String },
    #[error("the plan lists configurations {plan:?} but this node resolves its arguments to {resolved:?}; install the same allocators on every node")]
    ConfigsDiffer {
        plan: Vec<String>,
        resolved: Vec<String>,
    },
    #[error("--configs names configuration {index}, but the plan has {count} (0 to {})", .count.saturating_sub(1))]
    ConfigOutside { index: usize, count: usize },
    #[error(
        "plan '{}' has arguments this allocscope does not accept ({reason}); run the same allocscope version on every node",
        .path.display()
    )]
    PlanArguments { path: PathBuf, reason: String },
    #[error("--round {round} is outside plan {plan} (rounds 0 to {})", .rounds.saturating_sub(1))]
    RoundOutside {
        round: u32,
        plan: String,
        rounds: u32,
    },
    #[error("--configs '{0}' is not a list of indices; give the indices of the plan's configurations to run, from 0, separated by commas (e.g. --configs 0,3,5)")]
    NotIndices(String),
    #[error("--configs '{0}' names a configuration twice; give the indices of the plan's configurations to run, from 0, separated by commas (e.g. --configs 0,3,5)")]
    IndexTwice(String),
}

impl FeatureError for ClusterError {}
