//! The median, and (tests only) the percentile bootstrap the reports used
//! before `interval.rs`: kept so the coverage test can show why it was
//! replaced (docs/statistics.md).

#[cfg(test)]
use super::figures::{Estimate, Ratio};

#[cfg(test)]
/// Resamples used by `analyze`: enough for stable 2.5%/97.5% percentiles.
pub(crate) const RESAMPLES: usize = 10_000;
#[cfg(test)]
/// Confidence level of every interval in the reports.
pub(crate) const CONFIDENCE: f64 = 0.95;
#[cfg(test)]
const SEED: u64 = 0x5EED_A110_C5C0_9E00;

#[cfg(test)]
use allocscope_core::rng::SplitMix64;

#[cfg(test)]
/// Resampling indices from the shared SplitMix64.
trait ResampleIndex {
    fn below(&mut self, n: usize) -> usize;
}

#[cfg(test)]
impl ResampleIndex for SplitMix64 {
    /// Uniform in `0..n` (n > 0), without modulo bias worth caring about for
    /// the small n of repetitions (Lemire's multiply-shift).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// The median; `None` for no data.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    median_in_place(&mut sorted)
}

fn median_in_place(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    })
}

#[cfg(test)]
/// Median of a bootstrap resample of `values`, reusing `scratch`.
fn resampled_median(values: &[f64], rng: &mut SplitMix64, scratch: &mut Vec<f64>) -> Option<f64> {
    scratch.clear();
    scratch.extend((0..values.len()).map(|_| values[rng.below(values.len())]));
    median_in_place(scratch)
}

#[cfg(test)]
/// Linear-interpolated percentile `q` in [0, 1] of sorted data.
fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let pos = q.clamp(0.0, 1.0) * last as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    let frac = pos - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

#[cfg(test)]
/// The `(1 - confidence) / 2` and `1 - (1 - confidence) / 2` percentiles.
fn interval(mut stats: Vec<f64>, confidence: f64) -> Option<(f64, f64)> {
    stats.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence.clamp(0.0, 1.0)) / 2.0;
    Some((percentile(&stats, tail)?, percentile(&stats, 1.0 - tail)?))
}

#[cfg(test)]
/// The median with its percentile-bootstrap CI. One value gives a degenerate
/// interval at that value; no values give `None`.
pub(crate) fn bootstrap_median_ci(
    values: &[f64],
    resamples: usize,
    confidence: f64,
) -> Option<Estimate> {
    let point = median(values)?;
    if values.len() == 1 || resamples == 0 {
        return Some(Estimate {
            median: point,
            ci_low: point,
            ci_high: point,
        });
    }
    let mut rng = SplitMix64::new(SEED);
    let mut scratch = Vec::with_capacity(values.len());
    let stats: Vec<f64> = (0..resamples)
        .filter_map(|_| resampled_median(values, &mut rng, &mut scratch))
        .collect();
    let (ci_low, ci_high) = interval(stats, confidence)?;
    Some(Estimate {
        median: point,
        ci_low,
        ci_high,
    })
}

#[cfg(test)]
/// median(num) / median(den) with a percentile-bootstrap CI, resampling each
/// group independently (`RESAMPLES`, `CONFIDENCE`). `None` when a group is
/// empty or the denominator's median is zero.
pub(crate) fn bootstrap_ratio_ci(num: &[f64], den: &[f64]) -> Option<Ratio> {
    bootstrap_ratio_ci_with(num, den, RESAMPLES, CONFIDENCE)
}

#[cfg(test)]
pub(crate) fn bootstrap_ratio_ci_with(
    num: &[f64],
    den: &[f64],
    resamples: usize,
    confidence: f64,
) -> Option<Ratio> {
    let den_median = median(den)?;
    if den_median == 0.0 {
        return None;
    }
    let value = median(num)? / den_median;
    if (num.len() == 1 && den.len() == 1) || resamples == 0 {
        return Some(Ratio {
            value,
            ci_low: value,
            ci_high: value,
        });
    }
    let mut rng = SplitMix64::new(SEED);
    let (mut sn, mut sd) = (Vec::new(), Vec::new());
    let stats: Vec<f64> = (0..resamples)
        .filter_map(|_| {
            let n = resampled_median(num, &mut rng, &mut sn)?;
            let d = resampled_median(den, &mut rng, &mut sd)?;
            // A resample whose denominator is zero says nothing about the ratio.
            (d != 0.0).then(|| n / d)
        })
        .collect();
    let (ci_low, ci_high) = interval(stats, confidence)?;
    Some(Ratio {
        value,
        ci_low,
        ci_high,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn ci_of_constant_sample_is_degenerate() {
        let e = bootstrap_median_ci(&[7.0; 10], RESAMPLES, CONFIDENCE);
        assert_eq!(
            e,
            Some(Estimate {
                median: 7.0,
                ci_low: 7.0,
                ci_high: 7.0
            })
        );
    }

    #[test]
    fn ci_of_one_sample_is_the_point() {
        let e = bootstrap_median_ci(&[3.5], RESAMPLES, CONFIDENCE);
        assert_eq!(
            e.map(|e| (e.median, e.ci_low, e.ci_high)),
            Some((3.5, 3.5, 3.5))
        );
        let r = bootstrap_ratio_ci(&[3.0], &[2.0]);
        assert_eq!(
            r.map(|r| (r.value, r.ci_low, r.ci_high)),
            Some((1.5, 1.5, 1.5))
        );
    }

    #[test]
    fn ci_of_one_to_hundred_brackets_the_median() -> anyhow::Result<()> {
        let data: Vec<f64> = (1..=100).map(f64::from).collect();
        let e = bootstrap_median_ci(&data, RESAMPLES, CONFIDENCE)
            .ok_or_else(|| anyhow::anyhow!("no estimate"))?;
        assert_eq!(e.median, 50.5);
        assert!(e.ci_low <= 50.5 && 50.5 <= e.ci_high, "{e:?}");
        assert!(e.ci_low >= 40.0 && e.ci_high <= 61.0, "{e:?}");
        assert!(e.ci_low < e.ci_high);
        Ok(())
    }

    #[test]
    fn bootstrap_is_reproducible() {
        let data = [5.0, 1.0, 9.0, 3.0, 7.0, 2.0];
        assert_eq!(
            bootstrap_median_ci(&data, 2000, 0.9),
            bootstrap_median_ci(&data, 2000, 0.9)
        );
    }

    #[test]
    fn ratio_of_identical_groups_is_one() -> anyhow::Result<()> {
        let a = [10.0, 11.0, 12.0, 9.0, 10.5];
        let r = bootstrap_ratio_ci(&a, &a).ok_or_else(|| anyhow::anyhow!("no ratio"))?;
        assert_eq!(r.value, 1.0);
        assert!(r.ci_low <= 1.0 && 1.0 <= r.ci_high, "{r:?}");
        assert!(!r.excludes_one());
        Ok(())
    }

    #[test]
    fn ratio_of_doubled_group_is_two() -> anyhow::Result<()> {
        let a = [10.0, 11.0, 12.0, 9.0, 10.5];
        let b: Vec<f64> = a.iter().map(|x| x * 2.0).collect();
        let r = bootstrap_ratio_ci(&b, &a).ok_or_else(|| anyhow::anyhow!("no ratio"))?;
        assert_eq!(r.value, 2.0);
        assert!(r.ci_low <= 2.0 && 2.0 <= r.ci_high, "{r:?}");
        assert!(r.excludes_one(), "{r:?}");
        Ok(())
    }

    #[test]
    fn ratio_with_zero_or_missing_denominator_is_none() {
        assert_eq!(bootstrap_ratio_ci(&[1.0, 2.0], &[0.0, 0.0, 0.0]), None);
        assert_eq!(bootstrap_ratio_ci(&[1.0], &[]), None);
        assert_eq!(bootstrap_ratio_ci(&[], &[1.0]), None);
    }

    #[test]
    fn rng_below_stays_in_range() {
        let mut rng = SplitMix64::new(1);
        assert!((0..10_000).all(|_| rng.below(7) < 7));
    }
}
