//! The growth rate of a window with its 95% interval, whether it has
//! settled, and how long the soak would have to run for an open one to
//! settle at the current noise.

use crate::blocks::Blocks;
use crate::theil_sen::theil_sen;
use allocscope_analyze::interval::t975;

const HOUR_S: f64 = 3600.0;

/// Growth under this share of the level per hour counts as none: 1% an
/// hour is what a window of a few hours resolves when memory wanders by a
/// percent or two, and what is left of it still shows in the projections,
/// which carry the whole interval (docs/statistics.md, "Settled").
pub const SETTLED_SHARE_PER_HOUR: f64 = 0.01;

/// A growth rate in the series' unit per hour, with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Growth {
    pub per_hour: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// The standard error the interval stands for: its half-width over the
    /// t quantile it was built with.
    pub std_err: f64,
    /// That quantile's degrees of freedom.
    pub df: usize,
}

/// Degrees of freedom of the fitted line (slope and intercept).
const LINE_PARAMETERS: usize = 2;

/// The Theil–Sen growth of thinned blocks. Sen's interval is widened for
/// the correlation left between them as Santer et al. (2000) widen a trend's
/// under AR(1) errors: the variance by the blocks' inflation, and the
/// normal quantile replaced by Student's t at the effective count less 2,
/// since the correlation is itself estimated. `None` under 3 distinct
/// times.
pub fn growth(blocks: &Blocks) -> Option<Growth> {
    let fit = theil_sen(&blocks.points, blocks.quantile_scale(LINE_PARAMETERS))?;
    let df = blocks.effective_df(LINE_PARAMETERS);
    Some(Growth {
        per_hour: fit.slope * HOUR_S,
        ci_low: fit.ci_low * HOUR_S,
        ci_high: fit.ci_high * HOUR_S,
        std_err: (fit.ci_high - fit.ci_low) * HOUR_S / (2.0 * t975(df)),
        df,
    })
}

/// `Σ wᵢ gᵢ` of independent rates (a mean of replicas, a difference of
/// configurations): standard error √(Σ wᵢ² seᵢ²), degrees of freedom
/// Welch–Satterthwaite's, and a Student t interval. `None` without terms.
pub fn weighted_sum(terms: &[(f64, Growth)]) -> Option<Growth> {
    if terms.is_empty() {
        return None;
    }
    let per_hour = terms.iter().map(|(w, g)| w * g.per_hour).sum::<f64>();
    let variances: Vec<(f64, usize)> = terms
        .iter()
        .map(|(w, g)| ((w * g.std_err).powi(2), g.df))
        .collect();
    let variance = variances.iter().map(|v| v.0).sum::<f64>();
    let spread = variances
        .iter()
        .map(|&(v, df)| v * v / df as f64)
        .sum::<f64>();
    let df = if spread > 0.0 {
        ((variance * variance / spread).floor() as usize).max(1)
    } else {
        variances.iter().map(|v| v.1).sum()
    };
    let half = t975(df) * variance.sqrt();
    Some(Growth {
        per_hour,
        ci_low: per_hour - half,
        ci_high: per_hour + half,
        std_err: variance.sqrt(),
        df,
    })
}

/// Growth beyond noise settles a series (and lets `--until settled` stop)
/// only once it has been seen for this long. Nothing in a series that has
/// grown steadily since it started tells a warm-up that will stop from a
/// leak that will not: a server filling its caches, pools and JIT grows for
/// seconds to minutes and then holds. A soak is meant to run for hours, so
/// waiting 5 minutes before stopping on growth costs little, and stopping on
/// a warm-up costs the whole run. Growth seen for less is still reported
/// (`Settling::Rising`), with the span it was seen for.
pub const PERSISTS_FOR_S: f64 = 300.0;

/// Where a series stands: levelled off, growing, or not known yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settling {
    /// The whole interval lies within ± the threshold: a plateau.
    Plateau,
    /// The whole interval lies above the threshold, the slopes of the
    /// window's halves agree, and the growth has been seen for at least
    /// `PERSISTS_FOR_S`: growth that persists.
    Grows,
    /// Growth beyond noise whose halves agree, seen for less than
    /// `PERSISTS_FOR_S`: reported as growth, but not settled.
    Rising,
    /// Neither yet: falling beyond the threshold, or growth that slows (a
    /// concave approach to a level), still on its way to a level.
    Open,
}

impl Settling {
    /// Plateau or persistent growth: more time would not change it.
    pub fn is_settled(self) -> bool {
        matches!(self, Settling::Plateau | Settling::Grows)
    }

    /// `plateau`, `grows`, `rising` or `open`: the word the exports use.
    pub fn word(self) -> &'static str {
        match self {
            Settling::Plateau => "plateau",
            Settling::Grows => "grows",
            Settling::Rising => "rising",
            Settling::Open => "open",
        }
    }

    /// Growth beyond noise, persistent or not yet.
    pub fn grows(self) -> bool {
        matches!(self, Settling::Grows | Settling::Rising)
    }
}

/// A half of a window needs this many blocks for its slope's interval to
/// mean anything: Sen's interval of 3 points is the range of their 3
/// slopes, and 3 whole-period means of a leak in 1 s steps (sampled every
/// 200 ms, 7 s seen) put the halves' intervals at [14.9, 16.8] and [13.0,
/// 14.4] GiB/h, "slower beyond noise" from the sampling's phase alone.
pub const MIN_HALF_BLOCKS: usize = 8;

/// Whether the growth of a window's later half agrees with its earlier
/// half's (`None`: a half has too few blocks to tell, `MIN_HALF_BLOCKS`):
/// the later half's own interval lies above `level`'s threshold (the
/// growth goes on now, beyond noise), it is not slower than the earlier
/// half beyond noise, and not under half its rate (a concave approach to a
/// level is slower, and an exponential one of time constant τ halves its
/// rate every 0.7 τ: within a window of a few τ, where noise hides the
/// difference, the ratio still shows it). Asking the later half alone to
/// clear the threshold is a second test a wander of the noise must also
/// pass: a soak looks at its series every few seconds, and one test at 95%
/// would find growth in a flat series at some look far more often than
/// 2.5%; without it, 101 of 1,000 simulated saturating climbs (20% of the
/// level, τ 3 min) were called growth, against 6 with it.
pub fn halves_agree(early: Option<Growth>, late: Option<Growth>, level: f64) -> Option<bool> {
    let (early, late) = (early?, late?);
    let slower = weighted_sum(&[(1.0, late), (-1.0, early)]).is_some_and(|d| d.ci_high < 0.0);
    Some(late.ci_low > settled_threshold(level) && !slower && late.per_hour >= early.per_hour / 2.0)
}

/// The halves of several replicas together: one slower disagrees, all
/// agreeing agree, else (a replica too short to tell) unknown.
pub fn all_agree(halves: impl IntoIterator<Item = Option<bool>>) -> Option<bool> {
    let mut all = Some(true);
    for agree in halves {
        match agree {
            Some(false) => return Some(false),
            None => all = None,
            Some(true) => {}
        }
    }
    all
}

/// The settling of a series whose window's interval says `by_interval`
/// (`settling`): growth beyond noise whose halves disagree is open (a
/// concave approach to a level); growth beyond noise is rising while its
/// halves are too short to tell its shape or it has been seen for less
/// than `PERSISTS_FOR_S`, and grows after.
pub fn persisting(by_interval: Settling, agree: Option<bool>, seen_s: f64) -> Settling {
    match (by_interval, agree) {
        (Settling::Grows, Some(false)) => Settling::Open,
        (Settling::Grows, None) => Settling::Rising,
        (Settling::Grows, Some(true)) if seen_s < PERSISTS_FOR_S => Settling::Rising,
        (s, _) => s,
    }
}

/// A part of a growth (the live heap's, the allocator's free memory's)
/// under this share of the whole does not account for it.
pub const MINOR_SHARE: f64 = 0.1;

/// What a part of a series' growth says about it, for telling a leak from
/// fragmentation: `Plateau` (it does not account for the growth) when it
/// is flat at `level`'s threshold or its interval lies under `MINOR_SHARE`
/// of the `whole` growth's lower bound, else what its interval says. Only
/// the upper bound is asked: a part that may fall, or falls, accounts for
/// no growth either (the arenas program's live heap jumps 4 MiB for an
/// instant each step, and a sample that catches it left its interval at
/// [-2.1 GiB/h, 0] beside 14 GiB/h of memory growth). The level's threshold (1% an hour)
/// is what hours of soak resolve; over seconds a part a thousandth of the
/// growth is not flat by it (glibc's live heap grew 5 KiB a second, its
/// arenas' bookkeeping, while its free memory grew 4 MiB a second), yet it
/// plainly does not account for the growth.
pub fn part_settling(part: &Growth, whole: &Growth, level: f64) -> Settling {
    let bound = MINOR_SHARE * whole.ci_low.max(0.0);
    if part.ci_high < bound {
        return Settling::Plateau;
    }
    settling(part, level)
}

/// The threshold of `settling` for a series at `level`, per hour.
pub fn settled_threshold(level: f64) -> f64 {
    level.abs() * SETTLED_SHARE_PER_HOUR
}

/// What `growth`'s interval alone says of a series at `level`: `Plateau`,
/// `Grows` or `Open` (`persisting` adds what its halves and span say).
pub fn settling(growth: &Growth, level: f64) -> Settling {
    let threshold = settled_threshold(level);
    if growth.ci_low > -threshold && growth.ci_high < threshold {
        Settling::Plateau
    } else if growth.ci_low > threshold {
        Settling::Grows
    } else {
        Settling::Open
    }
}

/// The elapsed time (seconds into the segment) at which an open `growth`
/// measured at `elapsed_s` would settle, if its centre held and its noise
/// stayed as it is: the window is a fixed share of the segment, and the
/// interval of a slope over a window W of independent blocks narrows as
/// W^(-3/2). `None` when it has settled, or when its centre sits on the
/// threshold (no length of soak would settle it).
pub fn time_to_settle(growth: &Growth, level: f64, elapsed_s: f64) -> Option<f64> {
    if settling(growth, level) != Settling::Open {
        return None;
    }
    let threshold = settled_threshold(level);
    let half_width = (growth.ci_high - growth.ci_low) / 2.0;
    let centre = (growth.ci_high + growth.ci_low) / 2.0;
    let room = if centre.abs() < threshold {
        threshold - centre.abs()
    } else {
        centre - threshold
    };
    time_to_narrow(half_width, room, elapsed_s)
}

/// When a half-width of `half_width` at `elapsed_s` shrinks under `room`,
/// at W^(-3/2); `None` for no room.
pub fn time_to_narrow(half_width: f64, room: f64, elapsed_s: f64) -> Option<f64> {
    (room > 0.0).then(|| elapsed_s * (half_width / room).powf(2.0 / 3.0).max(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(per_hour: f64, half: f64) -> Growth {
        Growth {
            per_hour,
            ci_low: per_hour - half,
            ci_high: per_hour + half,
            std_err: half / t975(30),
            df: 30,
        }
    }

    #[test]
    fn a_weighted_sum_adds_variances_and_takes_satterthwaites_df() {
        // Two rates of standard error 1 and 4 degrees of freedom each:
        // their mean has se √2/2 and df (0.5)² / (2 · 0.25² / 4) = 8.
        let g = Growth {
            per_hour: 3.0,
            ci_low: 0.0,
            ci_high: 0.0,
            std_err: 1.0,
            df: 4,
        };
        let mean = weighted_sum(&[(0.5, g), (0.5, Growth { per_hour: 5.0, ..g })]).expect("sum");
        assert_eq!((mean.per_hour, mean.df), (4.0, 8));
        assert!((mean.ci_high - 4.0 - t975(8) * 0.5f64.sqrt()).abs() < 1e-12);
        assert_eq!(weighted_sum(&[]), None);
    }

    #[test]
    fn settling_compares_the_interval_with_one_percent_of_the_level_an_hour() {
        let level = 1000.0; // threshold 10 per hour
        assert_eq!(settling(&rate(0.0, 9.0), level), Settling::Plateau);
        assert_eq!(settling(&rate(0.0, 11.0), level), Settling::Open);
        assert_eq!(settling(&rate(20.0, 9.0), level), Settling::Grows);
        assert_eq!(settling(&rate(15.0, 9.0), level), Settling::Open);
        assert_eq!(settling(&rate(-20.0, 9.0), level), Settling::Open);
    }

    #[test]
    fn a_part_under_a_tenth_of_the_growth_does_not_account_for_it() {
        let level = 40.0; // threshold 0.4 an hour
        let whole = rate(14_000.0, 1_000.0); // [13,000, 15,000]
                                             // The arenas' live heap: [-2,100, 0], and a few KiB a second.
        assert_eq!(
            part_settling(&rate(-1_050.0, 1_050.0), &whole, level),
            Settling::Plateau
        );
        assert_eq!(
            part_settling(&rate(20.0, 5.0), &whole, level),
            Settling::Plateau
        );
        // A leak's live heap carries the growth; one that may carry a
        // fifth of it is not known to be minor.
        assert_eq!(
            part_settling(&rate(14_000.0, 1_000.0), &whole, level),
            Settling::Grows
        );
        assert_eq!(
            part_settling(&rate(1_000.0, 1_500.0), &whole, level),
            Settling::Open
        );
    }

    #[test]
    fn an_open_rate_settles_when_its_interval_has_narrowed_to_fit() {
        // Half-width 16 with 8 of room: (16/8)^(2/3) = 1.587 times as long.
        let at = time_to_settle(&rate(2.0, 16.0), 1000.0, 3600.0).expect("open");
        assert!((at - 3600.0 * 2f64.powf(2.0 / 3.0)).abs() < 1e-6);
        assert_eq!(time_to_settle(&rate(0.0, 5.0), 1000.0, 3600.0), None);
        assert_eq!(time_to_settle(&rate(10.0, 5.0), 1000.0, 3600.0), None);
    }

    #[test]
    fn fewer_effective_samples_widen_the_growth_interval() {
        let points: Vec<(f64, f64)> = (0..40)
            .map(|i| (i as f64 * 60.0, 1e6 + ((i * 7) % 11) as f64 * 1e3))
            .collect();
        let independent = growth(&Blocks {
            points: points.clone(),
            inflation: 1.0,
            effective_count: 40.0,
        })
        .expect("fit");
        let correlated = growth(&Blocks {
            points,
            inflation: 4.0,
            effective_count: 10.0,
        })
        .expect("fit");
        assert!(
            correlated.ci_high - correlated.ci_low
                > 1.5 * (independent.ci_high - independent.ci_low)
        );
    }
}
