//! Which samples the estimators read: those after the last restart (an
//! instance restarted, or a soak resumed, starts a new plateau), and of
//! those the recent window, the segment's last half.

/// Share of the segment, by time, that the recent window covers: the first
/// half holds the warm-up and the growth towards a plateau, which the
/// growth rate "now" must not average in; the window still lengthens with
/// the soak, so the interval narrows as it runs.
pub const WINDOW_SHARE: f64 = 0.5;

/// The points at or after `restart_s` (all of them for `None`); `series` is
/// in time order.
pub fn after_restart(series: &[(f64, f64)], restart_s: Option<f64>) -> &[(f64, f64)] {
    match restart_s {
        Some(restart) => &series[series.partition_point(|p| p.0 < restart)..],
        None => series,
    }
}

/// The recent window of a segment in time order: its points in the last
/// `WINDOW_SHARE` of the time it spans.
pub fn recent(segment: &[(f64, f64)]) -> &[(f64, f64)] {
    let (Some(first), Some(last)) = (segment.first(), segment.last()) else {
        return segment;
    };
    let from = last.0 - (last.0 - first.0) * WINDOW_SHARE;
    &segment[segment.partition_point(|p| p.0 < from)..]
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
    fn the_window_is_the_last_half_of_the_time() {
        let s = series(11);
        assert_eq!(recent(&s).first(), Some(&(5.0, 5.0)));
        assert_eq!(recent(&s[6..]).first(), Some(&(8.0, 8.0)));
        assert!(recent(&[]).is_empty());
    }
}
