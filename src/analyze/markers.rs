//! The marker summary: for each marker label, in order of first appearance,
//! the median memory at that marker per configuration over its `ok` runs;
//! and a warning for each `--mark` pattern that never matched a line.

use super::stats::median;
use super::types::{MarkerRow, MarkerStat};
use crate::model::{Marker, RunStatus, StoredExperiment};

/// A label as summarised: a label a run printed more than once becomes
/// `label #2`, `label #3`, ... for its later occurrences, so that "the
/// second time" is compared with the second time in every run.
fn keyed(markers: &[Marker]) -> Vec<(String, &Marker)> {
    let mut seen: Vec<(&str, u32)> = Vec::new();
    markers
        .iter()
        .map(|m| {
            let n = match seen.iter_mut().find(|(l, _)| *l == m.label) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    seen.push((&m.label, 1));
                    1
                }
            };
            let key = if n == 1 {
                m.label.clone()
            } else {
                format!("{} #{n}", m.label)
            };
            (key, m)
        })
        .collect()
}

/// One row per label seen in an `ok` run, one cell per configuration.
pub fn summarize(experiment: &StoredExperiment) -> Vec<MarkerRow> {
    // Per configuration: (label, rss values, pss values), first-seen order.
    type Values = Vec<(String, Vec<f64>, Vec<f64>)>;
    let mut labels: Vec<String> = Vec::new();
    let per_config: Vec<Values> = experiment
        .configs
        .iter()
        .map(|config| {
            let mut values: Values = Vec::new();
            let ok = config
                .runs
                .iter()
                .filter(|r| r.record.status == RunStatus::Ok);
            for run in ok {
                for (key, m) in keyed(&run.record.markers) {
                    if !labels.contains(&key) {
                        labels.push(key.clone());
                    }
                    let slot = match values.iter().position(|(l, _, _)| *l == key) {
                        Some(i) => i,
                        None => {
                            values.push((key, Vec::new(), Vec::new()));
                            values.len() - 1
                        }
                    };
                    let (_, rss, pss) = &mut values[slot];
                    rss.push(m.rss_bytes as f64);
                    pss.extend(m.pss_bytes.map(|b| b as f64));
                }
            }
            values
        })
        .collect();
    labels
        .into_iter()
        .map(|label| MarkerRow {
            configs: per_config
                .iter()
                .map(|values| match values.iter().find(|(l, _, _)| *l == label) {
                    Some((_, rss, pss)) => MarkerStat {
                        runs: rss.len(),
                        rss_bytes_median: median(rss),
                        pss_bytes_median: median(pss),
                    },
                    None => MarkerStat {
                        runs: 0,
                        rss_bytes_median: None,
                        pss_bytes_median: None,
                    },
                })
                .collect(),
            label,
        })
        .collect()
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
