//! One instance as the soak follows it: running in place (`--pid`) or
//! started by the soak (`-- COMMAND`, `launch.rs`); its tick, the series
//! the statistics read, how it ended and each time it was restarted.

use crate::instance::{summarize, InstanceSeries, InstanceSummary};
use crate::launch::{self, Recipe, Running};
use crate::load_figures::{self, LoadSeries};
use allocscope_core::model::{RunStatus, Sample};
use allocscope_core::run::sampling::SamplingLoop;
use allocscope_core::run::{classify_wait_status, unix_now, Clock, Event, Followed, Root};
use allocscope_core::store::{Appender, Ending, NewRecording, Store};
use allocscope_core::units::format_seconds;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// A running instance, checked: its label, pid and start time (clock ticks
/// after boot, which tell a reused pid apart).
#[derive(Debug, Clone)]
pub struct Attached {
    pub label: String,
    pub pid: i32,
    pub start_ticks: u64,
}

pub enum Source {
    Attached(Attached),
    /// Started by the soak: its configuration's index in the recipe, and
    /// its process while one runs.
    Launched {
        flavour: usize,
        running: Option<Box<Running>>,
    },
}

/// The `(t_s, bytes)` series the statistics read, in time order.
#[derive(Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Series {
    /// What the soak judges by: the cgroup's working set where the instance
    /// has a group, else PSS; RSS for an instance running in place.
    pub memory: Vec<(f64, f64)>,
    pub live_heap: Vec<(f64, f64)>,
    pub allocator_free: Vec<(f64, f64)>,
    /// The tree's cumulative CPU seconds.
    #[serde(default)]
    pub cpu: Vec<(f64, f64)>,
    /// What a server's load printed that a `--metric` matched.
    #[serde(default)]
    pub load: Vec<LoadSeries>,
}

impl Series {
    /// A sample's figures appended: the memory judged is RSS for an
    /// instance running in place, else the cgroup's working set, else PSS.
    pub fn push(&mut self, sample: &Sample, in_place: bool) {
        let memory = match (in_place, sample.cgroup) {
            (true, _) => Some(sample.rss_bytes),
            (false, Some(group)) => Some(group.working_set_bytes),
            (false, None) => sample.pss_bytes,
        };
        let t = sample.t_s;
        self.memory.extend(memory.map(|m| (t, m as f64)));
        (self.live_heap).extend(sample.live_heap_bytes.map(|b| (t, b as f64)));
        (self.allocator_free).extend(sample.breakdown.map(|b| (t, b.allocator_free_bytes as f64)));
        self.cpu.extend(sample.cpu_s.map(|c| (t, c)));
    }

    /// The instance's summary since `restart_s`; `None` with too few samples.
    pub fn summary(&self, restart_s: Option<f64>) -> Option<InstanceSummary> {
        let summary = summarize(&InstanceSeries {
            memory: &self.memory,
            live_heap: &self.live_heap,
            allocator_free: &self.allocator_free,
            cpu: &self.cpu,
            restart_s,
        })?;
        Some(InstanceSummary {
            load: load_figures::figures(&self.load, summary.window_start_s),
            ..summary
        })
    }
}

pub struct Watched {
    pub label: String,
    /// `glibc#2` for a launched instance, `glibc=4243` for one in place.
    pub name: String,
    pub source: Source,
    pub appender: Appender,
    pub series: Series,
    /// When it last restarted: the estimators read only what came after.
    pub restart_s: Option<f64>,
    pub last: Option<Sample>,
    /// How it ended, when it did before the soak.
    pub ended: Option<Ending>,
    /// Each restart, said.
    pub restarts: Vec<String>,
    /// In place: its tree's RSS split from /proc when the soak ended, if
    /// it still ran.
    pub split: Option<ProcSplit>,
    pub sampling: SamplingLoop,
    /// The sampler CPU of the instance's earlier starts.
    pub earlier_cpu_s: f64,
    pub started_unix: f64,
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

impl Watched {
    /// Follows recording `id` (its `t_s` counting from `started_unix`),
    /// begun as `new`, with nothing sampled yet.
    pub fn new(
        id: i64,
        started_unix: f64,
        new: &NewRecording,
        source: Source,
        sampling: SamplingLoop,
        interval: Duration,
    ) -> Watched {
        Watched {
            label: new.config.clone(),
            name: new.name.trim_start_matches("soak ").to_string(),
            source,
            appender: Appender::new(id, interval, Instant::now()),
            series: Series::default(),
            restart_s: None,
            last: None,
            ended: None,
            restarts: Vec::new(),
            split: None,
            sampling,
            earlier_cpu_s: 0.0,
            started_unix,
        }
    }

    pub fn running(&self) -> bool {
        self.ended.is_none()
    }

    /// Which of its configuration's instances it is: `2` of `glibc#2`, the
    /// pid of `glibc=4243` in place.
    pub fn replica(&self) -> &str {
        let name = self.name.as_str();
        name.rsplit_once('#')
            .or_else(|| name.rsplit_once('='))
            .map_or(name, |(_, replica)| replica)
    }

    pub fn pid(&self) -> Option<i32> {
        match &self.source {
            Source::Attached(a) => Some(a.pid),
            Source::Launched { running, .. } => running.as_ref().map(|r| r.started.pid()),
        }
    }

    pub fn sampler_cpu_s(&self) -> f64 {
        self.earlier_cpu_s + self.sampling.sampler().cpu_seconds()
    }

    /// Before its tick at `now`: a launched instance's exit and readiness
    /// looked at, and an ended one restarted under `--restart`.
    pub fn look(
        &mut self,
        store: &mut Store,
        recipe: &Recipe,
        events: &Sender<Event>,
    ) -> anyhow::Result<()> {
        self.read_load(store, recipe)?;
        let Source::Launched {
            running: Some(run), ..
        } = &mut self.source
        else {
            return Ok(());
        };
        let ended = if let Some(raw) = run.started.exited() {
            ending_of(raw, run.started.oom_kills() > 0)
        } else if run.ready_too_late(recipe, &self.name) {
            run.started.stop(&mut self.sampling, GRACE);
            let message = "not ready in time: its address accepted no connection";
            ending("failed", message.to_string())
        } else {
            return Ok(());
        };
        self.exited(ended, recipe, store, events)
    }

    /// What its load printed since the last look that a `--metric` matches,
    /// kept in its series and stored.
    pub fn read_load(&mut self, store: &mut Store, recipe: &Recipe) -> anyhow::Result<()> {
        let (
            Source::Launched {
                running: Some(run), ..
            },
            Some(server),
        ) = (&mut self.source, &recipe.server)
        else {
            return Ok(());
        };
        let Some(tail) = run.load_tail.as_mut() else {
            return Ok(());
        };
        let lines = tail.lines();
        if lines.is_empty() {
            return Ok(());
        }
        let t_s = unix_now() - self.started_unix;
        let readings = load_figures::readings(&server.metrics, &lines, t_s);
        if readings.is_empty() {
            return Ok(());
        }
        store.add_readings(self.appender.id, &readings)?;
        for reading in &readings {
            load_figures::push(&mut self.series.load, reading);
        }
        Ok(())
    }

    /// Its tick's sample, if it kept one: joins the series.
    pub fn keep(&mut self, sample: &Sample) {
        let in_place = matches!(self.source, Source::Attached(_));
        self.series.push(sample, in_place);
        self.last = Some(*sample);
    }

    /// Its root, running in place, is gone.
    pub fn gone(&mut self) {
        self.ended = Some(ending("exited", "exited during the soak".into()));
    }

    /// A launched instance's process ended with `ended`: started again
    /// with `--restart`, the plateau's estimators reset; else it stays
    /// ended.
    fn exited(
        &mut self,
        ended: Ending,
        recipe: &Recipe,
        store: &mut Store,
        events: &Sender<Event>,
    ) -> anyhow::Result<()> {
        let Source::Launched { flavour, running } = &mut self.source else {
            return Ok(());
        };
        if let Some(run) = running.as_deref_mut() {
            run.started.stop_load();
        }
        *running = None;
        let at = format_seconds(unix_now() - self.started_unix);
        let what = ended.message.clone().unwrap_or_default();
        if !recipe.restart {
            self.ended = Some(Ending {
                message: Some(format!("{what} after {at}")),
                ..ended
            });
            return Ok(());
        }
        let flavour = &recipe.flavours[*flavour];
        let starts = self.restarts.len() as u32 + 2;
        let (run, sampling) = launch::start(recipe, flavour, &self.name, starts, events)?;
        *running = Some(Box::new(run));
        self.earlier_cpu_s += self.sampling.sampler().cpu_seconds();
        self.sampling = sampling;
        let restart_s = unix_now() - self.started_unix;
        self.restart_s = Some(restart_s);
        let why = format!("{what} after {at}; restarted");
        store.mark_restart(self.appender.id, restart_s, &why)?;
        self.restarts.push(why);
        Ok(())
    }

    /// The instance's summary; `None` with too few samples yet.
    pub fn summary(&self) -> Option<InstanceSummary> {
        self.series.summary(self.restart_s)
    }
}

impl Followed for Watched {
    fn parts(&mut self) -> (&mut SamplingLoop, Root<'_>) {
        let root = match &mut self.source {
            Source::Attached(a) => Root::Attached {
                pid: a.pid,
                start_ticks: a.start_ticks,
            },
            Source::Launched {
                running: Some(run), ..
            } => Root::Started(&mut run.started),
            Source::Launched { running: None, .. } => Root::Descendants,
        };
        (&mut self.sampling, root)
    }

    fn clock(&self) -> Clock {
        Clock::SinceUnix(self.started_unix)
    }

    fn running(&self) -> bool {
        Watched::running(self)
    }
}

/// How long a stopped instance may take to exit before SIGKILL.
pub const GRACE: Duration = Duration::from_secs(5);

fn ending(status: &'static str, message: String) -> Ending {
    Ending {
        status,
        exit_code: None,
        signal: None,
        message: Some(message),
    }
}

/// A wait status in the recording's words: `exited` (status 0), `failed`,
/// `crashed` or `oom` (the cgroup saw an OOM kill).
fn ending_of(raw: i32, oom: bool) -> Ending {
    let (status, exit_code, signal, message) = classify_wait_status(raw);
    let (status, message) = match (oom, status) {
        (true, _) => ("oom", "OOM-killed by the kernel".to_string()),
        (false, RunStatus::Ok) => ("exited", "exited with status 0".to_string()),
        (false, status) => (
            status.as_str(),
            message.unwrap_or_else(|| format!("exited with status {}", exit_code.unwrap_or(0))),
        ),
    };
    Ending {
        status,
        exit_code,
        signal,
        message: Some(message),
    }
}
