//! `tune --perf-metric auto`: the race judges performance by a throughput or
//! latency figure the program prints (`ops/sec`, `req/s`, `99% 3.1ms`, ...), chosen once,
//! at the race's first look, from round 1's runs (one of the baseline and
//! one of each candidate): the most informative figure present in every ok run,
//! as `compare --perf-metric auto` chooses it once its runs are over. The
//! choice holds for the rest of the race, both phases: each look reads every
//! run's value of it from its output, and each phase's experiment stores it
//! as a `--metric` (a throughput higher-is-better), so `report` re-judges the race the same
//! way. Without such a figure in round 1, wall time judges, as without auto.

use allocscope_core::judging::JudgeSettings;
use allocscope_core::model::StoredExperiment;
use allocscope_core::store::Store;
use allocscope_core::user_metric::UserMetric;
use allocscope_rounds::throughput::{
    apply, choose, direction, flags, row, store_metric, NONE_FOUND,
};

/// What `--perf-metric auto` chose, kept between looks and phases.
pub struct AutoPerf {
    /// `--perf-metric auto` was given.
    wanted: bool,
    /// The first look has chosen (or found nothing).
    chosen: bool,
    metric: Option<UserMetric>,
}

impl AutoPerf {
    pub fn new(wanted: bool) -> AutoPerf {
        AutoPerf {
            wanted,
            chosen: false,
            metric: None,
        }
    }

    /// At each look: the first chooses the figure from the runs so far; then
    /// `experiment` gets each run's value of it and `judging` its row.
    pub fn look(
        &mut self,
        experiment: &mut StoredExperiment,
        judging: &mut JudgeSettings,
        round: u32,
    ) {
        if !self.wanted {
            return;
        }
        if !self.chosen {
            self.chosen = true;
            self.metric = choose(experiment);
            let rounds = match round {
                1 => "round 1".to_string(),
                n => format!("rounds 1-{n}"),
            };
            match &self.metric {
                Some(m) => eprintln!(
                    "allocscope: --perf-metric auto: the race judges performance by {} ({}), \
                     the most informative figure in every run of {rounds}: {}",
                    m.name,
                    direction(m),
                    flags(m)
                ),
                None => eprintln!("{NONE_FOUND}"),
            }
        }
        if let Some(m) = &self.metric {
            apply(experiment, m);
            judging.perf_metric = Some(row(m));
        }
    }

    /// After a phase: the figure stored with experiment `id` (its spec, each
    /// run's value, the judged row).
    pub fn store(&self, store: &mut Store, id: i64) -> anyhow::Result<()> {
        (self.metric.as_ref()).map_or(Ok(()), |m| store_metric(store, id, m))
    }

    /// `judging` with the chosen figure as its performance row, if any.
    pub fn judging(&self, judging: &JudgeSettings) -> JudgeSettings {
        JudgeSettings {
            perf_metric: self
                .metric
                .as_ref()
                .map(row)
                .or(judging.perf_metric.clone()),
            ..judging.clone()
        }
    }
}
