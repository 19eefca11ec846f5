//! Shards: the small store file one round writes (`allocscope cell`), with
//! the plan id, the round and the node's CPU model in its experiment's
//! environment beside the usual host facts. Opening one checks it before
//! anything is merged: a file of a newer allocscope, a store that is not a
//! shard, or a round that did not finish are refused with the fix. A cell
//! writes its shard under a temporary name (`with_suffix`), cleared first
//! of what a cell killed earlier left (`remove_store_files`).

use super::facts::RoundFacts;
use allocscope_core::model::StoredExperiment;
use allocscope_core::shard_error::ShardError;
use allocscope_core::store::{schema_version_of, Store, SCHEMA_VERSION};
use allocscope_core::usage_error::UsageError;
use std::path::{Path, PathBuf};

/// Environment keys of a shard's experiment (the plan id is also kept on
/// the merged experiment, which is how a second merge finds it).
pub const PLAN_ID: &str = "plan_id";
pub const ROUND: &str = "round";
pub const CPU_MODEL: &str = "cpu_model";

pub struct Shard {
    pub path: PathBuf,
    pub plan_id: String,
    pub round: u32,
    pub experiment: StoredExperiment,
    pub facts: RoundFacts,
    /// The judge's settings the cell stored (`judging::is_judging_key`), which the
    /// merged experiment keeps so that `report` judges as planned.
    pub judging: Vec<(String, String)>,
}

impl Shard {
    pub fn open(path: &Path) -> anyhow::Result<Shard> {
        if !path.is_file() {
            return Err(UsageError::from(ShardError::ShardMissing(path.into())).into());
        }
        let version = schema_version_of(path)
            .map_err(|_| UsageError::from(ShardError::NotSqlite(path.into())))?;
        if version > SCHEMA_VERSION {
            return Err(UsageError::from(ShardError::NewerSchema {
                path: path.into(),
                version,
                reads: SCHEMA_VERSION,
            })
            .into());
        }
        let store = Store::open(path)?;
        let experiment = store
            .load_experiment(None)
            .map_err(|_| UsageError::from(ShardError::NoExperiment(path.into())))?;
        let environment = store.load_environment(experiment.id)?;
        let value = |key: &str| {
            environment
                .iter()
                .find(|(k, _)| k == key)
                .and_then(|(_, v)| v.clone())
        };
        let not_a_shard = || UsageError::from(ShardError::NoPlanId(path.into()));
        let plan_id = value(PLAN_ID).ok_or_else(not_a_shard)?;
        let round = value(ROUND)
            .and_then(|r| r.parse::<u32>().ok())
            .ok_or_else(not_a_shard)?;
        if experiment.status != "complete" {
            return Err(UsageError::from(ShardError::Unfinished {
                path: path.into(),
                round,
                status: experiment.status,
            })
            .into());
        }
        let facts = RoundFacts::of_shard(round, &experiment, value(CPU_MODEL).unwrap_or_default());
        let judging = environment
            .iter()
            .filter(|(k, _)| allocscope_core::judging::is_judging_key(k))
            .filter_map(|(k, v)| Some((k.clone(), v.clone()?)))
            .collect();
        Ok(Shard {
            path: path.to_path_buf(),
            plan_id,
            round,
            experiment,
            facts,
            judging,
        })
    }
}

pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// A store file and its WAL companions (left by a cell killed earlier).
pub fn remove_store_files(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        // Absent files are the usual case; anything else shows at Store::open.
        let _ = std::fs::remove_file(with_suffix(path, suffix));
    }
}
