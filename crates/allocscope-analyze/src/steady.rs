//! Steady state of a long recording: whether and when memory stopped
//! growing, how fast it grew before, and the level it settled at; and the
//! level of a recording at a given elapsed time, for ratios between
//! recordings ("4.8 GiB against 10 GiB after two months").
//!
//! The series is cut into `WINDOWS` equal time windows and each is reduced to
//! its median, which shrugs off single spikes. Memory has settled from the
//! first window after which every window median stays within `TOLERANCE` of
//! the median of those windows, provided that stretch covers at least
//! `MIN_STEADY_SHARE` of the recording: a recording that is still climbing
//! at its end has not settled, however flat its last minutes look.

use crate::stats;
use serde::Serialize;

const WINDOWS: usize = 20;
/// Relative band a settled level stays in.
const TOLERANCE: f64 = 0.05;
/// The band is never narrower than this, so small processes with a few
/// pages of noise still settle.
const MIN_BAND_BYTES: f64 = 1024.0 * 1024.0;
/// Share of the recording the settled stretch must cover.
const MIN_STEADY_SHARE: f64 = 0.2;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SteadyState {
    /// Seconds from the start at which memory stopped growing; `None` when
    /// it had not by the end of the recording.
    pub settled_at_s: Option<f64>,
    /// Growth before it settled (or, when it never did, over the second half
    /// of the recording), in bytes per hour.
    pub growth_bytes_per_hour: f64,
    /// The settled level (or the last window's level when still growing).
    pub level_bytes: f64,
}

/// The steady state of `(t_s, bytes)` points in time order; `None` with
/// fewer than two points or no elapsed time.
pub(crate) fn steady_state(series: &[(f64, f64)]) -> Option<SteadyState> {
    let windows = window_medians(series)?;
    let n = windows.len();
    let min_steady = ((n as f64) * MIN_STEADY_SHARE).ceil().max(1.0) as usize;
    // The first window from which on memory stays in the band, and its level.
    let settled = (0..n.saturating_sub(min_steady - 1)).find_map(|i| {
        let tail: Vec<f64> = windows[i..].iter().map(|w| w.2).collect();
        let level = mid(&tail);
        let band = (level.abs() * TOLERANCE).max(MIN_BAND_BYTES);
        tail.iter()
            .all(|v| (v - level).abs() <= band)
            .then_some((i, level))
    });
    let per_hour = |dv: f64, dt: f64| if dt > 0.0 { dv / dt * 3600.0 } else { 0.0 };
    Some(match settled {
        Some((i, level)) => {
            // Settled from the first window (which starts at the first
            // point): no time before it, so no growth.
            let (first_mid, _, first) = windows[0];
            SteadyState {
                settled_at_s: Some(windows[i].1),
                growth_bytes_per_hour: per_hour(level - first, windows[i].0 - first_mid),
                level_bytes: level,
            }
        }
        None => {
            let half = &windows[n / 2..];
            SteadyState {
                settled_at_s: None,
                growth_bytes_per_hour: slope(half) * 3600.0,
                level_bytes: windows[n - 1].2,
            }
        }
    })
}

/// The median of the points in the last 5% of the time up to `t_s` (at
/// least the last point at or before it): the level at that elapsed time.
pub(crate) fn level_at(series: &[(f64, f64)], t_s: f64) -> Option<f64> {
    let upto: Vec<&(f64, f64)> = series.iter().filter(|p| p.0 <= t_s).collect();
    let last = upto.last()?;
    let end = t_s.min(last.0);
    let from = end - (end - series[0].0) * 0.05;
    let mut values: Vec<f64> = upto.iter().filter(|p| p.0 >= from).map(|p| p.1).collect();
    if values.is_empty() {
        values.push(last.1);
    }
    Some(mid(&values))
}

/// `(mid time, start time, median)` of each non-empty window.
fn window_medians(series: &[(f64, f64)]) -> Option<Vec<(f64, f64, f64)>> {
    let (t0, t1) = (series.first()?.0, series.last()?.0);
    if series.len() < 2 || t1 <= t0 {
        return None;
    }
    let width = (t1 - t0) / WINDOWS as f64;
    let mut buckets: Vec<Vec<f64>> = vec![Vec::new(); WINDOWS];
    for &(t, v) in series {
        let i = (((t - t0) / width) as usize).min(WINDOWS - 1);
        buckets[i].push(v);
    }
    let windows: Vec<(f64, f64, f64)> = buckets
        .iter()
        .enumerate()
        .filter(|(_, b)| !b.is_empty())
        .map(|(i, b)| {
            let start = t0 + width * i as f64;
            (start + width / 2.0, start, mid(b))
        })
        .collect();
    Some(windows)
}

/// The median of a non-empty slice (0 for an empty one, never asked for).
fn mid(values: &[f64]) -> f64 {
    stats::median(values).unwrap_or(0.0)
}

/// Least-squares slope of the window medians, per second.
fn slope(windows: &[(f64, f64, f64)]) -> f64 {
    let n = windows.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let mean_t = windows.iter().map(|w| w.0).sum::<f64>() / n;
    let mean_v = windows.iter().map(|w| w.2).sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for w in windows {
        num += (w.0 - mean_t) * (w.2 - mean_v);
        den += (w.0 - mean_t).powi(2);
    }
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = 1024.0 * 1024.0;

    fn series(f: impl Fn(f64) -> f64, seconds: u32) -> Vec<(f64, f64)> {
        (0..=seconds)
            .map(|t| (f64::from(t), f(f64::from(t))))
            .collect()
    }

    #[test]
    fn growth_then_plateau_settles_at_the_knee() {
        // 100 MiB growing 1 MiB/min for an hour, then flat for two.
        let s = series(|t| 100.0 * MIB + (t.min(3600.0) / 60.0) * MIB, 3 * 3600);
        let steady = steady_state(&s).expect("enough points");
        let at = steady.settled_at_s.expect("settles");
        assert!((2400.0..=4400.0).contains(&at), "settled at {at}");
        assert!((steady.level_bytes - 160.0 * MIB).abs() < 1.0 * MIB);
        let rate = steady.growth_bytes_per_hour / MIB;
        assert!((40.0..=75.0).contains(&rate), "{rate} MiB/h");
    }

    #[test]
    fn steady_growth_never_settles() {
        let s = series(|t| 10.0 * MIB + t * 10_000.0, 7200);
        let steady = steady_state(&s).expect("enough points");
        assert_eq!(steady.settled_at_s, None);
        let rate = steady.growth_bytes_per_hour;
        assert!((rate - 3.6e7).abs() < 1e6, "{rate}");
    }

    #[test]
    fn flat_noisy_memory_is_settled_from_the_start() {
        let s = series(
            |t| {
                500.0 * MIB
                    + if (t as u64).is_multiple_of(7) {
                        9.0 * MIB
                    } else {
                        0.0
                    }
            },
            600,
        );
        let steady = steady_state(&s).expect("enough points");
        assert_eq!(steady.settled_at_s, Some(0.0));
        assert_eq!(steady.growth_bytes_per_hour, 0.0);
        assert!((steady.level_bytes - 500.0 * MIB).abs() < MIB);
    }

    #[test]
    fn too_few_points_have_no_steady_state() {
        assert_eq!(steady_state(&[]), None);
        assert_eq!(steady_state(&[(0.0, 1.0)]), None);
        assert_eq!(steady_state(&[(5.0, 1.0), (5.0, 2.0)]), None);
    }

    #[test]
    fn level_at_is_the_recent_median_up_to_that_time() {
        let s = series(|t| t, 1000);
        assert_eq!(level_at(&s, 1000.0), Some(975.0));
        assert_eq!(level_at(&s, 2000.0), Some(975.0));
        assert_eq!(level_at(&[(10.0, 3.0)], 5.0), None);
    }
}
