//! A window thinned to block medians: few enough points that the pairwise
//! slopes stay cheap (a week at 1 s is 600k samples), and blocks long
//! enough that their errors are nearly independent, which Sen's interval
//! assumes. Memory sampled every second is strongly autocorrelated: a
//! fixed few hundred blocks of a few seconds each keep that correlation,
//! and their interval covers far less than 95% (docs/statistics.md, "Growth
//! over time"). What dependence merging leaves is measured (`dependence`)
//! and widens the intervals built on the blocks.

use crate::theil_sen::{theil_sen, SenFit, Z975};
use allocscope_analyze::interval::t975;
use allocscope_analyze::stats::median;

/// The most blocks a window is cut into (32,640 pairwise slopes).
pub const MAX_BLOCKS: usize = 256;
/// Blocks are merged no further than this: enough for Sen's normal
/// approximation and for the median's order-statistic interval.
pub const MIN_BLOCKS: usize = 16;
/// One-sided 5% normal quantile: a lag-1 autocorrelation above
/// `Z95 / sqrt(blocks)` is beyond what independent blocks would show.
const Z95: f64 = 1.644_854;

/// A window as block medians, with what correlation is left between them.
#[derive(Debug, Clone, PartialEq)]
pub struct Blocks {
    /// `(median time, median value)` of each block, in time order.
    pub points: Vec<(f64, f64)>,
    /// How much the variance of a statistic of the blocks exceeds what
    /// independent blocks would give (at least 1).
    pub inflation: f64,
    /// How many independent samples the window is worth, N (1 - φ)/(1 + φ)
    /// for its samples' AR(1) coefficient φ, at most the blocks' count.
    pub effective_count: f64,
}

impl Blocks {
    /// The degrees of freedom of a statistic of these blocks: the effective
    /// count less `fitted` (the parameters estimated), at least 1.
    pub fn effective_df(&self, fitted: usize) -> usize {
        (self.effective_count.floor() as usize)
            .saturating_sub(fitted)
            .max(1)
    }

    /// How many standard deviations a 95% interval of a statistic of these
    /// blocks spans: Student's t at `effective_df`, times √inflation.
    pub fn quantile_scale(&self, fitted: usize) -> f64 {
        t975(self.effective_df(fitted)) * self.inflation.sqrt()
    }
}

/// `window` (in time order) as block medians, halving the block count from
/// `MAX_BLOCKS` while the residuals' lag-1 autocorrelation is beyond noise
/// and `MIN_BLOCKS` allows. A window of fewer than `MIN_BLOCKS` points is
/// kept as it is. `None` when no line can be fitted (under 3 times).
pub fn thin(window: &[(f64, f64)]) -> Option<Blocks> {
    let mut count = window.len().min(MAX_BLOCKS);
    loop {
        let points = block_medians(window, count);
        let fit = theil_sen(&points, Z975)?;
        let r = lag1_autocorrelation(&residuals(&points, &fit));
        let m = points.len();
        if r <= Z95 / (m as f64).sqrt() || m / 2 < MIN_BLOCKS {
            return Some(dependence(window, points, &fit, r));
        }
        count = m / 2;
    }
}

/// `window` (in time order) as means over whole periods of `period_s`
/// from its first sample, as many periods to a block as keep the count
/// within `MAX_BLOCKS`; the last, unfinished block is dropped. A mean over
/// whole periods is the level a periodic series keeps, free of where in a
/// tooth the window starts or ends. What correlation the blocks keep is
/// their own lag-1 autocorrelation about the line. `None` under 3 blocks.
pub fn whole_periods(window: &[(f64, f64)], period_s: f64) -> Option<Blocks> {
    let (first, last) = (window.first()?.0, window.last()?.0);
    let periods = ((last - first) / period_s).floor();
    let per_block = (periods / MAX_BLOCKS as f64).ceil().max(1.0);
    let span = per_block * period_s;
    let count = (periods / per_block).floor() as usize;
    if count < 3 {
        return None;
    }
    let mut points = Vec::with_capacity(count);
    let mut from = 0;
    for b in 0..count {
        let end_s = first + (b + 1) as f64 * span;
        let to = from + window[from..].partition_point(|p| p.0 < end_s);
        let block = &window[from..to];
        if block.is_empty() {
            return None;
        }
        let len = block.len() as f64;
        points.push((
            first + (b as f64 + 0.5) * span,
            block.iter().map(|p| p.1).sum::<f64>() / len,
        ));
        from = to;
    }
    let fit = theil_sen(&points, Z975)?;
    let m = points.len() as f64;
    // Their correlation counts when it is beyond what independent blocks
    // show, as `thin` merges on: the lag-1 autocorrelation of 6 period
    // means wanders by ±0.4 alone, and read as it came it gave one degree
    // of freedom (t = 12.7) to some of a leak's 6 whole seconds and not
    // others, the same leak's free memory then growing or not by turns.
    let r = lag1_autocorrelation(&residuals(&points, &fit));
    let r = if r > Z95 / m.sqrt() {
        r.min(MAX_BLOCK_CORRELATION)
    } else {
        0.0
    };
    Some(Blocks {
        points,
        inflation: (1.0 + r) / (1.0 - r),
        effective_count: (m * (1.0 - r) / (1.0 + r)).max(1.0),
    })
}

/// `count` blocks of consecutive points, as equal in size as integers allow,
/// each reduced to its median time and median value.
pub(crate) fn block_medians(points: &[(f64, f64)], count: usize) -> Vec<(f64, f64)> {
    let n = points.len();
    let count = count.clamp(1, n.max(1));
    (0..count)
        .map(|b| &points[b * n / count..(b + 1) * n / count])
        .filter(|block| !block.is_empty())
        .map(|block| {
            let of = |f: fn(&(f64, f64)) -> f64| {
                let values: Vec<f64> = block.iter().map(f).collect();
                median(&values).unwrap_or(f64::NAN)
            };
            (of(|p| p.0), of(|p| p.1))
        })
        .collect()
}

fn residuals(points: &[(f64, f64)], fit: &SenFit) -> Vec<f64> {
    points
        .iter()
        .map(|&(t, v)| v - fit.intercept - fit.slope * t)
        .collect()
}

/// Lag-1 autocorrelation; 0 for a constant or too short series.
fn lag1_autocorrelation(values: &[f64]) -> f64 {
    if values.len() < 3 {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let centred: Vec<f64> = values.iter().map(|v| v - mean).collect();
    let denominator: f64 = centred.iter().map(|c| c * c).sum();
    if denominator == 0.0 {
        return 0.0;
    }
    centred.windows(2).map(|w| w[0] * w[1]).sum::<f64>() / denominator
}

/// The blocks with their dependence. The samples' AR(1) coefficient φ
/// comes from the window's residuals about the line (thousands of samples:
/// precise where 16 blocks' own lag-1 autocorrelation is not, and it was
/// that imprecision, read as AR(1) with ρ up to 0.9, that widened the
/// interval fourfold under 10-minute noise); the inflation is what φ gives
/// blocks of the window's length, or what the blocks themselves show when
/// that is more (dependence the AR(1) model misses).
fn dependence(window: &[(f64, f64)], points: Vec<(f64, f64)>, fit: &SenFit, r: f64) -> Blocks {
    let n = window.len();
    let m = points.len();
    let phi = debiased(lag1_autocorrelation(&residuals(window, fit)), n);
    let observed = r.clamp(0.0, MAX_BLOCK_CORRELATION);
    let inflation =
        block_inflation(phi, n as f64 / m as f64).max((1.0 + observed) / (1.0 - observed));
    Blocks {
        points,
        inflation,
        effective_count: (n as f64 * (1.0 - phi) / (1.0 + phi)).clamp(1.0, m as f64),
    }
}

/// The blocks' own correlation is counted up to this (inflation 19).
const MAX_BLOCK_CORRELATION: f64 = 0.9;

/// The variance inflation, over independent blocks, of the means of blocks
/// of `len` consecutive samples of an AR(1) process of coefficient `phi`:
/// adjacent block sums have covariance φ(1 - φ^L)²/(1 - φ)² against a
/// variance of L(1 + φ)/(1 - φ) - 2φ(1 - φ^L)/(1 - φ)², and blocks k apart
/// φ^(L(k-1)) times that, so the inflation is 1 + 2ρ/(1 - φ^L).
fn block_inflation(phi: f64, len: f64) -> f64 {
    if phi <= 0.0 {
        return 1.0;
    }
    let decay = phi.powf(len);
    let gap = (1.0 - phi) * (1.0 - phi);
    let covariance = phi * (1.0 - decay).powi(2) / gap;
    let variance = len * (1.0 + phi) / (1.0 - phi) - 2.0 * phi * (1.0 - decay) / gap;
    1.0 + 2.0 * (covariance / variance) / (1.0 - decay)
}

/// The AR(1) coefficient behind a lag-1 autocorrelation `r` of `n`
/// residuals: r falls short of it by about (1 + 4φ)/n (Marriott and Pope
/// 1954, with the mean estimated), so φ ≈ (n r + 1)/(n - 4). Clamped to
/// [0, 0.9999]: negative correlation would narrow the interval, and the
/// effective count must stay positive.
fn debiased(r: f64, n: usize) -> f64 {
    if n <= 4 {
        return r.clamp(0.0, MAX_PHI);
    }
    ((n as f64 * r + 1.0) / (n as f64 - 4.0)).clamp(0.0, MAX_PHI)
}

const MAX_PHI: f64 = 0.9999;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::{series, Noise, Shape};
    use allocscope_core::rng::SplitMix64;

    #[test]
    fn blocks_are_medians_of_consecutive_points() {
        let points: Vec<(f64, f64)> = (0..9)
            .map(|i| (i as f64, if i == 4 { 100.0 } else { i as f64 }))
            .collect();
        assert_eq!(
            block_medians(&points, 3),
            vec![(1.0, 1.0), (4.0, 5.0), (7.0, 7.0)]
        );
    }

    #[test]
    fn correlated_noise_is_merged_into_longer_blocks() {
        // AR(1) noise of correlation time 400 samples: blocks of 16 or 64
        // samples stay correlated, so they grow until few.
        let noise = Noise {
            sd: 1.0,
            tau_s: 400.0,
        };
        let wander = series(Shape::Flat, noise, 1.0, 4096.0, &mut SplitMix64::new(3)).noisy;
        let thinned = thin(&wander).expect("thin");
        assert_eq!(thinned.points.len(), MIN_BLOCKS);
        assert!(thinned.inflation > 2.0, "{}", thinned.inflation);
    }

    #[test]
    fn independent_noise_keeps_the_most_blocks() {
        let mut rng = SplitMix64::new(7);
        let noisy: Vec<(f64, f64)> = (0..4096)
            .map(|i| (i as f64, (rng.next_u64() >> 11) as f64))
            .collect();
        let thinned = thin(&noisy).expect("thin");
        assert_eq!(thinned.points.len(), MAX_BLOCKS);
    }

    #[test]
    fn correlation_the_blocks_show_beyond_the_samples_ar1_still_widens() {
        // White samples (φ about 0) whose blocks were found correlated
        // (r = 0.5, as a slow wave under the noise would make them): the
        // blocks' own (1 + r)/(1 - r) = 3 is the inflation.
        let mut rng = SplitMix64::new(9);
        let window: Vec<(f64, f64)> = (0..1024)
            .map(|i| (i as f64, (rng.next_u64() >> 11) as f64))
            .collect();
        let points = block_medians(&window, 16);
        let fit = theil_sen(&points, Z975).expect("fit");
        let blocks = dependence(&window, points.clone(), &fit, 0.5);
        assert!(
            (blocks.inflation - 3.0).abs() < 1e-12,
            "{}",
            blocks.inflation
        );
        assert!(dependence(&window, points, &fit, 0.0).inflation < 1.5);
    }

    #[test]
    fn the_bias_correction_raises_a_short_series_correlation() {
        assert_eq!(debiased(0.0, 16), 1.0 / 12.0);
        assert_eq!(debiased(-0.5, 16), 0.0);
        assert_eq!(debiased(0.999, 16), MAX_PHI);
    }

    #[test]
    fn block_inflation_matches_a_direct_sum_of_covariances() {
        // AR(1) of φ = 0.95 in blocks of 20: sum the autocovariances of
        // the block sums directly over 200 lags of blocks.
        let (phi, len) = (0.95f64, 20usize);
        let cov = |lag: i64| phi.powi(lag.unsigned_abs() as i32);
        let block_cov = |k: i64| -> f64 {
            (0..len as i64)
                .flat_map(|i| (0..len as i64).map(move |j| (i, j)))
                .map(|(i, j)| cov(k * len as i64 + j - i))
                .sum()
        };
        let direct = 1.0 + 2.0 * (1..200).map(block_cov).sum::<f64>() / block_cov(0);
        assert!(
            (block_inflation(phi, len as f64) - direct).abs() < 1e-9,
            "{direct}"
        );
        assert_eq!(block_inflation(0.0, 20.0), 1.0);
    }
}
