//! Thinning a long marker series for the eye: the table and the plot show
//! every k-th marker label and the last, at most a given number, and say
//! so; the JSON and CSV exports keep every marker.

/// The indices of `count` rows to show, at most `max` (at least 2): all of
/// them, or every k-th and the last; and k (1 when nothing was left out).
pub fn every_kth(count: usize, max: usize) -> (Vec<usize>, usize) {
    if count <= max {
        return ((0..count).collect(), 1);
    }
    let step = count.div_ceil(max.max(2) - 1);
    let mut rows: Vec<usize> = (0..count).step_by(step).collect();
    if rows.last() != Some(&(count - 1)) {
        rows.push(count - 1);
    }
    (rows, step)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_series_is_whole_and_a_long_one_keeps_first_last_and_the_cap() {
        assert_eq!(every_kth(3, 40), (vec![0, 1, 2], 1));
        for count in [41, 100, 1_000_000] {
            let (rows, step) = every_kth(count, 40);
            assert!(rows.len() <= 40, "{count}: {} rows", rows.len());
            assert_eq!((rows[0], rows[rows.len() - 1]), (0, count - 1));
            assert!(rows.windows(2).all(|w| w[1] - w[0] <= step), "{count}");
            assert!(step > 1);
        }
    }
}
