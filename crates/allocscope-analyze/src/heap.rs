//! The heap probe's figures per configuration: medians over the `ok` runs of
//! the live heap, the overhead ratio (RSS / live heap), the most arenas and
//! the probe's CPU time, and which mode measured them.

use super::stats::median;
use super::verdict_reasons::Note;
use allocscope_core::judging::RuledOut;
use allocscope_core::model::{RunMetrics, StoredConfig, StoredExperiment};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeapSummary {
    /// The mode of the runs (`stats`, `count`, `none`, `not_loaded`); `mixed`
    /// when they differ; `None` when no run loaded the probe.
    pub probe_mode: Option<String>,
    /// `ok` runs with a live-heap figure.
    pub runs: usize,
    pub peak_live_heap_bytes: Option<f64>,
    pub mean_live_heap_bytes: Option<f64>,
    pub mean_overhead_ratio: Option<f64>,
    pub arenas_max: Option<f64>,
    /// `name pid` of the process that had the most arenas in any ok run
    /// (arenas are per process, never summed over the tree).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arenas_process: Option<String>,
    pub probe_cpu_s: Option<f64>,
}

/// One summary per configuration, in order; empty when no run of the
/// experiment used the probe to measure.
pub fn summarize(experiment: &StoredExperiment) -> Vec<HeapSummary> {
    let measured = experiment
        .configs
        .iter()
        .flat_map(|c| &c.runs)
        .any(|r| r.record.probe_mode.is_some());
    if !measured {
        return Vec::new();
    }
    experiment.configs.iter().map(summary_of).collect()
}

fn summary_of(config: &StoredConfig) -> HeapSummary {
    let mut modes: Vec<&str> = config
        .runs
        .iter()
        .filter_map(|r| r.record.probe_mode.as_deref())
        .collect();
    modes.dedup();
    let probe_mode = match modes.as_slice() {
        [] => None,
        [one] => Some((*one).to_string()),
        _ => Some("mixed".to_string()),
    };
    let ok: Vec<_> = super::metrics::ok_runs(config)
        .map(|r| (r, super::metrics::of(r)))
        .filter(|(_, m)| m.mean_live_heap_bytes.is_some())
        .collect();
    let med = |f: &dyn Fn(&(&allocscope_core::model::StoredRun, RunMetrics)) -> Option<f64>| {
        median(&ok.iter().filter_map(f).collect::<Vec<_>>())
    };
    HeapSummary {
        probe_mode,
        runs: ok.len(),
        peak_live_heap_bytes: med(&|(_, m)| m.peak_live_heap_bytes.map(|b| b as f64)),
        mean_live_heap_bytes: med(&|(_, m)| m.mean_live_heap_bytes.map(|b| b as f64)),
        mean_overhead_ratio: med(&|(_, m)| m.mean_overhead_ratio),
        arenas_max: med(&|(_, m)| m.arenas_max.map(f64::from)),
        arenas_process: ok
            .iter()
            .flat_map(|(r, _)| &r.record.samples)
            .filter(|s| s.arenas.is_some())
            .max_by_key(|s| (s.arenas, s.live_heap_bytes))
            .and_then(|s| Some(format!("{} {}", s.arenas_process?.as_str(), s.arenas_pid?))),
        probe_cpu_s: med(&|(r, _)| r.record.probe_cpu_s),
    }
}
/// What the heap probe adds to the verdict: per configuration, the live
/// heap and how much RSS the allocator held on top of it (and its arenas);
/// none for those a race ruled out (`left_out`: their one or two runs are
/// in the race's table).
pub fn explain(
    experiment: &StoredExperiment,
    heap: &[HeapSummary],
    left_out: &RuledOut,
) -> Vec<Note> {
    experiment
        .configs
        .iter()
        .zip(heap)
        .filter(|(c, _)| left_out.when(&c.config.name).is_none())
        .filter_map(|(c, h)| {
            Some(Note::HeapProbe {
                config: c.config.name.clone(),
                mean_live_heap_bytes: h.mean_live_heap_bytes?,
                peak_live_heap_bytes: h.peak_live_heap_bytes,
                overhead_ratio: h.mean_overhead_ratio?,
                arenas_max: h.arenas_max,
                arenas_process: h.arenas_process.clone(),
            })
        })
        .collect()
}
