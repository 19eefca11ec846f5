//! The scaled estimate on made-up fork trees: a parent's 64 MiB heap
//! shared by n processes, each holding `own` MiB of its own besides.

use super::*;

const MIB: f64 = 1024.0 * 1024.0;
const TREE: u64 = 7;

fn parts(anon_mib: f64, file_mib: f64) -> RssParts {
    parts_of([anon_mib * MIB, file_mib * MIB, 0.0])
}

/// Process `pid` of a tree of `n` sharing the 64 MiB heap and 2 MiB of
/// libraries, holding `own` MiB of its own: forks of a parent outside the
/// tree (a parent in it is a class of its own).
fn member(pid: i32, own: f64) -> Live {
    Live {
        pid,
        ppid: 0,
        family: TREE,
        rss: parts(64.0 + own, 2.0),
    }
}

/// What `member(pid, own)` reads in a tree of `n` such processes.
fn read_of(n: usize, own: f64) -> Rollup {
    let n = n as f64;
    let pss = parts(64.0 / n + own, 2.0 / n);
    Rollup {
        pss_bytes: pss.total_bytes(),
        uss_bytes: (own * MIB) as u64,
        swap_bytes: 0,
        rss_bytes: 0,
        pss_parts: Some(pss),
    }
}

fn tree(n: usize, own: f64) -> Vec<Live> {
    (1..=n as i32).map(|pid| member(pid, own)).collect()
}

fn total_mib(est: &ScaledPss, live: &[Live]) -> f64 {
    est.estimate(live)
        .iter()
        .map(|p| p.total_bytes() as f64)
        .sum::<f64>()
        / MIB
}

#[test]
fn a_few_reads_scale_to_a_thousand_forked_workers() {
    for own in [0.0, 1.0] {
        let live = tree(1001, own);
        let mut est = ScaledPss::default();
        est.retain(&live);
        for p in est.plan(&live, 3) {
            est.record(&live, &p, &read_of(1001, own));
        }
        // The heap and libraries once, and every process's own memory.
        let truth = 66.0 + 1001.0 * own;
        let got = total_mib(&est, &live);
        assert!((got - truth).abs() < 0.01 * truth, "{got} MiB, not {truth}");
    }
}

#[test]
fn forks_after_the_reads_add_only_their_own_memory() {
    let mut est = ScaledPss::default();
    let half = tree(500, 1.0);
    est.retain(&half);
    for p in est.plan(&half, 4) {
        est.record(&half, &p, &read_of(500, 1.0));
    }
    // 500 more fork and are never read: the heap stays counted once. A
    // PSS/RSS proportion would have counted it twice.
    let whole = tree(1000, 1.0);
    est.retain(&whole);
    let got = total_mib(&est, &whole);
    let truth = 66.0 + 1000.0;
    assert!((got - truth).abs() < 0.02 * truth, "{got} MiB, not {truth}");
}

#[test]
fn a_read_of_the_parent_alone_counts_little_once_it_forked() {
    let mut est = ScaledPss::default();
    let alone = tree(1, 0.0);
    est.retain(&alone);
    // Alone, its heap is all its own.
    let own = Rollup {
        uss_bytes: (66.0 * MIB) as u64,
        ..read_of(1, 0.0)
    };
    est.record(&alone, &alone[0], &own);
    let live = tree(1000, 0.0);
    est.retain(&live);
    for p in est.plan(&live, 2) {
        est.record(&live, &p, &read_of(1000, 0.0));
    }
    let got = total_mib(&est, &live);
    // Weighed as the 2 reads since, it would say about 22 GiB.
    assert!((got - 66.0).abs() < 0.05 * 66.0, "{got} MiB, not 66");
}

#[test]
fn a_class_never_read_takes_its_familys_proportion_then_the_trees() {
    let mut est = ScaledPss::default();
    let live = tree(100, 0.0);
    est.retain(&live);
    est.record(&live, &live[0], &read_of(100, 0.0));
    // A worker that grew 200 MiB of heap is a class of its own, unread.
    let mut grown = live.clone();
    grown[99].rss = parts(264.0, 2.0);
    let each = est.estimate(&grown);
    let share = 0.64 / 64.0;
    let anon = each[99].anon_bytes as f64 / MIB;
    assert!((anon - 264.0 * share).abs() < 0.1, "{anon} MiB");
    // Another program: the tree's proportion; nothing read: its RSS.
    let other = Live {
        family: TREE + 1,
        ..member(500, 0.0)
    };
    let mut with_other = live.clone();
    with_other.push(other);
    let each = est.estimate(&with_other);
    let anon = each[100].anon_bytes as f64 / MIB;
    assert!((anon - 64.0 * share).abs() < 0.1, "{anon} MiB");
    let none = ScaledPss::default().estimate(&[other]);
    assert_eq!(none[0], other.rss);
}

#[test]
fn the_plan_takes_unread_classes_first_then_one_of_each_in_turn() {
    let mut est = ScaledPss::default();
    let mut live = tree(6, 0.0);
    // pid 7: a big worker, a class of its own; pid 8: another program.
    live.push(Live {
        rss: parts(300.0, 2.0),
        ..member(7, 0.0)
    });
    live.push(Live {
        family: TREE + 1,
        ..member(8, 0.0)
    });
    est.retain(&live);
    est.record(&live, &live[0], &read_of(6, 0.0));
    est.retain(&live);
    let plan: Vec<i32> = est.plan(&live, 5).iter().map(|p| p.pid).collect();
    // The two unread classes (the bigger first), then the read class's
    // members never read, one a round.
    assert_eq!(&plan[..2], &[7, 8]);
    assert!(!plan[2..].contains(&1), "{plan:?}");
    assert_eq!(plan.len(), 5);
    assert_eq!(est.plan(&live, 100).len(), live.len());
}

#[test]
fn anon_grown_since_the_reads_counts_in_full() {
    // Workers read just after their fork, before each filled 1 MiB of its
    // own: the reads show none of it, and it is theirs alone.
    let mut est = ScaledPss::default();
    let forked = tree(100, 0.0);
    est.retain(&forked);
    for p in est.plan(&forked, 3) {
        est.record(&forked, &p, &read_of(100, 0.0));
    }
    let filled = tree(100, 1.0);
    est.retain(&filled);
    let got = total_mib(&est, &filled);
    let truth = 66.0 + 100.0;
    assert!((got - truth).abs() < 0.01 * truth, "{got} MiB, not {truth}");
}

/// A parent with memory of its own that its children do not share (what
/// it wrote after forking them) is in their class: RSS of one program,
/// within a factor of two. A read of it must not lend its exclusive share
/// of RSS to the thousand children, nor theirs hide its own.
#[test]
fn a_parent_with_memory_of_its_own_does_not_lend_it_to_its_children() {
    let (n, parent_own, child_own) = (1001usize, 8.0, 0.03);
    let mut live = vec![member(1, parent_own)];
    live.extend((2..=n as i32).map(|pid| Live {
        ppid: 1,
        ..member(pid, child_own)
    }));
    let mut est = ScaledPss::default();
    est.retain(&live);
    // The parent and three children read, in any order.
    est.record(&live, &live[0], &read_of(n, parent_own));
    for p in &live[1..4] {
        est.record(&live, p, &read_of(n, child_own));
    }
    let truth = 66.0 + parent_own + (n - 1) as f64 * child_own;
    let got = total_mib(&est, &live);
    assert!((got - truth).abs() < 0.05 * truth, "{got} MiB, not {truth}");
}
