//! One instance of a configuration over its segment (since its last
//! restart): the plateau, the growth of its memory with whether it has
//! settled, and the growth of its live heap and of its allocator's free
//! memory apart, which say whether the program or the allocator grows.

use crate::blocks::thin;
use crate::growth::{growth, settling, time_to_settle, Growth, Settling};
use crate::level::plateau;
use crate::window::{after_restart, recent};
use allocscope_analyze::figures::Estimate;

/// One instance's series, each `(t_s, bytes)` in time order.
#[derive(Debug, Clone, Copy)]
pub struct InstanceSeries<'a> {
    /// The memory the soak judges by (RSS, PSS or the cgroup's charge).
    pub memory: &'a [(f64, f64)],
    /// The heap probe's live heap; empty without the probe.
    pub live_heap: &'a [(f64, f64)],
    /// The free memory the allocator holds; empty without the probe.
    pub allocator_free: &'a [(f64, f64)],
    /// When the instance last restarted (or the soak resumed): the
    /// estimators read only what came after.
    pub restart_s: Option<f64>,
}

/// What an instance's segment says.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceSummary {
    /// The segment's first and last sample times.
    pub start_s: f64,
    pub end_s: f64,
    /// The plateau: the median of the recent window's block medians, with
    /// its 95% interval (`level.rs`).
    pub plateau: Estimate,
    /// The time the plateau stands for: the median time of those blocks.
    pub plateau_at_s: f64,
    pub growth: Growth,
    pub settling: Settling,
    /// For an open instance: the time since the segment's start at which it
    /// would settle at the current noise and centre (`growth::time_to_settle`).
    pub settles_after_s: Option<f64>,
    pub live_heap_growth: Option<Growth>,
    pub allocator_free_growth: Option<Growth>,
}

/// The summary of one instance; `None` when its memory's recent window has
/// too few samples for a line (under 3 times).
pub fn summarize(series: &InstanceSeries) -> Option<InstanceSummary> {
    let segment = after_restart(series.memory, series.restart_s);
    let blocks = thin(recent(segment))?;
    let memory_growth = growth(&blocks)?;
    let level = plateau(&blocks)?;
    let growth_of = |s: &[(f64, f64)]| {
        thin(recent(after_restart(s, series.restart_s))).and_then(|b| growth(&b))
    };
    let (start_s, end_s) = (segment[0].0, segment[segment.len() - 1].0);
    Some(InstanceSummary {
        start_s,
        end_s,
        plateau_at_s: blocks.points[blocks.points.len() / 2].0,
        settling: settling(&memory_growth, level.median),
        settles_after_s: time_to_settle(&memory_growth, level.median, end_s - start_s),
        plateau: level,
        growth: memory_growth,
        live_heap_growth: growth_of(series.live_heap),
        allocator_free_growth: growth_of(series.allocator_free),
    })
}
