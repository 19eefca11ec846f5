//! Per-process PSS between full reads. smaps_rollup is rationed by the CPU
//! budget, so on a big tree it reaches every process only every few
//! seconds; /proc/PID/status (`RssAnon`, `RssFile`, `RssShmem`) is cheap
//! enough for every tick. Each process's last full read fixes how its
//! resident memory splits into PSS, and the cheap counters carry that
//! forward:
//! - anonymous memory that appeared or went since the full read counts in
//!   full: what an allocator maps and returns is private to the process;
//! - file and shmem pages keep the share the full read measured.
//!
//! That alone goes wrong when processes come and go, because PSS divides a
//! shared page among its mappers: a forked server's new worker maps pages
//! its siblings already map, which adds nothing to the tree's PSS (each
//! sharer's part shrinks), and a worker that exits leaves its part of every
//! page it shared to the others. So the tree's PSS is kept as a whole:
//! - a process that joins the tree between full reads is read in full once
//!   when first seen (while the budget allows); only its exclusive pages
//!   (its USS) are new to the tree, the rest of its PSS is taken from the
//!   processes of its family (same program name: forked from one another);
//! - a process that leaves takes only its exclusive pages with it; the
//!   rest of its PSS goes back to its family, at most what the survivors
//!   can hold (their RSS not yet counted in their PSS).
//!
//! Both are approximations (what a leaving process shared may have been
//! shared with another that leaves too, a joining one's share shrinks as
//! it touches pages nobody maps), so a pass that the tree moved away from
//! is `stale`, and the sampler redoes it early.
//!
//! A process never read borrows its parent's shares (a forked child shares
//! its parent's pages) for as much anon as the parent had, and counts anon
//! beyond that in full (the child touched it itself), else the shares of
//! the whole tree at the last full read, else counts its RSS in full.
//! Kernels before 5.14 lack `Pss_Anon`/`Pss_File`/`Pss_Shmem`: then every
//! part takes the process's overall PSS/RSS share.

use super::proc::{Rollup, RssParts};
use std::collections::HashMap;

/// How far the tree's anonymous and shmem RSS may move, summed over its
/// processes and relative to its RSS at the last full pass, before that
/// pass counts as stale (`PssEstimator::stale`).
const DRIFT_SHARE: f64 = 0.1;

/// One process's resident memory and PSS, split by kind, at its last full
/// read.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Baseline {
    rss: RssParts,
    pss: RssParts,
    /// The part of `pss` on pages no other process maps (its USS, counted
    /// against anon first: private heap is what USS mostly is).
    exclusive: RssParts,
    family: u64,
    /// Read alone after the last full read, when first seen.
    joined: bool,
}

impl Baseline {
    fn new(family: u64, rss: RssParts, rollup: &Rollup, joined: bool) -> Baseline {
        let pss = rollup.pss_parts.unwrap_or_else(|| {
            // No split: every part takes the overall share.
            let share = ratio(rollup.pss_bytes as f64, rollup.rss_bytes as f64);
            let scale = |bytes: u64| (bytes as f64 * share).round() as u64;
            RssParts {
                anon_bytes: scale(rss.anon_bytes),
                file_bytes: scale(rss.file_bytes),
                shmem_bytes: scale(rss.shmem_bytes),
            }
        });
        let uss = rollup.uss_bytes;
        let anon = pss.anon_bytes.min(uss);
        let rest = (uss - anon) as f64;
        let others = (pss.file_bytes + pss.shmem_bytes) as f64;
        let part = |bytes: u64| ((rest * ratio(bytes as f64, others)).round() as u64).min(bytes);
        Baseline {
            rss,
            pss,
            exclusive: RssParts {
                anon_bytes: anon,
                file_bytes: part(pss.file_bytes),
                shmem_bytes: part(pss.shmem_bytes),
            },
            family,
            joined,
        }
    }

    /// What it holds of pages others map too.
    fn shared(&self) -> [f64; 3] {
        let (p, e) = (kinds(&self.pss), kinds(&self.exclusive));
        [p[0] - e[0], p[1] - e[1], p[2] - e[2]]
    }
}

/// `part / whole` within [0, 1]; 1 when there is no whole.
fn ratio(part: f64, whole: f64) -> f64 {
    if whole <= 0.0 {
        1.0
    } else {
        (part / whole).clamp(0.0, 1.0)
    }
}

fn kinds(parts: &RssParts) -> [f64; 3] {
    [
        parts.anon_bytes as f64,
        parts.file_bytes as f64,
        parts.shmem_bytes as f64,
    ]
}

fn parts_of(kinds: [f64; 3]) -> RssParts {
    let bytes = |x: f64| x.max(0.0).round() as u64;
    RssParts {
        anon_bytes: bytes(kinds[0]),
        file_bytes: bytes(kinds[1]),
        shmem_bytes: bytes(kinds[2]),
    }
}

/// Shares of resident memory that count in PSS, per kind.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shares {
    anon: f64,
    file: f64,
    shmem: f64,
}

impl Shares {
    fn of(rss: &RssParts, pss: &RssParts) -> Shares {
        let share = |pss: u64, rss: u64| ratio(pss as f64, rss as f64);
        Shares {
            anon: share(pss.anon_bytes, rss.anon_bytes),
            file: share(pss.file_bytes, rss.file_bytes),
            shmem: share(pss.shmem_bytes, rss.shmem_bytes),
        }
    }

    fn split(&self, rss: &RssParts) -> RssParts {
        let part = |bytes: u64, share: f64| (bytes as f64 * share).round() as u64;
        RssParts {
            anon_bytes: part(rss.anon_bytes, self.anon),
            file_bytes: part(rss.file_bytes, self.file),
            shmem_bytes: part(rss.shmem_bytes, self.shmem),
        }
    }
}

/// Where a process's PSS on a tick came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PssSource {
    /// Read from its smaps_rollup on this tick.
    Read,
    /// Estimated from its own last full read.
    Own,
    /// Never read: its parent's shares.
    Parent,
    /// Never read, nor its parent: the tree's shares.
    Tree,
    /// Nothing read yet: its RSS in full.
    Rss,
}

/// A live process on this tick, as its cheap counters describe it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Live {
    pub pid: i32,
    pub ppid: i32,
    /// Its program name's hash (`Stat::comm_hash`).
    pub family: u64,
    pub rss: RssParts,
}

/// The last full read of every live process of the tree, and what changed
/// in the tree since.
#[derive(Debug, Default)]
pub struct PssEstimator {
    baselines: HashMap<i32, Baseline>,
    /// Reads of the full pass under way.
    pass: HashMap<i32, Baseline>,
    /// Per family, what processes that left since the last full pass held
    /// of pages others map too.
    departed: HashMap<u64, [f64; 3]>,
    /// The tree's shares over its last full read, for orphans never read.
    tree_shares: Option<Shares>,
}

impl PssEstimator {
    /// Remembers a full read of `pid` during a full pass: `rss` from its
    /// status, `rollup` from its smaps_rollup, read one after the other.
    pub fn record(&mut self, pid: i32, family: u64, rss: RssParts, rollup: &Rollup) {
        self.pass
            .insert(pid, Baseline::new(family, rss, rollup, false));
    }

    /// Call after a full pass read every process: its reads become the
    /// baselines, and its overall shares the default for processes with no
    /// read of their own or of a parent.
    pub fn full_read_done(&mut self) {
        self.baselines = std::mem::take(&mut self.pass);
        self.departed.clear();
        let (mut rss, mut pss) = (RssParts::default(), RssParts::default());
        for b in self.baselines.values() {
            rss.anon_bytes += b.rss.anon_bytes;
            rss.file_bytes += b.rss.file_bytes;
            rss.shmem_bytes += b.rss.shmem_bytes;
            pss.anon_bytes += b.pss.anon_bytes;
            pss.file_bytes += b.pss.file_bytes;
            pss.shmem_bytes += b.pss.shmem_bytes;
        }
        self.tree_shares = (!self.baselines.is_empty()).then(|| Shares::of(&rss, &pss));
    }

    /// A full pass that could not read every process: its reads are
    /// dropped, the last complete pass stays the reference.
    pub fn full_read_failed(&mut self) {
        self.pass.clear();
    }

    /// Whether the last full pass no longer describes the tree well, so the
    /// next one should come early: a process joined or left since (sharing
    /// moved between processes in ways the cheap counters cannot show), or
    /// the tree's anonymous and shmem RSS moved by more than `DRIFT_SHARE`
    /// of what the pass saw, summed over processes (a process that grows
    /// fast is where a stale read errs most).
    pub fn stale(&self, live: &[(i32, RssParts)]) -> bool {
        if self.baselines.is_empty() {
            return false;
        }
        if !self.departed.is_empty() || self.baselines.values().any(|b| b.joined) {
            return true;
        }
        let (mut moved, mut seen) = (0u64, 0u64);
        for (pid, rss) in live {
            let Some(b) = self.baselines.get(pid) else {
                return true;
            };
            moved += rss.anon_bytes.abs_diff(b.rss.anon_bytes)
                + rss.shmem_bytes.abs_diff(b.rss.shmem_bytes);
            seen += b.rss.total_bytes();
        }
        moved as f64 > DRIFT_SHARE * seen as f64
    }

    /// Whether `pid` has no read since the last full pass began: a process
    /// that joined the tree since.
    pub fn unread(&self, pid: i32) -> bool {
        !self.baselines.contains_key(&pid)
    }

    /// Remembers a read of `pid` made alone, the first time it was seen
    /// after the last full pass.
    pub fn record_joined(&mut self, pid: i32, family: u64, rss: RssParts, rollup: &Rollup) {
        self.baselines
            .insert(pid, Baseline::new(family, rss, rollup, true));
    }

    /// Forgets processes that are gone (their pids may be reused); what
    /// they held of shared pages passes to their family.
    pub fn retain(&mut self, live: &[i32]) {
        let departed = &mut self.departed;
        self.baselines.retain(|pid, b| {
            let alive = live.contains(pid);
            // A process that joined since the last full pass took its shared
            // part from the others; leaving, it gives it back: no change.
            if !alive && !b.joined {
                let shared = b.shared();
                let sum = departed.entry(b.family).or_default();
                for k in 0..3 {
                    sum[k] += shared[k];
                }
            }
            alive
        });
    }

    /// PSS of every live process, split by kind, with where it came from.
    pub fn estimate(&self, live: &[Live]) -> Vec<(RssParts, PssSource)> {
        let own: Vec<([f64; 3], PssSource)> = live
            .iter()
            .map(|p| {
                let (parts, source) = self.estimate_alone(p.pid, p.ppid, &p.rss);
                (kinds(&parts), source)
            })
            .collect();
        // Per family: shares passed on by processes that left, less those
        // taken by processes that joined; and what the family's live
        // processes can still take (RSS not counted in their PSS).
        let mut passed: HashMap<u64, [f64; 3]> = self.departed.clone();
        let mut room: HashMap<u64, [f64; 3]> = HashMap::new();
        let mut held: HashMap<u64, [f64; 3]> = HashMap::new();
        for (p, (est, _)) in live.iter().zip(&own) {
            if let Some(b) = self.baselines.get(&p.pid).filter(|b| b.joined) {
                let shared = b.shared();
                let sum = passed.entry(p.family).or_default();
                for k in 0..3 {
                    sum[k] -= shared[k];
                }
            }
            let rss = kinds(&p.rss);
            let (r, h) = (
                room.entry(p.family).or_default(),
                held.entry(p.family).or_default(),
            );
            for k in 0..3 {
                r[k] += (rss[k] - est[k]).max(0.0);
                h[k] += est[k];
            }
        }
        // Each family's change, spread over its processes: gains in
        // proportion to their room, losses in proportion to their PSS.
        live.iter()
            .zip(own)
            .map(|(p, (mut est, source))| {
                let change = passed.get(&p.family).copied().unwrap_or_default();
                let (r, h) = (room[&p.family], held[&p.family]);
                let rss = kinds(&p.rss);
                for k in 0..3 {
                    if change[k] > 0.0 && r[k] > 0.0 {
                        let gain = change[k].min(r[k]);
                        est[k] += gain * (rss[k] - est[k]).max(0.0) / r[k];
                    } else if change[k] < 0.0 && h[k] > 0.0 {
                        let loss = (-change[k]).min(h[k]);
                        est[k] -= loss * est[k] / h[k];
                    }
                }
                (parts_of(est), source)
            })
            .collect()
    }

    /// One process's PSS from its own read or its parent's, ignoring how
    /// the tree changed since.
    fn estimate_alone(&self, pid: i32, ppid: i32, rss: &RssParts) -> (RssParts, PssSource) {
        if let Some(base) = self.baselines.get(&pid) {
            let shares = Shares::of(&base.rss, &base.pss);
            let grown = rss.anon_bytes as i128 - base.rss.anon_bytes as i128;
            let anon = (base.pss.anon_bytes as i128 + grown).clamp(0, rss.anon_bytes as i128);
            let mut parts = shares.split(rss);
            parts.anon_bytes = anon as u64;
            return (parts, PssSource::Own);
        }
        if let Some(parent) = self.baselines.get(&ppid) {
            // At most as much anon as the parent had can be pages inherited
            // copy-on-write (at the parent's share); anon beyond that the
            // child touched itself: private, in full.
            let shares = Shares::of(&parent.rss, &parent.pss);
            let inherited = rss.anon_bytes.min(parent.rss.anon_bytes);
            let mut parts = shares.split(rss);
            parts.anon_bytes =
                (inherited as f64 * shares.anon).round() as u64 + (rss.anon_bytes - inherited);
            return (parts, PssSource::Parent);
        }
        match self.tree_shares {
            Some(shares) => (shares.split(rss), PssSource::Tree),
            None => (*rss, PssSource::Rss),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn live(pid: i32, ppid: i32, rss: RssParts) -> Live {
        Live {
            pid,
            ppid,
            family: SERVER,
            rss,
        }
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
        est.record(7, SERVER, parts(40, 10, 100), &rollup(parts(20, 1, 25)));
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
        est.record(1, SERVER, parts(10, 0, 0), &rollup(parts(2, 0, 0)));
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
        est.record(1, SERVER, parts(10, 10, 0), &rollup(parts(10, 5, 0)));
        est.record(2, SERVER, parts(10, 10, 0), &rollup(parts(10, 1, 0)));
        est.full_read_done();
        // Child of 1: anon in full, files at half.
        let child = est.estimate(&[live(9, 1, parts(8, 8, 0))]);
        assert_eq!(child[0], (parts(8, 4, 0), PssSource::Parent));
        // Orphan: the tree's shares (files 6 of 20).
        assert_eq!(one(&est, 9, 99, parts(8, 10, 0)), 11 * MIB);
        est.retain(&[2]);
        est.record(2, SERVER, parts(10, 10, 0), &rollup(parts(10, 1, 0)));
        est.full_read_done();
        assert_eq!(one(&est, 9, 1, parts(8, 10, 0)), 9 * MIB);
    }

    #[test]
    fn a_joining_worker_adds_only_its_exclusive_pages_to_the_tree() {
        let mut est = PssEstimator::default();
        // A server and one worker share 100 MiB of shm and 20 MiB of heap
        // copy-on-write: 50 + 10 each; the worker has 5 MiB of its own.
        est.record(
            1,
            SERVER,
            parts(20, 0, 100),
            &rollup_uss(parts(10, 0, 50), 0),
        );
        est.record(
            2,
            SERVER,
            parts(25, 0, 100),
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
        est.record_joined(3, SERVER, third, &read);
        assert!(!est.unread(3));
        let after = [before[0], before[1], live(3, 1, third)];
        let tree = total(&est, &after);
        assert!(tree.abs_diff(128 * MIB) < MIB / 8, "{tree}");
    }

    #[test]
    fn a_leaving_worker_leaves_its_shared_part_to_its_family_not_to_others() {
        let mut est = PssEstimator::default();
        // Server and worker share 100 MiB of shm; a shell (another program)
        // shares nothing with them.
        est.record(
            1,
            SERVER,
            parts(10, 0, 100),
            &rollup_uss(parts(10, 0, 50), 10),
        );
        est.record(
            2,
            SERVER,
            parts(10, 0, 100),
            &rollup_uss(parts(10, 0, 50), 10),
        );
        est.record(3, 7, parts(1, 0, 0), &rollup_uss(parts(1, 0, 0), 1));
        est.full_read_done();
        est.retain(&[1, 3]);
        let shell = Live {
            family: 7,
            ..live(3, 0, parts(1, 0, 0))
        };
        let tree = est.estimate(&[live(1, 0, parts(10, 0, 100)), shell]);
        // The server now holds the whole shm; the shell gains nothing.
        assert_eq!(tree[0].0, parts(10, 0, 100));
        assert_eq!(tree[1].0, parts(1, 0, 0));
        // With the whole family gone, nothing is passed on.
        est.retain(&[3]);
        assert_eq!(total(&est, &[shell]), MIB);
    }

    #[test]
    fn a_worker_that_joins_and_leaves_between_full_reads_changes_nothing() {
        let mut est = PssEstimator::default();
        est.record(
            1,
            SERVER,
            parts(10, 0, 100),
            &rollup_uss(parts(10, 0, 100), 10),
        );
        est.full_read_done();
        est.record_joined(2, SERVER, parts(1, 0, 100), &rollup_uss(parts(1, 0, 50), 1));
        est.retain(&[1]);
        assert_eq!(total(&est, &[live(1, 0, parts(10, 0, 100))]), 110 * MIB);
    }

    #[test]
    fn a_pass_goes_stale_when_the_tree_changes_or_moves() {
        let mut est = PssEstimator::default();
        assert!(!est.stale(&[(1, parts(10, 0, 100))]));
        est.record(1, SERVER, parts(10, 0, 100), &rollup(parts(10, 0, 50)));
        est.record(2, SERVER, parts(10, 0, 100), &rollup(parts(10, 0, 50)));
        est.full_read_done();
        let tree = |a: u64, b: u64| [(1, parts(10, 0, a)), (2, parts(10, 0, b))];
        assert!(!est.stale(&tree(100, 100)));
        // 20 MiB moved of 220 seen: under a tenth.
        assert!(!est.stale(&tree(110, 90)));
        assert!(est.stale(&tree(112, 89)));
        // A process joined, read alone or not yet.
        assert!(est.stale(&[tree(100, 100)[0], tree(100, 100)[1], (3, parts(1, 0, 0))]));
        est.record_joined(3, SERVER, parts(1, 0, 0), &rollup(parts(1, 0, 0)));
        assert!(est.stale(&tree(100, 100)));
        // It left again: the pass describes the tree as before.
        est.retain(&[1, 2]);
        assert!(!est.stale(&tree(100, 100)));
        // One that the pass read left.
        est.retain(&[1]);
        assert!(est.stale(&tree(100, 100)[..1]));
        est.record(1, SERVER, parts(10, 0, 100), &rollup(parts(10, 0, 100)));
        est.full_read_done();
        assert!(!est.stale(&tree(100, 100)[..1]));
    }

    #[test]
    fn a_failed_pass_keeps_the_last_complete_one() {
        let mut est = PssEstimator::default();
        est.record(1, SERVER, parts(10, 0, 0), &rollup(parts(5, 0, 0)));
        est.full_read_done();
        est.record(1, SERVER, parts(10, 0, 0), &rollup(parts(10, 0, 0)));
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
        est.record(3, SERVER, parts(20, 40, 0), &old_kernel);
        est.full_read_done();
        assert_eq!(one(&est, 3, 1, parts(20, 40, 0)), 30 * MIB);
        assert_eq!(one(&est, 3, 1, parts(30, 40, 0)), 40 * MIB);
    }
}
