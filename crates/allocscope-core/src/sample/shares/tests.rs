//! Shares on made-up fork trees: a parent's 64 MiB heap inherited by n
//! children, each with 80 KiB of its own outside the heap (its stack, the
//! probe's thread) and `own` MiB of heap it allocated itself; glibc's free
//! figure (its top chunk, mostly not resident) covers what the live heap
//! leaves of `RssAnon`, as it did on the real tree.

use super::*;
use crate::sample::breakdown::{of_tree, ProcessMemory};

const MIB: f64 = 1024.0 * 1024.0;
const PRIVATE_MIB: f64 = 80.0 / 1024.0;
/// What each inherited outside the heap and has not written: the parent's
/// stack pages, libc's data.
const INHERITED_MIB: f64 = 60.0 / 1024.0;

fn bytes(mib: f64) -> u64 {
    (mib * MIB).round() as u64
}

fn anon(mib: f64) -> RssParts {
    RssParts {
        anon_bytes: bytes(mib),
        file_bytes: bytes(2.0),
        shmem_bytes: 0,
    }
}

fn live(mib: f64) -> HeapFigures {
    HeapFigures {
        live_bytes: bytes(mib),
        free_bytes: bytes(0.12),
        ..HeapFigures::default()
    }
}

/// One member of a tree of `n` sharing the 64 MiB heap and 2 MiB of
/// libraries: its status split, PSS split and heap figures.
fn member(n: usize, own: f64) -> (RssParts, RssParts, HeapFigures) {
    let rss = anon(64.0 + INHERITED_MIB + own + PRIVATE_MIB);
    let pss = RssParts {
        anon_bytes: bytes((64.0 + INHERITED_MIB) / n as f64 + own + PRIVATE_MIB),
        file_bytes: bytes(2.0 / n as f64),
        shmem_bytes: 0,
    };
    (rss, pss, live(64.0 + own))
}

/// The tree's weighted live heap and breakdown, in MiB.
fn tree_mib(n: usize, own: f64, parent_own: f64) -> (f64, f64, f64) {
    let mut members = vec![member(n, parent_own)];
    members.extend((1..n).map(|_| member(n, own)));
    let (mut heap, mut pss) = (0.0, 0.0);
    let mut memories = Vec::new();
    for (rss, p, h) in &members {
        let share = Share::of(rss, p, n);
        heap += share.weigh_figure(rss.anon_bytes, h.live_bytes, None) as f64;
        pss += p.total_bytes() as f64;
        let (rss, h) = share.weigh(rss, Some(h), None);
        memories.push(ProcessMemory {
            rss,
            anon_pages: Default::default(),
            heap: h,
        });
    }
    let (breakdown, _) = of_tree(memories).expect("heap figures");
    assert!(
        (breakdown.total_bytes() as f64 - pss).abs() < 0.001 * pss,
        "parts {} against PSS {pss}",
        breakdown.total_bytes()
    );
    let live = breakdown.live_heap_bytes as f64 / MIB;
    (heap / MIB, live, pss / MIB)
}

#[test]
fn a_heap_inherited_by_a_thousand_forks_counts_once() {
    // The parent's 64 MiB, once, whatever the number of children; the
    // children's own stacks are not taken for heap.
    for n in [2, 201, 1001] {
        let (heap, live, _) = tree_mib(n, 0.0, 0.0);
        assert!((heap - 64.0).abs() < 0.02 * 64.0, "{n}: {heap} MiB");
        assert!((live - heap).abs() < 0.01, "{n}: breakdown {live} MiB");
    }
    // Summed as read, it was 64 MiB a process.
    let (rss, _, h) = member(1001, 0.0);
    let whole = Share::WHOLE.weigh_figure(rss.anon_bytes, h.live_bytes, None) as f64 / MIB;
    assert!((whole - 64.0).abs() < 0.01, "{whole}");
    let (same, _) = Share::WHOLE.weigh(&rss, Some(&h), None);
    assert_eq!(same, rss);
}

#[test]
fn what_each_allocated_itself_counts_in_full() {
    // 1 MiB of each child's own heap, 8 of the parent's after forking.
    let (heap, _, _) = tree_mib(1001, 1.0, 8.0);
    // The shared pages are placed in the live heap first, so each child's
    // own heap loses what it inherited outside the heap (60 KiB, at
    // 1000/1001): -5.5% here, within the 10% the tree promises.
    let truth = 64.0 + 8.0 + 1000.0;
    assert!(
        (heap - truth).abs() < 0.1 * truth,
        "{heap} MiB, not {truth}"
    );
    let (heap, _, _) = tree_mib(1001, 0.0, 8.0);
    assert!((heap - 72.0).abs() < 0.05 * 72.0, "{heap} MiB, not 72");
}

#[test]
fn a_process_that_shares_nothing_counts_in_full() {
    let rss = anon(100.0);
    let h = live(90.0);
    let share = Share::of(&rss, &rss, 1);
    assert_eq!(share, Share::WHOLE);
    assert_eq!(share.weigh(&rss, Some(&h), None), (rss, Some(h)));
    // Never read nor estimated: in full.
    assert_eq!(ShareTable::default().share(7, 3), Share::WHOLE);
}

#[test]
fn shared_bytes_go_to_live_then_metadata_then_free_then_the_rest() {
    let rss = anon(100.0);
    let pss = RssParts {
        anon_bytes: bytes(30.0),
        ..rss
    };
    let h = HeapFigures {
        live_bytes: bytes(50.0),
        metadata_bytes: bytes(10.0),
        free_bytes: bytes(20.0),
    };
    let (weighed, heap) = Share::of(&rss, &pss, 2).weigh(&rss, Some(&h), None);
    assert_eq!(weighed.anon_bytes, bytes(30.0));
    // PSS below RSS/2: more mappers than its family of 2, every page
    // shared, each part at 30%.
    assert_eq!(
        heap,
        Some(HeapFigures {
            live_bytes: bytes(15.0),
            metadata_bytes: bytes(3.0),
            free_bytes: bytes(6.0),
        })
    );
    // Of 4 mappers, half its pages shared: those in live, at 1/4.
    let pss = RssParts {
        anon_bytes: bytes(62.5),
        ..rss
    };
    let (weighed, heap) = Share::of(&rss, &pss, 4).weigh(&rss, Some(&h), None);
    assert_eq!(weighed.anon_bytes, bytes(62.5));
    assert_eq!(heap.map(|h| h.live_bytes), Some(bytes(12.5)));
    assert_eq!(heap.map(|h| h.free_bytes), Some(bytes(20.0)));
}

#[test]
fn the_table_carries_each_process_last_split_and_forgets_the_gone() {
    let (rss, pss, h) = member(1001, 0.0);
    let mut table = ShareTable::default();
    let process = |pid| ProcessPss {
        pid,
        ppid: 1,
        rss,
        pss,
        source: crate::sample::PssSource::Read,
    };
    table.update(&[process(7), process(8)]);
    // A tick without PSS keeps them.
    table.update(&[]);
    let share = table.share(7, 1001);
    assert!(
        share.weigh_figure(rss.anon_bytes, h.live_bytes, None) < bytes(0.1),
        "{share:?}"
    );
    table.retain([8].into_iter());
    assert_eq!(table.share(7, 1001), Share::WHOLE);
    assert_eq!(table.share(8, 1001), share);
}

#[test]
fn weighed_totals_sum_each_reading_at_its_share() {
    let reading = |live: u64, resident: Option<u64>| ProbeReading {
        mode: 1,
        live_bytes: live,
        resident_bytes: resident,
        ..ProbeReading::default()
    };
    let readings = [(1, reading(100, Some(200))), (2, reading(100, None))];
    let half = Share {
        discount_bytes: 60,
        ..Share::WHOLE
    };
    // Pid 2 holds 120 bytes of anon, all of it shared by 2 (half held by
    // the other): its 100 of live heap count 50.
    let totals = weighed_totals(&readings, |pid| {
        if pid == 1 {
            (Share::WHOLE, 300, None)
        } else {
            (half, 120, None)
        }
    });
    assert_eq!(totals, [Some(150), Some(200), None]);
}

#[test]
fn what_a_process_allocated_after_its_share_was_read_counts_in_full() {
    // A child read just after its fork: 33 MiB, all but 1 shared by 5.
    let forked = anon(33.0);
    let pss = RssParts {
        anon_bytes: bytes(1.0 + 32.0 / 5.0),
        ..forked
    };
    let share = Share::of(&forked, &pss, 5);
    // It then allocated 32 MiB of its own, before its next PSS.
    let grown = anon(65.0);
    let counted = share.weigh_figure(grown.anon_bytes, bytes(64.0), None) as f64 / MIB;
    assert!(
        (counted - (32.0 + 32.0 / 5.0)).abs() < 0.01,
        "{counted} MiB"
    );
}

#[test]
fn a_live_heap_shares_at_most_what_its_parent_had_to_give() {
    // A child of a parent with 1 MiB of live heap: 4 MiB of its allocator's
    // spans inherited and shared by 5, then 32 MiB of its own live heap.
    let rss = anon(37.0);
    let pss = RssParts {
        anon_bytes: bytes(1.0 + 32.0 + 4.0 / 5.0),
        ..rss
    };
    let share = Share::of(&rss, &pss, 5);
    let h = HeapFigures {
        live_bytes: bytes(33.0),
        free_bytes: bytes(3.0),
        metadata_bytes: 0,
    };
    let live = |inherited| share.weigh_figure(rss.anon_bytes, h.live_bytes, inherited);
    // Unbounded, the 4 shared MiB came off the live heap; bounded by the
    // parent's 1 MiB, 0.8 of it does.
    assert_eq!(live(None), bytes(33.0 - 3.2));
    assert_eq!(live(Some(bytes(1.0))), bytes(33.0 - 0.8));
    let (weighed, heap) = share.weigh(&rss, Some(&h), Some(bytes(1.0)));
    assert_eq!(weighed.anon_bytes, pss.anon_bytes);
    assert_eq!(heap.map(|h| h.live_bytes), Some(bytes(33.0 - 0.8)));
    assert_eq!(heap.map(|h| h.free_bytes), Some(bytes(3.0 - 2.4)));
}
