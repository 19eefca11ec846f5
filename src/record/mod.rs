//! The recording loop of `allocscope record`: samples a process tree every
//! interval for as long as it takes and appends each sample to the store in
//! small transactions (every `COMMIT_EVERY`), so nothing accumulates in
//! memory however long it runs and a SIGKILL loses only the last seconds.
//! The store rolls old samples up into minute and hour buckets as it goes.
//!
//! Two targets. Attached (`--pid`): the process and its descendants, ended
//! when none is left (its exit status belongs to its parent, so it is
//! unknown). Launched (`-a CONFIG -- COMMAND`): started like a `compare` run
//! (own process group, parent-death signal, allocscope a subreaper, the
//! reaper thread for the exact exit status, the stdout tap into a log file).
//!
//! The ticks are `run`'s sampling loop (walker, sampler, budget, schedule);
//! each kept sample also goes to the caller's `on_sample` callback.

pub mod attach;

use crate::model::Sample;
use crate::run::sampling::{SampleCallback, SamplingLoop, Tick};
use crate::run::{classify_wait_status, process, reaper, tap, Event, Interrupt};
use crate::store::{Ending, NewRecording, Store};
use anyhow::Context;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Samples are committed at least this often: what a crash can lose.
const COMMIT_EVERY: Duration = Duration::from_secs(1);
/// The longest the loop sleeps before looking at Ctrl-C and the duration.
const MAX_NAP: Duration = Duration::from_millis(100);
/// How long a launched tree gets to go after allocscope kills it.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// What to record: checked by `options::record`, so the two never differ.
pub use crate::options::record::RecordTarget as Target;

impl Target {
    /// The configuration the recording is stored under.
    pub fn config_name(&self) -> &str {
        match self {
            Target::Attach { .. } => "attached",
            Target::Launch { config, .. } => &config.name,
        }
    }
}

pub struct Settings {
    pub target: Target,
    pub name: String,
    pub interval: Duration,
    pub duration: Option<Duration>,
    /// Told each kept sample (`--metrics` publishes it).
    pub on_sample: Option<Box<SampleCallback>>,
}

/// What `record` did, for its closing line.
pub struct Summary {
    pub id: i64,
    pub resumed: bool,
    pub ending: Ending,
    pub samples: u64,
    pub peak_rss_bytes: u64,
    pub last: Option<Sample>,
    pub elapsed_s: f64,
    pub sampler_cpu_s: f64,
}

/// Records until the tree ends, the duration is reached or Ctrl-C.
/// `started` is told the recording's id (and whether it was resumed) once it
/// exists. A store that fails (a full disk) ends the recording with an error;
/// what was committed stays readable.
pub fn record(
    store: &mut Store,
    settings: &Settings,
    interrupt: &Interrupt,
    started: impl FnOnce(i64, bool, i32),
) -> anyhow::Result<Summary> {
    let unix_now = || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0)
    };
    let own_pid = std::process::id() as i32;
    let (events_tx, events) = mpsc::channel::<Event>();
    let hostname = crate::host::capture().hostname;
    let (id, resumed, started_unix, root, launched) = match &settings.target {
        Target::Attach { pid, start_ticks } => {
            let (id, resumed, started_unix) = match store.cut_off_recording(*pid, *start_ticks)? {
                Some(id) => (id, true, store.resume_recording(id)?),
                None => {
                    let new = NewRecording {
                        name: settings.name.clone(),
                        config: settings.target.config_name().to_string(),
                        env: Vec::new(),
                        command: None,
                        target_pid: *pid,
                        target_start: *start_ticks,
                        interval_ms: settings.interval.as_millis() as u64,
                        hostname,
                    };
                    let (id, started_unix) = store.begin_recording(&new)?;
                    (id, false, started_unix)
                }
            };
            (id, resumed, started_unix, Some((*pid, *start_ticks)), None)
        }
        Target::Launch {
            program,
            args,
            config,
            logs_dir,
        } => {
            process::become_subreaper()?;
            std::fs::create_dir_all(logs_dir)
                .with_context(|| format!("creating '{}'", logs_dir.display()))?;
            let stdout_path = logs_dir.join(format!("{}.stdout", settings.name));
            let stdout_file = std::fs::File::create(&stdout_path)
                .with_context(|| format!("creating '{}'", stdout_path.display()))?;
            let stderr_path = logs_dir.join(format!("{}.stderr", settings.name));
            let (pid, pipe) = process::spawn(program, args, &config.env, &stderr_path, None)?;
            reaper::spawn_reaper(events_tx.clone())?;
            tap::spawn_tap(pipe, stdout_file, Vec::new(), events_tx.clone())
                .context("starting the stdout tap")?;
            let start_ticks = crate::sample::proc::read_stat(pid).map_or(0, |s| s.start_ticks);
            let mut command = vec![program.to_string_lossy().into_owned()];
            command.extend(args.iter().map(|a| a.to_string_lossy().into_owned()));
            let new = NewRecording {
                name: settings.name.clone(),
                config: config.name.clone(),
                env: config.env.clone(),
                command: Some(command),
                target_pid: pid,
                target_start: start_ticks,
                interval_ms: settings.interval.as_millis() as u64,
                hostname,
            };
            let (id, started_unix) = store.begin_recording(&new)?;
            (id, false, started_unix, None, Some(pid))
        }
    };
    // Attached: the root and its descendants. Launched: every descendant of
    // allocscope, a subreaper, so orphans stay in the tree.
    let (target_pid, walker_root) = match (root, launched) {
        (Some((pid, _)), _) => (pid, pid),
        (None, pid) => (pid.unwrap_or(own_pid), own_pid),
    };
    started(id, resumed, target_pid);

    let mut sampling = SamplingLoop::new(walker_root, settings.interval);
    let mut last_commit = sampling.start();
    let mut pending: Vec<Sample> = Vec::with_capacity(16);
    let mut summary_samples = 0u64;
    let mut peak_rss_bytes = 0u64;
    let mut last: Option<Sample> = None;
    let mut main_status: Option<i32> = None;
    let mut failure: Option<anyhow::Error> = None;
    let mut status: &'static str = loop {
        let now = Instant::now();
        if interrupt.requested() {
            break "interrupted";
        }
        if settings
            .duration
            .is_some_and(|d| now - sampling.start() >= d)
        {
            break "complete";
        }
        let tick = sampling.tick(
            now,
            |pids| {
                if let Some((pid, start_ticks)) = root {
                    if attach::same_process(pid, start_ticks) {
                        pids.push(pid);
                    }
                }
            },
            || unix_now() - started_unix,
        );
        let due = match tick {
            Tick::NotDue => false,
            Tick::Empty if root.is_some() => break "exited",
            Tick::Empty => true,
            // Every listed process may have ended (or be a zombie, with no
            // memory) since the walk: such a sample says nothing, and its 0
            // would read as freed memory. A live process has some RSS.
            Tick::Sampled(sample) if sample.rss_bytes == 0 => true,
            Tick::Sampled(sample) => {
                summary_samples += 1;
                peak_rss_bytes = peak_rss_bytes.max(sample.rss_bytes);
                last = Some(sample);
                pending.push(sample);
                if let Some(on_sample) = &settings.on_sample {
                    on_sample(&sample, sampling.sampler());
                }
                true
            }
        };
        if due && (now - last_commit >= COMMIT_EVERY || settings.interval >= COMMIT_EVERY) {
            if let Err(error) = store.append_samples(id, &pending) {
                failure = Some(error);
                break "failed";
            }
            pending.clear();
            last_commit = now;
        }
        match events.recv_timeout(sampling.nap(MAX_NAP)) {
            Ok(Event::Reaped(reaped)) if Some(reaped.pid) == launched => {
                main_status = Some(reaped.status);
            }
            Ok(Event::TreeEnded(_)) => break "exited",
            // The tap's markers and EOF do not matter here; the sender kept
            // in `events_tx` means the channel never disconnects.
            Ok(_) | Err(_) => {}
        }
    };
    if failure.is_none() {
        if let Err(error) = store.append_samples(id, &pending) {
            failure = Some(error);
            status = "failed";
        }
    }
    let elapsed_s = last.map_or(0.0, |s| s.t_s);
    drop(pending);
    if let Some(pid) = launched.filter(|_| status != "exited") {
        main_status = end_launched_tree(pid, &mut sampling, &events, main_status);
    }
    let (exit_code, signal, message) = match (status, main_status) {
        ("failed", _) => (
            None,
            None,
            failure
                .as_ref()
                .map(|e| format!("recording stopped: {e:#}")),
        ),
        ("exited", Some(raw)) => {
            let (_, code, signal, message) = classify_wait_status(raw);
            (code, signal, message)
        }
        ("exited", None) => (
            None,
            None,
            Some("the process exited; only its parent knows its exit status".into()),
        ),
        _ => (None, None, None),
    };
    let ending = Ending {
        status,
        exit_code,
        signal,
        message,
    };
    let finished = store.finish_recording(id, &ending);
    if let Some(error) = failure {
        return Err(error.context(format!(
            "recording {id} stopped; what was stored until then stays readable \
             (allocscope report --recordings {id})"
        )));
    }
    finished?;
    Ok(Summary {
        id,
        resumed,
        ending,
        samples: summary_samples,
        peak_rss_bytes,
        last,
        elapsed_s,
        sampler_cpu_s: sampling.sampler().cpu_seconds(),
    })
}

/// Kills a launched tree that allocscope stops recording (duration reached,
/// Ctrl-C, a failed store) and waits, boundedly, until the reaper reports it
/// gone; returns the main process's wait status if it was reaped.
fn end_launched_tree(
    pid: i32,
    sampling: &mut SamplingLoop,
    events: &mpsc::Receiver<Event>,
    mut main_status: Option<i32>,
) -> Option<i32> {
    let deadline = Instant::now() + KILL_WAIT;
    let mut last_kill: Option<Instant> = None;
    while Instant::now() < deadline {
        if last_kill.is_none_or(|at| at.elapsed() >= MAX_NAP) {
            process::kill_tree(pid, &sampling.walk());
            last_kill = Some(Instant::now());
        }
        match events.recv_timeout(MAX_NAP) {
            Ok(Event::Reaped(reaped)) if reaped.pid == pid => main_status = Some(reaped.status),
            Ok(Event::TreeEnded(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
    main_status
}
