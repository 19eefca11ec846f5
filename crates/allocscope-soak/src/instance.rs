//! One instance of a configuration over its segment (since its last
//! restart): the plateau, the growth of its memory with whether it has
//! settled, and the growth of its live heap and of its allocator's free
//! memory apart, which say whether the program or the allocator grows.

use crate::blocks::{thin, whole_periods, Blocks};
use crate::growth::{
    growth, halves_agree, persisting, settling, time_to_settle, Growth, Settling, MIN_HALF_BLOCKS,
    PERSISTS_FOR_S,
};
use crate::level::plateau;
use crate::load_figures::LoadFigure;
use crate::window::{self, after_restart, GrowthWindow};
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
    /// The tree's cumulative CPU seconds; empty where samples lack it.
    pub cpu: &'a [(f64, f64)],
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
    /// Where the growth window starts: after the warm-up (`window.rs`).
    pub window_start_s: f64,
    /// The segment's period when it repeats: the level and growth are then
    /// read over whole periods.
    pub period_s: Option<f64>,
    /// How long the growth has been seen (`GrowthWindow::seen_s`).
    pub seen_s: f64,
    /// The slopes of the window's halves agree (`growth::halves_agree`;
    /// `None`: a half too short to tell).
    pub halves_agree: Option<bool>,
    /// The plateau: the median of the window's block medians (or means
    /// over whole periods), with its 95% interval (`level.rs`).
    pub plateau: Estimate,
    /// The time the plateau stands for: the median time of those blocks.
    pub plateau_at_s: f64,
    pub growth: Growth,
    pub settling: Settling,
    /// For an open or rising instance: the time since the segment's start
    /// at which it would settle at the current noise and centre
    /// (`growth::time_to_settle`), or have been seen growing for
    /// `PERSISTS_FOR_S`.
    pub settles_after_s: Option<f64>,
    pub live_heap_growth: Option<Growth>,
    pub allocator_free_growth: Option<Growth>,
    /// The tree's CPU time per second over the growth window, in cores
    /// (`cpu_cores`).
    pub cpu_cores: Option<f64>,
    /// Its load's figures over the growth window (`load_figures.rs`).
    pub load: Vec<LoadFigure>,
}

/// CPU seconds per second over the points of a cumulative CPU series from
/// `from_s` on: the sum of its rises over the time they span. A fall (a
/// process of the tree ended unwaited-for, its CPU gone from the sum) adds
/// nothing, so the rate errs low, never negative. `None` over under a
/// second, fewer than 3 points, or under `MEASURABLE_CPU_S` of CPU.
pub fn cpu_cores(cpu: &[(f64, f64)], from_s: f64) -> Option<f64> {
    let points = window::from(cpu, from_s);
    let (first, last) = (points.first()?, points.last()?);
    let span_s = last.0 - first.0;
    if points.len() < 3 || span_s < 1.0 {
        return None;
    }
    let rises: f64 = points.windows(2).map(|w| (w[1].1 - w[0].1).max(0.0)).sum();
    (rises >= MEASURABLE_CPU_S).then_some(rises / span_s)
}

/// The least CPU time a window's rate is read from: /proc counts it in
/// clock ticks of 10 ms, so a second of it is 100 ticks and a rate read
/// from it is within 1% (under the 5% budget it is judged by). An idle
/// program's window holds a few ticks: two instances that slept through a
/// 25 s window after a warm-up read 1 tick and 3, and their CPU "3.00x
/// [3.00, 3.00]" ruled the second configuration out.
pub const MEASURABLE_CPU_S: f64 = 1.0;

/// A window's blocks: whole periods for a periodic series, else thinned
/// block medians.
fn blocks(points: &[(f64, f64)], period_s: Option<f64>) -> Option<Blocks> {
    period_s
        .and_then(|p| whole_periods(points, p))
        .or_else(|| thin(points))
}

/// The summary of one instance; `None` when its memory's window has too
/// few samples for a line (under 3 times).
pub fn summarize(series: &InstanceSeries) -> Option<InstanceSummary> {
    let segment = after_restart(series.memory, series.restart_s);
    if segment.is_empty() {
        return None;
    }
    let window = GrowthWindow::of(segment);
    let [points, early, late] = window.split(segment);
    let blocks_now = blocks(points, window.period_s)?;
    let memory_growth = growth(&blocks_now)?;
    let level = plateau(&blocks_now)?;
    let half = |s: &[(f64, f64)]| {
        blocks(s, window.period_s)
            .filter(|b| b.points.len() >= MIN_HALF_BLOCKS)
            .and_then(|b| growth(&b))
    };
    let agree = halves_agree(half(early), half(late), level.median);
    let growth_of = |s: &[(f64, f64)]| {
        let [points, ..] = window.split(after_restart(s, series.restart_s));
        blocks(points, window.period_s).and_then(|b| growth(&b))
    };
    let (start_s, end_s) = (segment[0].0, segment[segment.len() - 1].0);
    let settling = persisting(settling(&memory_growth, level.median), agree, window.seen_s);
    let settles_after_s = match settling {
        Settling::Rising => Some(end_s - start_s + PERSISTS_FOR_S - window.seen_s),
        _ => time_to_settle(&memory_growth, level.median, end_s - start_s),
    };
    Some(InstanceSummary {
        start_s,
        end_s,
        window_start_s: points[0].0,
        period_s: window.period_s,
        seen_s: window.seen_s,
        halves_agree: agree,
        plateau_at_s: blocks_now.points[blocks_now.points.len() / 2].0,
        settling,
        settles_after_s,
        plateau: level,
        growth: memory_growth,
        live_heap_growth: growth_of(series.live_heap),
        allocator_free_growth: growth_of(series.allocator_free),
        cpu_cores: cpu_cores(after_restart(series.cpu, series.restart_s), points[0].0),
        load: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_needs_a_second_of_cpu_time_in_its_window() {
        // 0.04 cores for 30 s: 1.2 s of CPU, 120 ticks.
        let busy: Vec<(f64, f64)> = (0..=30).map(|t| (t as f64, 0.04 * t as f64)).collect();
        let rate = cpu_cores(&busy, 0.0).expect("a second of CPU");
        assert!((rate - 0.04).abs() < 1e-9, "{rate}");
        // The same rate over its last 20 s: 0.8 s, not measured.
        assert_eq!(cpu_cores(&busy, 10.0), None);
        // An idle program's three ticks.
        let idle: Vec<(f64, f64)> = (0..=25)
            .map(|t| (t as f64, if t > 12 { 0.03 } else { 0.0 }))
            .collect();
        assert_eq!(cpu_cores(&idle, 0.0), None);
    }
}
