//! Every marker of every run in long format (one row per marker), for
//! plotting memory against the workload's own progress. An absent PSS
//! reading is an empty cell.

use super::format::{csv_line, opt};
use super::reporter::Reporter;
use allocscope_analyze::types::Analysis;
use anyhow::Result;

#[derive(Debug, Clone, Copy, Default)]
pub struct MarkersCsvReporter;

const HEADER: [&str; 8] = [
    "config",
    "run",
    "label",
    "t_s",
    "rss_bytes",
    "pss_bytes",
    "vsz_bytes",
    "run_status",
];

impl Reporter for MarkersCsvReporter {
    fn render(&self, analysis: &Analysis) -> Result<Vec<u8>> {
        let mut out = csv_line(HEADER.iter().map(|h| h.to_string()));
        for config in &analysis.experiment.configs {
            for run in &config.runs {
                for m in &run.record.markers {
                    out.push_str(&csv_line([
                        config.config.name.clone(),
                        run.record.index.to_string(),
                        m.label.clone(),
                        m.t_s.to_string(),
                        m.rss_bytes.to_string(),
                        opt(m.pss_bytes),
                        m.vsz_bytes.to_string(),
                        run.record.status.as_str().to_string(),
                    ]));
                }
            }
        }
        Ok(out.into_bytes())
    }
}
