//! The soak's one loop: every instance (`watched.rs`), running in place
//! (`--pid`) or started by the soak (`-- COMMAND`), ticked on the core's
//! sampling loop each interval, each stored as a recording of its own and
//! appended at the store's cadence (`store::Appender`), until the duration,
//! Ctrl-C, every instance ended, or with `until_settled` every
//! configuration settled with the verdict deciding the same at two looks
//! in a row. At every ending what was sampled is committed,
//! the launched instances stopped, each recording finished.

use crate::config::{self, combine};
use crate::instance::InstanceSummary;
use crate::launch::{self, Recipe};
use crate::verdict::{verdict, Outcome};
use crate::watched::{Attached, ProcSplit, Source, Watched, GRACE};
use allocscope_core::run::sampling::SamplingLoop;
use allocscope_core::run::{Event, Interrupt};
use allocscope_core::sample::proc;
use allocscope_core::store::{Appender, Ending, NewRecording, Store};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How often `until_settled` looks whether every configuration settled.
const SETTLED_LOOK_EVERY: Duration = Duration::from_secs(5);
/// The longest the loop sleeps before looking at Ctrl-C and the duration.
const MAX_NAP: Duration = Duration::from_millis(100);

/// What the soak follows.
pub enum Instances<'a> {
    /// Running already, sampled in place; nothing started or stopped.
    InPlace(&'a [Attached]),
    /// Started by the soak: each configuration's replicas.
    Launched(&'a Recipe),
}

pub struct Settings {
    /// The soak in the store its instances' recordings belong to.
    pub soak_id: i64,
    pub interval: Duration,
    pub duration: Option<Duration>,
    pub until_settled: bool,
}

/// Why the soak stopped: `complete` (the duration), `settled`,
/// `interrupted` or `exited` (every instance).
pub struct Soaked {
    pub instances: Vec<Watched>,
    pub status: &'static str,
    pub elapsed_s: f64,
    pub sampler_cpu_s: f64,
}

/// Soaks `instances` into `store` until one of the endings.
pub fn watch(
    store: &mut Store,
    instances: &Instances,
    settings: &Settings,
    interrupt: &Interrupt,
) -> anyhow::Result<Soaked> {
    let recipe = match instances {
        Instances::Launched(recipe) => Some(*recipe),
        Instances::InPlace(_) => None,
    };
    // The taps' markers and ends do not matter here; the receiver is
    // drained so the channel never fills.
    let (events_tx, events) = mpsc::channel::<Event>();
    let mut watched = begin(store, instances, settings, &events_tx)?;
    let start = Instant::now();
    let mut last_look = start;
    let mut last_decision = None;
    let status = loop {
        let now = Instant::now();
        if interrupt.requested() {
            break "interrupted";
        }
        if settings.duration.is_some_and(|d| now - start >= d) {
            break "complete";
        }
        while events.try_recv().is_ok() {}
        for w in watched.iter_mut().filter(|w| w.running()) {
            w.turn(store, now, recipe, &events_tx)?;
        }
        if watched.iter().all(|w| !w.running()) {
            break "exited";
        }
        // Settled: every configuration settled and the verdict decided the
        // same at two looks in a row.
        if settings.until_settled && now - last_look >= SETTLED_LOOK_EVERY {
            last_look = now;
            let decision = settled_decision(&watched, (now - start).as_secs_f64());
            if decision.is_some() && decision == last_decision {
                break "settled";
            }
            last_decision = decision;
        }
        let nap = watched
            .iter()
            .filter(|w| w.running())
            .map(|w| w.sampling.nap(MAX_NAP))
            .min()
            .unwrap_or(MAX_NAP);
        std::thread::sleep(nap);
    };
    let elapsed_s = start.elapsed().as_secs_f64();
    finish(store, &mut watched, status)?;
    Ok(Soaked {
        elapsed_s,
        sampler_cpu_s: watched.iter().map(Watched::sampler_cpu_s).sum(),
        instances: watched,
        status,
    })
}

/// Each instance's recording begun, a launched one started first.
fn begin(
    store: &mut Store,
    instances: &Instances,
    settings: &Settings,
    events: &mpsc::Sender<Event>,
) -> anyhow::Result<Vec<Watched>> {
    let hostname = allocscope_core::host::capture().hostname;
    let interval_ms = settings.interval.as_millis() as u64;
    let mut watched = Vec::new();
    let mut add = |store: &mut Store, new: NewRecording, label: String, source, sampling| {
        let (id, started_unix) = store.begin_recording(&new)?;
        watched.push(Watched {
            label,
            name: new.name.trim_start_matches("soak ").to_string(),
            source,
            appender: Appender::new(id, settings.interval, Instant::now()),
            series: Default::default(),
            restart_s: None,
            last: None,
            ended: None,
            restarts: Vec::new(),
            split: None,
            sampling,
            earlier_cpu_s: 0.0,
            started_unix,
        });
        anyhow::Ok(())
    };
    match instances {
        Instances::InPlace(attached) => {
            for a in attached.iter() {
                let new = NewRecording {
                    name: format!("soak {}={}", a.label, a.pid),
                    config: a.label.clone(),
                    env: Vec::new(),
                    command: None,
                    target_pid: a.pid,
                    target_start: a.start_ticks,
                    interval_ms,
                    hostname: hostname.clone(),
                    soak_id: Some(settings.soak_id),
                };
                let sampling = SamplingLoop::new(a.pid, settings.interval);
                add(
                    store,
                    new,
                    a.label.clone(),
                    Source::Attached(a.clone()),
                    sampling,
                )?;
            }
        }
        Instances::Launched(recipe) => {
            for (i, flavour) in recipe.flavours.iter().enumerate() {
                for replica in 1..=recipe.replicas {
                    let name = format!("{}#{replica}", flavour.config.name);
                    let (running, sampling) = launch::start(recipe, flavour, &name, 1, events)?;
                    let new = NewRecording {
                        name: format!("soak {name}"),
                        config: flavour.config.name.clone(),
                        env: flavour.config.env.clone(),
                        command: Some(running.command.clone()),
                        target_pid: running.pid,
                        target_start: proc::read_stat(running.pid).map_or(0, |s| s.start_ticks),
                        interval_ms,
                        hostname: hostname.clone(),
                        soak_id: Some(settings.soak_id),
                    };
                    let source = Source::Launched {
                        flavour: i,
                        running: Some(Box::new(running)),
                    };
                    add(store, new, flavour.config.name.clone(), source, sampling)?;
                }
            }
        }
    }
    Ok(watched)
}

/// What is pending committed, each launched instance still running
/// stopped, and each recording finished with how its soak ended.
fn finish(store: &mut Store, watched: &mut [Watched], status: &'static str) -> anyhow::Result<()> {
    for w in watched.iter_mut() {
        w.appender.flush(store)?;
        match &mut w.source {
            Source::Launched {
                running: Some(run), ..
            } => launch::stop(run, &mut w.sampling, GRACE),
            Source::Attached(a) if w.ended.is_none() => {
                let a = a.clone();
                w.split = read_split(w, &a);
            }
            _ => {}
        }
    }
    for w in watched.iter() {
        let ending = w.ended.clone().unwrap_or_else(|| Ending {
            status: if status == "settled" {
                "complete"
            } else {
                status
            },
            exit_code: None,
            signal: None,
            message: Some(match w.restarts.len() {
                0 => format!("soak of {}", w.name),
                n => format!("soak of {}, restarted {n} times", w.name),
            }),
        });
        store.finish_recording(w.appender.id, &ending)?;
    }
    Ok(())
}

/// The instances grouped by label (`config::by_label`); `None` while a
/// running instance has no summary yet.
pub fn by_label(watched: &[Watched]) -> Option<Vec<(String, Vec<InstanceSummary>)>> {
    config::by_label(
        watched
            .iter()
            .map(|w| (w.label.as_str(), w.summary(), w.running())),
    )
}

/// What the verdict decides now, when every configuration has settled and
/// it decides something: the pick, keeping the baseline, or a leak
/// everywhere. `None` while any configuration is open or it is
/// inconclusive.
fn settled_decision(watched: &[Watched], elapsed_s: f64) -> Option<String> {
    let groups = by_label(watched)?;
    let settled = (groups.iter())
        .all(|(_, replicas)| combine(replicas).is_some_and(|c| c.settling.is_settled()));
    match verdict(&groups, elapsed_s).filter(|_| settled)?.outcome {
        Outcome::Pick { label, .. } => Some(format!("use {label}")),
        Outcome::KeepBaseline => Some("keep the baseline".into()),
        Outcome::LeakEverywhere => Some("a leak everywhere".into()),
        Outcome::Inconclusive { .. } => None,
    }
}

/// An instance in place's tree split now; `None` when it is gone or its
/// kernel splits no RSS (before Linux 4.5).
fn read_split(w: &mut Watched, attached: &Attached) -> Option<ProcSplit> {
    let mut pids = w.sampling.walk();
    if proc::same_process(attached.pid, attached.start_ticks) {
        pids.push(attached.pid);
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
