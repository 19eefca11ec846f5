//! The run engine: the one loop that follows 1..N instances, each a tree
//! on its own sampling loop (`sampling.rs`): a `compare` run (its tree, its
//! load checks), `record`'s attached or started process, a soak's
//! replicas. Each pass takes every running instance's tick when due (its
//! root pushed, its probe files handed out), hands each kept sample to the
//! run's extensions (`extension.rs`) and then to its command's hooks
//! (`Hooks`: a run's markers and reclaim test, a recording's store
//! appends, a soak's restarts, commits and live view); then it waits for
//! the next event of the reaper or a tap (`event.rs`), at most until the
//! next tick. It stops at Ctrl-C, the duration, the tree's end (the
//! reaper's word, or every instance ended), a hook's error or its stop
//! rule; with `kill_wait`, it then kills the tree every `KILL_RETRY` and
//! waits for its end. It never stores, shows or restarts anything itself.

use super::event::Event;
use super::extension::RunExtension;
use super::interrupt::Interrupt;
use super::sampling::{SamplingLoop, Tick};
use super::start::Started;
use crate::model::Sample;
use crate::sample::proc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long a tree being ended gets between SIGKILLs.
pub(crate) const KILL_RETRY: Duration = Duration::from_millis(100);

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
    /// Every descendant, each walk looked at (a run's load checks).
    Looked(&'a mut dyn Look),
}

/// Looks at each tick's walk.
pub trait Look {
    fn look(&mut self, pids: &mut Vec<i32>);
}

/// What an instance's samples are timed from.
pub enum Clock {
    /// A run's start.
    Since(Instant),
    /// A recording's first start, which a resume goes on from.
    SinceUnix(f64),
}

/// One instance as its command holds it.
pub trait Followed {
    /// Its sampling loop and its root, borrowed together.
    fn parts(&mut self) -> (&mut SamplingLoop, Root<'_>);
    fn clock(&self) -> Clock;
    fn running(&self) -> bool {
        true
    }
    /// A tick whose processes hold no resident memory keeps its sample (a
    /// run's); else it keeps nothing: every listed process may have ended
    /// (or be a zombie) since the walk, and its 0 would read as freed
    /// memory in a recording.
    fn keeps_empty(&self) -> bool {
        false
    }
}

/// What a command does with the loop's turns.
pub trait Hooks<W> {
    /// Before `w`'s tick at `now`: a started process's exit or readiness,
    /// a service's phases.
    fn before_tick(&mut self, _w: &mut W, _now: Instant) -> anyhow::Result<()> {
        Ok(())
    }
    /// `w`'s tick taken at `now`, with the sample it kept, if any.
    fn ticked(&mut self, w: &mut W, now: Instant, kept: Option<&Sample>) -> anyhow::Result<()>;
    /// `w`'s tick is not due yet.
    fn not_due(&mut self, _w: &mut W) {}
    /// `w`'s attached root is gone, and its tree with it.
    fn gone(&mut self, _w: &mut W) {}
    /// After every instance's turn at `now`: commits, a live view, a stop
    /// rule of the command's own (`Some(status)`).
    fn after_pass(&mut self, _ws: &mut [W], _now: Instant) -> anyhow::Result<Option<&'static str>> {
        Ok(None)
    }
    /// The wait before the next pass, given the instances' `nap`.
    fn nap(&self, _ws: &[W], nap: Duration) -> Duration {
        nap
    }
    /// After each wait, with the event that ended it, if any (never the
    /// tree's end).
    fn woke(&mut self, _ws: &mut [W], _event: Option<Event>) -> anyhow::Result<()> {
        Ok(())
    }
    /// Ends the tree (with `kill_wait`, every `KILL_RETRY` until it ended).
    fn kill(&mut self, _ws: &mut [W]) {}
}

/// The loop's stop rules and what it wakes for.
pub struct Engine<'a> {
    pub interrupt: &'a Interrupt,
    /// When the duration (or the time limit) is reached.
    pub until: Option<Instant>,
    pub extensions: &'a [&'a dyn RunExtension],
    /// The reaper's and the taps' events; the caller keeps a sender.
    pub events: &'a Receiver<Event>,
    /// The longest it sleeps before looking at Ctrl-C and the duration.
    pub max_nap: Duration,
    /// Once stopped, the tree is killed (`Hooks::kill`) and the loop waits
    /// at most this long for its end; `None`: it returns at once.
    pub kill_wait: Option<Duration>,
}

/// Why the loop stopped: `interrupted`, `complete` (the duration),
/// `exited` (the tree, or every instance), `failed` (a hook's error, in
/// `failure`) or a hook's own status; `at` when (the reaper's time of the
/// tree's end, when it saw it).
pub struct Stopped {
    pub status: &'static str,
    pub failure: Option<anyhow::Error>,
    pub at: Instant,
}

/// What one tick of an instance gave: consumed at once, so the sample
/// stays inline, as in `Tick`.
#[allow(clippy::large_enum_variant)]
enum Turn {
    NotDue,
    /// Its attached root is gone.
    Gone,
    /// A tick taken, with its sample unless it found nothing to keep.
    Kept(Option<Sample>),
}

impl Engine<'_> {
    /// Follows `ws` until a stop rule holds.
    pub fn run<W: Followed>(&self, ws: &mut [W], hooks: &mut impl Hooks<W>) -> Stopped {
        let mut ending: Option<(&'static str, Option<anyhow::Error>)> = None;
        let (mut kill_until, mut last_kill): (Option<Option<Instant>>, Option<Instant>) =
            (None, None);
        loop {
            let now = Instant::now();
            if ending.is_none() {
                ending = self.stop_rule(now).map(|status| (status, None));
            }
            if ending.is_none() {
                match self.pass(ws, hooks, now) {
                    Ok(None) if ws.iter().all(|w| !w.running()) => ending = Some(("exited", None)),
                    Ok(None) => {}
                    Ok(Some(status)) => ending = Some((status, None)),
                    Err(error) => ending = Some(("failed", Some(error))),
                }
            }
            if let Some((status, _)) = &ending {
                let wait = self.kill_wait.filter(|_| *status != "exited");
                let Some(wait) = wait else {
                    return stopped(ending, now);
                };
                let until = *kill_until.get_or_insert(now.checked_add(wait));
                if until.is_some_and(|until| now >= until) {
                    return stopped(ending, now);
                }
                if last_kill.is_none_or(|at| now - at >= KILL_RETRY) {
                    hooks.kill(ws);
                    last_kill = Some(now);
                }
            }
            let nap = naps(ws.iter_mut().filter(|w| w.running()), self.max_nap);
            let nap = hooks.nap(ws, nap);
            let event = match self.events.recv_timeout(nap) {
                Ok(Event::TreeEnded(at)) => return stopped(ending, at),
                Err(RecvTimeoutError::Disconnected) => return stopped(ending, Instant::now()),
                Ok(event) => Some(event),
                Err(RecvTimeoutError::Timeout) => None,
            };
            if let Err(error) = hooks.woke(ws, event) {
                ending.get_or_insert(("failed", None)).1 = Some(error);
            }
        }
    }

    /// Ctrl-C, else the duration, at `now`.
    fn stop_rule(&self, now: Instant) -> Option<&'static str> {
        if self.interrupt.requested() {
            Some("interrupted")
        } else if self.until.is_some_and(|until| now >= until) {
            Some("complete")
        } else {
            None
        }
    }

    /// Every running instance turned at `now`, then the command's pass.
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
                Turn::NotDue => hooks.not_due(w),
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

/// How the loop ended; `None` when the tree ended by itself.
fn stopped(ending: Option<(&'static str, Option<anyhow::Error>)>, at: Instant) -> Stopped {
    let (status, failure) = ending.unwrap_or(("exited", None));
    Stopped {
        status,
        failure,
        at,
    }
}

/// `w`'s tick at `now`, if due.
fn follow(w: &mut impl Followed, now: Instant) -> Turn {
    let (clock, keeps_empty) = (w.clock(), w.keeps_empty());
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
            Root::Looked(look) => look.look(pids),
        },
        || match clock {
            Clock::Since(start) => (now - start).as_secs_f64(),
            Clock::SinceUnix(started) => unix_now() - started,
        },
    );
    match tick {
        Tick::NotDue => Turn::NotDue,
        // Once the walk found neither the root nor a descendant, the root
        // is gone: it is pushed while it is the same process.
        Tick::Empty if matches!(root, Root::Attached { .. }) => Turn::Gone,
        Tick::Sampled(sample) if keeps_empty || sample.rss_bytes > 0 => Turn::Kept(Some(sample)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Child, Command};
    use std::sync::mpsc::{self, Sender};

    /// A `sleep` child's tree, ticked every 20 ms.
    struct Sleeper {
        sampling: SamplingLoop,
    }

    impl Followed for Sleeper {
        fn parts(&mut self) -> (&mut SamplingLoop, Root<'_>) {
            (&mut self.sampling, Root::Descendants)
        }

        fn clock(&self) -> Clock {
            Clock::Since(self.sampling.start())
        }
    }

    /// Counts the ticks and the kills; the third kill ends the child and
    /// says so as the reaper would, and the first raises Ctrl-C.
    struct Counting {
        ticks: usize,
        kills: Vec<Instant>,
        child: Child,
        events: Sender<Event>,
        interrupt: Interrupt,
    }

    impl Hooks<Sleeper> for Counting {
        fn ticked(
            &mut self,
            _: &mut Sleeper,
            _: Instant,
            _: Option<&Sample>,
        ) -> anyhow::Result<()> {
            self.ticks += 1;
            Ok(())
        }

        fn kill(&mut self, _: &mut [Sleeper]) {
            self.kills.push(Instant::now());
            if self.kills.len() == 1 {
                self.interrupt.raise_sigint();
            }
            if self.kills.len() == 3 {
                let _ = self.child.kill();
                let _ = self.child.wait();
                let _ = self.events.send(Event::TreeEnded(Instant::now()));
            }
        }
    }

    fn sleeper() -> anyhow::Result<(Sleeper, Child)> {
        let child = Command::new("sleep").arg("30").spawn()?;
        let sampling = SamplingLoop::new(child.id() as i32, Duration::from_millis(20));
        Ok((Sleeper { sampling }, child))
    }

    #[test]
    fn the_time_limit_ends_the_run_and_the_kill_repeats_until_the_tree_ended() -> anyhow::Result<()>
    {
        let (sleeper, child) = sleeper()?;
        let (events_tx, events) = mpsc::channel();
        let interrupt = Interrupt::unregistered();
        let limit = Duration::from_millis(200);
        let engine = Engine {
            interrupt: &interrupt,
            until: Some(sleeper.sampling.start() + limit),
            extensions: &[],
            events: &events,
            max_nap: Duration::from_millis(50),
            kill_wait: Some(Duration::MAX),
        };
        let mut hooks = Counting {
            ticks: 0,
            kills: Vec::new(),
            child,
            events: events_tx,
            interrupt: interrupt.clone(),
        };
        let mut sleepers = [sleeper];
        let stopped = engine.run(&mut sleepers, &mut hooks);
        // Noticed once: the Ctrl-C after the first kill does not make it
        // an interrupted run.
        assert_eq!(stopped.status, "complete");
        assert!(stopped.failure.is_none());
        assert_eq!(hooks.kills.len(), 3);
        // The engine spaces kills by each pass's clock; the hook reads its
        // own a little later in the pass, by as much as the pass took before
        // it (a few ms on a busy machine), so allow that much.
        let pass = Duration::from_millis(20);
        assert!(
            (hooks.kills.windows(2)).all(|k| k[1] - k[0] + pass >= KILL_RETRY),
            "{:?}",
            hooks
                .kills
                .windows(2)
                .map(|k| k[1] - k[0])
                .collect::<Vec<_>>()
        );
        assert!(hooks.kills[0] - sleepers[0].sampling.start() >= limit);
        // Ticked every 20 ms until the limit, never after.
        assert!((5..=12).contains(&hooks.ticks), "{} ticks", hooks.ticks);
        assert!(stopped.at >= hooks.kills[2]);
        Ok(())
    }

    #[test]
    fn ctrl_c_stops_a_loop_without_a_limit_at_once_when_nothing_is_to_be_killed(
    ) -> anyhow::Result<()> {
        let (sleeper, mut child) = sleeper()?;
        let (events_tx, events) = mpsc::channel();
        let interrupt = Interrupt::unregistered();
        interrupt.raise_sigint();
        let engine = Engine {
            interrupt: &interrupt,
            until: None,
            extensions: &[],
            events: &events,
            max_nap: Duration::from_millis(50),
            kill_wait: None,
        };
        let mut hooks = Counting {
            ticks: 0,
            kills: Vec::new(),
            child: Command::new("true").spawn()?,
            events: events_tx,
            interrupt: interrupt.clone(),
        };
        let stopped = engine.run(&mut [sleeper], &mut hooks);
        child.kill()?;
        child.wait()?;
        hooks.child.wait()?;
        assert_eq!(stopped.status, "interrupted");
        assert_eq!((hooks.ticks, hooks.kills.len()), (0, 0));
        Ok(())
    }
}
