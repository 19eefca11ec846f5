//! Where a recording's samples go: the store, in small transactions at
//! least every `COMMIT_EVERY`, so nothing accumulates in memory however long
//! the recording runs and a SIGKILL loses only the last second. The store
//! rolls old samples up into minute and hour buckets as it appends.

use allocscope_core::model::Sample;
use allocscope_core::store::{Ending, Store};
use std::time::{Duration, Instant};

/// Samples are committed at least this often: what a crash can lose.
const COMMIT_EVERY: Duration = Duration::from_secs(1);

pub(super) struct StoreWriter<'s> {
    store: &'s mut Store,
    id: i64,
    /// Every tick commits when ticks are at least `COMMIT_EVERY` apart.
    every_tick: bool,
    pending: Vec<Sample>,
    last_commit: Instant,
}

impl<'s> StoreWriter<'s> {
    /// Appends to recording `id`, sampled every `interval` since `start`.
    pub fn new(store: &'s mut Store, id: i64, interval: Duration, start: Instant) -> Self {
        StoreWriter {
            store,
            id,
            every_tick: interval >= COMMIT_EVERY,
            pending: Vec::with_capacity(16),
            last_commit: start,
        }
    }

    /// A tick taken at `now`, with the sample it kept if any: the samples
    /// so far are committed once `COMMIT_EVERY` has passed since the last
    /// commit. An error leaves them uncommitted.
    pub fn tick(&mut self, now: Instant, sample: Option<&Sample>) -> anyhow::Result<()> {
        self.pending.extend(sample);
        if self.every_tick || now - self.last_commit >= COMMIT_EVERY {
            self.store.append_samples(self.id, &self.pending)?;
            self.pending.clear();
            self.last_commit = now;
        }
        Ok(())
    }

    /// Commits what is pending.
    pub fn flush(&mut self) -> anyhow::Result<()> {
        self.store.append_samples(self.id, &self.pending)?;
        self.pending.clear();
        Ok(())
    }

    /// Marks the recording ended; uncommitted samples are dropped.
    pub fn finish(self, ending: &Ending) -> anyhow::Result<()> {
        self.store.finish_recording(self.id, ending)
    }
}
