//! The Theil–Sen slope (the median of the pairwise slopes) with Sen's (1968)
//! distribution-free interval: the order statistics of the pairwise slopes
//! whose ranks come from the variance of Kendall's S, ties included. It
//! assumes independent errors; `growth.rs` thins a series until its points
//! are, and widens the variance by what correlation is left.

/// Two-sided 95% standard normal quantile.
pub const Z975: f64 = 1.959_964;

/// A straight line fitted to points, with the slope's 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SenFit {
    /// Units of value per unit of time.
    pub slope: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// The line's value at time 0: the median of `value - slope * t`.
    pub intercept: f64,
}

/// The Theil–Sen fit of `(t, value)` points with Sen's interval, whose
/// ranks lie `scale` standard deviations of Kendall's S either side of the
/// median slope: `Z975` for independent errors, more for correlated ones
/// (`growth.rs`). `None` with fewer than 3 distinct times.
pub fn theil_sen(points: &[(f64, f64)], scale: f64) -> Option<SenFit> {
    let mut slopes = pairwise_slopes(points);
    let n_slopes = slopes.len();
    if n_slopes < 3 {
        return None;
    }
    let slope = median_of(&mut slopes);
    let half_ranks = scale * kendall_s_variance(points).sqrt();
    // Ranks from 1: the lower bound is the (N - C)/2-th slope, the upper the
    // ((N + C)/2 + 1)-th (Gilbert 1987), rounded outwards.
    let low_rank = ((n_slopes as f64 - half_ranks) / 2.0).floor().max(1.0) as usize;
    let high_rank = (((n_slopes as f64 + half_ranks) / 2.0).ceil() as usize + 1).min(n_slopes);
    let ci_low = *slopes
        .select_nth_unstable_by(low_rank - 1, f64::total_cmp)
        .1;
    let ci_high = *slopes
        .select_nth_unstable_by(high_rank - 1, f64::total_cmp)
        .1;
    let mut offsets: Vec<f64> = points.iter().map(|&(t, v)| v - slope * t).collect();
    Some(SenFit {
        slope,
        ci_low,
        ci_high,
        intercept: median_of(&mut offsets),
    })
}

/// The slope of every pair of points at distinct times.
fn pairwise_slopes(points: &[(f64, f64)]) -> Vec<f64> {
    let mut slopes = Vec::with_capacity(points.len() * points.len().saturating_sub(1) / 2);
    for (i, &(ti, vi)) in points.iter().enumerate() {
        for &(tj, vj) in &points[i + 1..] {
            if tj != ti {
                slopes.push((vj - vi) / (tj - ti));
            }
        }
    }
    slopes
}

/// The median, reordering `values` (not empty).
fn median_of(values: &mut [f64]) -> f64 {
    let mid = values.len() / 2;
    let upper = *values.select_nth_unstable_by(mid, f64::total_cmp).1;
    if values.len() % 2 == 1 {
        return upper;
    }
    let lower = values[..mid]
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    (lower + upper) / 2.0
}

/// The variance of Kendall's S between time and value under independence,
/// with ties in either (Kendall 1970, eq. 4.3).
fn kendall_s_variance(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let times = tie_sums(points.iter().map(|p| p.0).collect());
    let values = tie_sums(points.iter().map(|p| p.1).collect());
    let mut variance = (n * (n - 1.0) * (2.0 * n + 5.0) - times.0 - values.0) / 18.0;
    if n > 2.0 {
        variance += times.1 * values.1 / (9.0 * n * (n - 1.0) * (n - 2.0));
    }
    variance + times.2 * values.2 / (2.0 * n * (n - 1.0))
}

/// Over the groups of equal values, of size u: the sums of u(u-1)(2u+5),
/// u(u-1)(u-2) and u(u-1).
fn tie_sums(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    let mut sums = (0.0, 0.0, 0.0);
    for group in values.chunk_by(|a, b| a == b) {
        let u = group.len() as f64;
        sums.0 += u * (u - 1.0) * (2.0 * u + 5.0);
        sums.1 += u * (u - 1.0) * (u - 2.0);
        sums.2 += u * (u - 1.0);
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_through_an_outlier_keeps_its_slope() {
        let mut points: Vec<(f64, f64)> =
            (0..20).map(|i| (i as f64, 3.0 * i as f64 + 1.0)).collect();
        points[7].1 = 1e6;
        let fit = theil_sen(&points, Z975).expect("fit");
        assert_eq!(fit.slope, 3.0);
        assert_eq!(fit.intercept, 1.0);
    }

    #[test]
    fn the_interval_matches_sens_ranks_on_a_small_example() {
        // 10 points, no ties: N = 45 slopes, Var(S) = 10·9·25/18 = 125,
        // C = 1.96·√125 = 21.9: ranks floor(11.54) = 11 and ceil(33.46) + 1 = 35.
        let values = [1.0, 3.0, 2.0, 5.0, 4.0, 7.0, 6.0, 9.0, 8.0, 10.0];
        let points: Vec<(f64, f64)> = values
            .iter()
            .enumerate()
            .map(|(i, &v)| (i as f64, v))
            .collect();
        let fit = theil_sen(&points, Z975).expect("fit");
        let mut slopes = pairwise_slopes(&points);
        slopes.sort_by(f64::total_cmp);
        assert_eq!(fit.ci_low, slopes[10]);
        assert_eq!(fit.ci_high, slopes[34]);
    }

    #[test]
    fn ties_in_values_shrink_kendalls_variance() {
        let distinct: Vec<(f64, f64)> = (0..8).map(|i| (i as f64, i as f64)).collect();
        let tied: Vec<(f64, f64)> = (0..8).map(|i| (i as f64, (i / 2) as f64)).collect();
        // Four pairs of ties: 4·2·1·9 = 72 off 8·7·21 = 1176, over 18.
        assert_eq!(kendall_s_variance(&distinct), 1176.0 / 18.0);
        assert_eq!(kendall_s_variance(&tied), (1176.0 - 72.0) / 18.0);
    }

    #[test]
    fn a_larger_scale_widens_the_interval() {
        let points: Vec<(f64, f64)> = (0..30)
            .map(|i| (i as f64, i as f64 + ((i * 17) % 7) as f64))
            .collect();
        let plain = theil_sen(&points, Z975).expect("fit");
        let wide = theil_sen(&points, 2.0 * Z975).expect("fit");
        assert!(wide.ci_low < plain.ci_low && wide.ci_high > plain.ci_high);
    }
}
