//! Long recordings in the store: begun once, appended to in small
//! transactions (a SIGKILL or power cut loses only the samples not yet
//! committed), rolled up as they age and finished with how the recorded tree
//! ended. Raw samples are kept for `RAW_WINDOW_S`, per-minute buckets for
//! `MINUTE_WINDOW_S`, per-hour buckets for ever: a recording's size grows by
//! one small row per hour once it is older than a week. Roll-ups are
//! recomputed from the finer tier with `INSERT OR REPLACE`, so a recording
//! resumed after a crash rolls up the same way.

use super::convert::{now_stamp, opt_u64_at, to_i64, u64_at, with_note, Unstorable};
use super::load::effective_status;
use super::open::Store;
use super::sample_rows;
use crate::model::Sample;
use crate::recorded::{RecordedPoint, Recording, RecordingInfo};
use anyhow::{bail, Context, Result};
use rusqlite::{params, OptionalExtension, Row, Transaction, TransactionBehavior};

/// How long raw samples are kept before only their minute buckets remain.
pub(crate) const RAW_WINDOW_S: f64 = 3600.0;
/// How long minute buckets are kept before only their hour buckets remain.
pub(crate) const MINUTE_WINDOW_S: f64 = 7.0 * 86400.0;
const MINUTE: f64 = 60.0;
const HOUR: f64 = 3600.0;

/// A recording about to begin.
#[derive(Debug, Clone)]
pub struct NewRecording {
    pub name: String,
    pub config: String,
    pub env: Vec<(String, String)>,
    pub command: Option<Vec<String>>,
    pub target_pid: i32,
    /// `/proc/PID/stat` starttime: a pid reused by another process differs.
    pub target_start: u64,
    pub interval_ms: u64,
    pub hostname: String,
    /// The soak this recording is an instance of (`Store::begin_soak`).
    pub soak_id: Option<i64>,
}

/// How the recorded tree ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Ending {
    /// `complete` (duration reached), `exited`, `interrupted` or `failed`.
    pub status: &'static str,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub message: Option<String>,
}

pub(super) const INFO_COLUMNS: &str =
    "id, name, config, command, target_pid, started_at, interval_ms,
    status, pid, finished_at, exit_code, signal, message, hostname,
    coalesce((SELECT max(t_s) FROM recording_samples s WHERE s.recording_id = recordings.id),
             (SELECT max(t_s) + tier_s FROM recording_tiers t WHERE t.recording_id = recordings.id),
             0)";

impl Store {
    /// Stores a new `running` recording owned by this process; returns its
    /// id and the Unix time its `t_s` counts from (now).
    pub fn begin_recording(&mut self, new: &NewRecording) -> Result<(i64, f64)> {
        let (started_at, started_unix) = now_stamp()?;
        self.conn
            .execute(
                "INSERT INTO recordings (name, config, env, command, target_pid, target_start,
                     started_at, started_unix, interval_ms, status, pid, hostname, soak_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'running', ?10, ?11, ?12)",
                params![
                    new.name,
                    new.config,
                    serde_json::to_string(&new.env)?,
                    new.command
                        .as_ref()
                        .map(serde_json::to_string)
                        .transpose()?,
                    new.target_pid,
                    to_i64(new.target_start, "target_start")?,
                    started_at,
                    started_unix,
                    to_i64(new.interval_ms, "interval_ms")?,
                    std::process::id(),
                    new.hostname,
                    new.soak_id,
                ],
            )
            .context("storing the new recording")?;
        Ok((self.conn.last_insert_rowid(), started_unix))
    }

    /// The recording of this very process (pid and start time) that was cut
    /// off (its allocscope died), if any: `record --pid` continues it.
    pub fn cut_off_recording(&self, target_pid: i32, target_start: u64) -> Result<Option<i64>> {
        let mut query = self.conn.prepare(
            "SELECT id, status, pid FROM recordings
             WHERE target_pid = ?1 AND target_start = ?2 ORDER BY id DESC",
        )?;
        let rows = query.query_map(
            params![target_pid, to_i64(target_start, "target_start")?],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get(2)?)),
        )?;
        for row in rows {
            let (id, status, pid) = row?;
            if effective_status(&status, pid) == "incomplete" {
                return Ok(Some(id));
            }
        }
        Ok(None)
    }

    /// Takes over a cut-off recording: this process writes it from now on,
    /// following the process `target_pid` started at `target_start` (the
    /// same for `record --pid`, a new instance for `soak --resume`).
    /// Returns the Unix time its `t_s` counts from.
    pub fn resume_recording(&mut self, id: i64, target_pid: i32, target_start: u64) -> Result<f64> {
        self.conn
            .execute(
                "UPDATE recordings SET pid = ?1, status = 'running', target_pid = ?2,
                     target_start = ?3 WHERE id = ?4",
                params![
                    std::process::id(),
                    target_pid,
                    to_i64(target_start, "target_start")?,
                    id
                ],
            )
            .with_context(|| format!("resuming recording {id}"))?;
        self.conn
            .query_row(
                "SELECT started_unix FROM recordings WHERE id = ?1",
                params![id],
                |r| r.get(0),
            )
            .with_context(|| format!("reading recording {id}"))
    }

    /// Appends samples in one transaction, then rolls up what has aged.
    pub fn append_samples(&mut self, id: i64, samples: &[Sample]) -> Result<()> {
        self.append_batches(&[(id, samples)])
    }

    /// Appends each recording's samples of `batches` (recording id, its
    /// samples), all in one transaction, rolling up what has aged: a
    /// soak's instances share one commit (one sync of the journal) a tick.
    pub(crate) fn append_batches(&mut self, batches: &[(i64, &[Sample])]) -> Result<()> {
        if batches.iter().all(|(_, samples)| samples.is_empty()) {
            return Ok(());
        }
        let ids: Vec<String> = batches.iter().map(|(id, _)| id.to_string()).collect();
        let context = || format!("storing samples of recording {}", ids.join(", "));
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .with_context(context)?;
        {
            let mut insert = tx
                .prepare_cached(&sample_rows::insert_sql(
                    "INSERT OR REPLACE",
                    "recording_samples",
                    "recording_id",
                ))
                .with_context(context)?;
            let mut unstorable = Unstorable::default();
            for &(id, samples) in batches {
                for s in samples {
                    insert
                        .execute(rusqlite::params_from_iter(sample_rows::values(
                            id,
                            s,
                            &mut unstorable,
                        )))
                        .with_context(context)?;
                }
            }
            // Said once, in the message `finish_recording` stores.
            self.unstorable.absorb(&unstorable);
        }
        for &(id, samples) in batches {
            if let Some(last) = samples.last() {
                roll_up(&tx, id, last.t_s, false).with_context(context)?;
            }
        }
        tx.commit().with_context(context)
    }

    /// Rolls up the last partial buckets and records how the tree ended.
    pub fn finish_recording(&mut self, id: i64, ending: &Ending) -> Result<()> {
        let context = || format!("finishing recording {id}");
        // Immediate: a deferred transaction that upgrades to a writer while
        // another recording commits fails at once instead of waiting.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .with_context(context)?;
        roll_up(&tx, id, f64::INFINITY, true).with_context(context)?;
        let unstorable = std::mem::take(&mut self.unstorable).sentence();
        let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        tx.execute(
            "UPDATE recordings SET status = ?1, finished_at = ?2, exit_code = ?3, signal = ?4,
                 message = ?5 WHERE id = ?6",
            params![
                ending.status,
                now,
                ending.exit_code,
                ending.signal,
                with_note(ending.message.as_deref(), unstorable),
                id
            ],
        )
        .with_context(context)?;
        tx.commit().with_context(context)
    }

    /// Every recording, oldest first, without their points.
    pub fn list_recordings(&self) -> Result<Vec<RecordingInfo>> {
        let mut query = self.conn.prepare(&format!(
            "SELECT {INFO_COLUMNS} FROM recordings ORDER BY id"
        ))?;
        let rows = query.query_map([], info_from_row)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .context("listing the recordings")
    }

    /// One recording with its points: hour buckets where only they remain,
    /// then minute buckets, then raw samples.
    pub fn load_recording(&self, id: i64) -> Result<Recording> {
        let info = self
            .conn
            .query_row(
                &format!("SELECT {INFO_COLUMNS} FROM recordings WHERE id = ?1"),
                params![id],
                info_from_row,
            )
            .optional()
            .with_context(|| format!("reading recording {id}"))?;
        let Some(info) = info else {
            bail!(
                "no recording {id} in '{}'; `allocscope record --list` shows the stored ones",
                self.path.display()
            );
        };
        let first = |sql: &str| -> Result<Option<f64>> {
            Ok(self.conn.query_row(sql, params![id], |r| r.get(0))?)
        };
        let raw_from = first("SELECT min(t_s) FROM recording_samples WHERE recording_id = ?1")?
            .unwrap_or(f64::INFINITY);
        let minute_from =
            first("SELECT min(t_s) FROM recording_tiers WHERE recording_id = ?1 AND tier_s = 60")?
                .unwrap_or(f64::INFINITY)
                .min(raw_from);
        let mut points = Vec::new();
        let mut tier = self.conn.prepare(
            "SELECT t_s, tier_s, n, rss_min, rss_mean, rss_max, pss_mean, swap_mean, vsz_mean,
                    processes, threads, minor_faults, major_faults
             FROM recording_tiers
             WHERE recording_id = ?1 AND tier_s = ?2 AND t_s >= ?3 AND t_s < ?4 ORDER BY t_s",
        )?;
        let hour_until = (minute_from / HOUR).floor() * HOUR;
        let minute_until = (raw_from / MINUTE).floor() * MINUTE;
        for (tier_s, from, until) in [(3600, 0.0, hour_until), (60, hour_until, minute_until)] {
            let until = if until.is_finite() { until } else { f64::MAX };
            let rows = tier.query_map(params![id, tier_s, from, until], point_from_tier)?;
            points.extend(rows.collect::<rusqlite::Result<Vec<_>>>()?);
        }
        let mut raw = self.conn.prepare(&format!(
            "SELECT {} FROM recording_samples WHERE recording_id = ?1 ORDER BY t_s",
            sample_rows::COLUMNS
        ))?;
        let rows = raw.query_map(params![id], point_from_raw)?;
        points.extend(rows.collect::<rusqlite::Result<Vec<_>>>()?);
        Ok(Recording { info, points })
    }
}

/// Rolls complete minutes (all of them when `everything`) into minute
/// buckets and complete hours into hour buckets, then drops raw samples and
/// minute buckets that have aged out of their windows and been rolled up.
fn roll_up(tx: &Transaction, id: i64, last_t_s: f64, everything: bool) -> rusqlite::Result<()> {
    let rolled_until = |tier_s: i64| -> rusqlite::Result<f64> {
        tx.prepare_cached(
            "SELECT coalesce(max(t_s) + tier_s, 0) FROM recording_tiers
             WHERE recording_id = ?1 AND tier_s = ?2",
        )?
        .query_row(params![id, tier_s], |r| r.get(0))
    };
    let upto = |step: f64| {
        if everything {
            f64::MAX
        } else {
            (last_t_s / step).floor() * step
        }
    };
    // In a partial bucket rolled at the end, earlier raw samples may
    // already be rolled: recompute from the bucket's start.
    let from = |rolled: f64, step: f64| {
        if everything {
            (rolled - step).max(0.0)
        } else {
            rolled
        }
    };
    let minute_from = rolled_until(60)?;
    let minute_to = upto(MINUTE);
    if minute_to > minute_from || everything {
        tx.prepare_cached(
            "INSERT OR REPLACE INTO recording_tiers (recording_id, tier_s, t_s, n, rss_min,
                 rss_mean, rss_max, pss_n, pss_min, pss_mean, pss_max, swap_mean, vsz_mean,
                 processes, threads, minor_faults, major_faults)
             SELECT ?1, 60, CAST(t_s / 60 AS INTEGER) * 60 AS b, count(*), min(rss_bytes),
                 CAST(avg(rss_bytes) AS INTEGER), max(rss_bytes), count(pss_bytes),
                 min(pss_bytes), CAST(avg(pss_bytes) AS INTEGER), max(pss_bytes),
                 CAST(avg(swap_bytes) AS INTEGER), CAST(avg(vsz_bytes) AS INTEGER),
                 max(processes), max(threads), max(minor_faults), max(major_faults)
             FROM recording_samples WHERE recording_id = ?1 AND t_s >= ?2 AND t_s < ?3
             GROUP BY b",
        )?
        .execute(params![id, from(minute_from, MINUTE), minute_to])?;
    }
    let hour_from = rolled_until(3600)?;
    let hour_to = upto(HOUR);
    if hour_to > hour_from || everything {
        tx.prepare_cached(
            "INSERT OR REPLACE INTO recording_tiers (recording_id, tier_s, t_s, n, rss_min,
                 rss_mean, rss_max, pss_n, pss_min, pss_mean, pss_max, swap_mean, vsz_mean,
                 processes, threads, minor_faults, major_faults)
             SELECT ?1, 3600, CAST(t_s / 3600 AS INTEGER) * 3600 AS b, sum(n), min(rss_min),
                 CAST(sum(rss_mean * n) / sum(n) AS INTEGER), max(rss_max), sum(pss_n),
                 min(pss_min), CAST(sum(pss_mean * pss_n) / nullif(sum(pss_n), 0) AS INTEGER),
                 max(pss_max), CAST(avg(swap_mean) AS INTEGER),
                 CAST(sum(vsz_mean * n) / sum(n) AS INTEGER), max(processes), max(threads),
                 max(minor_faults), max(major_faults)
             FROM recording_tiers
             WHERE recording_id = ?1 AND tier_s = 60 AND t_s >= ?2 AND t_s < ?3
             GROUP BY b",
        )?
        .execute(params![id, from(hour_from, HOUR), hour_to])?;
    }
    if !everything {
        // Cut at bucket boundaries, so raw and rolled-up points never overlap.
        let raw_cut = ((last_t_s - RAW_WINDOW_S) / MINUTE).floor() * MINUTE;
        let raw_cut = raw_cut.min(rolled_until(60)?);
        tx.prepare_cached("DELETE FROM recording_samples WHERE recording_id = ?1 AND t_s < ?2")?
            .execute(params![id, raw_cut])?;
        let minute_cut = ((last_t_s - MINUTE_WINDOW_S) / HOUR).floor() * HOUR;
        let minute_cut = minute_cut.min(rolled_until(3600)?);
        tx.prepare_cached(
            "DELETE FROM recording_tiers WHERE recording_id = ?1 AND tier_s = 60 AND t_s < ?2",
        )?
        .execute(params![id, minute_cut])?;
    }
    Ok(())
}

pub(super) fn info_from_row(r: &Row<'_>) -> rusqlite::Result<RecordingInfo> {
    let command: Option<String> = r.get(3)?;
    let status: String = r.get(7)?;
    let pid: i64 = r.get(8)?;
    Ok(RecordingInfo {
        id: r.get(0)?,
        name: r.get(1)?,
        config: r.get(2)?,
        command: command.and_then(|c| serde_json::from_str(&c).ok()),
        target_pid: r.get(4)?,
        started_at: r.get(5)?,
        interval_ms: u64_at(r, 6)?,
        status: effective_status(&status, pid),
        finished_at: r.get(9)?,
        exit_code: r.get(10)?,
        signal: r.get(11)?,
        message: r.get(12)?,
        hostname: r.get(13)?,
        elapsed_s: r.get(14)?,
    })
}

fn point_from_tier(r: &Row<'_>) -> rusqlite::Result<RecordedPoint> {
    Ok(RecordedPoint {
        t_s: r.get(0)?,
        span_s: r.get(1)?,
        samples: u64_at(r, 2)?,
        rss_min_bytes: u64_at(r, 3)?,
        rss_mean_bytes: u64_at(r, 4)?,
        rss_max_bytes: u64_at(r, 5)?,
        pss_mean_bytes: opt_u64_at(r, 6)?,
        swap_bytes: opt_u64_at(r, 7)?,
        vsz_bytes: u64_at(r, 8)?,
        processes: r.get(9)?,
        threads: r.get(10)?,
        minor_faults: u64_at(r, 11)?,
        major_faults: u64_at(r, 12)?,
    })
}

fn point_from_raw(r: &Row<'_>) -> rusqlite::Result<RecordedPoint> {
    let s = sample_rows::from_row(r)?;
    Ok(RecordedPoint {
        t_s: s.t_s,
        span_s: 0.0,
        samples: 1,
        rss_min_bytes: s.rss_bytes,
        rss_mean_bytes: s.rss_bytes,
        rss_max_bytes: s.rss_bytes,
        pss_mean_bytes: s.pss_bytes,
        swap_bytes: s.swap_bytes,
        vsz_bytes: s.vsz_bytes,
        processes: s.processes,
        threads: s.threads,
        minor_faults: s.minor_faults,
        major_faults: s.major_faults,
    })
}
