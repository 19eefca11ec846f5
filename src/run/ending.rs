//! When allocscope ends a run's workload itself: Ctrl-C (or SIGTERM) and
//! the time limit, noticed once, and the SIGKILL repeated every
//! `KILL_RETRY` until the reaper reports the tree gone.

use super::Interrupt;
use std::time::{Duration, Instant};

/// How long the workload gets between SIGKILLs while it is being ended.
const KILL_RETRY: Duration = Duration::from_millis(100);

/// Why allocscope ended the workload itself.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Ending {
    TimeLimit,
    Interrupt,
}

pub(super) struct Ender {
    start: Instant,
    timeout: Option<Duration>,
    ending: Option<Ending>,
    last_kill: Option<Instant>,
}

impl Ender {
    pub fn new(start: Instant, timeout: Option<Duration>) -> Ender {
        Ender {
            start,
            timeout,
            ending: None,
            last_kill: None,
        }
    }

    pub fn ending(&self) -> Option<Ending> {
        self.ending
    }

    /// True while nothing asked for the workload to end.
    pub fn running(&self) -> bool {
        self.ending.is_none()
    }

    /// Looks at Ctrl-C and the time limit at `now`; true when the tree is
    /// being ended and is due a SIGKILL (the first, or another one).
    pub fn kill_due(&mut self, now: Instant, interrupt: &Interrupt) -> bool {
        if self.ending.is_none() {
            if interrupt.requested() {
                self.ending = Some(Ending::Interrupt);
            } else if self.timeout.is_some_and(|limit| now - self.start >= limit) {
                self.ending = Some(Ending::TimeLimit);
            }
        }
        let due = self.ending.is_some() && self.last_kill.is_none_or(|at| now - at >= KILL_RETRY);
        if due {
            self.last_kill = Some(now);
        }
        due
    }
}
