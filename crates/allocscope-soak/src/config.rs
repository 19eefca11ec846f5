//! A configuration's replicas combined, and a configuration against the
//! baseline: the ratio of their plateaus, whether their plateaus and growth
//! rates separate, and what it would take for them to.
//!
//! Levels and growth rates are combined differently, because replicas
//! differ differently in them. Where a replica's plateau lands depends on
//! its path (which blocks fragmented where), so the spread between replicas
//! is the noise of a level: a Student t interval over the replicas, and
//! Welch's t on their logs for the ratio. With 2 replicas that is 1 degree
//! of freedom per side (t = 12.7, Welch's about 4.3 for two pairs): wide,
//! but a bootstrap of 2 replicas has 3 distinct resamples and cannot reach
//! 95%. A growth rate is set by the program and the allocator (what a leak
//! leaks per request), so replicas share it and differ by the noise their
//! own intervals measure: the mean of their rates, its standard error from
//! theirs, its degrees of freedom Welch–Satterthwaite's.

use crate::growth::{
    all_agree, persisting, settling, time_to_narrow, time_to_settle, weighted_sum, Growth,
    Settling, PERSISTS_FOR_S,
};
use crate::instance::InstanceSummary;
use allocscope_analyze::figures::{Estimate, Ratio};
use allocscope_analyze::interval::{t975, welch_log_ratio};

/// Beyond this many replicas a side, plateaus too close for their spread
/// are called inseparable.
const MAX_REPLICAS: usize = 64;

/// A configuration's replicas combined.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigSummary {
    pub replicas: usize,
    /// The mean of the replicas' plateaus; its interval a t interval over
    /// the replicas (one replica: its own).
    pub level: Estimate,
    /// The mean time the replicas' plateaus stand for.
    pub level_at_s: f64,
    /// The means of the replicas' segment starts and last samples: what
    /// `projection::at_horizons` projects from and beyond.
    pub start_s: f64,
    pub end_s: f64,
    /// The mean of the replicas' growth windows' starts.
    pub window_start_s: f64,
    /// The shortest time a replica's growth has been seen.
    pub seen_s: f64,
    /// Every replica repeats: the longest of their periods.
    pub period_s: Option<f64>,
    /// The mean of the replicas' growth rates (per hour).
    pub growth: Growth,
    pub settling: Settling,
    /// For an open configuration: the time since the replicas' start at
    /// which it would settle at the current noise and centre.
    pub settles_after_s: Option<f64>,
}

/// The replicas combined; `None` without any.
pub fn combine(replicas: &[InstanceSummary]) -> Option<ConfigSummary> {
    let n = replicas.len() as f64;
    let mean = |f: &dyn Fn(&InstanceSummary) -> f64| replicas.iter().map(f).sum::<f64>() / n;
    let first = replicas.first()?;
    let level_mean = mean(&|r| r.plateau.median);
    let level = if replicas.len() == 1 {
        first.plateau
    } else {
        let var = replicas
            .iter()
            .map(|r| (r.plateau.median - level_mean).powi(2))
            .sum::<f64>()
            / (n - 1.0);
        let half = t975(replicas.len() - 1) * (var / n).sqrt();
        Estimate {
            median: level_mean,
            ci_low: level_mean - half,
            ci_high: level_mean + half,
        }
    };
    let shares: Vec<(f64, Growth)> = replicas.iter().map(|r| (1.0 / n, r.growth)).collect();
    let growth = weighted_sum(&shares)?;
    let seen_s = replicas
        .iter()
        .map(|r| r.seen_s)
        .fold(f64::INFINITY, f64::min);
    let agree = all_agree(replicas.iter().map(|r| r.halves_agree));
    let settling = persisting(settling(&growth, level.median), agree, seen_s);
    let elapsed_s = mean(&|r| r.end_s - r.start_s);
    let periods: Option<Vec<f64>> = replicas.iter().map(|r| r.period_s).collect();
    Some(ConfigSummary {
        replicas: replicas.len(),
        level,
        level_at_s: mean(&|r| r.plateau_at_s),
        start_s: mean(&|r| r.start_s),
        end_s: mean(&|r| r.end_s),
        window_start_s: mean(&|r| r.window_start_s),
        seen_s,
        period_s: periods.and_then(|p| p.into_iter().reduce(f64::max)),
        settling,
        settles_after_s: match settling {
            Settling::Rising => Some(elapsed_s + PERSISTS_FOR_S - seen_s),
            _ => time_to_settle(&growth, level.median, elapsed_s),
        },
        growth,
    })
}

/// Instances (label, summary, still running) grouped by label in the order
/// first given, each with its summary (or what carries it): a label given to
/// several instances is one configuration of several replicas. An instance
/// that ended too early for a summary is left out; `None` while a running
/// one has none yet.
pub fn by_label<'a, T>(
    instances: impl IntoIterator<Item = (&'a str, Option<T>, bool)>,
) -> Option<Vec<(String, Vec<T>)>> {
    let mut groups: Vec<(String, Vec<T>)> = Vec::new();
    for (label, summary, running) in instances {
        let Some(summary) = summary else {
            if running {
                return None;
            }
            continue;
        };
        match groups.iter_mut().find(|g| g.0 == label) {
            Some(group) => group.1.push(summary),
            None => groups.push((label.to_string(), vec![summary])),
        }
    }
    Some(groups)
}

/// A configuration against the baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Separation {
    /// Its plateau over the baseline's: Welch's t on the logs of the
    /// replicas' plateaus; NaN bounds with one replica on a side.
    pub plateau_ratio: Ratio,
    /// The ratio's interval excludes 1.
    pub levels_separate: bool,
    /// Its growth rate less the baseline's, per hour.
    pub growth_difference: Growth,
    /// That difference's interval excludes 0.
    pub growths_separate: bool,
    /// For growth rates that do not separate yet: the elapsed time at which
    /// they would at the current noise and difference (`None` when they do,
    /// or when the rates are equal).
    pub growths_separate_at_s: Option<f64>,
    /// For plateaus that do not separate yet: the replicas per side at
    /// which they would at the current spread and ratio (`None` when they
    /// do, without two replicas on each side to measure a spread, or when
    /// it would take more than `MAX_REPLICAS`).
    pub levels_separate_with_replicas: Option<usize>,
}

/// `config` against `baseline` (each its replicas), at `elapsed_s` into the
/// soak; `None` when either has no replica or a plateau is not positive.
pub fn separation(
    config: &[InstanceSummary],
    baseline: &[InstanceSummary],
    elapsed_s: f64,
) -> Option<Separation> {
    let levels = |rs: &[InstanceSummary]| rs.iter().map(|r| r.plateau.median).collect::<Vec<f64>>();
    let (ours, theirs) = (levels(config), levels(baseline));
    if ours.iter().chain(&theirs).any(|&l| l <= 0.0) {
        return None;
    }
    let log_ratio = welch_log_ratio(&ours, &theirs)?;
    let plateau_ratio = log_ratio.ratio();
    let levels_separate = plateau_ratio.excludes_one();
    let (a, b) = (combine(config)?, combine(baseline)?);
    let difference = weighted_sum(&[(1.0, a.growth), (-1.0, b.growth)])?;
    let half = (difference.ci_high - difference.ci_low) / 2.0;
    let growths_separate = difference.ci_low > 0.0 || difference.ci_high < 0.0;
    let replicas_needed = log_ratio.std_err.and_then(|se| {
        // The spread of one replica's log plateau, pooled; the smallest R a
        // side, beyond those run, with t(2R - 2) · spread · √(2/R) under
        // the distance.
        let spread = se / (1.0 / ours.len() as f64 + 1.0 / theirs.len() as f64).sqrt();
        (ours.len().max(theirs.len()) + 1..=MAX_REPLICAS)
            .find(|&r| t975(2 * r - 2) * spread * (2.0 / r as f64).sqrt() < log_ratio.centre.abs())
    });
    Some(Separation {
        plateau_ratio,
        levels_separate,
        growth_difference: difference,
        growths_separate,
        growths_separate_at_s: if growths_separate {
            None
        } else {
            time_to_narrow(half, difference.per_hour.abs(), elapsed_s)
        },
        levels_separate_with_replicas: if levels_separate {
            None
        } else {
            replicas_needed
        },
    })
}
