//! The cadence at which a recording's samples reach the store, shared by
//! `record` and `soak`: appended in small transactions at least every
//! `COMMIT_EVERY`, so nothing accumulates in memory however long the
//! recording runs and a SIGKILL loses only the last second. The store rolls
//! old samples up into minute and hour buckets as it appends.

use super::open::Store;
use crate::model::Sample;
use std::time::{Duration, Instant};

/// Samples are committed at least this often: what a crash can lose.
pub(crate) const COMMIT_EVERY: Duration = Duration::from_secs(1);

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
        self.hold(sample);
        if self.due(now) {
            commit_together(store, now, [self])?;
        }
        Ok(())
    }

    /// Keeps `sample`, if any, for the next commit.
    pub fn hold(&mut self, sample: Option<&Sample>) {
        self.pending.extend(sample);
    }

    /// Whether what it holds is due for a commit at `now`.
    pub fn due(&self, now: Instant) -> bool {
        self.every_tick || now - self.last_commit >= COMMIT_EVERY
    }

    /// Commits what is pending.
    pub fn flush(&mut self, store: &mut Store) -> anyhow::Result<()> {
        store.append_samples(self.id, &self.pending)?;
        self.pending.clear();
        Ok(())
    }
}

/// Commits at `now` what each of `appenders` holds, in one transaction: a
/// soak's instances pay one commit (one sync of the journal) a tick, not
/// one each. An error leaves every one's samples uncommitted.
pub fn commit_together<'a>(
    store: &mut Store,
    now: Instant,
    appenders: impl IntoIterator<Item = &'a mut Appender>,
) -> anyhow::Result<()> {
    let mut appenders: Vec<&mut Appender> = appenders.into_iter().collect();
    let batches: Vec<(i64, &[Sample])> = (appenders.iter())
        .map(|a| (a.id, a.pending.as_slice()))
        .collect();
    store.append_batches(&batches)?;
    for a in &mut appenders {
        a.pending.clear();
        a.last_commit = now;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::NewRecording;

    fn stored(store: &Store) -> i64 {
        store
            .conn
            .query_row("SELECT count(*) FROM recording_samples", [], |r| r.get(0))
            .expect("count")
    }

    #[test]
    fn samples_wait_for_a_second_between_commits_unless_ticks_are_a_second_apart(
    ) -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let mut store = Store::open(&dir.path().join("a.db"))?;
        let (id, _) = store.begin_recording(&NewRecording {
            name: "soak glibc#1".into(),
            config: "glibc".into(),
            env: vec![],
            command: None,
            target_pid: 1,
            target_start: 1,
            interval_ms: 200,
            hostname: "h".into(),
            soak_id: None,
        })?;
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let sample = |t_s: f64| Sample {
            t_s,
            rss_bytes: 1 << 20,
            ..Sample::default()
        };
        let mut fast = Appender::new(id, Duration::from_millis(200), start);
        fast.tick(&mut store, at(200), Some(&sample(0.2)))?;
        fast.tick(&mut store, at(400), None)?;
        fast.tick(&mut store, at(600), Some(&sample(0.6)))?;
        assert_eq!(stored(&store), 0, "nothing committed within the second");
        fast.tick(&mut store, at(1000), Some(&sample(1.0)))?;
        assert_eq!(stored(&store), 3, "the second's samples, at once");
        fast.tick(&mut store, at(1200), Some(&sample(1.2)))?;
        fast.flush(&mut store)?;
        assert_eq!(stored(&store), 4, "a flush commits what waits");

        let mut slow = Appender::new(id, COMMIT_EVERY, start);
        slow.tick(&mut store, at(100), Some(&sample(2.0)))?;
        assert_eq!(stored(&store), 5, "ticks a second apart commit each");
        Ok(())
    }

    /// Two recordings' held samples reach the store in one commit, each
    /// under its own recording, and are held no longer.
    #[test]
    fn appenders_committed_together_store_each_recordings_samples() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let mut store = Store::open(&dir.path().join("a.db"))?;
        let mut begin = |name: &str| {
            store.begin_recording(&NewRecording {
                name: name.into(),
                config: "glibc".into(),
                env: vec![],
                command: None,
                target_pid: 1,
                target_start: 1,
                interval_ms: 1000,
                hostname: "h".into(),
                soak_id: None,
            })
        };
        let ((one, _), (two, _)) = (begin("soak glibc#1")?, begin("soak glibc#2")?);
        let start = Instant::now();
        let sample = |t_s: f64| Sample {
            t_s,
            rss_bytes: 1 << 20,
            ..Sample::default()
        };
        let mut a = Appender::new(one, COMMIT_EVERY, start);
        let mut b = Appender::new(two, COMMIT_EVERY, start);
        a.hold(Some(&sample(1.0)));
        b.hold(Some(&sample(1.0)));
        b.hold(Some(&sample(2.0)));
        assert_eq!(stored(&store), 0, "held, not committed");
        commit_together(&mut store, start, [&mut a, &mut b])?;
        commit_together(&mut store, start, [&mut a, &mut b])?;
        let per_recording = |id: i64| -> rusqlite::Result<i64> {
            store.conn.query_row(
                "SELECT count(*) FROM recording_samples WHERE recording_id = ?1",
                [id],
                |r| r.get(0),
            )
        };
        assert_eq!((per_recording(one)?, per_recording(two)?), (1, 2));
        assert!(a.pending.is_empty() && b.pending.is_empty());
        Ok(())
    }
}
