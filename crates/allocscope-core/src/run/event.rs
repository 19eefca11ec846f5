//! What the main loop of a run (and of `record`) waits for: the messages
//! the reaper, the stdout tap and a service's threads send into one
//! channel, so the loop wakes at once for whichever comes first.

use std::time::Instant;

/// What the main loop waits for, from the reaper and the stdout tap.
#[derive(Debug)]
pub enum Event {
    Reaped(Reaped),
    /// No child is left: the tree has ended.
    TreeEnded(Instant),
    /// Stdout lines, read together at `at`, that matched marker patterns:
    /// each its pattern (0 is the built-in one) and label, in order.
    Marks {
        marks: Vec<(u32, String)>,
        at: Instant,
    },
    /// The tap reached EOF on the workload's stdout.
    TapEnded,
    /// A service passed its readiness check.
    Ready(Instant),
    /// allocscope's load generator finished a service run's load.
    LoadDone(Box<crate::load::LoadReport>, Instant),
}

/// A process of the tree the reaper waited for, with its rusage.
#[derive(Debug, Clone, Copy)]
pub struct Reaped {
    pub pid: i32,
    /// Raw wait status.
    pub status: i32,
    pub user_s: f64,
    pub sys_s: f64,
    pub max_rss_bytes: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
}
