//! A paired ratio that one disturbed pair cannot move far: the
//! Hodges-Lehmann estimate of the paired log differences (the median of
//! their Walsh averages, (d_i + d_j)/2 for i <= j) with its
//! distribution-free interval from the Wilcoxon signed-rank distribution
//! (Hollander and Wolfe): [w_(c), w_(M+1-c)] of the M = n(n+1)/2 sorted
//! Walsh averages, c the largest rank with P(W+ < c) <= alpha/2, exact
//! from the signed-rank distribution (counted by dynamic programming).
//!
//! One pair however far off makes n of the M Walsh averages (itself with
//! every other pair); the interval's bound is the c-th from the end, so
//! that pair cannot reach a bound once c > n: from 12 pairs at 95%, 16 at
//! `--max-runs 20`'s per-look level (99.25%). Below that the bound would be an
//! average of the far pair and another, wider than the Student t interval
//! of the mean, whose spread grows only as that pair over √n: there the
//! ratio stays the mean's (`robust_depth`). docs/statistics.md has the
//! coverage and the widths (`coverage_tests.rs`).

/// The rank (from 1) of the lower bound of the two-sided `1 - alpha`
/// signed-rank interval of `n` pairs: the largest c with
/// P(W+ <= c - 1) <= alpha / 2; `None` when even c = 1 misses the level
/// (P(W+ = 0) = 2^-n, so fewer than 6 pairs at 95%).
pub fn signed_rank_depth(n: usize, alpha: f64) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let total = n * (n + 1) / 2;
    // P(W+ = w) for W+ the sum of the ranks 1..=n each taken with
    // probability 1/2: the subset sums of 1..=n, counted in f64 as
    // probabilities (exact enough at every n allocscope runs).
    let mut p = vec![0.0f64; total + 1];
    p[0] = 1.0;
    for rank in 1..=n {
        let top = rank * (rank + 1) / 2;
        for w in (0..=top).rev() {
            let with = if w >= rank { p[w - rank] } else { 0.0 };
            p[w] = 0.5 * (p[w] + with);
        }
    }
    let mut cdf = 0.0;
    let mut depth = None;
    for (w, pw) in p.iter().enumerate().take(total / 2 + 1) {
        cdf += pw;
        // The interval [w_(w+1), w_(M-w)] misses with 2 * P(W+ <= w).
        if cdf <= alpha / 2.0 + 1e-12 {
            depth = Some(w + 1);
        } else {
            break;
        }
    }
    depth
}

/// True when the `1 - alpha` signed-rank interval of `n` pairs exists and
/// no single pair can reach its bounds (its depth exceeds `n`).
pub fn robust_depth(n: usize, alpha: f64) -> Option<usize> {
    signed_rank_depth(n, alpha).filter(|&c| c > n)
}

/// The Walsh averages of `diffs`, sorted.
pub fn walsh_averages(diffs: &[f64]) -> Vec<f64> {
    let mut w = Vec::with_capacity(diffs.len() * (diffs.len() + 1) / 2);
    for (i, a) in diffs.iter().enumerate() {
        for b in &diffs[i..] {
            w.push(0.5 * (a + b));
        }
    }
    w.sort_by(f64::total_cmp);
    w
}

/// The Hodges-Lehmann estimate: the median of the sorted Walsh averages.
pub fn hodges_lehmann(sorted_walsh: &[f64]) -> Option<f64> {
    let m = sorted_walsh.len();
    match m {
        0 => None,
        _ if m % 2 == 1 => Some(sorted_walsh[m / 2]),
        _ => Some(0.5 * (sorted_walsh[m / 2 - 1] + sorted_walsh[m / 2])),
    }
}

/// The log-scale `1 - alpha` interval from the sorted Walsh averages of
/// `n` pairs, when one pair cannot reach it (`robust_depth`).
pub fn walsh_interval(sorted_walsh: &[f64], n: usize, alpha: f64) -> Option<(f64, f64)> {
    let c = robust_depth(n, alpha)?;
    let m = sorted_walsh.len();
    (m == n * (n + 1) / 2 && c <= m).then(|| (sorted_walsh[c - 1], sorted_walsh[m - c]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signed_rank_depth_matches_the_published_critical_values() {
        // Two-sided 5% critical values of the Wilcoxon signed-rank test
        // (reject when W <= T): n=6 T=0, n=8 T=3, n=10 T=8, n=12 T=13,
        // n=15 T=25, n=20 T=52; the depth is T + 1.
        for (n, t) in [(6, 0), (8, 3), (10, 8), (12, 13), (15, 25), (20, 52)] {
            assert_eq!(signed_rank_depth(n, 0.05), Some(t + 1), "n={n}");
        }
        assert_eq!(signed_rank_depth(5, 0.05), None, "2/32 > 5%");
        // At 1% two-sided: n=10 T=3, n=20 T=37.
        assert_eq!(signed_rank_depth(10, 0.01), Some(4));
        assert_eq!(signed_rank_depth(20, 0.01), Some(38));
    }

    #[test]
    fn one_pair_cannot_reach_the_bounds_from_twelve_pairs_at_95_percent() {
        assert_eq!(robust_depth(11, 0.05), None);
        assert_eq!(robust_depth(12, 0.05), Some(14));
        assert_eq!(robust_depth(15, 0.0075), None);
        assert_eq!(robust_depth(16, 0.0075), Some(18));
    }

    #[test]
    fn a_far_pair_moves_the_estimate_and_the_interval_little() {
        let mut diffs: Vec<f64> = (0..12).map(|i| 0.01 * (i as f64 - 5.5)).collect();
        let walsh = walsh_averages(&diffs);
        let (lo, hi) = walsh_interval(&walsh, 12, 0.05).expect("12 pairs");
        let centre = hodges_lehmann(&walsh).expect("centre");
        assert!(centre.abs() < 1e-12);
        // One pair 60% slower (a neighbour beside one run).
        diffs[3] = 0.6f64.ln_1p();
        let walsh = walsh_averages(&diffs);
        let (lo2, hi2) = walsh_interval(&walsh, 12, 0.05).expect("12 pairs");
        let moved = hodges_lehmann(&walsh).expect("centre");
        assert!(moved < 0.01, "centre moved to {moved}");
        // The bound moves by the spacing of the other pairs, not by the
        // far pair's share.
        assert!(
            hi2 - hi < 0.03 && lo2 >= lo,
            "[{lo}, {hi}] -> [{lo2}, {hi2}]"
        );
        // The mean's t interval: its centre moves by a twelfth of ln 1.6,
        // its upper bound by 0.1 (to 1.13x).
        let t = crate::interval::log_ratio(
            &diffs
                .iter()
                .enumerate()
                .map(|(i, d)| (i as u32, d.exp()))
                .collect::<Vec<_>>(),
            &(0..12).map(|i| (i as u32, 1.0)).collect::<Vec<_>>(),
        )
        .expect("pairs")
        .ratio();
        assert!(t.ci_high.ln() - hi > 0.09, "{t:?}");
    }
}
