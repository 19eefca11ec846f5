//! No impossible figure, and one bad figure never costs the experiment: a
//! real program under the real heap probe, served by an allocator whose
//! counters read below zero (wrapped to 2^64 - 1200) and far beyond any
//! RSS, as gperftools' do when read mid-update. Every run is stored `ok`, no stored
//! live heap exceeds its tick's RSS or the run's peak, and each run's
//! message says what was discarded and clamped.

use crate::common::*;
use serde_json::Value;

/// Per run of the store: (live heap above the tick's RSS, largest live heap,
/// peak RSS, ticks with a live heap).
fn stored_heaps(db: &std::path::Path) -> Vec<(i64, i64, i64, i64)> {
    let conn = rusqlite::Connection::open(db).expect("the store opens");
    conn.prepare(
        "SELECT sum(s.live_heap_bytes > s.rss_bytes), coalesce(max(s.live_heap_bytes), 0), \
         max(s.rss_bytes), count(s.live_heap_bytes) FROM samples s GROUP BY s.run_id \
         ORDER BY s.run_id",
    )
    .and_then(|mut q| {
        q.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()
    })
    .expect("samples")
}

#[test]
fn counters_that_wrap_below_zero_or_pass_the_rss_are_dropped_or_clamped_and_every_run_is_stored() {
    let _one_at_a_time = one_heavy_test_at_a_time();
    let scratch = Scratch::new();
    // glibc's malloc behind counters that read -1200 and 2^62 in turn
    // (tests/programs/wrapping_allocator.c): the probe's stats build reads
    // them as the serving allocator's.
    let library = program_with("wrapping_allocator", &["-shared", "-fPIC"]);
    let wrapping = format!("wrapping={}", library.display());
    assert!(!wrapping.contains(','), "a path -a can take: {wrapping}");
    let hold = program("hold");
    let (output, json) = scratch.compare(
        &[
            "-a",
            &wrapping,
            "-a",
            "glibc",
            "-r",
            "2",
            "--interval",
            "20ms",
        ],
        &[hold.to_str().expect("utf-8"), "blocks", "32", "1200"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let all: Vec<&Value> = configs(&json).iter().flat_map(runs).collect();
    assert_eq!(all.len(), 4, "{json}");
    for run in &all {
        assert_eq!(run["status"], "ok", "{run}");
    }
    for run in runs(&configs(&json)[0]) {
        assert_eq!(run["probe_mode"], "stats", "{run}");
        let message = run["message"].as_str().unwrap_or_default();
        assert!(
            message
                .contains("readings discarded: the allocator's live heap counter was below zero")
                && message.contains("readings clamped to the process's anonymous RSS"),
            "{message}"
        );
        // The allocator gave each kind of reading.
        let path = run["stderr_path"].as_str().expect("stderr path");
        let text = std::fs::read_to_string(path).expect("stderr file");
        let gave_all = text.lines().any(|l| {
            let counts: Vec<u64> = l
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            l.starts_with("readings ") && counts.len() == 3 && counts.iter().all(|&n| n > 0)
        });
        assert!(gave_all, "{text}");
    }
    let heaps = stored_heaps(&scratch.db());
    assert_eq!(heaps.len(), 4, "every run stored: {heaps:?}");
    for (above_rss, live, peak_rss, ticks) in heaps {
        assert_eq!(above_rss, 0, "a live heap above its tick's RSS");
        assert!(live <= peak_rss, "live {live} > peak RSS {peak_rss}");
        // The honest readings are kept: 32 MiB held live for 1.2 s, read on
        // the ticks of the hold (not only in the short allocation phase).
        assert!(ticks > 0 && live >= 16 << 20, "{live} on {ticks} ticks");
    }
}
