//! The estimator's state: the last full reads of the tree's processes and
//! what changed since. Its methods live by concern: `reads.rs` (full passes,
//! joined reads, ticks, stale and shaken passes), `growth.rs` (what a
//! family's newly mapped pages add to the tree), `estimate.rs` (every live
//! process's PSS).

use super::baseline::Baseline;
use super::parts::Shares;
use crate::sample::proc::RssParts;
use std::collections::{HashMap, HashSet};

/// What one process that left held of pages others map too, by kind, and
/// how many others mapped those pages on average.
pub(super) type Departure = ([f64; 3], [f64; 3]);

/// The last full read of every live process of the tree, and what changed
/// in the tree since.
#[derive(Debug, Default)]
pub struct PssEstimator {
    pub(super) baselines: HashMap<i32, Baseline>,
    /// Reads of the full pass under way.
    pub(super) pass: HashMap<i32, Baseline>,
    /// Per family, what processes that left since the last full pass held
    /// of pages others map too, by kind, and how many others mapped those
    /// pages on average.
    pub(super) departed: HashMap<u64, Vec<Departure>>,
    /// The tree's shares over its last full read, for orphans never read.
    pub(super) tree_shares: Option<Shares>,
    /// Per family, its processes at the last complete pass.
    pub(super) families: HashMap<u64, FamilyPass>,
    /// Per family and kind (file, shmem): the share of newly mapped pages
    /// that was new to the tree, times the RSS it was measured at
    /// (`learn_growth`).
    pub(super) new_page_scale: HashMap<u64, [Option<f64>; 3]>,
    /// Ticks so far: calls to `retain`.
    pub(super) tick: u64,
    /// The tick each live process was first seen on, and its RSS then.
    pub(super) first_seen: HashMap<i32, (u64, RssParts)>,
    /// Per family probed since the last full pass, its growth (`grown`,
    /// summed) at its last probe.
    pub(super) probed: HashMap<u64, [f64; 3]>,
    /// Families a process joined since their last probe.
    pub(super) joined_families: HashSet<u64>,
}

/// A family's processes at a full pass: RSS and PSS summed by kind.
#[derive(Debug, Default)]
pub(super) struct FamilyPass {
    pub(super) rss: [f64; 3],
    pub(super) pss: [f64; 3],
    /// Sorted.
    pub(super) pids: Vec<i32>,
}
