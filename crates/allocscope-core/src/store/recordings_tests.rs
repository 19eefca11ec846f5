//! The recordings tables: appends, roll-ups into minute and hour buckets,
//! resuming a cut-off recording, and a full disk.

use super::*;
use crate::model::Sample;
use crate::store::recordings::{MINUTE_WINDOW_S, RAW_WINDOW_S};
use anyhow::Result;

fn new_recording(pid: i32) -> NewRecording {
    NewRecording {
        name: "svc".into(),
        config: "glibc".into(),
        env: vec![],
        command: Some(vec!["./svc".into()]),
        target_pid: pid,
        target_start: 42,
        interval_ms: 1000,
        hostname: "h".into(),
        soak_id: None,
    }
}

fn sample(t_s: f64, rss_bytes: u64) -> Sample {
    Sample {
        t_s,
        rss_bytes,
        pss_bytes: (t_s as u64).is_multiple_of(10).then_some(rss_bytes / 2),
        vsz_bytes: 2 * rss_bytes,
        processes: 1,
        threads: 4,
        minor_faults: t_s as u64,
        ..Sample::default()
    }
}

/// Feeds `seconds` one-second samples in batches of two, like the loop.
fn feed(
    store: &mut Store,
    id: i64,
    from: u64,
    seconds: u64,
    rss: impl Fn(u64) -> u64,
) -> Result<()> {
    let mut batch = Vec::new();
    for t in from..from + seconds {
        batch.push(sample(t as f64, rss(t)));
        if batch.len() == 2 {
            store.append_samples(id, &batch)?;
            batch.clear();
        }
    }
    store.append_samples(id, &batch)
}

#[test]
fn old_samples_roll_up_and_points_cover_the_whole_recording_once() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut store = Store::open(&dir.path().join("r.db"))?;
    let (id, _) = store.begin_recording(&new_recording(7))?;
    let hours = 3;
    feed(&mut store, id, 0, hours * 3600, |t| 1000 + t)?;
    let raw: i64 = store
        .conn
        .query_row("SELECT count(*) FROM recording_samples", [], |r| r.get(0))?;
    assert!(raw <= RAW_WINDOW_S as i64 + 60, "{raw} raw samples kept");
    store.finish_recording(
        id,
        &Ending {
            status: "exited",
            exit_code: Some(0),
            signal: None,
            message: None,
        },
    )?;
    let recording = store.load_recording(id)?;
    assert_eq!(recording.info.status, "exited");
    assert_eq!(recording.info.exit_code, Some(0));
    let points = &recording.points;
    let covered: u64 = points.iter().map(|p| p.samples).sum();
    assert_eq!(covered, hours * 3600, "every sample counted once");
    assert!(
        points.windows(2).all(|w| w[0].t_s < w[1].t_s),
        "in time order"
    );
    let first = points[0];
    assert_eq!((first.t_s, first.span_s, first.samples), (0.0, 60.0, 60));
    assert_eq!((first.rss_min_bytes, first.rss_max_bytes), (1000, 1059));
    assert_eq!(first.rss_mean_bytes, 1029);
    // PSS on t = 0, 10, ..., 50: rss/2 = 500, 505, ..., 525.
    assert_eq!(first.pss_mean_bytes, Some(512));
    assert_eq!(first.minor_faults, 59);
    let last = points[points.len() - 1];
    assert_eq!(
        (last.span_s, last.rss_mean_bytes),
        (0.0, 1000 + 3 * 3600 - 1)
    );
    assert!((recording.info.elapsed_s - (3.0 * 3600.0 - 1.0)).abs() < 1e-9);
    Ok(())
}

#[test]
fn a_month_keeps_hour_buckets_beyond_the_minute_window() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut store = Store::open(&dir.path().join("r.db"))?;
    let (id, _) = store.begin_recording(&new_recording(7))?;
    // One sample a minute is enough to exercise the tiers over 9 days.
    let days = 9.0;
    let mut t = 0.0;
    while t < days * 86400.0 {
        store.append_samples(id, &[sample(t, 5000)])?;
        t += 60.0;
    }
    let count = |tier: i64| -> Result<i64> {
        Ok(store.conn.query_row(
            "SELECT count(*) FROM recording_tiers WHERE tier_s = ?1",
            [tier],
            |r| r.get(0),
        )?)
    };
    assert!(count(60)? <= (MINUTE_WINDOW_S / 60.0) as i64 + 120);
    assert!(count(3600)? >= 24 * 9 - 1);
    let recording = store.load_recording(id)?;
    assert_eq!(recording.points[0].span_s, 3600.0);
    let covered: u64 = recording.points.iter().map(|p| p.samples).sum();
    assert_eq!(covered, (days * 1440.0) as u64);
    Ok(())
}

#[test]
fn a_cut_off_recording_is_incomplete_and_found_again() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("r.db");
    let mut store = Store::open(&path)?;
    let (id, started) = store.begin_recording(&new_recording(7))?;
    // FULL: every committed second is on disk (docs/recording.md says so).
    let synchronous: i64 = store
        .conn
        .query_row("PRAGMA synchronous", [], |r| r.get(0))?;
    assert_eq!(synchronous, 2);
    feed(&mut store, id, 0, 10, |_| 1)?;
    // A writer that is gone (pid 0 never is alive).
    store
        .conn
        .execute("UPDATE recordings SET pid = 0 WHERE id = ?1", [id])?;
    assert_eq!(store.load_recording(id)?.info.status, "incomplete");
    assert_eq!(store.cut_off_recording(7, 42)?, Some(id));
    assert_eq!(store.cut_off_recording(7, 43)?, None, "another process");
    assert_eq!(store.resume_recording(id, 9, 44)?, started);
    let info = store.load_recording(id)?.info;
    assert_eq!((info.status.as_str(), info.target_pid), ("running", 9));
    assert_eq!(store.cut_off_recording(7, 42)?, None, "running again");
    Ok(())
}

#[test]
fn a_full_disk_stops_appends_with_a_clear_error_and_keeps_what_was_written() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("r.db");
    let mut store = Store::open(&path)?;
    let (id, _) = store.begin_recording(&new_recording(7))?;
    feed(&mut store, id, 0, 100, |_| 1)?;
    // SQLite's page limit fails writes exactly like a full disk (SQLITE_FULL).
    let pages: i64 = store
        .conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))?;
    store.conn.pragma_update(None, "max_page_count", pages)?;
    let error = feed(&mut store, id, 100, 20_000, |_| 1).expect_err("fills up");
    let text = format!("{error:#}");
    assert!(text.contains("full"), "{text}");
    drop(store);
    let store = Store::open(&path)?;
    let kept: u64 = store
        .load_recording(id)?
        .points
        .iter()
        .map(|p| p.samples)
        .sum();
    assert!(kept >= 100, "{kept}");
    Ok(())
}

#[test]
fn a_shards_recordings_are_copied_with_their_samples_and_roll_ups() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut shard = Store::open(&dir.path().join("shard.db"))?;
    let (id, _) = shard.begin_recording(&new_recording(7))?;
    feed(&mut shard, id, 0, 2 * 3600, |t| 1000 + t)?;
    shard.finish_recording(
        id,
        &Ending {
            status: "complete",
            exit_code: None,
            signal: None,
            message: Some("soak of glibc#2".into()),
        },
    )?;
    drop(shard);
    let mut store = Store::open(&dir.path().join("main.db"))?;
    let (earlier, _) = store.begin_recording(&new_recording(8))?;
    let (soak, _) = store.begin_soak(&["soak".to_string()])?;
    let copied = store.copy_recordings_from(&dir.path().join("shard.db"), Some(soak))?;
    assert_eq!(copied.len(), 1);
    let ids: Vec<i64> = (store.soak_recordings(soak)?.iter())
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, copied);
    assert_ne!(copied[0], earlier);
    let original = Store::open(&dir.path().join("shard.db"))?.load_recording(id)?;
    let copy = store.load_recording(copied[0])?;
    assert_eq!(copy.points, original.points);
    assert_eq!(
        (copy.info.status.as_str(), copy.info.message.as_deref()),
        ("complete", Some("soak of glibc#2"))
    );
    assert!(copy.points.iter().any(|p| p.span_s == 60.0));
    Ok(())
}
