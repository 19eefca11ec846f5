//! One process as the estimate sees it: its cheap counters on a tick
//! (`Live`) and its last full read (`Baseline`), with what of that read is
//! its alone and what it shares.

use super::parts::{kinds, parts_of, ratio};
use crate::sample::proc::{Rollup, RssParts};

/// A live process on this tick, as its cheap counters describe it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Live {
    pub pid: i32,
    pub ppid: i32,
    /// Its program name's hash (`Stat::comm_hash`).
    pub family: u64,
    pub rss: RssParts,
}

/// One process's resident memory and PSS, split by kind, at its last full
/// read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Baseline {
    pub(super) rss: RssParts,
    pub(super) pss: RssParts,
    /// The part of `pss` on pages no other process maps (its USS, counted
    /// against anon first: private heap is what USS mostly is).
    pub(super) exclusive: RssParts,
    pub(super) family: u64,
    /// Read alone after the last full read, when first seen.
    pub(super) joined: bool,
    /// The tick it was read on (`PssEstimator::retain` counts them).
    pub(super) read_tick: u64,
}

impl Baseline {
    pub(super) fn new(p: &Live, rollup: &Rollup, joined: bool, read_tick: u64) -> Baseline {
        let rss = p.rss;
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
        Baseline {
            rss,
            pss,
            exclusive: exclusive_parts(&rss, &pss, rollup.uss_bytes),
            family: p.family,
            joined,
            read_tick,
        }
    }

    /// What it holds of pages others map too.
    pub(super) fn shared(&self) -> [f64; 3] {
        let (p, e) = (kinds(&self.pss), kinds(&self.exclusive));
        [p[0] - e[0], p[1] - e[1], p[2] - e[2]]
    }

    /// Per kind, the share of its pages that others map too that counts in
    /// its PSS.
    pub(super) fn shared_shares(&self) -> [f64; 3] {
        let (rss, shared, e) = (kinds(&self.rss), self.shared(), kinds(&self.exclusive));
        std::array::from_fn(|k| ratio(shared[k], rss[k] - e[k]))
    }

    /// How many other processes map its shared pages, on average per kind:
    /// a page of m mappers is in its RSS in full and in its PSS at 1/m.
    pub(super) fn other_mappers(&self) -> [f64; 3] {
        let (rss, shared, e) = (kinds(&self.rss), self.shared(), kinds(&self.exclusive));
        let mut others = [1.0; 3];
        for k in 0..3 {
            if shared[k] > 0.0 {
                others[k] = ((rss[k] - e[k]) / shared[k] - 1.0).max(1.0);
            }
        }
        others
    }
}

/// How a process's USS (its pages no other process maps) splits by kind,
/// which smaps_rollup does not say. A page others map too counts at most
/// half in its PSS, so of a kind with RSS r and PSS p at least 2p - r is
/// exclusive: a process whose pages of one kind nobody else maps has that
/// kind's PSS equal to its RSS. The rest of the USS goes to anon first
/// (private heap is what USS mostly is), then to file and shmem in
/// proportion to what each can still hold. Without the bounds, PostgreSQL's
/// checkpointer, whose USS is 124 MiB of shared buffers nobody else
/// touched, counted its 1.6 MiB of anon PSS as exclusive, and leaving
/// gave back none of the anon it shared with the postmaster.
pub(super) fn exclusive_parts(rss: &RssParts, pss: &RssParts, uss: u64) -> RssParts {
    let (rss, pss) = (kinds(rss), kinds(pss));
    let mut exclusive: [f64; 3] =
        std::array::from_fn(|k| (2.0 * pss[k] - rss[k]).clamp(0.0, pss[k]));
    let mut rest = (uss as f64 - exclusive.iter().sum::<f64>()).max(0.0);
    let anon = rest.min(pss[0] - exclusive[0]);
    exclusive[0] += anon;
    rest -= anon;
    let room = |k: usize| pss[k] - exclusive[k];
    let others = room(1) + room(2);
    let part = |k: usize| (rest * ratio(room(k), others)).min(room(k));
    let (file, shmem) = (part(1), part(2));
    exclusive[1] += file;
    exclusive[2] += shmem;
    parts_of(exclusive)
}
