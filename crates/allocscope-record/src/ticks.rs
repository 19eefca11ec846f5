//! The recording's ticks: `run`'s sampling loop every interval until the
//! tree ends, the duration is reached, Ctrl-C, or the sink the samples go
//! to fails. Each kept sample goes to the `--metrics` publisher, if any, and, with every tick taken, to the sink; the
//! loop itself never stores.

use crate::prometheus::Publisher;
use allocscope_core::model::Sample;
use allocscope_core::run::sampling::{SamplingLoop, Tick};
use allocscope_core::run::{Event, Interrupt, RunExtension};
use allocscope_core::sample::proc;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The longest the loop sleeps before looking at Ctrl-C and the duration.
pub(super) const MAX_NAP: Duration = Duration::from_millis(100);

/// What the loop watches besides the tree.
pub(super) struct Watch<'a> {
    /// Attached: the process and its start time, sampled while it is the
    /// same process.
    pub root: Option<(i32, u64)>,
    /// Launched: the command's pid, whose wait status the reaper reports.
    pub launched: Option<i32>,
    /// Samples are timed from here (a resumed recording's first start).
    pub started_unix: f64,
    pub duration: Option<Duration>,
    pub publisher: Option<&'a Publisher>,
    pub interrupt: &'a Interrupt,
    pub events: &'a mpsc::Receiver<Event>,
}

/// Why and how the loop stopped.
pub(super) struct Stopped {
    /// `complete`, `exited`, `interrupted` or `failed` (the sink's error).
    pub status: &'static str,
    pub failure: Option<anyhow::Error>,
    /// The launched command's wait status, once reaped.
    pub main_status: Option<i32>,
    pub tally: Tally,
}

/// The samples kept this session.
#[derive(Default)]
pub(super) struct Tally {
    pub samples: u64,
    pub peak_rss_bytes: u64,
    pub last: Option<Sample>,
}

/// Ticks until the tree ends, the duration is reached, Ctrl-C, or `sink`
/// fails; `sink` is told every tick taken, with the sample it kept.
pub(super) fn run(
    sampling: &mut SamplingLoop,
    watch: &Watch,
    mut sink: impl FnMut(Instant, Option<&Sample>) -> anyhow::Result<()>,
) -> Stopped {
    let mut tally = Tally::default();
    let mut main_status = None;
    let (status, failure) = loop {
        let now = Instant::now();
        if watch.interrupt.requested() {
            break ("interrupted", None);
        }
        if watch.duration.is_some_and(|d| now - sampling.start() >= d) {
            break ("complete", None);
        }
        let taken = match tick(sampling, watch, now) {
            Tick::NotDue => None,
            Tick::Empty if watch.root.is_some() => break ("exited", None),
            // Every listed process may have ended (or be a zombie, with no
            // memory) since the walk: such a sample says nothing, and its 0
            // would read as freed memory. A live process has some RSS.
            Tick::Empty => Some(None),
            Tick::Sampled(sample) if sample.rss_bytes == 0 => Some(None),
            Tick::Sampled(sample) => {
                tally.samples += 1;
                tally.peak_rss_bytes = tally.peak_rss_bytes.max(sample.rss_bytes);
                tally.last = Some(sample);
                if let Some(publisher) = watch.publisher {
                    publisher.on_sample(&sample, sampling.sampler());
                }
                Some(Some(sample))
            }
        };
        if let Some(kept) = taken {
            if let Err(error) = sink(now, kept.as_ref()) {
                break ("failed", Some(error));
            }
        }
        match watch.events.recv_timeout(sampling.nap(MAX_NAP)) {
            Ok(Event::Reaped(reaped)) if Some(reaped.pid) == watch.launched => {
                main_status = Some(reaped.status);
            }
            Ok(Event::TreeEnded(_)) => break ("exited", None),
            // The tap's markers and EOF do not matter here; the caller keeps
            // a sender, so the channel never disconnects.
            Ok(_) | Err(_) => {}
        }
    };
    Stopped {
        status,
        failure,
        main_status,
        tally,
    }
}

/// The tick due at `now`, if it is: an attached root is sampled while it is
/// still the process that was checked.
fn tick(sampling: &mut SamplingLoop, watch: &Watch, now: Instant) -> Tick {
    let unix_now = || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0)
    };
    sampling.tick(
        now,
        |pids| {
            if let Some((pid, start_ticks)) = watch.root {
                if proc::same_process(pid, start_ticks) {
                    pids.push(pid);
                }
            }
        },
        || unix_now() - watch.started_unix,
    )
}
