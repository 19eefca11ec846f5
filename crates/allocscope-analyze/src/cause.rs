//! Why the verdict came out as it did: per configuration, where the median
//! run's memory went (its breakdown at the time-weighted mean and at the
//! peak, its arenas, its reclaim test), and what the focus candidate (the
//! recommendation, else the one that saved most) removed against the
//! baseline, with the cause and its remedy. The figures are in
//! `cause_figures.rs`; `report/cause_words.rs` puts them in words.

use super::cause_figures::{difference, difference_at_reclaim, COVERED};
pub use super::cause_figures::{Basis, CauseKind, Difference, Part, PartChange, WhereWent, PARTS};
use super::metrics;
use allocscope_core::judging::RuledOut;
use allocscope_core::model::{RunMetrics, StoredConfig, StoredExperiment, StoredRun};
use serde::Serialize;

/// Where the memory went, for the verdict and the reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cause {
    /// One per configuration whose ok runs had a breakdown, in the
    /// experiment's order.
    pub configs: Vec<WhereWent>,
    /// What the focus candidate removed against the baseline.
    pub difference: Option<Difference>,
    /// The configurations that get a line, as indices into `configs`: the
    /// baseline first, then the others a race did not drop.
    #[serde(skip)]
    pub shown: Vec<usize>,
    /// The baseline and the focus candidate, as indices into `configs`,
    /// when both had a breakdown.
    #[serde(skip)]
    pub pair: Option<(usize, usize)>,
}

impl Cause {
    /// The figures of the configuration named `config`.
    pub fn of(&self, config: &str) -> Option<&WhereWent> {
        self.configs.iter().find(|w| w.config == config)
    }
}

/// The cause, or `None` when no configuration's runs had a breakdown.
/// `focus` indexes `experiment.configs`: the candidate whose difference
/// from the baseline is explained. The configurations in `left_out` (a
/// race's dropped candidates) get no line.
pub fn explain(
    experiment: &StoredExperiment,
    baseline: usize,
    focus: Option<usize>,
    left_out: &RuledOut,
) -> Option<Cause> {
    let all: Vec<Option<WhereWent>> = experiment.configs.iter().map(where_went).collect();
    if all.iter().all(Option::is_none) {
        return None;
    }
    // A configuration's index among those with a breakdown, if it had one.
    let at = |i: usize| {
        all.get(i)?.as_ref()?;
        Some(all[..i].iter().flatten().count())
    };
    let pair = at(baseline).zip(focus.filter(|&f| f != baseline).and_then(at));
    let shown = at(baseline)
        .into_iter()
        .chain(
            (0..all.len())
                .filter(|&i| i != baseline)
                // A race's dropped candidates have a line in its own table.
                .filter(|&i| left_out.when(&experiment.configs[i].config.name).is_none())
                .filter_map(at),
        )
        .collect();
    let configs: Vec<WhereWent> = all.into_iter().flatten().collect();
    // Means over different stretches of two runs explain nothing: then
    // the readings both probes made fresh at the reclaim test do.
    let covered = |w: &WhereWent| w.coverage >= COVERED;
    let difference = pair.and_then(|(b, c)| {
        let (b, c) = (&configs[b], &configs[c]);
        if covered(b) && covered(c) {
            difference(b, c)
        } else {
            difference_at_reclaim(b, c)
        }
    });
    Some(Cause {
        configs,
        difference,
        shown,
        pair,
    })
}

/// The configuration's median run by mean RSS among its ok runs with a
/// breakdown, and that run's figures.
pub fn where_went(config: &StoredConfig) -> Option<WhereWent> {
    let (run, m) = median_run(config)?;
    let mean = m.breakdown_mean?;
    let reclaim = run.record.reclaim.clone();
    // The probe's own reading just before the test, never a sampled
    // figure: the last tick before it may be long before (the probe's
    // readings stale under contention) and the program frees much on its
    // way out. Within the RSS the processes held then, even for a run
    // stored before each process's figure was capped.
    let free_before_reclaim_bytes = reclaim.as_ref().and_then(|r| r.held_before().1);
    Some(WhereWent {
        config: config.config.name.clone(),
        run: run.record.index,
        mean,
        peak: m.breakdown_peak,
        arenas: m.arenas_max,
        heapless_processes: m.heapless_processes_max.unwrap_or(0),
        variant: config.config.command.is_some(),
        coverage: m.breakdown_coverage.unwrap_or(1.0),
        reclaim,
        free_before_reclaim_bytes,
    })
}

/// The lower median of the ok runs that had a breakdown, ordered by the
/// breakdown's mean total (their mean RSS), then by index.
pub fn median_run(config: &StoredConfig) -> Option<(&StoredRun, RunMetrics)> {
    let mut runs: Vec<(&StoredRun, RunMetrics)> = super::metrics::ok_runs(config)
        .map(|r| (r, metrics::of(r)))
        .filter(|(_, m)| m.breakdown_mean.is_some())
        .collect();
    runs.sort_by_key(|(r, m)| (m.breakdown_mean.map(|b| b.total_bytes()), r.record.index));
    let middle = runs.len().checked_sub(1)? / 2;
    runs.into_iter().nth(middle)
}
