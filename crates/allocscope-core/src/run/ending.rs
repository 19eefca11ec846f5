//! When allocscope ends a run's workload itself: Ctrl-C (or SIGTERM) and
//! the time limit, noticed once, and the SIGKILL repeated every
//! `KILL_RETRY` until the reaper reports the tree gone.

use super::interrupt::Interrupt;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_limit_ends_the_run_and_the_kill_repeats_every_retry() {
        let start = Instant::now();
        let interrupt = Interrupt::unregistered();
        let limit = Duration::from_secs(2);
        let mut ender = Ender::new(start, Some(limit));
        assert!(!ender.kill_due(start + Duration::from_secs(1), &interrupt));
        assert!(ender.running());
        let at = start + limit;
        assert!(ender.kill_due(at, &interrupt));
        assert!(ender.ending() == Some(Ending::TimeLimit));
        assert!(!ender.kill_due(at + KILL_RETRY / 2, &interrupt));
        assert!(ender.kill_due(at + KILL_RETRY, &interrupt));
        // Noticed once: a later Ctrl-C does not make it an interrupted run.
        interrupt.raise_sigint();
        assert!(!ender.kill_due(at + KILL_RETRY, &interrupt));
        assert!(ender.ending() == Some(Ending::TimeLimit));
    }

    #[test]
    fn ctrl_c_ends_a_run_without_a_time_limit() {
        let start = Instant::now();
        let interrupt = Interrupt::unregistered();
        let mut ender = Ender::new(start, None);
        assert!(!ender.kill_due(start + Duration::from_secs(3600), &interrupt));
        interrupt.raise_sigint();
        assert!(ender.kill_due(start + Duration::from_secs(3601), &interrupt));
        assert!(ender.ending() == Some(Ending::Interrupt) && !ender.running());
    }
}
