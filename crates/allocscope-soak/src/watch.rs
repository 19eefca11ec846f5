//! `soak --pid`: instances already running, sampled in place. One loop
//! ticks the core's sampling loop of every instance (the process and its
//! descendants, while it is still the process that was checked) each
//! interval, stores each instance as a recording of its own under its label
//! the way `record --pid` does (appended at least once a second), keeps the
//! memory series the statistics read, and stops at the duration, at Ctrl-C,
//! when every instance has exited, or with `until_settled` once every
//! configuration has settled. Nothing is started or stopped.

use crate::config::combine;
use crate::instance::{summarize, InstanceSeries, InstanceSummary};
use allocscope_core::model::Sample;
use allocscope_core::run::sampling::{SamplingLoop, Tick};
use allocscope_core::run::Interrupt;
use allocscope_core::sample::proc;
use allocscope_core::store::{Ending, NewRecording, Store};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Samples are committed at least this often: what a crash can lose.
const COMMIT_EVERY: Duration = Duration::from_secs(1);
/// How often `until_settled` looks whether every configuration settled.
const SETTLED_LOOK_EVERY: Duration = Duration::from_secs(5);
/// The longest the loop sleeps before looking at Ctrl-C and the duration.
const MAX_NAP: Duration = Duration::from_millis(100);

/// A running instance, checked: its label, pid and start time (clock ticks
/// after boot, which tell a reused pid apart).
#[derive(Debug, Clone)]
pub struct Attached {
    pub label: String,
    pub pid: i32,
    pub start_ticks: u64,
}

pub struct Settings {
    pub interval: Duration,
    pub duration: Option<Duration>,
    pub until_settled: bool,
}

/// One instance as the soak saw it.
pub struct Watched {
    pub attached: Attached,
    pub recording: i64,
    /// `(t_s, RSS bytes)` of every kept sample, in time order.
    pub memory: Vec<(f64, f64)>,
    pub last: Option<Sample>,
    /// It exited before the soak ended.
    pub exited: bool,
    /// Its tree's RSS split from /proc when the soak ended; `None` once it
    /// exited.
    pub split: Option<ProcSplit>,
    pending: Vec<Sample>,
    sampling: SamplingLoop,
    started_unix: f64,
}

/// Why the soak stopped: `complete` (the duration), `settled`,
/// `interrupted` or `exited` (every instance).
pub struct Soaked {
    pub instances: Vec<Watched>,
    pub status: &'static str,
    pub elapsed_s: f64,
    pub sampler_cpu_s: f64,
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Soaks `instances` into `store` until one of the endings.
pub fn watch(
    store: &mut Store,
    instances: &[Attached],
    settings: &Settings,
    interrupt: &Interrupt,
) -> anyhow::Result<Soaked> {
    let mut watched = begin(store, instances, settings)?;
    let start = Instant::now();
    let (mut last_commit, mut last_look) = (start, start);
    let status = loop {
        let now = Instant::now();
        if interrupt.requested() {
            break "interrupted";
        }
        if settings.duration.is_some_and(|d| now - start >= d) {
            break "complete";
        }
        for w in watched.iter_mut().filter(|w| !w.exited) {
            tick(w, now);
        }
        if watched.iter().all(|w| w.exited) {
            break "exited";
        }
        if now - last_commit >= COMMIT_EVERY || settings.interval >= COMMIT_EVERY {
            commit(store, &mut watched)?;
            last_commit = now;
        }
        if settings.until_settled && now - last_look >= SETTLED_LOOK_EVERY {
            last_look = now;
            if every_configuration_settled(&watched) {
                break "settled";
            }
        }
        let nap = watched
            .iter()
            .filter(|w| !w.exited)
            .map(|w| w.sampling.nap(MAX_NAP))
            .min()
            .unwrap_or(MAX_NAP);
        std::thread::sleep(nap);
    };
    finish(store, &mut watched, status)?;
    Ok(Soaked {
        elapsed_s: start.elapsed().as_secs_f64(),
        sampler_cpu_s: watched
            .iter()
            .map(|w| w.sampling.sampler().cpu_seconds())
            .sum(),
        instances: watched,
        status,
    })
}

/// Each instance's recording begun, and its sampling loop.
fn begin(
    store: &mut Store,
    instances: &[Attached],
    settings: &Settings,
) -> anyhow::Result<Vec<Watched>> {
    let hostname = allocscope_core::host::capture().hostname;
    let mut watched = Vec::with_capacity(instances.len());
    for attached in instances {
        let (recording, started_unix) = store.begin_recording(&NewRecording {
            name: format!("soak {}={}", attached.label, attached.pid),
            config: attached.label.clone(),
            env: Vec::new(),
            command: None,
            target_pid: attached.pid,
            target_start: attached.start_ticks,
            interval_ms: settings.interval.as_millis() as u64,
            hostname: hostname.clone(),
        })?;
        watched.push(Watched {
            attached: attached.clone(),
            recording,
            memory: Vec::new(),
            last: None,
            exited: false,
            split: None,
            pending: Vec::new(),
            sampling: SamplingLoop::new(attached.pid, settings.interval),
            started_unix,
        });
    }
    Ok(watched)
}

/// What is pending committed, each instance still running split from
/// /proc, and each recording finished with how its soak ended.
fn finish(store: &mut Store, watched: &mut [Watched], status: &'static str) -> anyhow::Result<()> {
    commit(store, watched)?;
    for w in watched.iter_mut().filter(|w| !w.exited) {
        w.split = read_split(w);
    }
    for w in watched.iter() {
        let status = if w.exited { "exited" } else { status };
        let ending = Ending {
            status: if status == "settled" {
                "complete"
            } else {
                status
            },
            exit_code: None,
            signal: None,
            message: Some(format!("soak of {}={}", w.attached.label, w.attached.pid)),
        };
        store.finish_recording(w.recording, &ending)?;
    }
    Ok(())
}

/// The instance's tick, if due: a kept sample joins its series and its
/// pending samples; an instance no longer there has exited.
fn tick(w: &mut Watched, now: Instant) {
    let (pid, start_ticks, started_unix) = (w.attached.pid, w.attached.start_ticks, w.started_unix);
    let tick = w.sampling.tick(
        now,
        |pids| {
            if proc::same_process(pid, start_ticks) {
                pids.push(pid);
            }
        },
        || unix_now() - started_unix,
    );
    match tick {
        Tick::NotDue => {}
        Tick::Empty => w.exited = !proc::same_process(pid, start_ticks),
        // A zombie or a process gone since the walk has no memory: its 0
        // would read as freed memory.
        Tick::Sampled(sample) if sample.rss_bytes == 0 => {}
        Tick::Sampled(sample) => {
            w.memory.push((sample.t_s, sample.rss_bytes as f64));
            w.last = Some(sample);
            w.pending.push(sample);
        }
    }
}

/// A tree's resident memory by kind, from each process's status
/// (`RssAnon`, `RssFile`, `RssShmem`) and smaps_rollup (`AnonHugePages`,
/// part of the anonymous memory): what /proc says without the heap probe.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcSplit {
    pub anon_bytes: u64,
    pub file_bytes: u64,
    pub shmem_bytes: u64,
    pub huge_pages_bytes: u64,
}

/// The instance's tree split now; `None` when it is gone or its kernel
/// splits no RSS (before Linux 4.5).
fn read_split(w: &mut Watched) -> Option<ProcSplit> {
    let mut pids = w.sampling.walk();
    if proc::same_process(w.attached.pid, w.attached.start_ticks) {
        pids.push(w.attached.pid);
    }
    let mut split = ProcSplit::default();
    let mut read = false;
    for pid in pids {
        let Some(parts) = proc::read_status_memory(pid).and_then(|m| m.rss_parts) else {
            continue;
        };
        read = true;
        split.anon_bytes += parts.anon_bytes;
        split.file_bytes += parts.file_bytes;
        split.shmem_bytes += parts.shmem_bytes;
        if let Some((_, anon)) = proc::read_smaps_rollup_with_anon(pid) {
            split.huge_pages_bytes += anon.huge_pages_bytes;
        }
    }
    read.then_some(split)
}

fn commit(store: &mut Store, watched: &mut [Watched]) -> anyhow::Result<()> {
    for w in watched.iter_mut() {
        store.append_samples(w.recording, &w.pending)?;
        w.pending.clear();
    }
    Ok(())
}

/// Each instance's summary from its memory alone: the heap probe cannot be
/// injected into a running process, so no live heap or allocator free
/// memory is known. `None` for an instance with too few samples yet.
pub fn summaries(watched: &[Watched]) -> Vec<Option<InstanceSummary>> {
    watched
        .iter()
        .map(|w| {
            summarize(&InstanceSeries {
                memory: &w.memory,
                live_heap: &[],
                allocator_free: &[],
                restart_s: None,
            })
        })
        .collect()
}

/// The instances grouped by label in the order first given: a label given
/// to several pids is one configuration of several replicas. `None` when
/// an instance has no summary yet.
pub fn by_label(
    watched: &[Watched],
    summaries: &[Option<InstanceSummary>],
) -> Option<Vec<(String, Vec<InstanceSummary>)>> {
    let mut groups: Vec<(String, Vec<InstanceSummary>)> = Vec::new();
    for (w, summary) in watched.iter().zip(summaries) {
        let summary = summary.clone()?;
        match groups.iter_mut().find(|g| g.0 == w.attached.label) {
            Some(group) => group.1.push(summary),
            None => groups.push((w.attached.label.clone(), vec![summary])),
        }
    }
    Some(groups)
}

fn every_configuration_settled(watched: &[Watched]) -> bool {
    by_label(watched, &summaries(watched)).is_some_and(|groups| {
        groups
            .iter()
            .all(|(_, replicas)| combine(replicas).is_some_and(|c| c.settling.is_settled()))
    })
}
