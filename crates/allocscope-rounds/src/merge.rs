//! Merging shards into the store as one experiment, through the store's
//! record-level API only: the experiment is created from the first shard
//! (its arguments, configurations and host), each round's runs are added
//! with their samples and markers under the configurations of the same
//! names (a round of an adaptive plan runs only those still open), and the
//! round's node facts are kept in the environment as `round.N`. A round already merged is skipped, so
//! merging the same shard twice adds nothing.

use super::facts::{RoundFacts, MERGED};
use super::shard::{Shard, PLAN_ID};
use allocscope_core::shard_error::ShardError;
use allocscope_core::store::Store;
use allocscope_core::usage_error::UsageError;
use anyhow::Context;

#[derive(Debug, Default)]
pub struct Merged {
    pub experiment_id: i64,
    /// Rounds whose runs this merge added.
    pub added: Vec<u32>,
    /// Rounds that were already in the experiment.
    pub skipped: Vec<u32>,
}

/// All shards must carry one plan id (and `expected`'s, when given).
pub fn check_one_plan(shards: &[Shard], expected: Option<&str>) -> Result<(), UsageError> {
    let Some(first) = shards.first() else {
        return Ok(());
    };
    let (plan, source) = match expected {
        Some(plan) => (plan, "the --plan file".to_string()),
        None => (
            first.plan_id.as_str(),
            format!("'{}'", first.path.display()),
        ),
    };
    match shards.iter().find(|s| s.plan_id != plan) {
        Some(foreign) => Err(ShardError::ForeignPlan {
            path: foreign.path.clone(),
            plan: foreign.plan_id.clone(),
            expected: plan.to_string(),
            source_: source,
        }
        .into()),
        None => Ok(()),
    }
}

/// The experiment of `plan_id` in `store`, if a merge created it.
pub(crate) fn experiment_of_plan(store: &Store, plan_id: &str) -> anyhow::Result<Option<i64>> {
    store.find_experiment_by_environment(PLAN_ID, plan_id)
}

/// Adds the shards' rounds to their plan's experiment (created by the first
/// merge). The experiment is left `running`; the caller finishes it.
pub fn merge_shards(store: &mut Store, shards: &[Shard]) -> anyhow::Result<Merged> {
    let Some(first) = shards.first() else {
        anyhow::bail!("no shard to merge");
    };
    let experiment_id = match experiment_of_plan(store, &first.plan_id)? {
        Some(id) => id,
        None => {
            let configs: Vec<_> = first
                .experiment
                .configs
                .iter()
                .map(|c| c.config.clone())
                .collect();
            let (id, _) = store.begin_experiment(&first.experiment.info, &configs)?;
            store.set_environment(id, PLAN_ID, &first.plan_id)?;
            for (key, value) in &first.judging {
                store.set_environment(id, key, value)?;
            }
            id
        }
    };
    let target = store.load_experiment(Some(experiment_id))?;
    let mut merged: Vec<u32> = rounds_of(store, experiment_id)?
        .into_iter()
        .filter(|f| f.state == MERGED)
        .map(|f| f.round)
        .collect();
    let mut outcome = Merged {
        experiment_id,
        ..Merged::default()
    };
    for shard in shards {
        if merged.contains(&shard.round) {
            outcome.skipped.push(shard.round);
            continue;
        }
        for (config, target_id) in placed(shard, &target, experiment_id)? {
            for run in &config.runs {
                store
                    .add_run(target_id, &run.record)
                    .with_context(|| format!("merging '{}'", shard.path.display()))?;
            }
        }
        set_round(store, experiment_id, &shard.facts)?;
        merged.push(shard.round);
        outcome.added.push(shard.round);
    }
    Ok(outcome)
}

/// Each of the shard's configurations with the experiment's configuration
/// of the same name, where its runs go: by name, so a round that ran some
/// of the plan's configurations (a shard with fewer, or with some that have
/// no runs) puts its runs under the right ones. A name the experiment lacks
/// means the shard is of another plan's arguments.
fn placed<'s>(
    shard: &'s Shard,
    target: &allocscope_core::model::StoredExperiment,
    experiment_id: i64,
) -> Result<Vec<(&'s allocscope_core::model::StoredConfig, i64)>, UsageError> {
    let names = |e: &allocscope_core::model::StoredExperiment| -> Vec<String> {
        e.configs.iter().map(|c| c.config.name.clone()).collect()
    };
    shard
        .experiment
        .configs
        .iter()
        .map(|config| {
            let found = target
                .configs
                .iter()
                .find(|t| t.config.name == config.config.name);
            found.map(|t| (config, t.id)).ok_or_else(|| {
                ShardError::OtherConfigs {
                    path: shard.path.clone(),
                    shard: names(&shard.experiment),
                    experiment_id,
                    experiment: names(target),
                }
                .into()
            })
        })
        .collect()
}

/// Records a round that left no shard, with the engine's state for it.
pub(crate) fn record_missing_round(
    store: &mut Store,
    experiment_id: i64,
    round: u32,
    state: &str,
) -> anyhow::Result<()> {
    let merged = rounds_of(store, experiment_id)?
        .iter()
        .any(|f| f.round == round && f.state == MERGED);
    if merged {
        return Ok(());
    }
    let facts = RoundFacts {
        round,
        state: state.to_string(),
        ..RoundFacts::default()
    };
    set_round(store, experiment_id, &facts)
}

fn set_round(store: &mut Store, experiment_id: i64, facts: &RoundFacts) -> anyhow::Result<()> {
    store.set_environment(
        experiment_id,
        &format!("round.{}", facts.round),
        &serde_json::to_string(facts)?,
    )
}

/// Every round recorded for the experiment, merged or not, by round.
pub fn rounds_of(store: &Store, experiment_id: i64) -> anyhow::Result<Vec<RoundFacts>> {
    let mut rounds: Vec<RoundFacts> = store
        .load_environment(experiment_id)?
        .into_iter()
        .filter(|(key, _)| key.starts_with("round."))
        .filter_map(|(_, value)| serde_json::from_str(value.as_deref()?).ok())
        .collect();
    rounds.sort_by_key(|f| f.round);
    Ok(rounds)
}
