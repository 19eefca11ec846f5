//! Soaks in the store: one row per `allocscope soak`, holding the arguments
//! it was started with; each of its instances is a recording that names it
//! (`recordings.soak_id`), so a soak can be reported or resumed as one.

use super::open::Store;
use super::sample_rows;
use crate::model::Sample;
use anyhow::{Context, Result};
use rusqlite::{params, OptionalExtension};

impl Store {
    /// Stores a new soak started with `arguments` (allocscope's command line
    /// after the program's name); returns its id.
    pub fn begin_soak(&mut self, arguments: &[String]) -> Result<i64> {
        let now = std::time::SystemTime::now();
        let started_unix = now
            .duration_since(std::time::UNIX_EPOCH)
            .context("the clock is before 1970")?
            .as_secs_f64();
        self.conn
            .execute(
                "INSERT INTO soaks (started_at, started_unix, arguments) VALUES (?1, ?2, ?3)",
                params![
                    humantime::format_rfc3339_seconds(now).to_string(),
                    started_unix,
                    serde_json::to_string(arguments)?,
                ],
            )
            .context("storing the new soak")?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The arguments soak `id` was started with; None if there is no such soak.
    pub fn soak_arguments(&self, id: i64) -> Result<Option<Vec<String>>> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT arguments FROM soaks WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()
            .with_context(|| format!("reading soak {id}"))?;
        text.map(|t| serde_json::from_str(&t).context("reading a soak's arguments"))
            .transpose()
    }

    /// The recordings of soak `id`, in the order they began.
    pub fn soak_recordings(&self, id: i64) -> Result<Vec<i64>> {
        let mut query = self
            .conn
            .prepare("SELECT id FROM recordings WHERE soak_id = ?1 ORDER BY id")?;
        let ids = query.query_map([id], |r| r.get(0))?;
        ids.collect::<rusqlite::Result<_>>()
            .with_context(|| format!("reading the recordings of soak {id}"))
    }

    /// The raw samples recording `id` still keeps (the last hour's, at full
    /// detail: its rolled-up buckets keep RSS and PSS only), in time order.
    pub fn recording_raw_samples(&self, id: i64) -> Result<Vec<Sample>> {
        let mut query = self.conn.prepare(&format!(
            "SELECT {} FROM recording_samples WHERE recording_id = ?1 ORDER BY t_s",
            sample_rows::COLUMNS
        ))?;
        let rows = query.query_map([id], sample_rows::from_row)?;
        rows.collect::<rusqlite::Result<_>>()
            .with_context(|| format!("reading the samples of recording {id}"))
    }
}

#[cfg(test)]
mod tests {
    use crate::model::Sample;
    use crate::store::{NewRecording, Store};

    #[test]
    fn a_soak_keeps_its_arguments_knows_its_recordings_and_reads_their_samples(
    ) -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let mut store = Store::open(&dir.path().join("a.db"))?;
        let arguments = vec!["-a".to_string(), "glibc".into(), "--".into(), "grow".into()];
        let soak = store.begin_soak(&arguments)?;
        let new = |soak_id| NewRecording {
            name: "soak glibc#1".into(),
            config: "glibc".into(),
            env: vec![],
            command: None,
            target_pid: 1,
            target_start: 0,
            interval_ms: 1000,
            hostname: "h".into(),
            soak_id,
        };
        let (first, _) = store.begin_recording(&new(Some(soak)))?;
        store.begin_recording(&new(None))?;
        let (second, _) = store.begin_recording(&new(Some(soak)))?;
        assert_eq!(store.soak_arguments(soak)?, Some(arguments));
        assert_eq!(store.soak_arguments(soak + 1)?, None);
        assert_eq!(store.soak_recordings(soak)?, vec![first, second]);
        let sample = |t_s| Sample {
            t_s,
            rss_bytes: 1 << 20,
            live_heap_bytes: Some(1 << 19),
            ..Sample::default()
        };
        store.append_samples(second, &[sample(2.0), sample(1.0)])?;
        let stored = store.recording_raw_samples(second)?;
        assert_eq!(stored, vec![sample(1.0), sample(2.0)]);
        assert!(store.recording_raw_samples(first)?.is_empty());
        Ok(())
    }
}
