//! Projections: where memory would be at a later age if it kept its current
//! level and growth. They are extrapolations, labelled so wherever shown,
//! not measurements: a leak that stops, or one that starts, breaks them.

use crate::growth::Growth;
use allocscope_analyze::figures::Estimate;

/// The ages since the segment's start that a soak projects to: a day and a
/// week.
pub const HORIZONS_S: [f64; 2] = [24.0 * 3600.0, 7.0 * 24.0 * 3600.0];

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

/// The projections at `HORIZONS_S` after `start_s` that lie beyond `end_s`
/// (a horizon the segment has reached is measured, not projected).
pub fn at_horizons(
    level: &Estimate,
    level_at_s: f64,
    growth: &Growth,
    start_s: f64,
    end_s: f64,
) -> Vec<Projection> {
    HORIZONS_S
        .iter()
        .map(|h| start_s + h)
        .filter(|&at| at > end_s)
        .map(|at| project(level, level_at_s, growth, at))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_projection_never_falls_below_zero() {
        let level = Estimate {
            median: 100.0,
            ci_low: 90.0,
            ci_high: 110.0,
        };
        let growth = Growth {
            per_hour: -1.0,
            ci_low: -20.0,
            ci_high: 5.0,
            std_err: 0.0,
            df: 1,
        };
        let p = project(&level, 0.0, &growth, 24.0 * 3600.0);
        assert_eq!((p.value, p.ci_low, p.ci_high), (76.0, 0.0, 230.0));
        let far = project(&level, 0.0, &growth, 7.0 * 24.0 * 3600.0);
        assert_eq!((far.value, far.ci_low), (0.0, 0.0));
    }

    #[test]
    fn a_projection_carries_the_level_and_the_growth_interval() {
        let level = Estimate {
            median: 100.0,
            ci_low: 90.0,
            ci_high: 110.0,
        };
        let growth = Growth {
            per_hour: 2.0,
            ci_low: 1.0,
            ci_high: 4.0,
            std_err: 0.0,
            df: 1,
        };
        let p = project(&level, 3600.0, &growth, 11.0 * 3600.0);
        assert_eq!(
            p,
            Projection {
                at_s: 11.0 * 3600.0,
                value: 120.0,
                ci_low: 100.0,
                ci_high: 150.0
            }
        );
    }

    #[test]
    fn only_horizons_beyond_the_data_are_projected() {
        let level = Estimate {
            median: 1.0,
            ci_low: 1.0,
            ci_high: 1.0,
        };
        let growth = Growth {
            per_hour: 0.0,
            ci_low: 0.0,
            ci_high: 0.0,
            std_err: 0.0,
            df: 1,
        };
        let ats = |end_s: f64| -> Vec<f64> {
            at_horizons(&level, 0.0, &growth, 100.0, end_s)
                .iter()
                .map(|p| p.at_s)
                .collect()
        };
        assert_eq!(
            ats(3600.0),
            vec![100.0 + HORIZONS_S[0], 100.0 + HORIZONS_S[1]]
        );
        assert_eq!(ats(2.0 * 24.0 * 3600.0), vec![100.0 + HORIZONS_S[1]]);
    }
}
