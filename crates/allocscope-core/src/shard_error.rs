//! The user's mistakes with a shard (a store `allocscope cell` wrote) and
//! its merge, each message naming the fix; a `UsageError` (exit 2).

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ShardError {
    #[error("shard '{}' does not exist", .0.display())]
    ShardMissing(PathBuf),
    #[error("'{}' is not a shard (not an SQLite store)", .0.display())]
    NotSqlite(PathBuf),
    #[error(
        "shard '{}' has store schema {version}, newer than the {reads} this allocscope reads; merge with the allocscope that wrote it, or upgrade",
        .path.display()
    )]
    NewerSchema {
        path: PathBuf,
        version: u32,
        reads: u32,
    },
    #[error("'{}' holds no experiment; give the shards `allocscope cell` wrote", .0.display())]
    NoExperiment(PathBuf),
    #[error(
        "'{}' is a store, not a shard of a cluster plan (it has no plan id); merge only files `allocscope cell` wrote",
        .0.display()
    )]
    NoPlanId(PathBuf),
    #[error(
        "shard '{}' holds round {round} {status} (not finished); run its cell again",
        .path.display()
    )]
    Unfinished {
        path: PathBuf,
        round: u32,
        status: String,
    },
    #[error(
        "shard '{}' belongs to plan {plan}, not to plan {expected} of {source_}; merge each plan's shards in a merge of their own",
        .path.display()
    )]
    ForeignPlan {
        path: PathBuf,
        plan: String,
        expected: String,
        /// `the --plan file`, or the first shard's name in quotes.
        source_: String,
    },
    #[error(
        "shard '{}' has configurations {shard:?} but experiment {experiment_id} has {experiment:?}; it was not written for this plan",
        .path.display()
    )]
    OtherConfigs {
        path: PathBuf,
        shard: Vec<String>,
        experiment_id: i64,
        experiment: Vec<String>,
    },
}
