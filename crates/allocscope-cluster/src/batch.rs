//! What the engines that submit rounds as jobs share: `--dry-run`,
//! `--shards DIR`, and the plan they write there before submitting (the
//! plan file the nodes read, in a directory of its own per plan).

use super::plan_file::ClusterPlan;
use anyhow::Context;
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The flags of every engine that submits jobs.
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize)]
pub struct BatchFlags {
    /// Write the plan and print the batch script or manifest; submit nothing
    /// (with --runs N: adaptive rounds cannot be planned ahead).
    #[arg(long)]
    pub dry_run: bool,
    /// Where the plan, batch script and shards go (nodes must share it);
    /// default: allocscope-cluster/ beside the store.
    #[arg(long, value_name = "DIR")]
    pub shards: Option<PathBuf>,
}

/// What a plan is made of.
pub struct JobRequest {
    /// One round per measured repetition.
    pub rounds: u32,
    /// The configuration names, in order.
    pub configs: Vec<String>,
    /// The store the shards are merged into.
    pub db: PathBuf,
    /// The `compare` arguments the nodes re-run (the engine flags removed).
    pub node_arguments: Vec<String>,
    pub quiet: bool,
    /// What the nodes run `node_arguments` as: `compare`, or `soak` (each
    /// round one instance).
    pub command: &'static str,
    /// The rounds are adaptive (`--runs auto`, tune's race): each round's
    /// configurations depend on the rounds before, so they run one at a time.
    pub adaptive: bool,
}

/// A plan written into its own directory, which the nodes share.
pub(crate) struct BatchPlan {
    pub plan: ClusterPlan,
    /// `plan.json`.
    pub path: PathBuf,
    /// The plan's directory: shards `round-N.db`, the job files.
    pub dir: PathBuf,
    pub db: PathBuf,
    pub quiet: bool,
}

impl BatchPlan {
    /// Writes a new plan under `--shards` (default: beside the store).
    pub fn write(flags: &BatchFlags, job: &JobRequest) -> anyhow::Result<BatchPlan> {
        let plan = ClusterPlan::new(
            humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            job.rounds,
            job.configs.clone(),
            job.node_arguments.clone(),
            job.command,
        );
        let base = match &flags.shards {
            Some(dir) => dir.clone(),
            None => beside(&job.db).join("allocscope-cluster"),
        };
        let dir = base.join(plan.short_id());
        std::fs::create_dir_all(&dir).with_context(|| format!("creating '{}'", dir.display()))?;
        let dir = dir.canonicalize()?;
        let path = dir.join("plan.json");
        plan.write(&path)?;
        Ok(BatchPlan {
            plan,
            path,
            dir,
            db: job.db.clone(),
            quiet: job.quiet,
        })
    }

    /// The command that merges the shards by hand.
    pub(crate) fn merge_command(&self, shards: &str) -> String {
        format!("allocscope merge {shards} --db {}", self.db.display())
    }
}

/// The store's directory (`.` for a bare file name).
fn beside(db: &Path) -> PathBuf {
    match db.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
