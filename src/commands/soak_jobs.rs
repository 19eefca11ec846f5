//! `soak --executor slurm`: each instance of the soak a job of its own, on
//! a node of its own (`--exclusive` unless `--shared-node`). On its node
//! `cell` runs it (`instance`: the soak's arguments as the plan keeps them,
//! one configuration's one replica, soaked into a shard with what
//! `soak::job` sends beside it); here each shard's recording is merged into
//! the store as it comes in and its instance rebuilt, for the same
//! statistics and verdict as a soak run here. Under `--until settled` the
//! nodes send their instances so far through the plan's folder, and the
//! soak stops them all once every configuration has settled (`soak::job`).

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
use allocscope_soak::job::{sends_now, settled_path, so_far_path, Sent};
use allocscope_soak::launch::Recipe;
use allocscope_soak::watch::{
    watch, Instances, Remote, Settings, SettledLooks, Soaked, SETTLED_LOOK_EVERY,
};
use allocscope_soak::watched::Watched;
use anyhow::Context;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::Instant;

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

/// The soak whose jobs `follow` follows.
pub struct Following<'a> {
    pub recipe: &'a Recipe,
    pub soak_id: i64,
    /// Stop every instance once every configuration has settled.
    pub until_settled: bool,
}

/// Follows the jobs until each has sent its shard or ended without one;
/// Ctrl-C cancels them (their nodes still send what they soaked). Under
/// `until_settled`, with a folder the nodes share, it looks at what they
/// sent so far as a soak run here looks at its instances.
pub fn follow(
    mut engine: Box<dyn Engine>,
    store: &mut Store,
    following: &Following,
    interrupt: &Interrupt,
) -> anyhow::Result<Soaked> {
    let (recipe, soak_id) = (following.recipe, following.soak_id);
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
    let mut settling = (engine.shared_dir())
        .filter(|_| following.until_settled)
        .map(|dir| RemoteSettling::new(dir, rounds.len()));
    while ended < rounds.len() {
        if interrupt.requested() && !cancelled {
            engine.cancel()?;
            cancelled = true;
        }
        if let Some(decision) = settling.as_mut().and_then(RemoteSettling::look) {
            engine.say(&format!(
                "allocscope: every configuration settled ({decision}): the instances stop at their next look"
            ));
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
        status: match (cancelled, settling.is_some_and(|s| s.decided)) {
            (true, _) => "interrupted",
            (false, true) => "settled",
            (false, false) => "complete",
        },
        elapsed_s,
        failure: None,
    })
}

/// `--until settled` over the jobs: every `SETTLED_LOOK_EVERY`, what each
/// instance's node sent so far, judged as a soak run here judges; once it
/// settles, the file that ends every instance left in the shared folder.
/// An instance that ends before its first look sends nothing so far, and
/// the soak then runs its duration.
struct RemoteSettling {
    dir: PathBuf,
    instances: usize,
    looks: SettledLooks,
    last: Instant,
    decided: bool,
}

impl RemoteSettling {
    fn new(dir: &Path, instances: usize) -> RemoteSettling {
        RemoteSettling {
            dir: dir.to_path_buf(),
            instances,
            looks: SettledLooks::default(),
            last: Instant::now(),
            decided: false,
        }
    }

    /// The decision, at the look that settles it.
    fn look(&mut self) -> Option<String> {
        if self.decided || self.last.elapsed() < SETTLED_LOOK_EVERY {
            return None;
        }
        self.last = Instant::now();
        let sent = self.so_far();
        if sent.len() < self.instances {
            return None;
        }
        let elapsed_s = sent.iter().map(|s| s.elapsed_s).fold(0.0, f64::max);
        let instances: Vec<Watched> = sent.into_iter().map(|s| s.received(0)).collect();
        let decision = self.looks.look(&instances, elapsed_s)?;
        let marked = std::fs::write(settled_path(&self.dir), &decision);
        if let Err(error) = marked {
            eprintln!(
                "allocscope: cannot tell the instances to stop ({error}); they run their duration"
            );
        }
        self.decided = true;
        Some(decision)
    }

    /// What every node has sent so far that reads whole.
    fn so_far(&self) -> Vec<Sent> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        (entries.flatten())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".so-far.json"))
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .filter_map(|text| serde_json::from_str(&text).ok())
            .collect()
    }
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
        remote: options.until_settled.then(|| remote(&cell.out, index)),
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
        serde_json::to_string(&Sent::new(&w, index, soaked.elapsed_s))?,
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

/// A job's side of `--until settled`: at each look its instance so far sent
/// beside its shard (`sends_now`), written whole and renamed into place;
/// `settled` once the soak has left its file in the shard's folder.
fn remote(shard: &Path, flavour: usize) -> Remote {
    let folder = shard.parent().unwrap_or(Path::new("."));
    let (settled, so_far) = (settled_path(folder), so_far_path(shard));
    let partial = with_suffix(&so_far, ".partial");
    let last_sent = Cell::new(f64::NEG_INFINITY);
    Box::new(move |watched: &[Watched], elapsed_s: f64| {
        if settled.exists() {
            return Some("settled");
        }
        let [w] = watched else { return None };
        if sends_now(elapsed_s, last_sent.get()) {
            last_sent.set(elapsed_s);
            let sent = serde_json::to_string(&Sent::new(w, flavour, elapsed_s));
            let written = (sent.map_err(std::io::Error::other))
                .and_then(|text| std::fs::write(&partial, text))
                .and_then(|()| std::fs::rename(&partial, &so_far));
            if let Err(error) = written {
                eprintln!(
                    "allocscope: cannot send {} so far to the soak: {error}",
                    w.name
                );
            }
        }
        None
    })
}
