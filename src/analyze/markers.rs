//! The marker summary: for each marker label, in order of first appearance,
//! the median memory at that marker per configuration over its `ok` runs;
//! and a warning for each `--mark` pattern that never matched a line.

use super::figures::{MarkerRow, MarkerStat};
use super::stats::median;
use crate::model::{RunStatus, StoredExperiment};
use foldhash::HashMap;

/// A summarised label: the label and which time a run printed it (1 for
/// the first). A label a run printed more than once is summarised as
/// `label`, `label #2`, `label #3`, ..., so that "the second time" is
/// compared with the second time in every run.
type Key<'a> = (&'a str, u32);

fn shown((label, n): Key<'_>) -> String {
    if n == 1 {
        label.to_string()
    } else {
        format!("{label} #{n}")
    }
}

/// One marker's memory, filed under its row (key) and configuration.
struct Reading {
    row: usize,
    config: usize,
    rss: f64,
    pss: Option<f64>,
}

/// A label's rows: that of its first occurrence in a run, then of its
/// second, ...; and how often the run being read (`run`) printed it so far.
#[derive(Default)]
struct Slot {
    first: Option<usize>,
    more: Vec<usize>,
    run: usize,
    count: u32,
}

/// The rows of the summary, in order of first appearance, and where each
/// label's are: one hash lookup per marker.
#[derive(Default)]
struct Rows<'a> {
    keys: Vec<Key<'a>>,
    slots: HashMap<&'a str, Slot>,
}

impl<'a> Rows<'a> {
    /// The row of `label` printed once more in run number `run`.
    fn row(&mut self, label: &'a str, run: usize) -> usize {
        let slot = self.slots.entry(label).or_default();
        if slot.run != run {
            slot.run = run;
            slot.count = 0;
        }
        slot.count += 1;
        let keys = &mut self.keys;
        let mut new_row = || {
            keys.push((label, slot.count));
            keys.len() - 1
        };
        match slot.count {
            1 => *slot.first.get_or_insert_with(new_row),
            n => match slot.more.get(n as usize - 2) {
                Some(&row) => row,
                None => {
                    let row = new_row();
                    slot.more.push(row);
                    row
                }
            },
        }
    }
}

/// The median of a cell's values, without a copy for the usual single one.
fn cell_median(values: &[f64]) -> Option<f64> {
    match values {
        [one] => Some(*one),
        _ => median(values),
    }
}

/// One row per label seen in an `ok` run, one cell per configuration. A
/// run may print a million markers: labels are hashed (with a fast hash),
/// never searched, and the readings gathered in one list sorted by row and
/// configuration, so the cost grows as n log n.
pub fn summarize(experiment: &StoredExperiment) -> Vec<MarkerRow> {
    let mut rows = Rows::default();
    let mut readings: Vec<Reading> = Vec::new();
    let mut run_number = 0;
    for (config, c) in experiment.configs.iter().enumerate() {
        let ok = c.runs.iter().filter(|r| r.record.status == RunStatus::Ok);
        for run in ok {
            run_number += 1;
            let markers = &run.record.markers;
            rows.slots.reserve(markers.len().saturating_sub(rows.slots.len()));
            readings.reserve(markers.len());
            for m in markers {
                readings.push(Reading {
                    row: rows.row(&m.label, run_number),
                    config,
                    rss: m.rss_bytes as f64,
                    pss: m.pss_bytes.map(|b| b as f64),
                });
            }
        }
    }
    let empty = MarkerStat {
        runs: 0,
        rss_bytes_median: None,
        pss_bytes_median: None,
    };
    let mut out: Vec<MarkerRow> = rows
        .keys
        .into_iter()
        .map(|key| MarkerRow {
            label: shown(key),
            configs: vec![empty.clone(); experiment.configs.len()],
        })
        .collect();
    readings.sort_by_key(|r| (r.row, r.config));
    let (mut rss, mut pss) = (Vec::new(), Vec::new());
    for cell in readings.chunk_by(|a, b| (a.row, a.config) == (b.row, b.config)) {
        rss.clear();
        pss.clear();
        rss.extend(cell.iter().map(|r| r.rss));
        pss.extend(cell.iter().filter_map(|r| r.pss));
        out[cell[0].row].configs[cell[0].config] = MarkerStat {
            runs: rss.len(),
            rss_bytes_median: cell_median(&rss),
            pss_bytes_median: cell_median(&pss),
        };
    }
    out
}

/// A warning for each `--mark` pattern no line of any run matched.
pub fn unmatched_warnings(experiment: &StoredExperiment) -> Vec<String> {
    let runs: Vec<_> = experiment
        .configs
        .iter()
        .flat_map(|c| &c.runs)
        .map(|r| &r.record)
        .collect();
    if runs.is_empty() {
        return Vec::new();
    }
    experiment
        .info
        .marks
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            let pattern = u32::try_from(i + 1).unwrap_or(u32::MAX);
            !runs
                .iter()
                .any(|r| r.markers.iter().any(|m| m.pattern == pattern))
        })
        .map(|(_, mark)| {
            let example = runs
                .first()
                .map(|r| format!(" (e.g. {})", r.stdout_path.display()))
                .unwrap_or_default();
            format!(
                "--mark '{mark}' never matched a line of the workload's stdout; \
                 check it against the runs' stdout files{example}"
            )
        })
        .collect()
}
