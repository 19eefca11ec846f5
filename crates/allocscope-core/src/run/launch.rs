//! What a run is given (`Launch`) and what it gives back (`Outcome`), and
//! its start: the workload spawned under its configuration (in its memory
//! cgroup, with the limit and the heap probe when asked for), the reaper, a service's
//! phases and the stdout tap, all sending into one channel of `Event`s.

use super::containment::Containment;
use super::event::Event;
use super::heap::HeapRun;
use super::sampling::SamplingLoop;
use super::service::{ServicePaths, ServiceRun};
use super::start::{start, Start, Started};
use crate::model::{Config, RunRecord};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

pub struct Launch<'a> {
    pub program: &'a Path,
    pub args: &'a [OsString],
    pub config: &'a Config,
    pub index: u32,
    pub stdout_path: PathBuf,
    pub stderr_path: PathBuf,
    pub interval: Duration,
    pub timeout: Option<Duration>,
    /// Why a preload cannot take effect in this program (static, setuid, Go),
    /// known beforehand from its ELF file.
    pub preload_ignored: Option<String>,
    /// The program allocates without malloc (a Go runtime): its runs never
    /// count, even where the library gets mapped.
    pub own_allocator: bool,
    /// Allocators the program's ELF file links itself.
    pub linked_allocators: Vec<String>,
    /// The glibc shim, preloaded first (after the heap probe) so that glibc
    /// serves a program that links another allocator.
    pub glibc_shim: Option<&'a Path>,
    /// Which allocator serves `malloc` under this launch (`alloc::served`).
    pub served_by: Option<String>,
    /// Marker patterns for stdout lines, the built-in one first.
    pub marks: &'a [regex::Regex],
    /// `--memory-limit` in bytes.
    pub memory_limit: Option<u64>,
    /// Where the run's memory cgroup goes; `None` with `--cgroup off` or
    /// where none can be made.
    pub cgroup: Option<&'a crate::cgroup::Parent>,
    /// The heap probe, when the run loads it (`--heap`, or a trim setting).
    pub probe: Option<&'a crate::probe::ProbeLaunch>,
    /// `--server`'s phases: the run's driver, kept core (docs/ARCHITECTURE.md).
    pub service: Option<&'a super::service_spec::ServiceSettings>,
    /// When the heap probe's reclaim test runs (`--reclaim-at`; the end).
    pub reclaim: super::reclaim::ReclaimAt,
    /// What flags add to this run, in order (`extension.rs`).
    pub extensions: Vec<&'a dyn super::extension::RunExtension>,
}

pub enum Outcome {
    Finished(Box<RunRecord>),
    /// Ctrl-C or SIGTERM: the workload was ended and the run is not kept.
    Interrupted,
}

/// The workload once started.
pub(super) struct Spawned<'a> {
    /// The workload's main process.
    pub pid: i32,
    pub heap: Option<HeapRun>,
    pub containment: Containment,
    pub service: Option<ServiceRun<'a>>,
    pub events: mpsc::Receiver<Event>,
}

/// Spawns the workload with its helpers; the heap probe's reader, if any,
/// goes to `sampling`'s sampler.
pub(super) fn spawn<'a>(
    launch: &Launch<'a>,
    sampling: &mut SamplingLoop,
) -> anyhow::Result<Spawned<'a>> {
    let env = match launch.glibc_shim {
        Some(shim) => crate::probe::preload_first(&launch.config.env, shim),
        None => launch.config.env.clone(),
    };
    let (events_tx, events) = mpsc::channel();
    let spec = Start {
        program: launch.program,
        args: launch.args,
        env: &env,
        stdout_path: &launch.stdout_path,
        stderr_path: &launch.stderr_path,
        cgroup: launch.cgroup,
        memory_limit: launch.memory_limit,
        probe: launch.probe,
        reclaim_at_exit: launch.reclaim.at_exit(launch.service.is_some()),
        interval: launch.interval,
        marks: launch.marks,
        child_steps: (launch.extensions.iter())
            .filter_map(|e| e.child_step())
            .collect(),
        reaper: true,
    };
    let started = start(spec, &events_tx)?;
    started.feed(sampling);
    let Started {
        pid,
        heap,
        containment,
        ..
    } = started;
    let service = launch
        .service
        .map(|settings| {
            let paths = ServicePaths {
                stdout: launch.stdout_path.clone(),
                stderr: launch.stderr_path.clone(),
                load_stdout: launch.stdout_path.with_extension("load.stdout"),
                load_stderr: launch.stdout_path.with_extension("load.stderr"),
            };
            ServiceRun::start(settings, sampling.start(), pid, paths, events_tx)
        })
        .transpose()?;
    Ok(Spawned {
        pid,
        heap,
        containment,
        service,
        events,
    })
}
