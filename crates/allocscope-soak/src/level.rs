//! The plateau: the level of the recent window, as the median of its block
//! medians, with an order-statistic interval widened for the correlation
//! left between blocks (the exact binomial ranks of
//! `analyze::interval::median_estimate` assume independent values, and
//! covered 86-88% of true plateaus under 10-minute AR(1) noise).

use crate::blocks::Blocks;
use allocscope_analyze::figures::Estimate;
use allocscope_analyze::stats::median;

/// The median of the blocks' values with its 95% interval
/// `[x_(k), x_(m+1-k)]`: the count of blocks below the median is about
/// normal with standard deviation √m/2, scaled by `Blocks::quantile_scale`.
/// With too few blocks for that (a window of a few samples) k is 1: the
/// widest the data allow, which may fall short of 95%. `None` without
/// blocks.
pub fn plateau(blocks: &Blocks) -> Option<Estimate> {
    let mut values: Vec<f64> = blocks.points.iter().map(|p| p.1).collect();
    let centre = median(&values)?;
    values.sort_by(f64::total_cmp);
    let m = values.len() as f64;
    let k = ((m - blocks.quantile_scale(1) * m.sqrt()) / 2.0)
        .floor()
        .max(1.0) as usize;
    Some(Estimate {
        median: centre,
        ci_low: values[k - 1],
        ci_high: values[values.len() - k],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(effective_count: f64) -> Blocks {
        Blocks {
            points: (0..100)
                .map(|i| (i as f64, ((i * 37) % 100) as f64))
                .collect(),
            effective_count,
            inflation: 100.0 / effective_count,
        }
    }

    #[test]
    fn the_interval_takes_the_ranks_either_side_of_the_median() {
        // m = 100, t(98) · 10 = 19.8: k = floor(40.1) = 40, values 39 and 60.
        let level = plateau(&blocks(100.0)).expect("plateau");
        assert_eq!(
            level,
            Estimate {
                median: 49.5,
                ci_low: 39.0,
                ci_high: 60.0
            }
        );
    }

    #[test]
    fn correlation_between_blocks_widens_it() {
        let plain = plateau(&blocks(100.0)).expect("plateau");
        let wide = plateau(&blocks(33.0)).expect("plateau");
        assert!(wide.ci_low < plain.ci_low && wide.ci_high > plain.ci_high);
    }
}
