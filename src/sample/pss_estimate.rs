//! Per-process PSS between full reads. smaps_rollup is rationed by the CPU
//! budget, so on a big tree it reaches every process only every few
//! seconds; /proc/PID/status (`RssAnon`, `RssFile`, `RssShmem`) is cheap
//! enough for every tick. Each process's last full read fixes how its
//! resident memory splits into PSS, and the cheap counters carry that
//! forward:
//! - anonymous memory that appeared or went since the full read counts in
//!   full: what an allocator maps and returns is private to the process
//!   (pages shared copy-on-write with a parent only go, never come);
//! - file and shmem pages keep the share the full read measured (the
//!   number of processes mapping them changes rarely).
//!
//! A process not yet read in full borrows its parent's shares (a forked
//! child shares its parent's pages) for as much anon as the parent had, and
//! counts anon beyond that in full (the child touched it itself), else the shares of the whole tree at
//! the last full read, else counts its RSS in full. Kernels before 5.14
//! lack `Pss_Anon`/`Pss_File`/`Pss_Shmem`: then every part takes the
//! process's overall PSS/RSS share.

use super::proc::{Rollup, RssParts};
use std::collections::HashMap;

/// One process's resident memory and PSS, split by kind, at its last full
/// read.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Baseline {
    rss: RssParts,
    pss: RssParts,
}

/// Shares of resident memory that count in PSS, per kind.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shares {
    anon: f64,
    file: f64,
    shmem: f64,
}

impl Shares {
    const FULL: Shares = Shares {
        anon: 1.0,
        file: 1.0,
        shmem: 1.0,
    };

    fn of(rss: &RssParts, pss: &RssParts) -> Shares {
        let share = |pss: u64, rss: u64| {
            if rss == 0 {
                1.0
            } else {
                (pss as f64 / rss as f64).clamp(0.0, 1.0)
            }
        };
        Shares {
            anon: share(pss.anon_bytes, rss.anon_bytes),
            file: share(pss.file_bytes, rss.file_bytes),
            shmem: share(pss.shmem_bytes, rss.shmem_bytes),
        }
    }

    fn apply(&self, rss: &RssParts) -> u64 {
        let part = |bytes: u64, share: f64| (bytes as f64 * share).round() as u64;
        part(rss.anon_bytes, self.anon)
            .saturating_add(part(rss.file_bytes, self.file))
            .saturating_add(part(rss.shmem_bytes, self.shmem))
    }
}

/// The last full read of every live process of the tree.
#[derive(Debug, Default)]
pub struct PssEstimator {
    baselines: HashMap<i32, Baseline>,
    /// The tree's shares over its last full read, for orphans never read.
    tree_shares: Option<Shares>,
}

impl PssEstimator {
    /// Remembers a full read of `pid`: `rss` from its status, `rollup` from
    /// its smaps_rollup, read one after the other.
    pub fn record(&mut self, pid: i32, rss: RssParts, rollup: &Rollup) {
        let pss = rollup.pss_parts.unwrap_or_else(|| {
            // No split: every part takes the overall share.
            let share = Shares::of(
                &RssParts {
                    anon_bytes: rollup.rss_bytes,
                    ..RssParts::default()
                },
                &RssParts {
                    anon_bytes: rollup.pss_bytes,
                    ..RssParts::default()
                },
            )
            .anon;
            let scale = |bytes: u64| (bytes as f64 * share).round() as u64;
            RssParts {
                anon_bytes: scale(rss.anon_bytes),
                file_bytes: scale(rss.file_bytes),
                shmem_bytes: scale(rss.shmem_bytes),
            }
        });
        self.baselines.insert(pid, Baseline { rss, pss });
    }

    /// Call after a full read of the whole tree: its overall shares become
    /// the default for processes with no read of their own or of a parent.
    pub fn full_read_done(&mut self) {
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

    /// PSS of `pid` (child of `ppid`) now that its status says `rss`.
    pub fn estimate(&self, pid: i32, ppid: i32, rss: &RssParts) -> u64 {
        if let Some(base) = self.baselines.get(&pid) {
            let shares = Shares::of(&base.rss, &base.pss);
            let grown = rss.anon_bytes as i128 - base.rss.anon_bytes as i128;
            let anon = (base.pss.anon_bytes as i128 + grown).clamp(0, rss.anon_bytes as i128);
            let others = Shares {
                anon: 0.0,
                ..shares
            }
            .apply(rss);
            return (anon as u64).saturating_add(others);
        }
        if let Some(parent) = self.baselines.get(&ppid) {
            // At most as much anon as the parent had can be pages inherited
            // copy-on-write (at the parent's share); anon beyond that the
            // child touched itself: private, in full.
            let shares = Shares::of(&parent.rss, &parent.pss);
            let inherited = rss.anon_bytes.min(parent.rss.anon_bytes);
            let anon =
                (inherited as f64 * shares.anon).round() as u64 + (rss.anon_bytes - inherited);
            let others = Shares {
                anon: 0.0,
                ..shares
            }
            .apply(rss);
            return anon.saturating_add(others);
        }
        self.tree_shares.unwrap_or(Shares::FULL).apply(rss)
    }

    /// Forgets processes that are gone (their pids may be reused).
    pub fn retain(&mut self, live: &[i32]) {
        self.baselines.retain(|pid, _| live.contains(pid));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    fn parts(anon: u64, file: u64, shmem: u64) -> RssParts {
        RssParts {
            anon_bytes: anon * MIB,
            file_bytes: file * MIB,
            shmem_bytes: shmem * MIB,
        }
    }

    fn rollup(pss: RssParts) -> Rollup {
        Rollup {
            pss_bytes: pss.total_bytes(),
            uss_bytes: 0,
            swap_bytes: 0,
            rss_bytes: 0,
            pss_parts: Some(pss),
        }
    }

    #[test]
    fn grown_anon_counts_in_full_and_shared_parts_keep_their_share() {
        let mut est = PssEstimator::default();
        // A forked child: 40 MiB anon shared copy-on-write with its parent
        // (PSS 20), 10 MiB of libraries shared by 10, 100 MiB of shm by 4.
        est.record(7, parts(40, 10, 100), &rollup(parts(20, 1, 25)));
        assert_eq!(est.estimate(7, 1, &parts(40, 10, 100)), 46 * MIB);
        // It allocates 30 MiB and touches another 40 MiB of the shm.
        assert_eq!(est.estimate(7, 1, &parts(70, 10, 140)), (50 + 1 + 35) * MIB);
        // Freeing more than it ever had cannot go below zero.
        assert_eq!(est.estimate(7, 1, &parts(0, 10, 100)), 26 * MIB);
    }

    #[test]
    fn an_unread_childs_anon_beyond_its_parents_counts_in_full() {
        let mut est = PssEstimator::default();
        // The parent's 10 MiB anon is shared with its children (share 0.2).
        est.record(1, parts(10, 0, 0), &rollup(parts(2, 0, 0)));
        est.full_read_done();
        // A child that touched 64 MiB of its own on top of what it inherited.
        assert_eq!(est.estimate(9, 1, &parts(74, 0, 0)), 66 * MIB);
    }

    #[test]
    fn unread_child_borrows_parent_then_tree_then_full() {
        let mut est = PssEstimator::default();
        assert_eq!(est.estimate(9, 1, &parts(8, 8, 0)), 16 * MIB);
        est.record(1, parts(10, 10, 0), &rollup(parts(10, 5, 0)));
        est.record(2, parts(10, 10, 0), &rollup(parts(10, 1, 0)));
        est.full_read_done();
        // Child of 1: anon in full, files at half.
        assert_eq!(est.estimate(9, 1, &parts(8, 8, 0)), 12 * MIB);
        // Orphan: the tree's shares (files 6 of 20).
        let orphan = est.estimate(9, 99, &parts(8, 10, 0));
        assert_eq!(orphan, 11 * MIB);
        est.retain(&[2]);
        est.full_read_done();
        assert_eq!(est.estimate(9, 1, &parts(8, 10, 0)), 9 * MIB);
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
        est.record(3, parts(20, 40, 0), &old_kernel);
        assert_eq!(est.estimate(3, 1, &parts(20, 40, 0)), 30 * MIB);
        assert_eq!(est.estimate(3, 1, &parts(30, 40, 0)), 40 * MIB);
    }
}
