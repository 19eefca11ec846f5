//! The soak on the core's run engine (`run::Engine`): every instance
//! (`watched.rs`), running in place (`--pid`) or started by the soak
//! (`-- COMMAND`), ticked on its sampling loop each interval, each stored as a recording of its own and
//! appended at the store's cadence (`store::Appender`), all instances'
//! samples of a tick in one commit, until the duration,
//! Ctrl-C, every instance ended, or with `until_settled` every
//! configuration settled with the verdict deciding the same at two looks
//! in a row. At every ending what was sampled is committed,
//! the launched instances stopped, each recording finished. While it runs,
//! `live.rs` shows it every `Live::every`.

use crate::config::{self, combine};
use crate::instance::InstanceSummary;
use crate::launch::{self, Recipe};
use crate::live::{Live, Showing};
use crate::verdict::{verdict, Outcome};
use crate::watched::{Attached, ProcSplit, Source, Watched, GRACE};
use allocscope_core::model::Sample;
use allocscope_core::run::sampling::SamplingLoop;
use allocscope_core::run::{unix_now, Engine, Event, Hooks, Interrupt, Stopped};
use allocscope_core::sample::proc;
use allocscope_core::store::{commit_together, Ending, NewRecording, Store};
use allocscope_core::units::format_seconds;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The longest the loop sleeps before looking at Ctrl-C and the duration.
const MAX_NAP: Duration = Duration::from_millis(100);
/// How often `until_settled` looks whether every configuration settled.
pub const SETTLED_LOOK_EVERY: Duration = Duration::from_secs(5);

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
    /// The Unix time the soak began: its elapsed time and `duration` count
    /// from here, across a resume.
    pub began_unix: f64,
    /// `--resume`: each instance continues its recording, with its samples
    /// so far and a restart marked; new instances are started.
    pub resumed: bool,
    pub interval: Duration,
    pub duration: Option<Duration>,
    pub until_settled: bool,
    /// What it shows while it runs; `None` for nothing (a cluster job's).
    pub live: Option<Live>,
    /// Told every instance after each pass in which one kept a sample
    /// (`--metrics`); `None` for nothing.
    pub publish: Option<Publish>,
    /// An instance run as a cluster job: shown the instances at each
    /// settled look; `None` for nothing.
    pub remote: Option<Remote>,
}

/// What `--metrics` serves, handed the instances after each pass that
/// sampled.
pub type Publish = Box<dyn Fn(&[Watched])>;

/// A cluster job's instance (`soak --executor slurm`), handed the instances
/// and the elapsed seconds every `SETTLED_LOOK_EVERY`: it sends them to the
/// soak that submitted it, which alone sees every configuration, and
/// returns the status to end with once that soak has seen them settle.
pub type Remote = Box<dyn Fn(&[Watched], f64) -> Option<&'static str>>;

/// Why the soak stopped: `complete` (the duration), `settled`,
/// `interrupted`, `exited` (every instance) or `failed` (the store, or an
/// instance that could not be restarted, with the error).
pub struct Soaked {
    pub instances: Vec<Watched>,
    pub status: &'static str,
    pub failure: Option<anyhow::Error>,
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
    // The taps' ends do not matter here: the engine drains them.
    let (events_tx, events) = mpsc::channel::<Event>();
    let mut watched = begin(store, instances, settings, &events_tx)?;
    let elapsed = || unix_now() - settings.began_unix;
    let start = Instant::now();
    let showing = (settings.live.as_ref()).map(|live| {
        let (id, until) = (settings.soak_id, settings.until_settled);
        Showing::new(live, id, settings.duration, until, start)
    });
    let engine = Engine {
        interrupt,
        until: (settings.duration)
            .map(|d| start + d.saturating_sub(Duration::from_secs_f64(elapsed().max(0.0)))),
        extensions: &[],
        events: &events,
        max_nap: MAX_NAP,
        // Its launched instances are stopped by `finish`, SIGTERM first.
        kill_wait: None,
    };
    let mut soaking = Soaking {
        store,
        recipe,
        events: events_tx,
        showing,
        settings,
        last_look: start,
        looks: SettledLooks::default(),
        kept_since_publish: false,
    };
    let Stopped {
        status, failure, ..
    } = engine.run(&mut watched, &mut soaking);
    let elapsed_s = elapsed();
    // A store that failed while finishing fails the soak too.
    let finished = finish(soaking.store, recipe, &mut watched, status);
    let failure = failure.or(finished.err());
    Ok(Soaked {
        elapsed_s,
        sampler_cpu_s: watched.iter().map(Watched::sampler_cpu_s).sum(),
        instances: watched,
        status: if failure.is_some() { "failed" } else { status },
        failure,
    })
}

/// The soak's side of the engine's loop: a launched instance's exit,
/// readiness and restart before its tick, each tick's sample held, every
/// instance's samples in one commit a pass (one sync of the journal, not
/// one an instance), the live view, and `until_settled`.
struct Soaking<'a> {
    store: &'a mut Store,
    recipe: Option<&'a Recipe>,
    events: mpsc::Sender<Event>,
    showing: Option<Showing<'a>>,
    settings: &'a Settings,
    last_look: Instant,
    looks: SettledLooks,
    /// Some instance kept a sample since `publish` was last told: the loop
    /// wakes every `MAX_NAP` and for each event, most of them without one.
    kept_since_publish: bool,
}

impl Hooks<Watched> for Soaking<'_> {
    fn before_tick(&mut self, w: &mut Watched, _: Instant) -> anyhow::Result<()> {
        match self.recipe {
            Some(recipe) => w.look(self.store, recipe, &self.events),
            None => Ok(()),
        }
    }

    fn ticked(&mut self, w: &mut Watched, _: Instant, kept: Option<&Sample>) -> anyhow::Result<()> {
        if let Some(sample) = kept {
            w.keep(sample);
            self.kept_since_publish = true;
        }
        w.appender.hold(kept);
        Ok(())
    }

    fn gone(&mut self, w: &mut Watched) {
        w.gone();
    }

    fn after_pass(
        &mut self,
        watched: &mut [Watched],
        now: Instant,
    ) -> anyhow::Result<Option<&'static str>> {
        if watched.iter().any(|w| w.appender.due(now)) {
            commit_together(self.store, now, watched.iter_mut().map(|w| &mut w.appender))?;
        }
        if let Some(publish) = &self.settings.publish {
            if std::mem::take(&mut self.kept_since_publish) {
                publish(watched);
            }
        }
        let elapsed_s = unix_now() - self.settings.began_unix;
        if let Some(showing) = self.showing.as_mut() {
            showing.look(now, elapsed_s, watched, self.store)?;
        }
        // Settled: every configuration settled and the verdict decided the
        // same at two looks in a row (every instance ended: `exited`).
        let remote = self.settings.remote.as_ref();
        let looks = self.settings.until_settled || remote.is_some();
        if !looks
            || !watched.iter().any(|w| w.running())
            || now - self.last_look < SETTLED_LOOK_EVERY
        {
            return Ok(None);
        }
        self.last_look = now;
        if let Some(remote) = remote {
            return Ok(remote(watched, elapsed_s));
        }
        Ok(self.looks.look(watched, elapsed_s).map(|_| "settled"))
    }
}

/// Each instance's recording begun (or, resumed, continued), a launched
/// one started first, all ticking on one schedule.
fn begin(
    store: &mut Store,
    instances: &Instances,
    settings: &Settings,
    events: &mpsc::Sender<Event>,
) -> anyhow::Result<Vec<Watched>> {
    let hostname = allocscope_core::host::capture().hostname;
    let interval_ms = settings.interval.as_millis() as u64;
    let mut watched = Vec::new();
    match instances {
        Instances::InPlace(attached) => {
            for a in attached.iter() {
                watched.push(in_place(store, a, attached.len(), settings, &hostname)?);
            }
        }
        Instances::Launched(recipe) => {
            let earlier = match settings.resumed {
                true => store.soak_recordings(settings.soak_id)?,
                false => Vec::new(),
            };
            for (i, flavour) in recipe.flavours.iter().enumerate() {
                for replica in recipe.replicas.clone() {
                    let name = format!("{}#{replica}", flavour.config.name);
                    let before = earlier.iter().find(|r| r.name == format!("soak {name}"));
                    let restarts = match before {
                        Some(r) => store.recording_restarts(r.id)?,
                        None => Vec::new(),
                    };
                    let starts = restarts.len() as u32 + 1 + u32::from(before.is_some());
                    let (running, sampling) =
                        launch::start(recipe, flavour, &name, starts, events)?;
                    let new = NewRecording {
                        name: format!("soak {name}"),
                        config: flavour.config.name.clone(),
                        env: flavour.config.env.clone(),
                        command: Some(running.command.clone()),
                        target_pid: running.started.pid(),
                        target_start: proc::read_stat(running.started.pid())
                            .map_or(0, |s| s.start_ticks),
                        interval_ms,
                        hostname: hostname.clone(),
                        soak_id: Some(settings.soak_id),
                    };
                    let source = Source::Launched {
                        flavour: i,
                        running: Some(Box::new(running)),
                    };
                    let w = match before {
                        Some(r) => resume(store, r.id, &new, source, sampling, settings)?,
                        None => begin_watched(store, &new, source, sampling, settings)?,
                    };
                    watched.push(w);
                }
            }
        }
    }
    // One schedule for all: their ticks fall in one pass of the loop, which
    // lists /proc and commits once for them all.
    let now = Instant::now();
    for w in watched.iter_mut() {
        w.sampling.tick_from(now);
    }
    Ok(watched)
}

/// An instance running in place, one of `instances`, its recording begun.
fn in_place(
    store: &mut Store,
    a: &Attached,
    instances: usize,
    settings: &Settings,
    hostname: &str,
) -> anyhow::Result<Watched> {
    let new = NewRecording {
        name: format!("soak {}={}", a.label, a.pid),
        config: a.label.clone(),
        env: Vec::new(),
        command: None,
        target_pid: a.pid,
        target_start: a.start_ticks,
        interval_ms: settings.interval.as_millis() as u64,
        hostname: hostname.to_string(),
        soak_id: Some(settings.soak_id),
    };
    let sampling = launch::soak_sampling(a.pid, settings.interval, instances);
    begin_watched(store, &new, Source::Attached(a.clone()), sampling, settings)
}

/// A new instance's recording begun, and the instance watched into it.
fn begin_watched(
    store: &mut Store,
    new: &NewRecording,
    source: Source,
    sampling: SamplingLoop,
    settings: &Settings,
) -> anyhow::Result<Watched> {
    let (id, started_unix) = store.begin_recording(new)?;
    Ok(Watched::new(
        id,
        started_unix,
        new,
        source,
        sampling,
        settings.interval,
    ))
}

/// A resumed instance's recording `id` taken over: its raw samples so far
/// back in its series, the resume marked as a restart (its plateau and
/// growth are estimated from here on; the history stays stored).
fn resume(
    store: &mut Store,
    id: i64,
    new: &NewRecording,
    source: Source,
    sampling: SamplingLoop,
    settings: &Settings,
) -> anyhow::Result<Watched> {
    let started_unix = store.resume_recording(id, new.target_pid, new.target_start)?;
    let mut w = Watched::new(id, started_unix, new, source, sampling, settings.interval);
    let earlier = store.raw_samples(id)?;
    for sample in &earlier {
        w.series.push(sample, false);
    }
    w.last = earlier.last().copied();
    w.restarts = (store.recording_restarts(id)?.into_iter())
        .map(|(_, why)| why)
        .collect();
    let restart_s = unix_now() - started_unix;
    let stopped_at = format_seconds(earlier.last().map_or(0.0, |s| s.t_s));
    let why = format!("allocscope stopped after {stopped_at}; resumed");
    store.mark_restart(id, restart_s, &why)?;
    w.restarts.push(why);
    w.restart_s = Some(restart_s);
    Ok(w)
}

/// What is pending committed (its load's last figures too), each launched
/// instance still running stopped, and each recording finished with how its soak ended. Every
/// instance is stopped and every recording tried even when the store
/// fails; the first error is returned.
fn finish(
    store: &mut Store,
    recipe: Option<&Recipe>,
    watched: &mut [Watched],
    status: &'static str,
) -> anyhow::Result<()> {
    let mut first_error = Ok(());
    for w in watched.iter_mut() {
        let flushed = w.appender.flush(store);
        first_error = first_error.and(flushed);
        if let Some(recipe) = recipe {
            first_error = first_error.and(w.read_load(store, recipe));
        }
        match &mut w.source {
            Source::Launched {
                running: Some(run), ..
            } => run.started.stop(&mut w.sampling, GRACE),
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
        let finished = store.finish_recording(w.appender.id, &ending);
        first_error = first_error.and(finished);
    }
    first_error
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
pub fn settled_decision(watched: &[Watched], elapsed_s: f64) -> Option<String> {
    let groups = by_label(watched)?;
    let settled = (groups.iter())
        .all(|(_, replicas)| combine(replicas).is_some_and(|c| c.settling.is_settled()));
    match verdict(&groups, elapsed_s).filter(|_| settled)?.outcome {
        Outcome::Pick { label, .. } => Some(format!("use {label}")),
        Outcome::KeepBaseline => Some("keep the baseline".into()),
        Outcome::LeakEverywhere => Some("a leak everywhere".into()),
        Outcome::OutsideHeapEverywhere => Some("growth outside the heap everywhere".into()),
        Outcome::Inconclusive { .. } => None,
    }
}

/// `until settled`: what every configuration's verdict decides, once it
/// decides the same at two looks in a row; over a soak's own instances, or
/// over those its cluster jobs sent (`job.rs`).
#[derive(Default)]
pub struct SettledLooks {
    last: Option<String>,
}

impl SettledLooks {
    /// The decision, when `instances` at `elapsed_s` settle it a second
    /// time in a row.
    pub fn look(&mut self, instances: &[Watched], elapsed_s: f64) -> Option<String> {
        let decision = settled_decision(instances, elapsed_s);
        let again = decision.is_some() && decision == self.last;
        self.last = decision;
        again.then(|| self.last.clone()).flatten()
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
