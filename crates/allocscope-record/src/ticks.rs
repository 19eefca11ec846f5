//! The recording on the core's run engine (`run::Engine`): one instance,
//! its attached root or every descendant of allocscope for a launched
//! command, each tick taken handed to the core's `store::Appender`,
//! appended at its cadence, and each kept sample counted. The engine
//! stops at the duration, Ctrl-C, the tree's end or the store's failure;
//! a launched tree still running is then killed until the reaper saw it go.

use allocscope_core::model::Sample;
use allocscope_core::run::sampling::SamplingLoop;
use allocscope_core::run::{Clock, Event, Followed, Hooks, Root, Started};
use allocscope_core::store::{Appender, Store};
use std::time::Instant;

/// The recording's one instance.
pub(super) struct Recorded {
    pub sampling: SamplingLoop,
    /// Attached: the process and its start time.
    pub root: Option<(i32, u64)>,
    /// Samples are timed from here (a resumed recording's first start).
    pub started_unix: f64,
    pub gone: bool,
}

impl Followed for Recorded {
    fn parts(&mut self) -> (&mut SamplingLoop, Root<'_>) {
        let root = match self.root {
            Some((pid, start_ticks)) => Root::Attached { pid, start_ticks },
            None => Root::Descendants,
        };
        (&mut self.sampling, root)
    }

    fn clock(&self) -> Clock {
        Clock::SinceUnix(self.started_unix)
    }

    fn running(&self) -> bool {
        !self.gone
    }
}

/// Where the ticks go, and what the recording counts.
pub(super) struct Recording<'a> {
    pub store: &'a mut Store,
    pub appender: Appender,
    /// Launched: the command, whose wait status the reaper reports, and
    /// which is killed when the recording stops first.
    pub launched: Option<Started>,
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

impl Hooks<Recorded> for Recording<'_> {
    fn ticked(
        &mut self,
        _: &mut Recorded,
        now: Instant,
        kept: Option<&Sample>,
    ) -> anyhow::Result<()> {
        if let Some(sample) = kept {
            self.tally.samples += 1;
            self.tally.peak_rss_bytes = self.tally.peak_rss_bytes.max(sample.rss_bytes);
            self.tally.last = Some(*sample);
        }
        self.appender.tick(self.store, now, kept)
    }

    fn gone(&mut self, w: &mut Recorded) {
        w.gone = true;
    }

    fn woke(&mut self, _: &mut [Recorded], event: Option<Event>) -> anyhow::Result<()> {
        let launched = self.launched.as_ref().map(Started::pid);
        if let Some(Event::Reaped(reaped)) = event.filter(|_| launched.is_some()) {
            if Some(reaped.pid) == launched {
                self.main_status = Some(reaped.status);
            }
        }
        Ok(())
    }

    fn kill(&mut self, ws: &mut [Recorded]) {
        if let Some(started) = &self.launched {
            for w in ws {
                started.kill(&mut w.sampling);
            }
        }
    }
}
