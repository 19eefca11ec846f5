//! One run: start the workload under a configuration, sample its process tree
//! every interval until the whole tree has ended (or the time limit or Ctrl-C),
//! record a marker with a fresh sample for each progress line its stdout tap
//! reports, and return what was measured. Never stores or formats anything.
//!
//! Three threads: this one (spawns, samples, decides), the reaper (blocks in
//! wait4) and the stdout tap (copies the pipe to the stdout file and matches
//! lines). Both helpers send into one channel of `Event`s, so the main loop
//! wakes at once for an exit or a marker, whichever comes first.

mod heap;
mod interrupt;
mod limit;
mod loaded;
pub(crate) mod process;
mod ready;
pub(crate) mod reaper;
mod service;
mod status;
pub(crate) mod tap;

pub use interrupt::Interrupt;
pub use process::become_subreaper;
pub use status::signal_name;
pub(crate) use status::{classify_wait_status, Classified};

use crate::model::{Config, Marker, RunRecord, RunStatus, Sample};
use crate::sample::{thread_cpu_seconds, Sampler, TreeWalker, DEFAULT_BUDGET};
use anyhow::Context;
use loaded::LoadCheck;
use reaper::Reaped;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

/// How long the workload gets between SIGKILLs while it is being ended.
const KILL_RETRY: Duration = Duration::from_millis(100);
/// The longest allocscope sleeps before looking at Ctrl-C and the time limit.
const MAX_NAP: Duration = Duration::from_millis(50);
/// How long the tap may take to reach EOF once the tree has ended.
const TAP_DRAIN: Duration = Duration::from_secs(2);

/// What the main loop waits for, from the reaper and the stdout tap.
#[derive(Debug)]
pub(crate) enum Event {
    Reaped(Reaped),
    /// No child is left: the tree has ended.
    TreeEnded(Instant),
    /// A stdout line matched marker pattern `pattern` (0 is the built-in
    /// one); `at` is when the tap read it.
    Mark {
        pattern: u32,
        label: String,
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
    /// `compare --metrics`: where each sample is published, and the
    /// experiment's label.
    pub metrics: Option<(&'a crate::metrics::Shared, &'a str)>,
}

pub enum Outcome {
    Finished(Box<RunRecord>),
    /// Ctrl-C or SIGTERM: the workload was ended and the run is not kept.
    Interrupted,
}

/// Why allocscope ended the workload itself.
#[derive(Clone, Copy, PartialEq)]
enum Ending {
    TimeLimit,
    Interrupt,
}

/// Tree-wide totals from wait4 of every reaped process.
#[derive(Default)]
struct Usage {
    user_s: f64,
    sys_s: f64,
    max_hwm_bytes: u64,
    minor_faults: u64,
    major_faults: u64,
}

impl Usage {
    fn add(&mut self, reaped: &Reaped) {
        self.user_s += reaped.user_s;
        self.sys_s += reaped.sys_s;
        self.max_hwm_bytes = self.max_hwm_bytes.max(reaped.max_rss_bytes);
        self.minor_faults += reaped.minor_faults;
        self.major_faults += reaped.major_faults;
    }
}

pub fn execute(launch: &Launch, interrupt: &Interrupt) -> anyhow::Result<Outcome> {
    let own_pid = std::process::id() as i32;
    let mut sampler = Sampler::new(DEFAULT_BUDGET);
    let mut walker = TreeWalker::new(own_pid);
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let start = Instant::now();
    let stdout_file = std::fs::File::create(&launch.stdout_path)
        .with_context(|| format!("creating '{}'", launch.stdout_path.display()))?;
    let memory_limit = launch.memory_limit.map(limit::MemoryLimit::prepare);
    let mut heap = launch.probe.map(heap::HeapRun::new).transpose()?;
    let env = match &heap {
        Some(h) => h.env(&launch.config.env, launch.interval),
        None => launch.config.env.clone(),
    };
    if let Some(reader) = heap.as_ref().and_then(heap::HeapRun::reader) {
        sampler.attach_probe(reader);
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
    let mut service = launch
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

    let mut load_check = LoadCheck::new(launch.config.library.clone());
    let mut samples: Vec<Sample> = Vec::new();
    let mut markers: Vec<Marker> = Vec::new();
    let mut tap_ended = false;
    let mut usage = Usage::default();
    let mut main_status: Option<i32> = None;
    let mut ending: Option<Ending> = None;
    let mut last_kill: Option<Instant> = None;
    let mut next_tick = start;
    let ended_at = loop {
        let now = Instant::now();
        if ending.is_none() {
            if interrupt.requested() {
                ending = Some(Ending::Interrupt);
            } else if launch.timeout.is_some_and(|limit| now - start >= limit) {
                ending = Some(Ending::TimeLimit);
            }
        }
        if ending.is_some() && last_kill.is_none_or(|at| now - at >= KILL_RETRY) {
            if let Some(service) = service.as_mut() {
                service.end_load();
            }
            process::kill_tree(pid, &walker.walk());
            last_kill = Some(now);
        }
        let mut actions = match service.as_mut() {
            Some(service) if ending.is_none() => service.poll(now),
            _ => Vec::new(),
        };
        if now >= next_tick && ending.is_none() {
            let cpu_before = thread_cpu_seconds();
            let pids = walker.walk();
            if !load_check.settled() {
                load_check.observe(pid, &pids);
            }
            if let Some(h) = heap.as_mut().filter(|h| !h.settled()) {
                h.observe(pid, &pids);
            }
            sampler.charge(thread_cpu_seconds() - cpu_before);
            if !pids.is_empty() {
                let t_s = (now - start).as_secs_f64();
                samples.push(sampler.sample(&pids, t_s));
                if let (Some((shared, label)), Some(&sample)) = (launch.metrics, samples.last()) {
                    crate::metrics::publish(shared, label, &launch.config.name, sample, &sampler);
                }
            }
            next_tick += launch.interval;
            if next_tick <= now {
                next_tick = now + launch.interval;
            }
        } else if !(load_check.settled() && heap_settled(&heap)) && ending.is_none() {
            // The dynamic loader maps preloads within milliseconds of exec:
            // look early so that short runs are verified too.
            let cpu_before = thread_cpu_seconds();
            let pids = walker.walk();
            load_check.observe(pid, &pids);
            if let Some(h) = heap.as_mut() {
                h.observe(pid, &pids);
            }
            sampler.charge(thread_cpu_seconds() - cpu_before);
        }
        let mut nap = next_tick
            .saturating_duration_since(Instant::now())
            .min(MAX_NAP);
        if !(load_check.settled() && heap_settled(&heap)) {
            nap = nap.min(load_check.poll_interval());
        }
        match events.recv_timeout(nap) {
            Ok(Event::Reaped(reaped)) => {
                let is_load = service.as_ref().is_some_and(|s| s.is_load(reaped.pid));
                if !is_load {
                    usage.add(&reaped);
                }
                if reaped.pid == pid {
                    main_status = Some(reaped.status);
                }
                if let Some(service) = service.as_mut() {
                    actions.extend(service.on_reaped(reaped.pid, reaped.status, Instant::now()));
                }
            }
            Ok(Event::Ready(at)) => {
                if let Some(service) = service.as_mut().filter(|_| ending.is_none()) {
                    actions.extend(service.on_ready(at)?);
                }
            }
            Ok(Event::LoadDone(report, at)) => {
                if let Some(service) = service.as_mut() {
                    actions.extend(service.on_load_done(&report, at));
                }
            }
            Ok(Event::TreeEnded(at)) => break at,
            Ok(Event::Mark { pattern, label, at }) => {
                // A fresh reading of the tree for this marker; it also joins
                // the time series. Not while the tree is being killed.
                if ending.is_none() {
                    samples.extend(fresh_sample(&mut walker, &mut sampler, start, false));
                }
                let t_s = at.saturating_duration_since(start).as_secs_f64();
                markers.extend(marker_at(pattern, label, t_s, samples.last()));
            }
            Ok(Event::TapEnded) => tap_ended = true,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break Instant::now(),
        }
        for action in actions {
            match action {
                service::Action::Exclude(load_pid) => walker.exclude(load_pid),
                service::Action::Terminate => process::terminate_tree(pid, &walker.walk()),
                service::Action::Kill => process::kill_tree(pid, &walker.walk()),
                service::Action::Mark(label) => {
                    samples.extend(fresh_sample(&mut walker, &mut sampler, start, true));
                    let t_s = samples.last().map_or(0.0, |s| s.t_s);
                    if let (Some(service), Some(sample)) = (service.as_mut(), samples.last()) {
                        service.sampled(label, sample);
                    }
                    markers.extend(marker_at(0, label.to_string(), t_s, samples.last()));
                }
            }
        }
    };

    if ending == Some(Ending::Interrupt) {
        return Ok(Outcome::Interrupted);
    }
    // The tree is gone, so every write end of the stdout pipe is closed and
    // the tap is about to reach EOF: collect the markers it still holds.
    // Nothing is left to measure for them, so they carry the tree's last
    // reading (the last sample), which is what its memory was when it ended;
    // a marker is dropped only when the run has no sample at all. The wait
    // is bounded: a descendant that handed its stdout to a process outside
    // the tree could hold the pipe open; that tap thread then ends with the
    // pipe, and the stdout file holds what was read until then.
    let drain_until = Instant::now() + TAP_DRAIN;
    while !tap_ended {
        match events.recv_timeout(drain_until.saturating_duration_since(Instant::now())) {
            Ok(Event::Mark { pattern, label, at }) => {
                let t_s = at.saturating_duration_since(start).as_secs_f64();
                markers.extend(marker_at(pattern, label, t_s, samples.last()));
            }
            Ok(Event::Reaped(_) | Event::TreeEnded(_) | Event::Ready(_) | Event::LoadDone(..)) => {}
            Ok(Event::TapEnded) | Err(_) => tap_ended = true,
        }
    }
    let classified = match (ending, main_status) {
        (Some(_), _) => {
            let limit = launch.timeout.unwrap_or_default();
            let message = format!(
                "killed after the time limit of {}",
                crate::units::format_seconds(limit.as_secs_f64())
            );
            (RunStatus::Timeout, None, None, Some(message))
        }
        (None, Some(raw)) => classify_wait_status(raw),
        (None, None) => (
            RunStatus::Failed,
            None,
            None,
            Some("the workload's exit status was lost".into()),
        ),
    };
    let (classified, service_record) = match service {
        Some(service) if ending.is_none() => {
            let (classified, record) = service.conclude(classified);
            (classified, Some(record))
        }
        Some(service) => {
            let record = service.conclude(classified.clone()).1;
            (classified, Some(record))
        }
        None => (classified, None),
    };
    let (mut status, exit_code, signal, mut message) = classified;
    if let Some(limit) = &memory_limit {
        let oom_kills = limit.oom_kills();
        let described = limit.describe();
        if oom_kills > 0 && status != RunStatus::Timeout {
            status = RunStatus::Oom;
            message = Some(format!(
                "the kernel's OOM killer ended {oom_kills} process(es); {described}"
            ));
        } else {
            message = Some(message.map_or(described.clone(), |m| format!("{m}; {described}")));
        }
    }
    if status != RunStatus::Timeout && status != RunStatus::Oom {
        if let Some(reason) =
            load_check.not_loaded_reason(launch.preload_ignored.as_deref(), launch.own_allocator)
        {
            status = RunStatus::NotLoaded;
            message = Some(reason);
        } else if !load_check.verified() && launch.config.library.is_some() {
            let note = "the run ended before allocscope could check that the allocator was loaded";
            message = Some(message.map_or(note.to_string(), |m| format!("{m}; {note}")));
        }
    }
    let (probe_mode, probe_cpu_s) = match &heap {
        Some(h) => h.conclude(
            sampler.finish_probe(),
            launch.preload_ignored.as_deref(),
            &mut status,
            &mut message,
        ),
        None => (None, None),
    };
    drop(heap);
    let mut linked_allocators = launch.linked_allocators.clone();
    for name in load_check.other_allocators() {
        if !linked_allocators.contains(&name) {
            linked_allocators.push(name);
        }
    }
    Ok(Outcome::Finished(Box::new(RunRecord {
        index: launch.index,
        status,
        exit_code,
        signal,
        wall_s: (ended_at - start).as_secs_f64(),
        user_s: usage.user_s,
        sys_s: usage.sys_s,
        max_hwm_bytes: usage.max_hwm_bytes,
        minor_faults: usage.minor_faults,
        major_faults: usage.major_faults,
        samples,
        markers,
        stdout_path: launch.stdout_path.clone(),
        stderr_path: launch.stderr_path.clone(),
        message,
        linked_allocators,
        sampler_cpu_s: sampler.cpu_seconds(),
        started_at,
        probe_mode,
        probe_cpu_s,
        service: service_record,
    })))
}

fn heap_settled(heap: &Option<heap::HeapRun>) -> bool {
    heap.as_ref().is_none_or(heap::HeapRun::settled)
}

/// A reading of the tree right now (its walk charged to the sampler's
/// budget), PSS included whatever the budget when `with_pss`; `None` when
/// no process of the tree is left.
fn fresh_sample(
    walker: &mut TreeWalker,
    sampler: &mut Sampler,
    start: Instant,
    with_pss: bool,
) -> Option<Sample> {
    let cpu_before = thread_cpu_seconds();
    let pids = walker.walk();
    sampler.charge(thread_cpu_seconds() - cpu_before);
    if pids.is_empty() {
        return None;
    }
    let t_s = (Instant::now() - start).as_secs_f64();
    Some(if with_pss {
        sampler.sample_with_pss(&pids, t_s)
    } else {
        sampler.sample(&pids, t_s)
    })
}

/// A marker with the memory of `sample`, the reading taken for it.
fn marker_at(pattern: u32, label: String, t_s: f64, sample: Option<&Sample>) -> Option<Marker> {
    let sample = sample?;
    Some(Marker {
        label,
        pattern,
        t_s,
        rss_bytes: sample.rss_bytes,
        pss_bytes: sample.pss_bytes,
        vsz_bytes: sample.vsz_bytes,
    })
}
