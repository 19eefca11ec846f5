//! `allocscope merge SHARD... [--db FILE]`: the shards of one plan into the
//! store as one experiment, then where the rounds ran (and a warning when
//! they ran on different hardware or software); a soak's shards (its
//! instances) each merged by `soak_jobs`, then reported as `soak` reports.

use allocscope_cluster::plan_file::ClusterPlan;
use allocscope_core::store::Store;
use allocscope_rounds::facts::{where_rounds_ran, MERGED};
use allocscope_rounds::merge::{check_one_plan, merge_shards, rounds_of};
use allocscope_rounds::shard::Shard;
use allocscope_soak::watch::Soaked;
use allocscope_soak::watched::{Source, Watched};
use std::path::{Path, PathBuf};

/// `plan`: refuse shards of any other plan.
pub fn merge(shards: &[PathBuf], db: &Path, plan: Option<&Path>) -> anyhow::Result<i32> {
    if !shards.is_empty() && shards.iter().all(|s| super::soak_jobs::is_soak_shard(s)) {
        return merge_soak(shards, db);
    }
    let expected = plan.map(ClusterPlan::read).transpose()?.map(|p| p.plan_id);
    let shards = shards
        .iter()
        .map(|p| Shard::open(p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    check_one_plan(&shards, expected.as_deref())?;
    let mut store = Store::open(db)?;
    let merged = merge_shards(&mut store, &shards)?;
    let id = merged.experiment_id;
    if !merged.added.is_empty() {
        store.finish_experiment(id, "complete")?;
    }
    let list = |rounds: &[u32]| {
        let words: Vec<String> = rounds.iter().map(u32::to_string).collect();
        words.join(", ")
    };
    let plan = shards
        .first()
        .map(|s| s.plan_id.as_str())
        .unwrap_or_default();
    if merged.added.is_empty() {
        println!("allocscope: nothing new: every round given is already in experiment {id}");
    } else {
        println!(
            "allocscope: merged round{} {} of plan {plan} into experiment {id}",
            if merged.added.len() > 1 { "s" } else { "" },
            list(&merged.added)
        );
    }
    if !merged.skipped.is_empty() {
        println!(
            "allocscope: already merged, skipped: {}",
            list(&merged.skipped)
        );
    }
    print_rounds(&store, id)?;
    println!(
        "allocscope: re-render with `allocscope report {id} --db {}`",
        db.display()
    );
    Ok(0)
}

/// Which rounds ran where, the rounds that left no shard with their
/// engine's state, and the warning when the rounds ran on different
/// platforms.
pub fn print_rounds(store: &Store, experiment_id: i64) -> anyhow::Result<()> {
    let rounds = rounds_of(store, experiment_id)?;
    let (lines, differ) = where_rounds_ran(&rounds);
    if differ {
        eprintln!(
            "warning: the rounds ran on different hardware or software (CPU model, kernel, \
             glibc or allocator versions): ratios stay within a round, but medians mix them"
        );
    }
    for line in lines {
        println!("  {line}");
    }
    for missing in rounds.iter().filter(|f| f.state != MERGED) {
        println!("  round {}: {} (no shard)", missing.round, missing.state);
    }
    Ok(())
}

/// `allocscope merge` of soak instances' shards (a dry run's jobs, run by
/// hand): merged and reported as the soak that planned them would.
fn merge_soak(shards: &[PathBuf], db: &Path) -> anyhow::Result<i32> {
    let mut store = Store::open(db)?;
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let (soak_id, _) = store.begin_soak(&arguments)?;
    let mut instances = Vec::with_capacity(shards.len());
    let mut elapsed_s = 0.0_f64;
    for shard in shards {
        let (w, soaked_s) = super::soak_jobs::merge(&mut store, shard, soak_id)?;
        elapsed_s = elapsed_s.max(soaked_s);
        instances.push(w);
    }
    // In the plan's order of configurations: the first is the baseline.
    let flavour = |w: &Watched| match w.source {
        Source::Launched { flavour, .. } => flavour,
        Source::Attached(_) => 0,
    };
    instances.sort_by(|a, b| (flavour(a), &a.name).cmp(&(flavour(b), &b.name)));
    super::soak::conclude(
        &Soaked {
            sampler_cpu_s: instances.iter().map(Watched::sampler_cpu_s).sum(),
            instances,
            status: "complete",
            elapsed_s,
            failure: None,
        },
        soak_id,
        false,
    );
    Ok(0)
}
