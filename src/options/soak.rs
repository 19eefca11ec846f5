//! `soak`'s arguments checked before anything is stored: each `--pid
//! LABEL=PID` a running process allocscope may read (as `record --pid`
//! checks it), mapping the allocator its label names; or a COMMAND, its
//! configurations resolved as `compare`'s and the recipe its instances are
//! started with; how often, for how long, and whether to stop once every
//! configuration has settled. `--resume ID`: the arguments soak ID was
//! started with, parsed again.

use super::parse::resolve_command;
use super::record::{check_pid, logs_directory};
use super::rounds::parse_metrics;
use crate::cli::{Cli, Command, SoakArgs, Until};
use allocscope_cluster::executor::{EngineArgs, Executor};
use allocscope_core::sample::maps::mapped_paths_whole;
use allocscope_core::store::Store;
use allocscope_core::usage_error::UsageError;
use allocscope_soak::error::SoakError;
use allocscope_soak::label;
use allocscope_soak::launch::{Flavour, Recipe, Server, PORT};
use allocscope_soak::watched::Attached;
use std::path::PathBuf;
use std::time::Duration;

pub struct SoakSettings {
    /// `--pid`: running in place; empty with a COMMAND.
    pub instances: Vec<Attached>,
    /// A COMMAND: how its instances are started.
    pub recipe: Option<Recipe>,
    pub interval: Duration,
    pub duration: Option<Duration>,
    pub until_settled: bool,
    pub quiet: bool,
    /// How often the progress block and `--html` are renewed while it runs.
    pub report_every: Duration,
    pub html: Option<PathBuf>,
    pub db: PathBuf,
    /// `--executor` and the engine's flags, checked.
    pub engine: EngineArgs,
}

impl SoakSettings {
    pub fn from_args(args: &SoakArgs) -> Result<SoakSettings, UsageError> {
        let recipe = (!args.command.is_empty())
            .then(|| recipe(args))
            .transpose()?;
        let mut instances: Vec<Attached> = Vec::with_capacity(args.pids.len());
        for given in &args.pids {
            let attached = attach(given)?;
            if let Some(twice) = instances.iter().find(|a| a.pid == attached.pid) {
                return Err(SoakError::PidTwice {
                    given: given.clone(),
                    pid: twice.pid,
                    label: twice.label.clone(),
                }
                .into());
            }
            instances.push(attached);
        }
        args.cluster.check(false)?;
        if args.cluster.executor == Executor::K8s && !args.cluster.batch.dry_run {
            return Err(SoakError::K8sWithoutDryRun.into());
        }
        let until = args.until.unwrap_or(match recipe {
            Some(_) => Until::Settled,
            None => Until::Duration,
        });
        Ok(SoakSettings {
            instances,
            recipe,
            interval: args.interval,
            duration: args.duration,
            until_settled: until == Until::Settled,
            quiet: args.quiet,
            report_every: args.report_every,
            html: args.html.clone(),
            db: args.db.clone(),
            engine: args.cluster.clone(),
        })
    }
}

/// `soak`'s arguments `words` (a cluster plan's) parsed as typed.
pub fn soak_args(words: &[String]) -> Result<SoakArgs, clap::Error> {
    use clap::Parser;
    let line = ["allocscope", "soak"].iter().map(|w| w.to_string());
    match Cli::try_parse_from(line.chain(words.iter().cloned()))?.command {
        Command::Soak(args) => Ok(*args),
        _ => Err(clap::Error::new(clap::error::ErrorKind::InvalidSubcommand)),
    }
}

/// How a COMMAND's instances are started: each configuration with the
/// heap probe, in a memory cgroup where one can be made, logs and
/// `{instance}` directories beside the store.
fn recipe(args: &SoakArgs) -> Result<Recipe, UsageError> {
    let program = resolve_command(&args.command[0])?;
    let registry = allocscope_core::alloc::Registry::discover();
    let (configs, _) = super::compare::configs(&args.alloc, &registry)?;
    let command: Vec<String> = (args.command.iter())
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let instances = configs.len() * args.replicas as usize;
    if args.server && instances > 1 && !command.iter().any(|a| a.contains(PORT)) {
        return Err(SoakError::ServerWithoutPort { instances }.into());
    }
    let mut flavours = Vec::with_capacity(configs.len());
    for config in configs {
        let probe = allocscope_core::probe::plan(
            &config,
            Some(allocscope_core::probe::HeapOptions::DEFAULT),
        )
        .map_err(|e| SoakError::Probe(format!("{e:#}")))?;
        flavours.push(Flavour { config, probe });
    }
    let metrics = parse_metrics(&args.metric, &args.higher_is_better)?;
    Ok(Recipe {
        program,
        args: command[1..].to_vec(),
        flavours,
        replicas: 1..=args.replicas as usize,
        restart: args.restart,
        interval: args.interval,
        // `soak-ID` is joined once the soak has its id.
        dir: logs_directory(&args.db),
        cgroup: allocscope_core::cgroup::find().ok(),
        server: args.server.then(|| Server {
            ready: args
                .ready
                .clone()
                .unwrap_or_else(|| format!("127.0.0.1:{PORT}")),
            ready_timeout: args.ready_timeout,
            load: args.load.clone(),
            metrics,
        }),
    })
}

/// One `--pid LABEL=PID`: well formed, a readable process, and mapping the
/// allocator its label names.
fn attach(given: &str) -> Result<Attached, UsageError> {
    let malformed = || UsageError::from(SoakError::NotLabelPid(given.to_string()));
    let (label, pid) = given.rsplit_once('=').ok_or_else(malformed)?;
    let pid = match pid.trim().parse::<i32>() {
        Ok(pid) if pid > 0 && !label.is_empty() => pid,
        _ => return Err(malformed()),
    };
    let (pid, start_ticks) = check_pid(pid).map_err(|problem| SoakError::Unreadable {
        given: given.to_string(),
        problem: Box::new(problem),
    })?;
    let mapped = mapped_paths_whole(pid).map_or_else(Vec::new, |(paths, _)| paths);
    label::check(label, pid, &mapped)?;
    Ok(Attached {
        label: label.to_string(),
        pid,
        start_ticks,
    })
}

/// `--resume ID`: the arguments soak ID was started with, parsed again
/// (its `--db`, `--quiet`, `--report-every` and `--html` this command's),
/// and when it began. Refused
/// when it was not of a COMMAND, or no instance of it was cut off (it
/// ended, or its allocscope still runs).
pub fn resumed(id: i64, args: &SoakArgs, store: &Store) -> anyhow::Result<(SoakArgs, f64)> {
    let refuse = |why: String| SoakError::NotResumable { id, why };
    let Some(stored) = store.soak(id)? else {
        let db = args.db.display().to_string();
        return Err(UsageError::from(SoakError::NoSuchSoak { id, db }).into());
    };
    // The arguments stored begin with `soak`.
    let Ok(mut original) = soak_args(stored.arguments.get(1..).unwrap_or_default()) else {
        return Err(UsageError::from(refuse("its stored arguments do not parse".into())).into());
    };
    if original.command.is_empty() {
        let why = "it followed running processes (--pid), which it does not start".into();
        return Err(UsageError::from(refuse(why)).into());
    }
    let recordings = store.soak_recordings(id)?;
    if let Some(r) = recordings.iter().find(|r| r.status != "incomplete") {
        let why = format!("its instance {} is {}, not cut off", r.name, r.status);
        return Err(UsageError::from(refuse(why)).into());
    }
    original.db = args.db.clone();
    original.quiet = args.quiet;
    original.report_every = args.report_every;
    original.html = args.html.clone();
    Ok((original, stored.started_unix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pid_is_label_equals_pid_and_names_what_our_parent_maps() {
        // SAFETY: getppid has no preconditions.
        let parent = unsafe { libc::getppid() };
        for bad in ["4243", "=4243", "jemalloc=", "jemalloc=x", "glibc=-3"] {
            let message = attach(bad).map(|_| ()).expect_err(bad).to_string();
            assert!(message.contains("is not LABEL=PID"), "{message}");
        }
        let missing = attach(&format!("glibc={}", i32::MAX)).map(|_| ());
        let missing = missing.expect_err("no such pid").to_string();
        assert!(missing.contains("does not exist"), "{missing}");
        // Our parent (cargo's test runner) maps no allocator library.
        let attached = attach(&format!("glibc:arena_max=2={parent}")).expect("glibc");
        assert_eq!(
            (attached.label.as_str(), attached.pid),
            ("glibc:arena_max=2", parent)
        );
        let refused = attach(&format!("mimalloc={parent}"))
            .map(|_| ())
            .expect_err("mimalloc");
        assert!(
            refused
                .to_string()
                .ends_with(&format!("label it glibc={parent}")),
            "{refused}"
        );
    }
}
