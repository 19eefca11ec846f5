//! Whether a series repeats (a collector's sawtooth, a daily load), and its
//! period: the autocorrelation of its residuals about a straight line,
//! at the highest peak after the first crossing of zero. A periodic
//! series is judged by its level over whole periods (`blocks::whole_periods`):
//! a window that starts or ends mid-period otherwise reads part of a tooth
//! as growth, and a line through a sawtooth is not what it will do next.

/// The series is reduced to at most this many consecutive means before the
/// autocorrelation (O(n²/3) products): periods shorter than 2 of those
/// means are averaged out, as the thinning's blocks would average them.
const MAX_POINTS: usize = 2048;

/// An autocorrelation peak at least this high is a period: noise of a
/// long correlation time wanders but does not return this close.
pub const PERIODIC_CORRELATION: f64 = 0.5;

/// At least this many whole periods in the series.
pub const MIN_PERIODS: f64 = 4.0;

/// The period of `series` (`(t_s, value)` in time order) in seconds, `None`
/// when it does not repeat or spans under `MIN_PERIODS` periods.
pub fn period_s(series: &[(f64, f64)]) -> Option<f64> {
    let points = decimate(series);
    let n = points.len();
    if n < 16 {
        return None;
    }
    let dt = (points[n - 1].0 - points[0].0) / (n - 1) as f64;
    let residuals = about_line(&points);
    let variance: f64 = residuals.iter().map(|r| r * r).sum();
    if variance <= 0.0 || dt <= 0.0 {
        return None;
    }
    let acf = |lag: usize| -> f64 {
        residuals[..n - lag]
            .iter()
            .zip(&residuals[lag..])
            .map(|(a, b)| a * b)
            .sum::<f64>()
            / variance
    };
    let max_lag = (n as f64 / MIN_PERIODS) as usize;
    let crossed = (1..=max_lag).find(|&lag| acf(lag) < 0.0)?;
    let (lag, peak) =
        (crossed..=max_lag)
            .map(|lag| (lag, acf(lag)))
            .fold(
                (0, f64::NEG_INFINITY),
                |best, x| if x.1 > best.1 { x } else { best },
            );
    // The autocorrelation of a finite series falls as (n - lag)/n; the peak
    // is judged against what a perfectly periodic series would reach there.
    let reach = (n - lag) as f64 / n as f64;
    (peak >= PERIODIC_CORRELATION * reach).then_some(lag as f64 * dt)
}

/// `series` as at most `MAX_POINTS` means of consecutive samples.
fn decimate(series: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let n = series.len();
    let count = n.min(MAX_POINTS);
    (0..count)
        .map(|b| &series[b * n / count..(b + 1) * n / count])
        .filter(|c| !c.is_empty())
        .map(|c| {
            let len = c.len() as f64;
            (
                c.iter().map(|p| p.0).sum::<f64>() / len,
                c.iter().map(|p| p.1).sum::<f64>() / len,
            )
        })
        .collect()
}

/// The residuals about the least-squares line.
fn about_line(points: &[(f64, f64)]) -> Vec<f64> {
    let n = points.len() as f64;
    let (mt, mv) = (
        points.iter().map(|p| p.0).sum::<f64>() / n,
        points.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = points.iter().map(|p| (p.0 - mt).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mt) * (p.1 - mv)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    points
        .iter()
        .map(|p| p.1 - mv - slope * (p.0 - mt))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(f: impl Fn(f64) -> f64, n: usize) -> Vec<(f64, f64)> {
        (0..n).map(|i| (i as f64, f(i as f64))).collect()
    }

    #[test]
    fn a_sawtooth_has_its_period() {
        let saw = series(|t| (t % 10.0) * 12.0, 600);
        assert_eq!(period_s(&saw), Some(10.0));
        let on_a_leak = series(|t| (t % 40.0) * 12.0 + 2.0 * t, 2000);
        assert_eq!(period_s(&on_a_leak), Some(40.0));
    }

    #[test]
    fn a_line_a_level_and_a_ramp_do_not_repeat() {
        assert_eq!(period_s(&series(|t| 3.0 * t, 600)), None);
        assert_eq!(period_s(&series(|_| 3.0, 600)), None);
        assert_eq!(period_s(&series(|t| t.min(200.0), 600)), None);
    }

    #[test]
    fn under_four_periods_is_not_a_period() {
        assert_eq!(period_s(&series(|t| (t % 200.0) * 12.0, 600)), None);
    }
}
