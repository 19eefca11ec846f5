//! Where a segment's warm-up ends: MSER-5 (White 1997; White, Cobb and
//! Spratt 2000), the truncation rule Hoad, Robinson and Davies (2010) found
//! the most robust of the automatable warm-up rules they compared. The
//! series is cut into batches of 5 samples and the truncation `d` (in
//! batches) that minimises the kept batch means' squared deviation over
//! `(k - d)²` is taken, searched over the first half: a warm-up, or a step
//! early in the segment, adds deviation that truncating removes, faster
//! than the shorter rest costs. A minimum at the half's edge means the
//! series has not reached a steady state (it still grows, or a warm-up
//! still runs): the growth is then read from the last half, and has been
//! seen over the whole segment.

/// MSER-5's batch size.
pub const BATCH: usize = 5;

/// Fewer batches than this are too few to truncate.
const MIN_BATCHES: usize = 4;

/// Where the steady state begins in a segment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarmUp {
    /// The time the growth window starts: after the warm-up, or the last
    /// half's start without a steady state.
    pub from_s: f64,
    /// MSER-5's minimum fell inside the first half: the series reached a
    /// steady state (a level, or a steady slope whose deviations the
    /// truncation cannot reduce further).
    pub steady: bool,
}

/// The warm-up of a segment (`(t_s, value)` in time order).
pub fn warm_up(segment: &[(f64, f64)]) -> WarmUp {
    let half_from = |s: &[(f64, f64)]| match (s.first(), s.last()) {
        (Some(a), Some(b)) => a.0 + (b.0 - a.0) / 2.0,
        _ => 0.0,
    };
    let means: Vec<f64> = segment
        .chunks_exact(BATCH)
        .map(|c| c.iter().map(|p| p.1).sum::<f64>() / BATCH as f64)
        .collect();
    let k = means.len();
    if k < MIN_BATCHES {
        return WarmUp {
            from_s: half_from(segment),
            steady: false,
        };
    }
    let d = mser_truncation(&means, k / 2);
    if d >= k / 2 {
        return WarmUp {
            from_s: half_from(segment),
            steady: false,
        };
    }
    WarmUp {
        from_s: segment[d * BATCH].0,
        steady: true,
    }
}

/// The truncation in `0..=last` minimising Σ_{j≥d} (Zⱼ - Z̄_d)² / (k - d)²,
/// from suffix sums; the earliest of equal minima.
fn mser_truncation(means: &[f64], last: usize) -> usize {
    let k = means.len();
    // Centred on the overall mean: the suffix sums of squares stay accurate
    // for values of 1e9 bytes.
    let centre = means.iter().sum::<f64>() / k as f64;
    let (mut sum, mut squares) = (0.0, 0.0);
    let mut stats = vec![0.0; k];
    for j in (0..k).rev() {
        let z = means[j] - centre;
        sum += z;
        squares += z * z;
        let m = (k - j) as f64;
        stats[j] = (squares - sum * sum / m).max(0.0) / (m * m);
    }
    (0..=last.min(k - 1)).fold(0, |best, d| if stats[d] < stats[best] { d } else { best })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(f: impl Fn(f64) -> f64, n: usize) -> Vec<(f64, f64)> {
        (0..n).map(|i| (i as f64, f(i as f64))).collect()
    }

    #[test]
    fn a_ramp_then_flat_is_cut_where_it_flattens() {
        let s = series(|t| t.min(100.0) + (t * 7.3).sin(), 1000);
        let w = warm_up(&s);
        assert!(w.steady);
        assert!((95.0..=110.0).contains(&w.from_s), "{w:?}");
    }

    #[test]
    fn a_line_has_no_steady_state_and_keeps_its_last_half() {
        let w = warm_up(&series(|t| 3.0 * t, 1000));
        assert_eq!(
            w,
            WarmUp {
                from_s: 499.5,
                steady: false
            }
        );
    }

    #[test]
    fn a_flat_series_keeps_its_start() {
        let w = warm_up(&series(|t| 5.0 + (t * 1.7).sin(), 1000));
        assert!(w.steady && w.from_s < 100.0, "{w:?}");
    }

    #[test]
    fn a_step_early_on_is_truncated() {
        let w = warm_up(&series(|t| if t < 300.0 { 0.0 } else { 50.0 }, 1000));
        assert!(w.steady);
        assert_eq!(w.from_s, 300.0);
    }
}
