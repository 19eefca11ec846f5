//! What a run checks in its workload's mappings while it starts: that the
//! configuration's allocator loaded (`loaded.rs`) and, with `--heap`, that
//! the probe did (`heap.rs`). The dynamic loader maps preloads within
//! milliseconds of exec, so both look early and often, between ticks too,
//! until each has settled; short runs are verified as well.

use super::engine::Look;
use super::heap::HeapRun;
use super::loaded::LoadCheck;
use super::served_tree::ServedTracker;
use std::time::Duration;

pub(super) struct Checks {
    /// The workload's main process.
    pub main: i32,
    pub load: LoadCheck,
    pub heap: Option<HeapRun>,
    /// What served `malloc` in each process, by memory (`served_tree.rs`).
    pub served: ServedTracker,
}

impl Checks {
    /// True once neither check has anything left to find out.
    pub fn settled(&self) -> bool {
        self.load.settled() && self.heap.as_ref().is_none_or(HeapRun::settled)
    }

    /// On a sampling tick: each check still open looks at the tree, and
    /// processes of another uid get their probe files.
    pub(crate) fn on_tick(&mut self, main: i32, tree: &[i32]) {
        self.served.note_pids(tree);
        if !self.load.settled() {
            self.load.observe(main, tree);
        }
        if let Some(heap) = self.heap.as_mut() {
            heap.hand_out_files(tree);
            if !heap.settled() {
                heap.observe(main, tree);
            }
        }
    }

    /// Between ticks, while either is open: both look, so a settled load
    /// check still notes allocators mapped since.
    pub(crate) fn between_ticks(&mut self, main: i32, tree: &[i32]) {
        self.load.observe(main, tree);
        if let Some(heap) = self.heap.as_mut() {
            heap.hand_out_files(tree);
            heap.observe(main, tree);
        }
    }

    /// The longest the run may wait before looking again, while open.
    pub(crate) fn poll_interval(&self) -> Option<Duration> {
        (!self.settled()).then(|| self.load.poll_interval())
    }
}

/// A tick's walk, looked at by the checks still open.
impl Look for Checks {
    fn look(&mut self, pids: &mut Vec<i32>) {
        self.on_tick(self.main, pids);
    }
}
