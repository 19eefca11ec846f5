//! The cadence at which a recording's samples reach the store, shared by
//! `record` and `soak`: appended in small transactions at least every
//! `COMMIT_EVERY`, so nothing accumulates in memory however long the
//! recording runs and a SIGKILL loses only the last second. The store rolls
//! old samples up into minute and hour buckets as it appends.

use super::open::Store;
use crate::model::Sample;
use std::time::{Duration, Instant};

/// Samples are committed at least this often: what a crash can lose.
pub const COMMIT_EVERY: Duration = Duration::from_secs(1);

/// One recording's samples not yet committed.
pub struct Appender {
    pub id: i64,
    /// Every tick commits when ticks are at least `COMMIT_EVERY` apart.
    every_tick: bool,
    pending: Vec<Sample>,
    last_commit: Instant,
}

impl Appender {
    /// Appends to recording `id`, sampled every `interval` since `start`.
    pub fn new(id: i64, interval: Duration, start: Instant) -> Self {
        Appender {
            id,
            every_tick: interval >= COMMIT_EVERY,
            pending: Vec::with_capacity(16),
            last_commit: start,
        }
    }

    /// A tick taken at `now`, with the sample it kept if any: the samples
    /// so far are committed once `COMMIT_EVERY` has passed since the last
    /// commit. An error leaves them uncommitted.
    pub fn tick(
        &mut self,
        store: &mut Store,
        now: Instant,
        sample: Option<&Sample>,
    ) -> anyhow::Result<()> {
        self.pending.extend(sample);
        if self.every_tick || now - self.last_commit >= COMMIT_EVERY {
            self.flush(store)?;
            self.last_commit = now;
        }
        Ok(())
    }

    /// Commits what is pending.
    pub fn flush(&mut self, store: &mut Store) -> anyhow::Result<()> {
        store.append_samples(self.id, &self.pending)?;
        self.pending.clear();
        Ok(())
    }
}
