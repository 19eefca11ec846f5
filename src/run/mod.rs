//! One run: start the workload under a configuration, sample its process tree
//! every interval until the whole tree has ended (or the time limit or Ctrl-C),
//! record a marker with the next reading of the tree for each progress line
//! its stdout tap reports (`marks.rs`), and return what was measured. Never stores or formats anything;
//! each tick's sample is also handed to the caller's `OnSample` callback.
//!
//! Three threads: this one (spawns, samples, decides), the reaper (blocks in
//! wait4) and the stdout tap (copies the pipe to the stdout file and matches
//! lines). Both helpers send into one channel of `Event`s, so the main loop
//! wakes at once for an exit or a marker, whichever comes first.
//!
//! `execute` only wires the parts: the launch here, the main loop in
//! `supervise.rs` (ticks in `sampling.rs`, load checks in `settle.rs`, the
//! time limit and Ctrl-C in `ending.rs`, service phases in `service.rs`),
//! the status in `conclude.rs`.

mod conclude;
mod ending;
mod heap;
mod interrupt;
mod limit;
mod loaded;
mod marks;
pub(crate) mod process;
mod ready;
pub(crate) mod reaper;
pub(crate) mod sampling;
mod service;
mod settle;
mod status;
mod supervise;
pub(crate) mod tap;
mod values;

pub use interrupt::Interrupt;
pub use process::become_subreaper;
pub use sampling::OnSample;
pub use status::signal_name;
pub(crate) use status::{classify_wait_status, Classified};
pub use values::extract_user_metrics;

use crate::model::{Config, RunRecord};
use anyhow::Context;
use conclude::{conclude, Ended};
use ending::{Ender, Ending};
use loaded::LoadCheck;
use reaper::{Reaped, Usage};
use sampling::SamplingLoop;
use settle::Checks;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};
use supervise::Supervisor;

/// What the main loop waits for, from the reaper and the stdout tap.
#[derive(Debug)]
pub(crate) enum Event {
    Reaped(Reaped),
    /// No child is left: the tree has ended.
    TreeEnded(Instant),
    /// Stdout lines, read together at `at`, that matched marker patterns:
    /// each its pattern (0 is the built-in one) and label, in order.
    Marks {
        marks: Vec<(u32, String)>,
        at: Instant,
    },
    /// The tap reached EOF on the workload's stdout.
    TapEnded,
    /// A service passed its readiness check.
    Ready(Instant),
    /// allocscope's load generator finished a service run's load.
    LoadDone(Box<crate::load::LoadReport>, Instant),
}

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
    /// Marker patterns for stdout lines, the built-in one first.
    pub marks: &'a [regex::Regex],
    /// `--memory-limit` in bytes.
    pub memory_limit: Option<u64>,
    /// The heap probe, when the run loads it (`--heap`, or a trim setting).
    pub probe: Option<&'a crate::probe::ProbeLaunch>,
    /// `--server`: readiness, load, settle and stop.
    pub service: Option<&'a crate::options::service::ServiceSettings>,
    /// Told each tick's sample (`compare --metrics` publishes it).
    pub on_sample: Option<OnSample<'a>>,
}

pub enum Outcome {
    Finished(Box<RunRecord>),
    /// Ctrl-C or SIGTERM: the workload was ended and the run is not kept.
    Interrupted,
}

pub fn execute(launch: &Launch, interrupt: &Interrupt) -> anyhow::Result<Outcome> {
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    // A subreaper: the tree is every descendant of allocscope.
    let mut sampling = SamplingLoop::new(std::process::id() as i32, launch.interval);
    let start = sampling.start();
    let stdout_file = std::fs::File::create(&launch.stdout_path)
        .with_context(|| format!("creating '{}'", launch.stdout_path.display()))?;
    let memory_limit = launch.memory_limit.map(limit::MemoryLimit::prepare);
    let heap = launch.probe.map(heap::HeapRun::new).transpose()?;
    let env = match &heap {
        Some(h) => h.env(&launch.config.env, launch.interval),
        None => launch.config.env.clone(),
    };
    if let Some(reader) = heap.as_ref().and_then(heap::HeapRun::reader) {
        sampling.sampler_mut().attach_probe(reader);
    }
    let (pid, pipe) = process::spawn(
        launch.program,
        launch.args,
        &env,
        &launch.stderr_path,
        memory_limit
            .as_ref()
            .map(|l| Box::new(l.child_hook()) as Box<_>),
    )?;
    let (events_tx, events) = mpsc::channel();
    reaper::spawn_reaper(events_tx.clone())?;
    let service = launch
        .service
        .map(|settings| {
            let paths = service::ServicePaths {
                stdout: launch.stdout_path.clone(),
                stderr: launch.stderr_path.clone(),
                load_stdout: launch.stdout_path.with_extension("load.stdout"),
                load_stderr: launch.stdout_path.with_extension("load.stderr"),
            };
            service::ServiceRun::start(settings, start, pid, paths, events_tx.clone())
        })
        .transpose()?;
    tap::spawn_tap(pipe, stdout_file, launch.marks.to_vec(), events_tx)
        .context("starting the stdout tap")?;

    let mut supervisor = Supervisor {
        pid,
        sampling,
        checks: Checks {
            load: LoadCheck::new(launch.config.library.clone()),
            heap,
        },
        service,
        ender: Ender::new(start, launch.timeout),
        on_sample: launch.on_sample,
        samples: Vec::new(),
        marks: marks::Marks::default(),
        usage: Usage::default(),
        main_status: None,
        tap_ended: false,
    };
    let ended_at = supervisor.run(&events, interrupt)?;
    if supervisor.ender.ending() == Some(Ending::Interrupt) {
        return Ok(Outcome::Interrupted);
    }
    supervisor.drain_tap(&events);
    let Supervisor {
        mut sampling,
        checks,
        service,
        ender,
        samples,
        marks,
        usage,
        main_status,
        ..
    } = supervisor;
    let ended = Ended {
        ending: ender.ending(),
        main_status,
        service,
        memory_limit,
        checks,
    };
    let concluded = conclude(launch, ended, sampling.sampler_mut());
    Ok(Outcome::Finished(Box::new(RunRecord {
        index: launch.index,
        status: concluded.status,
        exit_code: concluded.exit_code,
        signal: concluded.signal,
        wall_s: (ended_at - start).as_secs_f64(),
        user_s: usage.user_s,
        sys_s: usage.sys_s,
        max_hwm_bytes: usage.max_hwm_bytes,
        minor_faults: usage.minor_faults,
        major_faults: usage.major_faults,
        samples,
        markers: marks.into_markers(),
        stdout_path: launch.stdout_path.clone(),
        stderr_path: launch.stderr_path.clone(),
        message: concluded.message,
        linked_allocators: concluded.linked_allocators,
        sampler_cpu_s: sampling.sampler().cpu_seconds(),
        started_at,
        probe_mode: concluded.probe_mode,
        probe_cpu_s: concluded.probe_cpu_s,
        service: concluded.service,
        user_metrics: Default::default(),
    })))
}
