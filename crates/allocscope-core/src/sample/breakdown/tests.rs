//! The breakdown's arithmetic: parts that add up to RSS exactly, the caps
//! on the allocator's figures, and the tree's sum, on captured /proc text
//! and probe-like readings.

use super::*;
use crate::sample::proc::{parse_anon_pages, parse_status_memory};
use proptest::prelude::*;

const MIB: u64 = 1 << 20;

fn anon(anon_mib: u64) -> RssParts {
    RssParts {
        anon_bytes: anon_mib * MIB,
        file_bytes: 3 * MIB,
        shmem_bytes: MIB,
    }
}

fn heap(live_mib: u64, free_mib: u64, metadata_mib: u64) -> Option<HeapFigures> {
    Some(HeapFigures {
        live_bytes: live_mib * MIB,
        free_bytes: free_mib * MIB,
        metadata_bytes: metadata_mib * MIB,
    })
}

fn pages(lazy_mib: u64, huge_mib: u64) -> AnonPages {
    AnonPages {
        lazy_free_bytes: lazy_mib * MIB,
        huge_pages_bytes: huge_mib * MIB,
    }
}

/// The parts a process's split gives, in MiB (not the tree's kernel part, the last).
fn mib(b: &Breakdown) -> [u64; 9] {
    let parts = b.parts();
    std::array::from_fn(|i| parts[i] / MIB)
}

#[test]
fn captured_process_splits_into_heap_lazy_huge_and_the_rest() {
    // The captured process: 16 MiB in huge pages, 8 MiB lazily freed, and
    // (as if a probe said so) 10 MiB live and 2 MiB free in its heap.
    let status = parse_status_memory(include_str!("../fixtures/status_thp_lazyfree.txt"));
    let rss = status
        .and_then(|s| s.rss_parts)
        .expect("RssAnon/RssFile/RssShmem");
    let anon_pages = parse_anon_pages(include_str!("../fixtures/smaps_rollup_thp_lazyfree.txt"))
        .expect("LazyFree/AnonHugePages");
    let b = of_process(&ProcessMemory {
        rss,
        anon_pages,
        heap: heap(10, 2, 0),
    });
    assert_eq!(b.total_bytes(), status.map_or(0, |s| s.rss_bytes));
    assert_eq!(
        (b.live_heap_bytes, b.allocator_free_bytes),
        (10 * MIB, 2 * MIB)
    );
    assert_eq!(b.lazy_free_bytes, 8184 * 1024);
    // 24680 kB anon - 12 MiB heap - 8184 kB lazy leaves 4208 kB for the
    // 16 MiB of huge pages: the allocator's share of them is its own.
    assert_eq!(b.huge_pages_bytes, (24680 - 12 * 1024 - 8184) * 1024);
    assert_eq!(b.other_anon_bytes, 0);
    assert_eq!((b.file_bytes, b.shmem_bytes), (1132 * 1024, 0));
}

#[test]
fn heap_parts_beyond_anon_shrink_free_then_metadata_then_live() {
    let of = |h| {
        mib(&of_process(&ProcessMemory {
            rss: anon(100),
            anon_pages: pages(5, 5),
            heap: h,
        }))
    };
    // Fits: everything as reported, lazy and huge from the rest.
    assert_eq!(of(heap(60, 20, 5)), [60, 20, 5, 5, 5, 5, 3, 1, 0]);
    // 10 MiB too many: free gives them up.
    assert_eq!(of(heap(60, 50, 0)), [60, 40, 0, 0, 0, 0, 3, 1, 0]);
    // Free gone entirely, then metadata.
    assert_eq!(of(heap(90, 50, 30)), [90, 0, 10, 0, 0, 0, 3, 1, 0]);
    // Live alone beyond anon: anon is all live.
    assert_eq!(of(heap(120, 1, 1)), [100, 0, 0, 0, 0, 0, 3, 1, 0]);
}

#[test]
fn lazy_free_comes_before_huge_pages_and_both_are_capped_by_the_rest() {
    let of = |p| {
        mib(&of_process(&ProcessMemory {
            rss: anon(100),
            anon_pages: p,
            heap: heap(50, 10, 0),
        }))
    };
    assert_eq!(of(pages(30, 30)), [50, 10, 0, 10, 30, 0, 3, 1, 0]);
    assert_eq!(of(pages(60, 30)), [50, 10, 0, 0, 40, 0, 3, 1, 0]);
    assert_eq!(of(pages(0, 0)), [50, 10, 0, 0, 0, 40, 3, 1, 0]);
}

#[test]
fn a_process_without_heap_figures_is_all_other_anon_and_counted() {
    let with = ProcessMemory {
        rss: anon(100),
        anon_pages: pages(0, 0),
        heap: heap(70, 10, 1),
    };
    let without = ProcessMemory {
        heap: None,
        anon_pages: pages(4, 0),
        ..with
    };
    assert_eq!(mib(&of_process(&without)), [0, 0, 0, 0, 4, 96, 3, 1, 0]);
    let (tree, heapless) = of_tree([with, without, without]).expect("one had figures");
    assert_eq!(heapless, 2);
    // They hold two thirds of the tree's RSS: their anonymous memory is
    // unknown, not other (their heap is in it).
    assert_eq!(mib(&tree), [70, 10, 1, 0, 8, 19, 9, 3, 96 * 2]);
    assert_eq!(tree.total_bytes(), 3 * anon(100).total_bytes());
    // No process with figures: no breakdown at all.
    assert_eq!(of_tree([without, without]), None);
    assert_eq!(of_tree([]), None);
}

#[test]
fn processes_without_counters_are_unknown_only_beyond_a_fifth_of_the_trees_rss() {
    let with = ProcessMemory {
        rss: anon(396),
        anon_pages: pages(0, 0),
        heap: heap(300, 50, 0),
    };
    // 100 MiB of 500: exactly a fifth stays "other".
    let without = ProcessMemory {
        rss: anon(96),
        heap: None,
        ..with
    };
    let (tree, heapless) = of_tree([with, without]).expect("one had figures");
    assert_eq!(heapless, 1);
    assert_eq!(mib(&tree), [300, 50, 0, 0, 0, 46 + 96, 6, 2, 0]);
    // 101 MiB of 501: beyond a fifth, its anonymous memory is unknown.
    let bigger = ProcessMemory {
        rss: anon(97),
        ..without
    };
    let (tree, _) = of_tree([with, bigger]).expect("one had figures");
    assert_eq!(mib(&tree), [300, 50, 0, 0, 0, 46, 6, 2, 97]);
    assert_eq!(
        tree.total_bytes(),
        with.rss.total_bytes() + bigger.rss.total_bytes()
    );
}

#[test]
fn anon_pages_are_carried_forward_until_the_process_is_gone() {
    let mut split = Splitter::default();
    let (a, b) = (anon(50), anon(20));
    split.record_anon_pages(7, pages(10, 0));
    split.record_anon_pages(8, pages(0, 4));
    let (a, b) = ((a, heap(30, 0, 0)), (b, None));
    // Both carried forward to a later tick without a new read.
    let (tree, heapless) = split.split(&[(7, a), (8, b)]).expect("7 has figures");
    // 8 holds 24 of the 78 MiB: unknown beyond its huge pages.
    assert_eq!(mib(&tree), [30, 0, 0, 4, 10, 10, 6, 2, 16]);
    assert_eq!(heapless, 1);
    // 8 leaves; a new process reusing its pid has read nothing yet.
    split.split(&[(7, a)]);
    let (tree, _) = split.split(&[(7, a), (8, b)]).expect("7 has figures");
    assert_eq!(mib(&tree), [30, 0, 0, 0, 10, 10, 6, 2, 20]);
    // A tick whose processes have no heap figures: no breakdown.
    assert_eq!(split.split(&[(7, (a.0, None))]), None);
    // Every process exited: nothing held, every part zero.
    assert_eq!(split.split(&[]), Some((Breakdown::default(), 0)));
}

proptest! {
    #[test]
    fn parts_add_up_to_rss_exactly_whatever_the_figures(
        rss in (0u64..1 << 40, 0u64..1 << 40, 0u64..1 << 40),
        heap in proptest::option::of((0u64..1 << 41, 0u64..1 << 41, 0u64..1 << 41)),
        pages in (0u64..1 << 41, 0u64..1 << 41),
    ) {
        let p = ProcessMemory {
            rss: RssParts { anon_bytes: rss.0, file_bytes: rss.1, shmem_bytes: rss.2 },
            anon_pages: AnonPages { lazy_free_bytes: pages.0, huge_pages_bytes: pages.1 },
            heap: heap.map(|(live_bytes, free_bytes, metadata_bytes)| HeapFigures {
                live_bytes, free_bytes, metadata_bytes,
            }),
        };
        let b = of_process(&p);
        prop_assert_eq!(b.total_bytes(), p.rss.total_bytes());
        prop_assert!(b.live_heap_bytes <= heap.map_or(0, |h| h.0));
        let (tree, _) = of_tree([p, p]).unwrap_or_default();
        prop_assert!(heap.is_none() || tree.total_bytes() == 2 * p.rss.total_bytes());
    }
}
