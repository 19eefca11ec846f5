//! Soaks in the store: one row per `allocscope soak`, holding the arguments
//! it was started with; each of its instances is a recording that names it
//! (`recordings.soak_id`), so a soak can be reported or resumed as one.

use super::convert::now_stamp;
use super::open::Store;
use super::recordings::{info_from_row, INFO_COLUMNS};
use super::sample_rows;
use crate::model::Sample;
use crate::recorded::RecordingInfo;
use anyhow::{Context, Result};
use rusqlite::{params, OptionalExtension};

/// A soak as it was begun.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSoak {
    /// allocscope's arguments after the program's name, `soak` first.
    pub arguments: Vec<String>,
    /// The Unix time it began: its elapsed time counts from here.
    pub started_unix: f64,
}

/// A figure a soak instance's load printed (`--metric NAME=REGEX`), at the
/// recording's `t_s` it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub name: String,
    pub higher_is_better: bool,
    pub t_s: f64,
    pub value: f64,
}

impl Store {
    /// Stores a new soak started with `arguments` (allocscope's command line
    /// after the program's name); returns its id and the Unix time it began.
    pub fn begin_soak(&mut self, arguments: &[String]) -> Result<(i64, f64)> {
        let (started_at, started_unix) = now_stamp()?;
        self.conn
            .execute(
                "INSERT INTO soaks (started_at, started_unix, arguments) VALUES (?1, ?2, ?3)",
                params![started_at, started_unix, serde_json::to_string(arguments)?,],
            )
            .context("storing the new soak")?;
        Ok((self.conn.last_insert_rowid(), started_unix))
    }

    /// Soak `id` as it was begun; None if there is no such soak.
    pub fn soak(&self, id: i64) -> Result<Option<StoredSoak>> {
        let row: Option<(String, f64)> = self
            .conn
            .query_row(
                "SELECT arguments, started_unix FROM soaks WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .with_context(|| format!("reading soak {id}"))?;
        row.map(|(arguments, started_unix)| {
            Ok(StoredSoak {
                arguments: serde_json::from_str(&arguments)
                    .context("reading a soak's arguments")?,
                started_unix,
            })
        })
        .transpose()
    }

    /// Marks a restart of recording `id`'s instance at its `t_s`.
    pub fn mark_restart(&mut self, id: i64, t_s: f64, why: &str) -> Result<()> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO recording_restarts (recording_id, t_s, why)
                 VALUES (?1, ?2, ?3)",
                params![id, t_s, why],
            )
            .with_context(|| format!("marking a restart of recording {id}"))?;
        Ok(())
    }

    /// Keeps what recording `id`'s load printed, read now.
    pub fn add_readings(&mut self, id: i64, readings: &[Reading]) -> Result<()> {
        let tx = self.conn.transaction()?;
        for r in readings {
            tx.execute(
                "INSERT INTO recording_readings (recording_id, t_s, name, value, higher_is_better)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id, r.t_s, r.name, r.value, r.higher_is_better],
            )?;
        }
        tx.commit()
            .with_context(|| format!("storing the load's figures of recording {id}"))
    }

    /// What recording `id`'s load printed, in time order.
    pub fn recording_readings(&self, id: i64) -> Result<Vec<Reading>> {
        let mut query = self.conn.prepare(
            "SELECT name, higher_is_better, t_s, value FROM recording_readings
             WHERE recording_id = ?1 ORDER BY t_s, rowid",
        )?;
        let rows = query.query_map([id], |r| {
            Ok(Reading {
                name: r.get(0)?,
                higher_is_better: r.get(1)?,
                t_s: r.get(2)?,
                value: r.get(3)?,
            })
        })?;
        rows.collect::<rusqlite::Result<_>>()
            .with_context(|| format!("reading the load's figures of recording {id}"))
    }

    /// The restarts of recording `id`'s instance, `(t_s, why)` in time order.
    pub fn recording_restarts(&self, id: i64) -> Result<Vec<(f64, String)>> {
        let mut query = self.conn.prepare(
            "SELECT t_s, why FROM recording_restarts WHERE recording_id = ?1 ORDER BY t_s",
        )?;
        let rows = query.query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<rusqlite::Result<_>>()
            .with_context(|| format!("reading the restarts of recording {id}"))
    }

    /// Recording `id`'s raw samples (those of its last `RAW_WINDOW_S`; older
    /// ones are in minute and hour buckets), in time order.
    pub fn raw_samples(&self, id: i64) -> Result<Vec<Sample>> {
        let mut query = self.conn.prepare(&format!(
            "SELECT {} FROM recording_samples WHERE recording_id = ?1 ORDER BY t_s",
            sample_rows::COLUMNS
        ))?;
        let rows = query.query_map([id], sample_rows::from_row)?;
        rows.collect::<rusqlite::Result<_>>()
            .with_context(|| format!("reading the samples of recording {id}"))
    }

    /// The recordings of soak `id`, in the order they began.
    pub fn soak_recordings(&self, id: i64) -> Result<Vec<RecordingInfo>> {
        let mut query = self.conn.prepare(&format!(
            "SELECT {INFO_COLUMNS} FROM recordings WHERE soak_id = ?1 ORDER BY id"
        ))?;
        let rows = query.query_map([id], info_from_row)?;
        rows.collect::<rusqlite::Result<_>>()
            .with_context(|| format!("reading the recordings of soak {id}"))
    }
}

#[cfg(test)]
mod tests {
    use crate::store::{NewRecording, Store};

    /// A soak instance's recording (`None`: a recording of no soak).
    fn instance(soak_id: Option<i64>) -> NewRecording {
        NewRecording {
            name: "soak glibc#1".into(),
            config: "glibc".into(),
            env: vec![],
            command: None,
            target_pid: 1,
            target_start: 0,
            interval_ms: 1000,
            hostname: "h".into(),
            soak_id,
        }
    }

    #[test]
    fn a_soak_keeps_its_arguments_knows_its_recordings_and_reads_their_samples(
    ) -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let mut store = Store::open(&dir.path().join("a.db"))?;
        let arguments = vec!["-a".to_string(), "glibc".into(), "--".into(), "grow".into()];
        let (soak, _) = store.begin_soak(&arguments)?;
        let (first, _) = store.begin_recording(&instance(Some(soak)))?;
        store.begin_recording(&instance(None))?;
        let (second, _) = store.begin_recording(&instance(Some(soak)))?;
        let stored = store.soak(soak)?.expect("stored");
        assert_eq!(stored.arguments, arguments);
        assert!(stored.started_unix > 1.6e9, "{}", stored.started_unix);
        assert_eq!(store.soak(soak + 1)?, None);
        let ids: Vec<i64> = store.soak_recordings(soak)?.iter().map(|r| r.id).collect();
        assert_eq!(ids, vec![first, second]);
        store.mark_restart(second, 12.5, "resumed")?;
        store.mark_restart(second, 3.0, "exited; restarted")?;
        assert_eq!(
            store.recording_restarts(second)?,
            vec![
                (3.0, "exited; restarted".to_string()),
                (12.5, "resumed".into())
            ]
        );
        assert!(store.recording_restarts(first)?.is_empty());
        let sample = |t_s| crate::model::Sample {
            t_s,
            rss_bytes: 1 << 20,
            ..Default::default()
        };
        store.append_samples(second, &[sample(1.0), sample(2.0)])?;
        let times: Vec<f64> = store.raw_samples(second)?.iter().map(|s| s.t_s).collect();
        assert_eq!(times, vec![1.0, 2.0]);
        assert!(store.raw_samples(first)?.is_empty());
        Ok(())
    }

    #[test]
    fn a_recordings_load_figures_come_back_in_time_order() -> anyhow::Result<()> {
        use crate::store::Reading;
        let dir = tempfile::tempdir()?;
        let mut store = Store::open(&dir.path().join("a.db"))?;
        let (soak, _) = store.begin_soak(&["soak".to_string()])?;
        let (id, _) = store.begin_recording(&instance(Some(soak)))?;
        let reading = |name: &str, t_s, value| Reading {
            name: name.into(),
            higher_is_better: name == "rps",
            t_s,
            value,
        };
        store.add_readings(id, &[reading("p95", 9.0, 12.5), reading("rps", 9.0, 800.0)])?;
        store.add_readings(id, &[reading("p95", 4.0, 11.0)])?;
        assert_eq!(
            store.recording_readings(id)?,
            vec![
                reading("p95", 4.0, 11.0),
                reading("p95", 9.0, 12.5),
                reading("rps", 9.0, 800.0)
            ]
        );
        assert!(store.recording_readings(id + 1)?.is_empty());
        Ok(())
    }
}
