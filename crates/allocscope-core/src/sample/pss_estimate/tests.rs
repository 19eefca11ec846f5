//! The estimator on small made-up trees: one behaviour each.

use super::baseline::{exclusive_parts, Live};
use super::estimate::PssSource;
use super::estimator::PssEstimator;
use crate::sample::proc::{Rollup, RssParts};

const MIB: u64 = 1024 * 1024;
const SERVER: u64 = 1;

fn parts(anon: u64, file: u64, shmem: u64) -> RssParts {
    RssParts {
        anon_bytes: anon * MIB,
        file_bytes: file * MIB,
        shmem_bytes: shmem * MIB,
    }
}

fn rollup_uss(pss: RssParts, uss_mib: u64) -> Rollup {
    Rollup {
        pss_bytes: pss.total_bytes(),
        uss_bytes: uss_mib * MIB,
        swap_bytes: 0,
        rss_bytes: 0,
        pss_parts: Some(pss),
    }
}

fn rollup(pss: RssParts) -> Rollup {
    rollup_uss(pss, 0)
}

/// Processes as `retain` sees them, with no RSS yet.
fn pids(pids: &[i32]) -> Vec<Live> {
    pids.iter()
        .map(|&pid| live(pid, 1, RssParts::default()))
        .collect()
}

/// A process of `family` as read: its parent is the tree's root.
fn at(pid: i32, family: u64, rss: RssParts) -> Live {
    Live {
        pid,
        ppid: 1,
        family,
        rss,
    }
}

fn live(pid: i32, ppid: i32, rss: RssParts) -> Live {
    Live {
        pid,
        ppid,
        family: SERVER,
        rss,
    }
}

/// `bytes` within an eighth of a MiB of `mib`.
fn assert_near_mib(bytes: u64, mib: u64) {
    assert!(
        bytes.abs_diff(mib * MIB) < MIB / 8,
        "{} MiB, not {mib}",
        bytes as f64 / MIB as f64
    );
}

/// The tree's estimated PSS.
fn total(est: &PssEstimator, tree: &[Live]) -> u64 {
    est.estimate(tree)
        .iter()
        .map(|(p, _)| p.total_bytes())
        .sum()
}

fn one(est: &PssEstimator, pid: i32, ppid: i32, rss: RssParts) -> u64 {
    total(est, &[live(pid, ppid, rss)])
}

#[test]
fn grown_anon_counts_in_full_and_shared_parts_keep_their_share() {
    let mut est = PssEstimator::default();
    // A forked child: 40 MiB anon shared copy-on-write with its parent
    // (PSS 20), 10 MiB of libraries shared by 10, 100 MiB of shm by 4.
    est.record(
        &at(7, SERVER, parts(40, 10, 100)),
        &rollup(parts(20, 1, 25)),
    );
    est.full_read_done();
    assert_eq!(one(&est, 7, 1, parts(40, 10, 100)), 46 * MIB);
    // It allocates 30 MiB and touches another 40 MiB of the shm.
    assert_eq!(one(&est, 7, 1, parts(70, 10, 140)), (50 + 1 + 35) * MIB);
    // Freeing more than it ever had cannot go below zero.
    assert_eq!(one(&est, 7, 1, parts(0, 10, 100)), 26 * MIB);
}

#[test]
fn an_unread_childs_anon_beyond_its_parents_counts_in_full() {
    let mut est = PssEstimator::default();
    // The parent's 10 MiB anon is shared with its children (share 0.2).
    est.record(&at(1, SERVER, parts(10, 0, 0)), &rollup(parts(2, 0, 0)));
    est.full_read_done();
    // A child that touched 64 MiB of its own on top of what it inherited.
    assert_eq!(
        est.estimate(&[live(9, 1, parts(74, 0, 0))])[0].0,
        parts(66, 0, 0)
    );
}

#[test]
fn unread_child_borrows_parent_then_tree_then_full() {
    let mut est = PssEstimator::default();
    assert_eq!(one(&est, 9, 1, parts(8, 8, 0)), 16 * MIB);
    est.record(&at(1, SERVER, parts(10, 10, 0)), &rollup(parts(10, 5, 0)));
    est.record(&at(2, SERVER, parts(10, 10, 0)), &rollup(parts(10, 1, 0)));
    est.full_read_done();
    // Child of 1: anon in full, files at half.
    let child = est.estimate(&[live(9, 1, parts(8, 8, 0))]);
    assert_eq!(child[0], (parts(8, 4, 0), PssSource::Parent));
    // Orphan: the tree's shares (files 6 of 20).
    assert_eq!(one(&est, 9, 99, parts(8, 10, 0)), 11 * MIB);
    est.retain(&pids(&[2]));
    est.record(&at(2, SERVER, parts(10, 10, 0)), &rollup(parts(10, 1, 0)));
    est.full_read_done();
    assert_eq!(one(&est, 9, 1, parts(8, 10, 0)), 9 * MIB);
}

#[test]
fn a_joining_worker_adds_only_its_exclusive_pages_to_the_tree() {
    let mut est = PssEstimator::default();
    // A server and one worker share 100 MiB of shm and 20 MiB of heap
    // copy-on-write: 50 + 10 each; the worker has 5 MiB of its own.
    est.retain(&pids(&[1, 2]));
    est.record(
        &at(1, SERVER, parts(20, 0, 100)),
        &rollup_uss(parts(10, 0, 50), 0),
    );
    est.record(
        &at(2, SERVER, parts(25, 0, 100)),
        &rollup_uss(parts(15, 0, 50), 5),
    );
    est.full_read_done();
    let before = [live(1, 0, parts(20, 0, 100)), live(2, 1, parts(25, 0, 100))];
    assert_eq!(total(&est, &before), 125 * MIB);
    // A second worker forks, maps the same shm and heap and 3 MiB of
    // its own: its read says 20/3 + 3 anon, 100/3 shm, USS 3.
    let third = parts(20 + 3, 0, 100);
    let read = rollup_uss(
        RssParts {
            anon_bytes: 20 * MIB / 3 + 3 * MIB,
            file_bytes: 0,
            shmem_bytes: 100 * MIB / 3,
        },
        3,
    );
    est.retain(&pids(&[1, 2, 3]));
    est.record_joined(&at(3, SERVER, third), &read);
    assert!(!est.unread(3));
    let after = [before[0], before[1], live(3, 1, third)];
    let tree = total(&est, &after);
    assert_near_mib(tree, 128);
}

#[test]
fn a_leaving_worker_leaves_its_shared_part_to_its_family_not_to_others() {
    let mut est = PssEstimator::default();
    // Server and worker share 100 MiB of shm; a shell (another program)
    // shares nothing with them.
    est.record(
        &at(1, SERVER, parts(10, 0, 100)),
        &rollup_uss(parts(10, 0, 50), 10),
    );
    est.record(
        &at(2, SERVER, parts(10, 0, 100)),
        &rollup_uss(parts(10, 0, 50), 10),
    );
    est.record(&at(3, 7, parts(1, 0, 0)), &rollup_uss(parts(1, 0, 0), 1));
    est.full_read_done();
    est.retain(&pids(&[1, 3]));
    let shell = Live {
        family: 7,
        ..live(3, 0, parts(1, 0, 0))
    };
    let tree = est.estimate(&[live(1, 0, parts(10, 0, 100)), shell]);
    // The server now holds the whole shm; the shell gains nothing.
    assert_eq!(tree[0].0, parts(10, 0, 100));
    assert_eq!(tree[1].0, parts(1, 0, 0));
    // With the whole family gone, nothing is passed on.
    est.retain(&pids(&[3]));
    assert_eq!(total(&est, &[shell]), MIB);
}

#[test]
fn a_worker_that_joins_and_leaves_between_full_reads_changes_nothing() {
    let mut est = PssEstimator::default();
    est.record(
        &at(1, SERVER, parts(10, 0, 100)),
        &rollup_uss(parts(10, 0, 100), 10),
    );
    est.full_read_done();
    est.record_joined(
        &at(2, SERVER, parts(1, 0, 100)),
        &rollup_uss(parts(1, 0, 50), 1),
    );
    est.retain(&pids(&[1]));
    assert_eq!(total(&est, &[live(1, 0, parts(10, 0, 100))]), 110 * MIB);
}

#[test]
fn a_pass_goes_stale_when_the_tree_changes_or_moves() {
    let mut est = PssEstimator::default();
    assert!(!est.stale(&[live(1, 0, parts(10, 0, 100))]));
    est.record(&at(1, SERVER, parts(10, 0, 100)), &rollup(parts(10, 0, 50)));
    est.record(&at(2, SERVER, parts(10, 0, 100)), &rollup(parts(10, 0, 50)));
    est.full_read_done();
    let tree = |a: u64, b: u64| [live(1, 0, parts(10, 0, a)), live(2, 1, parts(10, 0, b))];
    assert!(!est.stale(&tree(100, 100)));
    // 20 MiB moved of 220 seen: under a tenth.
    assert!(!est.stale(&tree(110, 90)));
    assert!(est.stale(&tree(112, 89)));
    // A process joined, read alone or not yet.
    assert!(est.stale(&[
        tree(100, 100)[0],
        tree(100, 100)[1],
        live(3, 1, parts(1, 0, 0))
    ]));
    est.record_joined(&at(3, SERVER, parts(1, 0, 0)), &rollup(parts(1, 0, 0)));
    assert!(est.stale(&tree(100, 100)));
    // It left again: the pass describes the tree as before.
    est.retain(&pids(&[1, 2]));
    assert!(!est.stale(&tree(100, 100)));
    // One that the pass read left.
    est.retain(&pids(&[1]));
    assert!(est.stale(&tree(100, 100)[..1]));
    est.record(
        &at(1, SERVER, parts(10, 0, 100)),
        &rollup(parts(10, 0, 100)),
    );
    est.full_read_done();
    assert!(!est.stale(&tree(100, 100)[..1]));
}

#[test]
fn a_burst_of_newcomers_or_a_shutdown_shakes_the_pass_one_process_does_not() {
    let mut est = PssEstimator::default();
    // A server and its 4 workers, 20 MiB RSS each, sharing 10 MiB of shm.
    let worker = |pid: i32| at(pid, SERVER, parts(5, 5, 10));
    for pid in 1..=5 {
        est.record(&worker(pid), &rollup_uss(parts(5, 1, 2), 5));
    }
    est.full_read_done();
    let old: Vec<Live> = (1..=5).map(worker).collect();
    assert!(!est.shaken(&old));
    // One connection joins, holding over a tenth of the tree: its own
    // read follows it.
    let with = |pids: std::ops::RangeInclusive<i32>| {
        let mut tree = old.clone();
        tree.extend(pids.map(worker));
        tree
    };
    assert!(est.stale(&with(6..=6)));
    assert!(!est.shaken(&with(6..=6)));
    // Two join: they may share pages only among themselves.
    assert!(est.shaken(&with(6..=7)));
    // Read alone when first seen, they still shake it.
    est.record_joined(&worker(6), &rollup_uss(parts(5, 1, 2), 5));
    est.record_joined(&worker(7), &rollup_uss(parts(5, 1, 2), 5));
    assert!(est.shaken(&with(6..=7)));
    // Two small ones (a tenth of the tree between them) do not.
    let small = |pid: i32| at(pid, SERVER, parts(1, 1, 0));
    let mut tree = old.clone();
    tree.extend([small(8), small(9)]);
    est.retain(&tree);
    assert!(!est.shaken(&tree));

    // Shutdown: leavers held 3 MiB each of pages others map (PSS 8 of
    // which 5 exclusive). One of five leaving is 3 of the survivors' 32.
    est.retain(&old[..4]);
    assert!(!est.shaken(&old[..4]));
    est.retain(&old[..3]);
    assert!(est.shaken(&old[..3]));
}

#[test]
fn a_reads_uss_is_split_by_kind_within_what_its_pss_and_rss_allow() {
    // PostgreSQL's checkpointer at shutdown: 124 MiB of shared buffers
    // nobody else touched (PSS = RSS), anon and files shared with the
    // postmaster. Its USS is mostly the shmem, not its anon.
    let split = exclusive_parts(&parts(7, 5, 125), &parts(4, 2, 124), 124 * MIB);
    assert_eq!(split.shmem_bytes, 123 * MIB);
    assert_eq!(split.anon_bytes, MIB);
    assert_eq!(split.file_bytes, 0);
    // Without a bound binding, the USS goes to anon first, then to file
    // and shmem in proportion to what they can still take.
    let split = exclusive_parts(&parts(40, 20, 20), &parts(20, 6, 2), 24 * MIB);
    assert_eq!(split, parts(20, 3, 1));
    // Never more of a kind than its PSS, however large the USS read.
    let split = exclusive_parts(&parts(4, 4, 4), &parts(2, 2, 2), 100 * MIB);
    assert_eq!(split, parts(2, 2, 2));
}

#[test]
fn a_failed_pass_keeps_the_last_complete_one() {
    let mut est = PssEstimator::default();
    est.record(&at(1, SERVER, parts(10, 0, 0)), &rollup(parts(5, 0, 0)));
    est.full_read_done();
    est.record(&at(1, SERVER, parts(10, 0, 0)), &rollup(parts(10, 0, 0)));
    est.full_read_failed();
    assert_eq!(one(&est, 1, 0, parts(10, 0, 0)), 5 * MIB);
}

#[test]
fn without_pss_parts_every_part_takes_the_overall_share() {
    let mut est = PssEstimator::default();
    let old_kernel = Rollup {
        pss_bytes: 30 * MIB,
        uss_bytes: 0,
        swap_bytes: 0,
        rss_bytes: 60 * MIB,
        pss_parts: None,
    };
    est.record(&at(3, SERVER, parts(20, 40, 0)), &old_kernel);
    est.full_read_done();
    assert_eq!(one(&est, 3, 1, parts(20, 40, 0)), 30 * MIB);
    assert_eq!(one(&est, 3, 1, parts(30, 40, 0)), 40 * MIB);
}

/// A parent with 6 MiB of heap, read once, and four children forked
/// from it that share that heap and touched 1 MiB each of their own,
/// not read yet: first seen after the parent's read, or before it.
fn forked(children_seen_before_read: bool) -> (PssEstimator, Vec<Live>) {
    let mut est = PssEstimator::default();
    let all = [1, 10, 11, 12, 13];
    // Read after the fork, the parent's read divides the heap 5 ways.
    let (seen, sharers) = if children_seen_before_read {
        (&all[..], 5)
    } else {
        (&all[..1], 1)
    };
    est.retain(&pids(seen));
    let heap = RssParts {
        anon_bytes: 6 * MIB / sharers,
        ..RssParts::default()
    };
    est.record(&at(1, SERVER, parts(6, 0, 0)), &rollup(heap));
    est.full_read_done();
    est.retain(&pids(&all));
    let tree: Vec<Live> = std::iter::once(live(1, 0, parts(6, 0, 0)))
        .chain(all[1..].iter().map(|&pid| live(pid, 1, parts(7, 0, 0))))
        .collect();
    (est, tree)
}

#[test]
fn unread_forked_children_share_their_parents_heap_not_copy_it() {
    // Read before the fork: the parent's heap was its own; the children
    // take their part of it from the parent, and add their own 1 MiB.
    let (est, tree) = forked(false);
    let sum = total(&est, &tree);
    assert_near_mib(sum, 10);
}

#[test]
fn a_read_made_after_the_fork_already_divided_the_heap() {
    let (est, tree) = forked(true);
    let sum = total(&est, &tree);
    // The parent's 1.2 MiB read after the fork, each child 1.2 + 1.
    assert_near_mib(sum, 10);
}

#[test]
fn an_unread_child_of_a_parent_read_since_shares_only_its_shared_pages() {
    let mut est = PssEstimator::default();
    // The child is seen, then its parent read: 4 MiB of files only it
    // maps, 6 MiB mapped by it, the child and one other program.
    est.retain(&pids(&[1, 9]));
    est.record_joined(
        &at(1, SERVER, parts(0, 10, 0)),
        &rollup_uss(parts(0, 6, 0), 4),
    );
    // The child maps the 6 shared MiB, at a third each; not the
    // parent's own 4.
    let child = est.estimate(&[live(9, 1, parts(0, 6, 0))]);
    assert_eq!(child[0], (parts(0, 2, 0), PssSource::Parent));
}

#[test]
fn a_probe_of_the_process_that_grew_most_tells_its_familys_new_pages() {
    let mut est = PssEstimator::default();
    // A server and two workers map the same 10 MiB of shm (a third
    // each).
    let at_pass: Vec<Live> = (1..=3)
        .map(|pid| at(pid, SERVER, parts(0, 0, 10)))
        .collect();
    est.retain(&at_pass);
    for p in &at_pass {
        est.record(
            p,
            &rollup(RssParts {
                shmem_bytes: 10 * MIB / 3,
                ..RssParts::default()
            }),
        );
    }
    est.full_read_done();
    assert_eq!(est.probe_due(&at_pass), None);
    // Each worker then maps 20 MiB more: 10 only it maps, 10 the
    // other maps too. The tree's shm grew from 10 to 40 MiB.
    let grown = [
        at_pass[0],
        at(2, SERVER, parts(0, 0, 30)),
        at(3, SERVER, parts(0, 0, 30)),
    ];
    est.retain(&grown);
    let guessed = total(&est, &grown);
    assert!(guessed < 25 * MIB, "{}", guessed as f64 / MIB as f64);
    let probed = est.probe_due(&grown).expect("a probe is due");
    assert!(probed.pid == 2 || probed.pid == 3);
    // Its read: a third of 10, half of 10, all of 10.
    let read = RssParts {
        shmem_bytes: 10 * MIB / 3 + 5 * MIB + 10 * MIB,
        ..RssParts::default()
    };
    est.record_probe(&grown, &probed, &rollup(read));
    let learned = total(&est, &grown);
    assert_near_mib(learned, 40);
    // Not again until the family grows as much once more.
    assert_eq!(est.probe_due(&grown), None);
}

/// Two passes over a server and a worker whose shm RSS doubles from
/// 100 to 200 MiB while their PSS goes from 20 to 40.
fn grown_once(pids_change: bool) -> PssEstimator {
    let mut est = PssEstimator::default();
    for (rss, pss) in [(50, 10), (100, 20)] {
        est.retain(&pids(&[1, 2]));
        est.record(&at(1, SERVER, parts(0, 0, rss)), &rollup(parts(0, 0, pss)));
        let second = if pids_change && rss == 100 { 3 } else { 2 };
        est.record(
            &at(second, SERVER, parts(0, 0, rss)),
            &rollup(parts(0, 0, pss)),
        );
        est.full_read_done();
    }
    est
}

#[test]
fn shared_pages_mapped_since_count_at_the_share_the_family_last_added() {
    let est = grown_once(false);
    // Learned: 0.2 of what they mapped was new at 150 MiB mapped. Both
    // map 50 MiB more: 0.2 * 150 * ln(300 / 200) = 12.2 MiB new.
    let tree = [live(1, 0, parts(0, 0, 150)), live(2, 1, parts(0, 0, 150))];
    let sum = total(&est, &tree) as f64 / MIB as f64;
    assert!((sum - 52.16).abs() < 0.05, "{sum}");
    // Their own shares (0.2) would have counted 20 MiB.
    let other = grown_once(true);
    let tree = [live(1, 0, parts(0, 0, 150)), live(3, 1, parts(0, 0, 150))];
    let sum = total(&other, &tree) as f64 / MIB as f64;
    assert!((sum - 60.0).abs() < 0.05, "{sum}");
}
