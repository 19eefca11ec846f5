//! The marker summary: for each marker label, in order of first appearance,
//! the median memory at that marker per configuration over its `ok` runs;
//! and a warning for each `--mark` pattern that never matched a line.

use super::figures::MarkerStat;
use super::stats::median;
use allocscope_core::model::StoredExperiment;
use foldhash::HashMap;

/// A summarised label: the label and which time a run printed it (1 for
/// the first). A label a run printed more than once is summarised as
/// `label`, `label #2`, `label #3`, ..., so that "the second time" is
/// compared with the second time in every run.
type Key<'a> = (&'a str, u32);

/// The marker summary: one row per summarised label, in order of first
/// appearance, with one `MarkerStat` per configuration. Flat on purpose: a
/// run may print a million labels, and a row of its own for each (a label
/// and a vector) cost two million allocations to build and free.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MarkerSummary {
    /// Every row's label, one after the other.
    text: String,
    /// Where each row's label ends in `text`.
    ends: Vec<usize>,
    /// `configs` cells per row, row after row.
    cells: Vec<MarkerStat>,
    configs: usize,
}

impl MarkerSummary {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Row `row`'s label: `LABEL`, or `LABEL #n` for the n-th time a run
    /// printed it.
    pub fn label(&self, row: usize) -> &str {
        let start = row.checked_sub(1).map_or(0, |before| self.ends[before]);
        &self.text[start..self.ends[row]]
    }

    /// Row `row`'s cells, one per configuration in order.
    pub fn cells(&self, row: usize) -> &[MarkerStat] {
        &self.cells[row * self.configs..(row + 1) * self.configs]
    }

    /// A new row for `key`, its cells empty; its index.
    fn push_row(&mut self, (label, n): Key<'_>) -> usize {
        self.text.push_str(label);
        if n > 1 {
            self.text.push_str(" #");
            self.text.push_str(&n.to_string());
        }
        self.ends.push(self.text.len());
        let empty = MarkerStat {
            runs: 0,
            rss_bytes_median: None,
            pss_bytes_median: None,
        };
        self.cells.extend(std::iter::repeat_n(empty, self.configs));
        self.ends.len() - 1
    }
}

/// One marker's memory, filed under its row (key) and configuration.
struct Reading {
    row: usize,
    config: usize,
    rss: f64,
    pss: Option<f64>,
}

/// Where a label's row is (that of its first occurrence in a run) and how
/// often the run numbered `run` printed it so far. Small on purpose: a
/// summary of a million labels holds a million of these.
struct Slot {
    first: usize,
    run: u32,
    count: u32,
}

/// Where each label's rows are: one hash lookup per marker, and a second
/// one for a label a run printed again.
#[derive(Default)]
struct Rows<'a> {
    slots: HashMap<&'a str, Slot>,
    repeats: HashMap<Key<'a>, usize>,
}

impl<'a> Rows<'a> {
    /// The row of `label` printed once more in run number `run`; a key
    /// seen for the first time gets its row from `new_row`.
    fn row(
        &mut self,
        label: &'a str,
        run: u32,
        mut new_row: impl FnMut(Key<'a>) -> usize,
    ) -> usize {
        let slot = self.slots.entry(label).or_insert_with(|| Slot {
            first: new_row((label, 1)),
            run,
            count: 0,
        });
        if slot.run != run {
            slot.run = run;
            slot.count = 0;
        }
        slot.count += 1;
        match slot.count {
            1 => slot.first,
            n => *self
                .repeats
                .entry((label, n))
                .or_insert_with(|| new_row((label, n))),
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
/// never searched. A cell's first reading goes straight into it; only the
/// cells that get more (several runs) gather theirs in a list, sorted by
/// row and configuration at the end, so the cost grows as n log n at most.
pub fn summarize(experiment: &StoredExperiment) -> MarkerSummary {
    let configs = experiment.configs.len();
    let mut out = MarkerSummary {
        configs,
        ..MarkerSummary::default()
    };
    let mut rows = Rows::default();
    let mut several: Vec<Reading> = Vec::new();
    let mut run_number = 0u32;
    for (config, c) in experiment.configs.iter().enumerate() {
        for run in super::metrics::ok_runs(c) {
            run_number += 1;
            let markers = &run.record.markers;
            rows.slots
                .reserve(markers.len().saturating_sub(rows.slots.len()));
            for m in markers {
                let row = rows.row(&m.label, run_number, |key| out.push_row(key));
                let reading = Reading {
                    row,
                    config,
                    rss: m.rss_bytes as f64,
                    pss: m.pss_bytes.map(|b| b as f64),
                };
                file(
                    &mut out.cells[row * configs + config],
                    reading,
                    &mut several,
                );
            }
        }
    }
    several.sort_by_key(|r| (r.row, r.config));
    let (mut rss, mut pss) = (Vec::new(), Vec::new());
    for cell in several.chunk_by(|a, b| (a.row, a.config) == (b.row, b.config)) {
        rss.clear();
        pss.clear();
        rss.extend(cell.iter().map(|r| r.rss));
        pss.extend(cell.iter().filter_map(|r| r.pss));
        out.cells[cell[0].row * configs + cell[0].config] = MarkerStat {
            runs: rss.len(),
            rss_bytes_median: cell_median(&rss),
            pss_bytes_median: cell_median(&pss),
        };
    }
    out
}

/// Files one reading in its cell: the first as the cell's figures, a
/// second one moves both to `several`, and so on.
fn file(cell: &mut MarkerStat, reading: Reading, several: &mut Vec<Reading>) {
    match cell.runs {
        0 => {
            cell.rss_bytes_median = Some(reading.rss);
            cell.pss_bytes_median = reading.pss;
        }
        1 => {
            several.push(Reading {
                rss: cell.rss_bytes_median.unwrap_or(reading.rss),
                pss: cell.pss_bytes_median,
                ..reading
            });
            several.push(reading);
        }
        _ => several.push(reading),
    }
    cell.runs += 1;
}

/// A warning for each `--mark` pattern no line of any run matched.
pub(crate) fn unmatched_warnings(experiment: &StoredExperiment) -> Vec<String> {
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
