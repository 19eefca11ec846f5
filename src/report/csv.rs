//! One CSV row per configuration with its summary: medians and CI bounds per
//! metric, then ratios to the baseline. Headers carry units so the file loads
//! straight into pandas or a spreadsheet.

use super::format::{csv_line, opt};
use super::Reporter;
use crate::analyze::types::{Analysis, ConfigSummary, Estimate, Ratio};
use anyhow::Result;

#[derive(Debug, Clone, Copy, Default)]
pub struct CsvReporter;

type EstimateOf = fn(&ConfigSummary) -> Option<Estimate>;
type RatioOf = fn(&ConfigSummary) -> Option<Ratio>;

const ESTIMATES: [(&str, EstimateOf); 5] = [
    ("peak_rss_bytes", |s| s.peak_rss_bytes),
    ("mean_rss_bytes", |s| s.mean_rss_bytes),
    ("mean_pss_bytes", |s| s.mean_pss_bytes),
    ("wall_s", |s| s.wall_s),
    ("cpu_s", |s| s.cpu_s),
];

const RATIOS: [(&str, RatioOf); 3] = [
    ("ratio_peak_rss", |s| s.ratio_peak_rss_bytes),
    ("ratio_mean_rss", |s| s.ratio_mean_rss_bytes),
    ("ratio_wall", |s| s.ratio_wall_s),
];

/// The header row, without the trailing newline.
pub fn header() -> Vec<String> {
    let mut h: Vec<String> = ["config", "allocator", "ok_runs", "total_runs"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for (name, _) in ESTIMATES {
        h.extend([
            format!("{name}_median"),
            format!("{name}_ci_low"),
            format!("{name}_ci_high"),
        ]);
    }
    for (name, _) in RATIOS {
        h.extend([
            name.to_string(),
            format!("{name}_ci_low"),
            format!("{name}_ci_high"),
        ]);
    }
    h.push("baseline".to_string());
    h
}

impl Reporter for CsvReporter {
    fn render(&self, analysis: &Analysis) -> Result<Vec<u8>> {
        let mut out = csv_line(header());
        let configs = analysis.experiment.configs.iter().zip(&analysis.summaries);
        for (i, (config, s)) in configs.enumerate() {
            let mut row = vec![
                config.config.name.clone(),
                config.config.allocator.clone(),
                s.ok_runs.to_string(),
                s.total_runs.to_string(),
            ];
            for (_, get) in ESTIMATES {
                let e = get(s);
                row.extend([
                    opt(e.map(|e| e.median)),
                    opt(e.map(|e| e.ci_low)),
                    opt(e.map(|e| e.ci_high)),
                ]);
            }
            for (_, get) in RATIOS {
                let r = get(s);
                row.extend([
                    opt(r.map(|r| r.value)),
                    opt(r.map(|r| r.ci_low)),
                    opt(r.map(|r| r.ci_high)),
                ]);
            }
            row.push((i == analysis.baseline).to_string());
            out.push_str(&csv_line(row));
        }
        Ok(out.into_bytes())
    }
}
