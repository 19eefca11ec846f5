//! Analysis: per-run metrics (`metrics`), statistics across repetitions
//! (`stats`), markers (`markers`), and `analyze`, which summarises each
//! configuration of a stored experiment against the baseline. Only runs with
//! status `ok` are summarised.

pub mod cause;
pub mod cause_figures;
pub mod choice;
pub mod decide;
mod deploy;
pub mod disturbed;
pub mod figures;
pub mod heap;
pub mod interval;
pub mod judge;
pub mod limit;
pub mod linked;
pub mod markers;
pub mod metric_table;
pub mod metrics;
mod outside;
pub mod own_api_words;
pub mod recordings;
pub mod robust;
pub mod served;
pub mod service;
pub mod stats;
pub mod steady;
pub mod summary;
pub mod throughput;
pub mod types;
pub mod verdict;
mod verdict_reasons;

use allocscope_core::judging::JudgeSettings;
use allocscope_core::model::StoredExperiment;
use anyhow::{bail, Result};
use types::Analysis;

/// Summarises every configuration, with ratios to the configuration named
/// `baseline`, and the verdict with the default judging settings.
pub fn analyze(experiment: StoredExperiment, baseline: &str) -> Result<Analysis> {
    analyze_with(experiment, baseline, &JudgeSettings::default())
}

/// The index of the configuration named `baseline`, or the error naming
/// the configurations there are.
fn baseline_index(experiment: &StoredExperiment, baseline: &str) -> Result<usize> {
    let names: Vec<&str> = experiment
        .configs
        .iter()
        .map(|c| c.config.name.as_str())
        .collect();
    match names.iter().position(|&name| name == baseline) {
        Some(index) => Ok(index),
        None => bail!(
            "no configuration named '{baseline}' in experiment {}; choose --baseline from: {}",
            experiment.id,
            names.join(", ")
        ),
    }
}

/// `analyze` judged by `judging` (`--max-slowdown`, `--min-saving`,
/// `--memory-metric`, `--perf-metric`).
pub fn analyze_with(
    experiment: StoredExperiment,
    baseline: &str,
    judging: &JudgeSettings,
) -> Result<Analysis> {
    let base_index = baseline_index(&experiment, baseline)?;
    let mut table = metric_table::of_experiment(&experiment.info);
    // The rows the verdict judges by have ratios, whichever they are (a
    // tree's peak PSS, which short runs fall back to, has none otherwise).
    let judged = choice::measures(&experiment, base_index, &table, judging);
    for row in table.iter_mut() {
        row.ratio |= row.id == judged.memory.id || row.id == judged.perf.id;
    }
    let summaries = summary::summarize(&experiment, base_index, &table);
    let service = service::summarize(&experiment);
    let end_of_load = metric_table::tree_word("end-of-load")
        .and_then(|word| choice::tree_row(&experiment, base_index, &table, word))
        .map_or(service::RSS_END_OF_LOAD, |row| row.id.as_str())
        .to_string();
    let mut verdict = verdict::decide(&experiment, base_index, judging, &table);
    let heap = heap::summarize(&experiment);
    let limits = limit::summarize(&experiment, base_index, &table, judging.limit_headroom_pct);
    verdict
        .explanation
        .extend(heap::explain(&experiment, &heap, &judging.ruled_out));
    verdict
        .explanation
        .extend(outside::explain(&experiment, base_index));
    Ok(Analysis {
        verdict,
        heap,
        markers: markers::summarize(&experiment),
        warnings: markers::unmatched_warnings(&experiment)
            .into_iter()
            .chain(linked::warnings(&experiment))
            .chain(service::warnings(&experiment, &service))
            .chain(disturbed::Disturbance::of(&experiment).and_then(|d| d.sentence()))
            .chain(choice::short_runs_warning(
                &experiment,
                base_index,
                &table,
                judging,
            ))
            .collect(),
        service,
        limits,
        end_of_load,
        experiment,
        baseline: base_index,
        metrics: table,
        summaries,
        tune: None,
    })
}

#[cfg(test)]
mod coverage_tests;
