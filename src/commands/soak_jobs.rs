//! `soak --executor slurm`: each instance of the soak a job of its own, on
//! a node of its own (`--exclusive` unless `--shared-node`). On its node
//! `cell` runs it (`instance`: the soak's arguments as the plan keeps them,
//! one configuration's one replica, soaked into a shard with what
//! `soak::job` sends beside it); here each shard's recording is merged into
//! the store as it comes in and its instance rebuilt, for the same
//! statistics and verdict as a soak run here.

use crate::cli::CellArgs;
use crate::options::cell::round_configs;
use crate::options::soak::{soak_args, SoakSettings};
use allocscope_cluster::batch::JobRequest;
use allocscope_cluster::executor::node_arguments;
use allocscope_cluster::plan_file::ClusterPlan;
use allocscope_core::run::Interrupt;
use allocscope_core::store::Store;
use allocscope_rounds::engine::{Ended, Engine, Round, Started};
use allocscope_rounds::shard::{remove_store_files, with_suffix};
use allocscope_soak::job::Sent;
use allocscope_soak::launch::Recipe;
use allocscope_soak::watch::{watch, Instances, Settings, Soaked};
use allocscope_soak::watched::Watched;
use anyhow::Context;
use std::path::Path;

/// The plan: one round per instance, round `i` configuration `i / R`'s
/// replica `i % R + 1`.
pub fn job_request(options: &SoakSettings, recipe: &Recipe) -> anyhow::Result<JobRequest> {
    let argv: Vec<_> = std::env::args_os().collect();
    Ok(JobRequest {
        rounds: (recipe.flavours.len() * recipe.replicas.clone().count()) as u32,
        configs: (recipe.flavours.iter())
            .map(|f| f.config.name.clone())
            .collect(),
        db: options.db.clone(),
        node_arguments: node_arguments(&argv, "soak", &[])?,
        quiet: options.quiet,
        adaptive: false,
        command: "soak",
    })
}

/// Follows the jobs until each has sent its shard or ended without one;
/// Ctrl-C cancels them (their nodes still send what they soaked).
pub fn follow(
    mut engine: Box<dyn Engine>,
    store: &mut Store,
    recipe: &Recipe,
    soak_id: i64,
    interrupt: &Interrupt,
) -> anyhow::Result<Soaked> {
    let replicas = recipe.replicas.clone().count();
    let rounds: Vec<Round> = (0..recipe.flavours.len() * replicas)
        .map(|i| Round {
            index: i as u32,
            configs: vec![i / replicas],
        })
        .collect();
    if let Started::HandedOver { .. } = engine.start(store, &rounds)? {
        anyhow::bail!("the soak's instances were handed to jobs this process does not follow");
    }
    let name = |round: u32| {
        let (flavour, replica) = (round as usize / replicas, round as usize % replicas + 1);
        format!("{}#{replica}", recipe.flavours[flavour].config.name)
    };
    let mut received: Vec<(u32, Watched)> = Vec::new();
    let (mut ended, mut cancelled, mut elapsed_s) = (0, false, 0.0_f64);
    while ended < rounds.len() {
        if interrupt.requested() && !cancelled {
            engine.cancel()?;
            cancelled = true;
        }
        for end in engine.wait(store)? {
            ended += 1;
            match end.ended {
                Ended::Shard(path) => {
                    let (w, soaked_s) = merge(store, &path, soak_id)?;
                    engine.say(&format!(
                        "allocscope: {}: merged as recording {}",
                        w.name, w.appender.id
                    ));
                    elapsed_s = elapsed_s.max(soaked_s);
                    received.push((end.round, w));
                }
                // A job's engine has said how it ended; a submitter stores nothing here.
                Ended::Lost(_) | Ended::Stored { .. } => {
                    engine.say(&format!("allocscope: {} left no shard", name(end.round)));
                }
            }
        }
    }
    received.sort_by_key(|(round, _)| *round);
    let instances: Vec<Watched> = received.into_iter().map(|(_, w)| w).collect();
    Ok(Soaked {
        sampler_cpu_s: instances.iter().map(Watched::sampler_cpu_s).sum(),
        instances,
        status: if cancelled { "interrupted" } else { "complete" },
        elapsed_s,
        failure: None,
    })
}

/// Whether `shard` is a soak instance's: what its node sent is beside it.
pub fn is_soak_shard(shard: &Path) -> bool {
    shard.with_extension("json").is_file()
}

/// A shard's recording merged into the store as an instance of `soak_id`,
/// rebuilt from what its node sent beside it; with how long the node
/// soaked it.
pub fn merge(store: &mut Store, shard: &Path, soak_id: i64) -> anyhow::Result<(Watched, f64)> {
    let sent_path = shard.with_extension("json");
    let text = std::fs::read_to_string(&sent_path)
        .with_context(|| format!("reading '{}'", sent_path.display()))?;
    let sent: Sent = serde_json::from_str(&text)
        .with_context(|| format!("reading '{}'", sent_path.display()))?;
    let copied = store.copy_recordings_from(shard, Some(soak_id))?;
    let [id] = copied[..] else {
        anyhow::bail!(
            "shard '{}' holds {} recordings, not one instance's",
            shard.display(),
            copied.len()
        );
    };
    let soaked_s = sent.elapsed_s;
    Ok((sent.received(id), soaked_s))
}

/// `cell` of a soak's plan: instance `round` (configuration `round / R`,
/// replica `round % R + 1`) soaked here for the soak's duration (each
/// instance on its own cannot tell when every configuration has settled)
/// into the shard, with what `soak::job` sends written beside it
/// (`round-N.json`) before the shard is renamed into place; an interrupted
/// instance sends what it soaked too.
pub fn instance(plan: &ClusterPlan, cell: &CellArgs) -> anyhow::Result<i32> {
    let args = soak_args(&plan.args).map_err(|e| {
        allocscope_core::usage_error::UsageError::from(
            allocscope_cluster::error::ClusterError::PlanArguments {
                path: cell.plan.clone(),
                reason: e.kind().to_string(),
            },
        )
    })?;
    let options = SoakSettings::from_args(&args)?;
    let mut recipe = options.recipe.context("the plan's soak has no COMMAND")?;
    let names: Vec<String> = (recipe.flavours.iter())
        .map(|f| f.config.name.clone())
        .collect();
    let replicas = recipe.replicas.clone().count();
    let (index, replica) = (
        cell.round as usize / replicas,
        cell.round as usize % replicas + 1,
    );
    round_configs(Some(&[index]), &plan.configs, &names)?;
    recipe.flavours = vec![recipe.flavours.swap_remove(index)];
    recipe.replicas = replica..=replica;
    if let Some(dir) = cell.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
    }
    let partial = with_suffix(&cell.out, ".partial");
    remove_store_files(&partial);
    let mut store = Store::open(&partial)?;
    if !cell.quiet {
        eprintln!(
            "allocscope: plan {}: instance {}#{replica} on {}",
            plan.plan_id,
            names[index],
            allocscope_core::host::capture().hostname
        );
    }
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let (soak_id, began_unix) = store.begin_soak(&arguments)?;
    let settings = Settings {
        soak_id,
        began_unix,
        resumed: false,
        interval: options.interval,
        duration: options.duration,
        until_settled: false,
        live: None,
        publish: None,
    };
    let interrupt = Interrupt::install()?;
    let soaked = watch(
        &mut store,
        &Instances::Launched(&recipe),
        &settings,
        &interrupt,
    )?;
    drop(store);
    let w = (soaked.instances.into_iter().next()).context("the instance was not started")?;
    let sent_path = cell.out.with_extension("json");
    std::fs::write(
        &sent_path,
        serde_json::to_string(&Sent::new(w, index, soaked.elapsed_s))?,
    )
    .with_context(|| format!("writing '{}'", sent_path.display()))?;
    std::fs::rename(&partial, &cell.out)
        .with_context(|| format!("writing shard '{}'", cell.out.display()))?;
    if !cell.quiet {
        eprintln!(
            "allocscope: instance {}#{replica} {} after {:.0} s: shard {}",
            names[index],
            soaked.status,
            soaked.elapsed_s,
            cell.out.display()
        );
    }
    Ok(0)
}
