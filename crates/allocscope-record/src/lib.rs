//! `allocscope record`: samples a process tree every interval for as long
//! as it takes, and hands each sample to a store writer that appends it in
//! small transactions, the way `compare`'s runs measure and leave storing
//! to their caller: nothing accumulates in memory however long it runs, and
//! a SIGKILL loses only the last second.
//!
//! Two targets. Attached (`--pid`): the process and its descendants, ended
//! when none is left (its exit status belongs to its parent, so it is
//! unknown). Launched (`-a CONFIG -- COMMAND`): started like a `compare` run.
//!
//! `record` only wires the parts: `begin.rs` the recording's row (new, or
//! resumed) and a launched command (`run::start`); the loop is the core's
//! run engine (`run::Engine`), each kept sample to the `--metrics`
//! publisher (a run extension), and `ticks.rs` its hooks (every tick to
//! the core's `store::Appender`, appended at its cadence); `ending.rs` how
//! the recording ended; `error.rs` the user's mistakes in its arguments
//! and in `--metrics`.

mod begin;
mod ending;
pub mod error;
pub mod prometheus;
mod target;
mod ticks;

use allocscope_core::model::Sample;
use allocscope_core::run::sampling::SamplingLoop;
use allocscope_core::run::{Engine, Event, Interrupt, RunExtension, Stopped};
use allocscope_core::store::{Appender, Ending, Store};
use std::sync::mpsc;
use std::time::Duration;
use ticks::{Recorded, Recording, Tally};

/// How long a launched tree gets to go after allocscope kills it.
const KILL_WAIT: Duration = Duration::from_secs(5);
/// The longest the loop sleeps before looking at Ctrl-C and the duration.
const MAX_NAP: Duration = Duration::from_millis(100);

/// What to record: checked by `options::record`, so the two never differ.
pub use target::Target;

pub struct Settings {
    pub target: Target,
    pub name: String,
    pub interval: Duration,
    pub duration: Option<Duration>,
    /// `--metrics`: publishes each kept sample.
    pub publisher: Option<prometheus::Publisher>,
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
    // The sender lives as long as the recording, so the channel never
    // disconnects while the loops wait on it.
    let (events_tx, events) = mpsc::channel::<Event>();
    let begun = begin::begin(
        store,
        &settings.target,
        &settings.name,
        settings.interval,
        &events_tx,
    )?;
    let target_pid = begun.target_pid();
    started(begun.id, begun.resumed, target_pid);
    let (launched, sampling) = match begun.launched {
        Some((started, sampling)) => (Some(started), sampling),
        None => (None, SamplingLoop::new(target_pid, settings.interval)),
    };
    let appender = Appender::new(begun.id, settings.interval, sampling.start());
    let until = settings.duration.map(|d| sampling.start() + d);
    let mut recorded = [Recorded {
        sampling,
        root: begun.root,
        started_unix: begun.started_unix,
        gone: false,
    }];
    let mut recording = Recording {
        store,
        appender,
        launched,
        main_status: None,
        tally: Tally::default(),
    };
    let extensions: Vec<&dyn RunExtension> = (settings.publisher.iter())
        .map(|p| p as &dyn RunExtension)
        .collect();
    let engine = Engine {
        interrupt,
        until,
        extensions: &extensions,
        events: &events,
        max_nap: MAX_NAP,
        kill_wait: recording.launched.as_ref().map(|_| KILL_WAIT),
    };
    let Stopped {
        mut status,
        mut failure,
        ..
    } = engine.run(&mut recorded, &mut recording);
    let Recording {
        store,
        mut appender,
        main_status,
        tally,
        ..
    } = recording;
    if failure.is_none() {
        if let Err(error) = appender.flush(store) {
            failure = Some(error);
            status = "failed";
        }
    }
    let [Recorded { sampling, .. }] = recorded;
    let ending = ending::ending(status, main_status, failure.as_ref());
    let finished = store.finish_recording(begun.id, &ending);
    if let Some(error) = failure {
        return Err(error.context(format!(
            "recording {} stopped; what was stored until then stays readable \
             (allocscope report --recordings {})",
            begun.id, begun.id
        )));
    }
    finished?;
    Ok(Summary {
        id: begun.id,
        resumed: begun.resumed,
        ending,
        samples: tally.samples,
        peak_rss_bytes: tally.peak_rss_bytes,
        last: tally.last,
        elapsed_s: tally.last.map_or(0.0, |s| s.t_s),
        sampler_cpu_s: sampling.sampler().cpu_seconds(),
    })
}
