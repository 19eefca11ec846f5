//! The start of a recording: its row in the store (a new one, or for
//! `--pid` the one a killed allocscope left cut off, resumed), and for a
//! launched command the process with its reaper and stdout tap.

use crate::Target;
use allocscope_core::run::sampling::SamplingLoop;
use allocscope_core::run::{become_subreaper, start, Event, Start, Started};
use allocscope_core::store::{NewRecording, Store};
use anyhow::Context;
use std::ffi::OsString;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

impl Target {
    /// The configuration the recording is stored under.
    pub fn config_name(&self) -> &str {
        match self {
            Target::Attach { .. } => "attached",
            Target::Launch { config, .. } => &config.name,
        }
    }
}

/// A recording under way.
pub(super) struct Begun {
    pub id: i64,
    /// It continues one a killed allocscope left cut off.
    pub resumed: bool,
    /// When it first started: samples are timed from then.
    pub started_unix: f64,
    /// Attached: the process and its start time.
    pub root: Option<(i32, u64)>,
    /// Launched: the command, with the sampling loop whose sampler reads it.
    pub launched: Option<(Started, SamplingLoop)>,
}

impl Begun {
    /// The pid the recording follows. Its walks' root is that process when
    /// attached, allocscope (a subreaper, so orphans stay in the tree)
    /// when launched.
    pub fn target_pid(&self) -> i32 {
        match (self.root, &self.launched) {
            (Some((pid, _)), _) => pid,
            (None, Some((started, _))) => started.pid(),
            (None, None) => std::process::id() as i32,
        }
    }
}

/// Begins recording `target` as `name`; a launched command's reaper and
/// tap send into `events`.
pub(super) fn begin(
    store: &mut Store,
    target: &Target,
    name: &str,
    interval: Duration,
    events: &mpsc::Sender<Event>,
) -> anyhow::Result<Begun> {
    let new = NewRecording {
        name: name.to_string(),
        config: target.config_name().to_string(),
        env: Vec::new(),
        command: None,
        target_pid: 0,
        target_start: 0,
        interval_ms: interval.as_millis() as u64,
        hostname: allocscope_core::host::capture().hostname,
        soak_id: None,
    };
    match target {
        Target::Attach { pid, start_ticks } => attach(store, new, *pid, *start_ticks),
        Target::Launch {
            program,
            args,
            config,
            logs_dir,
        } => {
            let new = NewRecording {
                env: config.env.clone(),
                ..new
            };
            launch(store, new, program, args, logs_dir, interval, events)
        }
    }
}

/// `--pid`: resumes the recording of that process a killed allocscope left
/// cut off, else begins a new one.
fn attach(
    store: &mut Store,
    new: NewRecording,
    pid: i32,
    start_ticks: u64,
) -> anyhow::Result<Begun> {
    let (id, resumed, started_unix) = match store.cut_off_recording(pid, start_ticks)? {
        Some(id) => (id, true, store.resume_recording(id, pid, start_ticks)?),
        None => {
            let new = NewRecording {
                target_pid: pid,
                target_start: start_ticks,
                ..new
            };
            let (id, started_unix) = store.begin_recording(&new)?;
            (id, false, started_unix)
        }
    };
    Ok(Begun {
        id,
        resumed,
        started_unix,
        root: Some((pid, start_ticks)),
        launched: None,
    })
}

/// `-a CONFIG -- COMMAND`: started like a `compare` run (own process group,
/// parent-death signal, allocscope a subreaper, the reaper thread for the
/// exact exit status, the stdout tap into a log file).
fn launch(
    store: &mut Store,
    new: NewRecording,
    program: &Path,
    args: &[OsString],
    logs_dir: &Path,
    interval: Duration,
    events: &mpsc::Sender<Event>,
) -> anyhow::Result<Begun> {
    become_subreaper()?;
    std::fs::create_dir_all(logs_dir)
        .with_context(|| format!("creating '{}'", logs_dir.display()))?;
    let spec = Start {
        program,
        args,
        env: &new.env,
        stdout_path: &logs_dir.join(format!("{}.stdout", new.name)),
        stderr_path: &logs_dir.join(format!("{}.stderr", new.name)),
        cgroup: None,
        memory_limit: None,
        probe: None,
        reclaim_at_exit: false,
        interval,
        marks: &[],
        child_steps: Vec::new(),
        reaper: true,
    };
    let started = start(spec, events)?;
    let sampling = SamplingLoop::new(std::process::id() as i32, interval);
    let pid = started.pid();
    let start_ticks = allocscope_core::sample::proc::read_stat(pid).map_or(0, |s| s.start_ticks);
    let mut command = vec![program.to_string_lossy().into_owned()];
    command.extend(args.iter().map(|a| a.to_string_lossy().into_owned()));
    let new = NewRecording {
        command: Some(command),
        target_pid: pid,
        target_start: start_ticks,
        ..new
    };
    let (id, started_unix) = store.begin_recording(&new)?;
    Ok(Begun {
        id,
        resumed: false,
        started_unix,
        root: None,
        launched: Some((started, sampling)),
    })
}
