//! Vetting one reading: wrapped words are unknown, a wrapped live heap is
//! discarded, a live heap above the anonymous RSS is clamped, and the run's
//! note says so only when it happened.

use super::*;

const MIB: u64 = 1 << 20;

fn reading(live: u64, wrapped: Option<u64>) -> ProbeReading {
    ProbeReading {
        mode: 1,
        live_bytes: live,
        live_wrapped: wrapped,
        ..ProbeReading::default()
    }
}

#[test]
fn words_from_two_to_the_63_up_are_unknown() {
    assert_eq!(known(0), Some(0));
    assert_eq!(known((1 << 63) - 1), Some((1 << 63) - 1));
    assert_eq!(known(1 << 63), None);
    assert_eq!(known(u64::MAX - 1199), None, "2^64 - 1200: a wrapped -1200");
    assert_eq!(known(u64::MAX), None, "the probe's own unknown");
}

#[test]
fn a_wrapped_live_heap_is_discarded_and_an_unresident_one_clamped() {
    let tally = Tally::default();
    assert_eq!(tally.note(), None);
    let honest = tally.vet(reading(10 * MIB, None), 20 * MIB);
    assert_eq!(honest.map(|r| r.live_bytes), Some(10 * MIB));
    // Allocated, not touched yet: clamped, not worth a note.
    let small = tally.vet(reading(20 * MIB + 4096, None), 20 * MIB);
    assert_eq!(small.map(|r| r.live_bytes), Some(20 * MIB));
    let filling = tally.vet(reading(39 * MIB, None), 20 * MIB);
    assert_eq!(filling.map(|r| r.live_bytes), Some(20 * MIB));
    let first_tick = tally.vet(reading(15 * MIB, None), MIB);
    assert_eq!(first_tick.map(|r| r.live_bytes), Some(MIB));
    assert_eq!(tally.note(), None);
    let wrapped = u64::MAX - 1199;
    assert_eq!(tally.vet(reading(0, Some(wrapped)), 20 * MIB), None);
    let big = tally.vet(reading(1 << 62, None), 20 * MIB);
    assert_eq!(big.map(|r| r.live_bytes), Some(20 * MIB));
    let note = tally.note().unwrap_or_default();
    assert!(
        note.contains("1 of 6 readings discarded")
            && note.contains("18446744073709550416")
            && note.contains("1 of 6 readings clamped"),
        "{note}"
    );
}

/// mimalloc's resident figure is what its segments committed, jemalloc's
/// `stats.resident` whole extents: both above the anonymous RSS on a tick
/// (mimalloc on every one measured). Capped there, silently.
#[test]
fn a_resident_figure_above_the_anonymous_rss_is_capped_at_it() {
    let tally = Tally::default();
    let committed = ProbeReading {
        resident_bytes: Some(128 * MIB),
        ..reading(100 * MIB, None)
    };
    let vetted = tally.vet(committed, 107 * MIB).expect("kept");
    assert_eq!(vetted.resident_bytes, Some(107 * MIB));
    let honest = ProbeReading {
        resident_bytes: Some(90 * MIB),
        ..reading(80 * MIB, None)
    };
    let vetted = tally.vet(honest, 107 * MIB).expect("kept");
    assert_eq!(vetted.resident_bytes, Some(90 * MIB));
    assert_eq!(tally.note(), None, "a resident cap is no news");
}

fn answer(rss: u64, anon: Option<u64>, live: u64, free: u64) -> ReclaimReading {
    ReclaimReading {
        count: 1,
        rss_before_bytes: Some(rss * MIB),
        rss_after_bytes: Some(3 * MIB),
        free_before_bytes: Some(free * MIB),
        live_before_bytes: Some(live * MIB),
        anon_before_bytes: anon.map(|a| a * MIB),
        kind: 1,
        ..ReclaimReading::default()
    }
}

/// mimalloc at the exit of a 2-thread program: 199.6 MiB counted free
/// (committed less live) at 72.5 MiB of RSS. The free memory a reclaim
/// could return is at most what the live heap leaves of the anonymous RSS.
#[test]
fn a_reclaim_free_figure_above_what_the_process_held_is_capped() {
    let (vetted, counted) = vet_reclaim(answer(73, Some(71), 1, 200));
    assert_eq!(vetted.free_before_bytes, Some(70 * MIB));
    assert_eq!(vetted.live_before_bytes, Some(MIB));
    assert_eq!(counted, Some(200 * MIB));
    // A live heap above the anonymous RSS is clamped to it, as on a tick,
    // and leaves no room for free memory.
    let (vetted, _) = vet_reclaim(answer(73, Some(71), 90, 10));
    assert_eq!(
        (vetted.live_before_bytes, vetted.free_before_bytes),
        (Some(71 * MIB), Some(0))
    );
    // Without the anonymous RSS word (an older probe), the RSS bounds it.
    let (vetted, counted) = vet_reclaim(answer(73, None, 1, 200));
    assert_eq!(
        (vetted.free_before_bytes, counted),
        (Some(72 * MIB), Some(200 * MIB))
    );
    // Within what it held: unchanged, nothing counted apart.
    let honest = answer(300, Some(290), 50, 100);
    assert_eq!(vet_reclaim(honest), (honest, None));
    // No reclaim ran (no call to return memory): nothing to bound by.
    let none = ReclaimReading {
        rss_before_bytes: None,
        anon_before_bytes: None,
        ..answer(0, None, 1, 200)
    };
    assert_eq!(vet_reclaim(none), (none, None));
}
