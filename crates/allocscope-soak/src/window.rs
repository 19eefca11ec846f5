//! Which samples the estimators read: those after the last restart (an
//! instance restarted, or a soak resumed, starts a new plateau), and of
//! those the growth window: from the end of the warm-up MSER-5 finds
//! (`warmup.rs`), or the segment's last half when it finds no steady state
//! yet; with the segment's period when it repeats (`period.rs`).

use crate::period::period_s;
use crate::warmup::{warm_up, WarmUp};

/// The points at or after `restart_s` (all of them for `None`); `series` is
/// in time order.
pub fn after_restart(series: &[(f64, f64)], restart_s: Option<f64>) -> &[(f64, f64)] {
    match restart_s {
        Some(restart) => &series[series.partition_point(|p| p.0 < restart)..],
        None => series,
    }
}

/// The points at or after `from_s`.
pub fn from(series: &[(f64, f64)], from_s: f64) -> &[(f64, f64)] {
    &series[series.partition_point(|p| p.0 < from_s)..]
}

/// The window of a segment the growth and the level are read from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GrowthWindow {
    pub warm_up: WarmUp,
    /// The period of the segment after its warm-up, when it repeats.
    pub period_s: Option<f64>,
    /// How long the growth has been seen: the window's span (after the
    /// warm-up, or the segment's last half without a steady state: the
    /// first half is where a warm-up would be).
    pub seen_s: f64,
}

impl GrowthWindow {
    /// The window of `segment` (in time order, not empty).
    pub fn of(segment: &[(f64, f64)]) -> GrowthWindow {
        let warm_up = warm_up(segment);
        let (start, end) = match (segment.first(), segment.last()) {
            (Some(a), Some(b)) => (a.0, b.0),
            _ => (0.0, 0.0),
        };
        GrowthWindow {
            warm_up,
            period_s: period_s(from(segment, warm_up.from_s)),
            seen_s: end - warm_up.from_s.max(start),
        }
    }

    /// The window's points of `series` and its two halves by time.
    pub fn split<'a>(&self, series: &'a [(f64, f64)]) -> [&'a [(f64, f64)]; 3] {
        let window = from(series, self.warm_up.from_s);
        let middle = match (window.first(), window.last()) {
            (Some(a), Some(b)) => (a.0 + b.0) / 2.0,
            _ => 0.0,
        };
        let cut = window.partition_point(|p| p.0 < middle);
        [window, &window[..cut], &window[cut..]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(n: usize) -> Vec<(f64, f64)> {
        (0..n).map(|i| (i as f64, i as f64)).collect()
    }

    #[test]
    fn a_restart_drops_the_points_before_it() {
        let s = series(10);
        assert_eq!(after_restart(&s, Some(6.0)).first(), Some(&(6.0, 6.0)));
        assert_eq!(after_restart(&s, None).len(), 10);
        assert!(after_restart(&s, Some(20.0)).is_empty());
    }

    #[test]
    fn growth_without_a_steady_state_is_read_and_seen_from_the_last_half() {
        let s = series(101);
        let w = GrowthWindow::of(&s);
        assert_eq!((w.warm_up.from_s, w.seen_s, w.period_s), (50.0, 50.0, None));
        let [window, early, late] = w.split(&s);
        assert_eq!((window.len(), early.len(), late.len()), (51, 25, 26));
    }
}
