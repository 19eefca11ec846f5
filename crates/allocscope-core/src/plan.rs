//! The order of runs: warm-up rounds first, then measured rounds, each round
//! visiting every configuration once (A B C A B C ...) so that a machine that
//! drifts over time favours no configuration.

/// One run to do: which configuration, which repetition (from 1), and whether
/// it is a warm-up whose results are discarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedRun {
    pub config: usize,
    pub repetition: u32,
    pub warmup: bool,
}

pub fn interleaved(configs: usize, runs: u32, warmup: u32) -> Vec<PlannedRun> {
    let rounds = |count: u32, warmup: bool| {
        (1..=count).flat_map(move |repetition| {
            (0..configs).map(move |config| PlannedRun {
                config,
                repetition,
                warmup,
            })
        })
    };
    rounds(warmup, true).chain(rounds(runs, false)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaves_configurations_round_by_round() {
        let plan = interleaved(3, 2, 1);
        let order: Vec<(usize, u32, bool)> = plan
            .iter()
            .map(|p| (p.config, p.repetition, p.warmup))
            .collect();
        assert_eq!(
            order,
            vec![
                (0, 1, true),
                (1, 1, true),
                (2, 1, true),
                (0, 1, false),
                (1, 1, false),
                (2, 1, false),
                (0, 2, false),
                (1, 2, false),
                (2, 2, false),
            ]
        );
    }
}
