//! The run engine: one loop that follows 1..N instances, each a tree on
//! its own sampling loop (`sampling.rs`), until Ctrl-C, the duration, the
//! tree's end (the reaper's word, or every instance ended) or a stop rule
//! of its caller. Each pass takes every running instance's tick when due
//! (its root pushed, its probe files handed out, a tick of a gone attached
//! root or of no live process kept as nothing), hands each kept sample to
//! the run's extensions (`extension.rs`), then to the caller's hooks
//! (`Hooks`: the store's appends, restarts, a live view); it then waits
//! for the next event (`event.rs`) at most until the next tick.
//!
//! `record` (one instance, attached or started) and `soak` (its replicas)
//! run on it; a `compare` run's own loop (`supervise.rs`) takes its ticks
//! through `follow` and `naps`, the same pass.

use super::event::{Event, Reaped};
use super::extension::RunExtension;
use super::interrupt::Interrupt;
use super::sampling::{SamplingLoop, Tick};
use super::start::Started;
use crate::model::Sample;
use crate::sample::proc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The longest the loop sleeps before looking at Ctrl-C and the duration.
const MAX_NAP: Duration = Duration::from_millis(100);

/// What an instance's tick walks beside its sampling loop's tree.
pub enum Root<'a> {
    /// Every descendant of the walk's root, nothing added.
    Descendants,
    /// A process running in place (`--pid`), sampled with its descendants
    /// while it is still the process that was checked.
    Attached { pid: i32, start_ticks: u64 },
    /// A workload started for the run: its process is sampled and its
    /// probe files handed out.
    Started(&'a mut Started),
}

/// One instance as its command holds it.
pub trait Followed {
    /// Its sampling loop and its root, borrowed together.
    fn parts(&mut self) -> (&mut SamplingLoop, Root<'_>);
    /// The Unix time its samples are timed from.
    fn started_unix(&self) -> f64;
    fn running(&self) -> bool;
}

/// What the caller does with the loop's turns; the engine itself never
/// stores, shows or restarts anything.
pub trait Hooks<W> {
    /// Before `w`'s tick at `now`: a started process's exit or readiness.
    fn before_tick(&mut self, _w: &mut W, _now: Instant) -> anyhow::Result<()> {
        Ok(())
    }
    /// `w`'s tick taken at `now`, with the sample it kept, if any.
    fn ticked(&mut self, w: &mut W, now: Instant, kept: Option<&Sample>) -> anyhow::Result<()>;
    /// `w`'s attached root is gone, and its tree with it.
    fn gone(&mut self, w: &mut W);
    /// After every instance's turn at `now`: commits, a live view, a stop
    /// rule of the caller's own (`Some(status)`).
    fn after_pass(&mut self, _ws: &mut [W], _now: Instant) -> anyhow::Result<Option<&'static str>> {
        Ok(None)
    }
    /// A process of allocscope's tree the reaper waited for.
    fn reaped(&mut self, _reaped: &Reaped) {}
}

/// The loop's stop rules and what it wakes for.
pub struct Engine<'a> {
    pub interrupt: &'a Interrupt,
    /// When the duration is reached.
    pub until: Option<Instant>,
    pub extensions: &'a [&'a dyn RunExtension],
    /// The reaper's and the taps' events; the caller keeps a sender.
    pub events: &'a Receiver<Event>,
}

/// Why the loop stopped: `interrupted`, `complete` (the duration),
/// `exited` (the tree, or every instance), `failed` (a hook's error, in
/// `failure`) or a hook's own status.
pub struct Stopped {
    pub status: &'static str,
    pub failure: Option<anyhow::Error>,
}

/// What one tick of an instance gave: consumed at once, so the sample
/// stays inline, as in `Tick`.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Turn {
    NotDue,
    /// Its attached root is gone.
    Gone,
    /// A tick taken, with its sample unless the walk found no live process.
    Kept(Option<Sample>),
}

impl Engine<'_> {
    /// Follows `ws` until a stop rule holds.
    pub fn run<W: Followed>(&self, ws: &mut [W], hooks: &mut impl Hooks<W>) -> Stopped {
        let stop = |status| Stopped {
            status,
            failure: None,
        };
        loop {
            let now = Instant::now();
            if self.interrupt.requested() {
                return stop("interrupted");
            }
            if self.until.is_some_and(|until| now >= until) {
                return stop("complete");
            }
            match self.pass(ws, hooks, now) {
                Ok(None) => {}
                Ok(Some(status)) => return stop(status),
                Err(error) => {
                    return Stopped {
                        status: "failed",
                        failure: Some(error),
                    }
                }
            }
            if ws.iter().all(|w| !w.running()) {
                return stop("exited");
            }
            let nap = naps(ws.iter_mut().filter(|w| w.running()), MAX_NAP);
            match self.events.recv_timeout(nap) {
                Ok(Event::Reaped(reaped)) => hooks.reaped(&reaped),
                Ok(Event::TreeEnded(_)) | Err(RecvTimeoutError::Disconnected) => {
                    return stop("exited")
                }
                Ok(_) | Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// Every running instance turned at `now`, then the caller's pass.
    fn pass<W: Followed>(
        &self,
        ws: &mut [W],
        hooks: &mut impl Hooks<W>,
        now: Instant,
    ) -> anyhow::Result<Option<&'static str>> {
        for w in ws.iter_mut().filter(|w| w.running()) {
            hooks.before_tick(w, now)?;
            if !w.running() {
                continue;
            }
            match follow(w, now) {
                Turn::NotDue => {}
                Turn::Gone => hooks.gone(w),
                Turn::Kept(kept) => {
                    if let Some(sample) = &kept {
                        let sampling = w.parts().0;
                        for extension in self.extensions {
                            extension.on_sample(sample, sampling.sampler());
                        }
                    }
                    hooks.ticked(w, now, kept.as_ref())?;
                }
            }
        }
        hooks.after_pass(ws, now)
    }
}

/// `w`'s tick at `now`, if due. A sample with no resident memory is kept
/// as nothing: every listed process may have ended (or be a zombie) since
/// the walk, and its 0 would read as freed memory.
pub(crate) fn follow(w: &mut impl Followed, now: Instant) -> Turn {
    let started_unix = w.started_unix();
    let (sampling, mut root) = w.parts();
    let tick = sampling.tick(
        now,
        |pids| match &mut root {
            Root::Descendants => {}
            Root::Attached { pid, start_ticks } => {
                if proc::same_process(*pid, *start_ticks) {
                    pids.push(*pid);
                }
            }
            Root::Started(started) => {
                pids.push(started.pid);
                started.hand_out_files(pids);
            }
        },
        || unix_now() - started_unix,
    );
    match tick {
        Tick::NotDue => Turn::NotDue,
        // Once the walk found neither the root nor a descendant, the root
        // is gone: it is pushed while it is the same process.
        Tick::Empty if matches!(root, Root::Attached { .. }) => Turn::Gone,
        Tick::Sampled(sample) if sample.rss_bytes > 0 => Turn::Kept(Some(sample)),
        Tick::Empty | Tick::Sampled(_) => Turn::Kept(None),
    }
}

/// How long until the first of `ws`'s next ticks, at most `max`.
fn naps<'w, W: Followed + 'w>(ws: impl Iterator<Item = &'w mut W>, max: Duration) -> Duration {
    ws.map(|w| w.parts().0.nap(max)).min().unwrap_or(max)
}

pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}
