//! Projections: where memory would be at a later age if it kept its current
//! level and growth. They are extrapolations, labelled so wherever shown,
//! not measurements: a leak that stops, or one that starts, breaks them.
//! Each says how far it reaches: the span its growth was estimated from and
//! the factor it extrapolates beyond it. Beyond `MAX_FACTOR` no figure is
//! given, and a series that does not grow beyond noise (a plateau, a level
//! it returns to each period) is judged by its level, not extrapolated.

use crate::growth::{settling, Growth, Settling};
use allocscope_analyze::figures::Estimate;

/// The ages since the segment's start that a soak projects to: a day and a
/// week.
pub const HORIZONS_S: [f64; 2] = [24.0 * 3600.0, 7.0 * 24.0 * 3600.0];

/// A line is carried at most this many times the span it was estimated
/// from. Its interval covers the slope's and the level's noise if the
/// growth goes on as measured, and nothing of whether it does: a leak that
/// stops after a cache fills, a fragmentation that saturates. Within an
/// order of magnitude of what was seen that assumption is the reader's to
/// weigh against the figure; beyond it the assumption, not the data, sets
/// the figure, and a soak long enough to reach the horizon would settle it.
pub const MAX_FACTOR: f64 = 10.0;

/// What the interval of a projection covers, for the reports.
pub const COVERS: &str = "95% interval of the level's and the slope's noise, if the growth goes \
                          on as measured";

/// A projected value at `at_s` with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Projection {
    pub at_s: f64,
    pub value: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// `level` (measured at `level_at_s`) carried to `at_s` at `growth`: level +
/// growth × remaining time. The interval adds the level's bounds and the
/// growth's bounds times the remaining time, end to end rather than in
/// quadrature: the two come from the same blocks, and the sum covers at
/// least as often as either (the coverage table of docs/statistics.md
/// measures it). Memory is never below zero, so neither is a projection or
/// its lower bound (a growth interval reaching far below zero would
/// otherwise project a negative heap).
pub fn project(level: &Estimate, level_at_s: f64, growth: &Growth, at_s: f64) -> Projection {
    let hours = (at_s - level_at_s) / 3600.0;
    Projection {
        at_s,
        value: (level.median + growth.per_hour * hours).max(0.0),
        ci_low: (level.ci_low + growth.ci_low * hours).max(0.0),
        ci_high: level.ci_high + growth.ci_high * hours,
    }
}

/// What a series' figures allow at a horizon.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reach {
    /// Projected, with its interval (`COVERS`).
    Projected(Projection),
    /// Growth beyond noise, but the horizon lies more than `MAX_FACTOR`
    /// times the estimated span away: no figure.
    TooFar,
    /// Growth beyond noise that slows (its window's later half is slower
    /// than its earlier: a concave approach to a level): not a line.
    Slowing,
    /// No growth beyond noise (a plateau, a periodic level, or an interval
    /// that still straddles the threshold): the level is the figure, not a
    /// line through it.
    NotGrowing,
}

/// A horizon, how far it reaches, and what is said there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Horizon {
    /// The horizon: an age since the segment's start.
    pub age_s: f64,
    /// The span the growth was estimated from.
    pub observed_s: f64,
    /// `age_s` over `observed_s`.
    pub factor: f64,
    pub reach: Reach,
}

/// The figures a series is projected from.
#[derive(Debug, Clone, Copy)]
pub struct Basis {
    pub level: Estimate,
    pub level_at_s: f64,
    pub growth: Growth,
    /// Its settling: a line is carried only through growth (`Grows` or
    /// `Rising`).
    pub settling: Settling,
    pub start_s: f64,
    /// Where its growth window starts, and its last sample.
    pub window_start_s: f64,
    pub end_s: f64,
}

/// The horizons of `HORIZONS_S` the segment has not reached (a horizon the
/// segment has reached is measured, not projected).
pub fn horizons(basis: &Basis) -> Vec<Horizon> {
    let observed_s = (basis.end_s - basis.window_start_s).max(f64::MIN_POSITIVE);
    HORIZONS_S
        .iter()
        .filter(|&&age| basis.start_s + age > basis.end_s)
        .map(|&age| {
            let factor = age / observed_s;
            let beyond_noise = settling(&basis.growth, basis.level.median) == Settling::Grows;
            let reach = if !basis.settling.grows() {
                if basis.settling == Settling::Open && beyond_noise {
                    Reach::Slowing
                } else {
                    Reach::NotGrowing
                }
            } else if factor > MAX_FACTOR {
                Reach::TooFar
            } else {
                Reach::Projected(project(
                    &basis.level,
                    basis.level_at_s,
                    &basis.growth,
                    basis.start_s + age,
                ))
            };
            Horizon {
                age_s: age,
                observed_s,
                factor,
                reach,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: f64 = 3600.0;

    fn level() -> Estimate {
        Estimate {
            median: 100.0,
            ci_low: 90.0,
            ci_high: 110.0,
        }
    }

    fn rate(per_hour: f64, ci_low: f64, ci_high: f64) -> Growth {
        Growth {
            per_hour,
            ci_low,
            ci_high,
            std_err: 0.0,
            df: 1,
        }
    }

    #[test]
    fn a_projection_never_falls_below_zero() {
        let p = project(&level(), 0.0, &rate(-1.0, -20.0, 5.0), 24.0 * HOUR);
        assert_eq!((p.value, p.ci_low, p.ci_high), (76.0, 0.0, 230.0));
        let far = project(&level(), 0.0, &rate(-1.0, -20.0, 5.0), 7.0 * 24.0 * HOUR);
        assert_eq!((far.value, far.ci_low), (0.0, 0.0));
    }

    #[test]
    fn a_projection_carries_the_level_and_the_growth_interval() {
        let p = project(&level(), HOUR, &rate(2.0, 1.0, 4.0), 11.0 * HOUR);
        assert_eq!(
            p,
            Projection {
                at_s: 11.0 * HOUR,
                value: 120.0,
                ci_low: 100.0,
                ci_high: 150.0
            }
        );
    }

    fn basis(grows: bool, window_start_s: f64, end_s: f64) -> Basis {
        Basis {
            level: level(),
            level_at_s: end_s,
            growth: rate(2.0, 1.0, 4.0),
            settling: if grows {
                Settling::Grows
            } else {
                Settling::Plateau
            },
            start_s: 0.0,
            window_start_s,
            end_s,
        }
    }

    #[test]
    fn a_horizon_beyond_ten_times_the_span_observed_has_no_figure() {
        // 10 h of growth window: a day is 2.4x, a week 16.8x.
        let h = horizons(&basis(true, 2.0 * HOUR, 12.0 * HOUR));
        assert_eq!(h.len(), 2);
        assert!((h[0].factor - 2.4).abs() < 1e-9);
        assert!(matches!(h[0].reach, Reach::Projected(p) if p.value == 124.0));
        assert!((h[1].factor - 16.8).abs() < 1e-9);
        assert_eq!(h[1].reach, Reach::TooFar);
        // 10 s seen: a day is 8,640x, no figure.
        let short = horizons(&basis(true, 10.0, 20.0));
        assert_eq!(short[0].reach, Reach::TooFar);
        assert!((short[0].factor - 8640.0).abs() < 1e-9);
    }

    #[test]
    fn a_series_that_does_not_grow_is_not_extrapolated() {
        let h = horizons(&basis(false, 2.0 * HOUR, 12.0 * HOUR));
        assert!(h.iter().all(|h| h.reach == Reach::NotGrowing));
    }

    #[test]
    fn growth_beyond_noise_whose_halves_disagree_is_slowing_not_flat() {
        let open = |growth| Basis {
            growth,
            settling: Settling::Open,
            ..basis(false, 2.0 * HOUR, 12.0 * HOUR)
        };
        // Level 100, threshold 1 an hour: [1.5, 4] is beyond it.
        let h = horizons(&open(rate(2.0, 1.5, 4.0)));
        assert!(h.iter().all(|h| h.reach == Reach::Slowing));
        let h = horizons(&open(rate(2.0, 0.5, 4.0)));
        assert!(h.iter().all(|h| h.reach == Reach::NotGrowing));
    }

    #[test]
    fn only_horizons_beyond_the_data_are_projected() {
        let ages = |end_s: f64| -> Vec<f64> {
            horizons(&basis(true, 0.0, end_s))
                .iter()
                .map(|h| h.age_s)
                .collect()
        };
        assert_eq!(ages(HOUR), HORIZONS_S.to_vec());
        assert_eq!(ages(2.0 * 24.0 * HOUR), vec![HORIZONS_S[1]]);
    }
}
