//! One CSV row per configuration with its summary: medians and CI bounds per
//! metric, then ratios to the baseline. Headers carry units so the file loads
//! straight into pandas or a spreadsheet. A service experiment's table has
//! its latency, load duration and end-of-load memory rows, with their
//! ratios; it adds the other latency and throughput columns. After
//! `baseline`, where the memory went: the breakdown of the configuration's
//! median run (`cause::median_run`, the run the verdict's why quotes) at its mean and at its
//! peak, `breakdown_mean_<part>` and `breakdown_peak_<part>`, empty
//! without one.

use super::format::{csv_line, num, opt};
use super::reporter::Reporter;
use allocscope_analyze::cause::median_run;
use allocscope_analyze::metric_table::MetricDef;
use allocscope_analyze::service::ServiceSummary;
use allocscope_analyze::types::{Analysis, Estimate, Ratio};
use allocscope_core::model::Breakdown;
use anyhow::Result;

#[derive(Debug, Clone, Copy, Default)]
pub struct CsvReporter;

type ServiceEstimateOf = fn(&ServiceSummary) -> Option<Estimate>;

/// The service's figures that are not rows of the metric table (its
/// `p50_ms`, `p95_ms`, `p99_ms`, `load_s` and end-of-load memory are, with
/// their ratios).
const SERVICE_ESTIMATES: [(&str, ServiceEstimateOf); 4] = [
    ("p90_ms", |s| s.latency.map(|l| l.p90_ms)),
    ("p999_ms", |s| s.latency.map(|l| l.p999_ms)),
    ("max_ms", |s| s.latency.map(|l| l.max_ms)),
    ("throughput_rps", |s| s.latency.map(|l| l.throughput_rps)),
];

fn estimate_header(h: &mut Vec<String>, name: &str) {
    h.extend([
        format!("{name}_median"),
        format!("{name}_ci_low"),
        format!("{name}_ci_high"),
    ]);
}

fn ratio_header(h: &mut Vec<String>, name: &str) {
    h.extend([
        name.to_string(),
        format!("{name}_ci_low"),
        format!("{name}_ci_high"),
    ]);
}

fn estimate_cells(row: &mut Vec<String>, e: Option<Estimate>) {
    row.extend([
        num(e.map(|e| e.median)),
        num(e.map(|e| e.ci_low)),
        num(e.map(|e| e.ci_high)),
    ]);
}

fn ratio_cells(row: &mut Vec<String>, r: Option<Ratio>) {
    row.extend([
        num(r.map(|r| r.value)),
        num(r.map(|r| r.ci_low)),
        num(r.map(|r| r.ci_high)),
    ]);
}

/// The header row, without the trailing newline: the estimate columns of
/// every metric-table row, then the ratio columns of those with a ratio;
/// `service` adds the service columns before `baseline`.
pub fn header(table: &[MetricDef], service: bool) -> Vec<String> {
    let first = ["config", "allocator", "served_by", "ok_runs", "total_runs"];
    let mut h: Vec<String> = first.map(String::from).into();
    for m in table {
        estimate_header(&mut h, &m.id);
    }
    for m in table.iter().filter(|m| m.ratio) {
        ratio_header(&mut h, &m.ratio_column());
    }
    if service {
        for (name, _) in SERVICE_ESTIMATES {
            estimate_header(&mut h, name);
        }
        h.push("errors".to_string());
        h.push("requests".to_string());
    }
    h.push("baseline".to_string());
    for at in ["mean", "peak"] {
        h.extend(
            Breakdown::KEYS
                .iter()
                .map(|k| format!("breakdown_{at}_{k}")),
        );
    }
    // Added after the columns above, so none of theirs moves.
    h.extend(["memory_limit_needed_bytes", "memory_limit_basis"].map(String::from));
    h
}

/// The median run's breakdown at its mean and its peak, empty cells
/// without one.
fn breakdown_cells(row: &mut Vec<String>, config: &allocscope_core::model::StoredConfig) {
    let m = median_run(config).map(|(_, m)| m);
    for at in [
        m.and_then(|m| m.breakdown_mean),
        m.and_then(|m| m.breakdown_peak),
    ] {
        let parts = at.map(|b| b.parts());
        row.extend((0..Breakdown::COUNT).map(|i| opt(parts.map(|p| p[i]))));
    }
}

impl Reporter for CsvReporter {
    fn render(&self, analysis: &Analysis) -> Result<Vec<u8>> {
        let service = !analysis.service.is_empty();
        let table = &analysis.metrics;
        let mut out = csv_line(header(table, service));
        let configs = analysis.experiment.configs.iter().zip(&analysis.summaries);
        for (i, (config, s)) in configs.enumerate() {
            let mut row = vec![
                config.config.name.clone(),
                config.config.allocator.clone(),
                allocscope_analyze::served::served_by(config)
                    .unwrap_or_default()
                    .to_string(),
                s.ok_runs.to_string(),
                s.total_runs.to_string(),
            ];
            for (_, m) in &s.metrics {
                estimate_cells(&mut row, m.estimate);
            }
            for (_, (_, m)) in table.iter().zip(&s.metrics).filter(|(def, _)| def.ratio) {
                ratio_cells(&mut row, m.ratio);
            }
            if let Some(svc) = analysis.service.get(i) {
                for (_, get) in SERVICE_ESTIMATES {
                    estimate_cells(&mut row, get(svc));
                }
                row.push(svc.errors.to_string());
                row.push(svc.requests.to_string());
            }
            row.push((i == analysis.baseline).to_string());
            breakdown_cells(&mut row, config);
            let limit = analysis.limits.get(i).and_then(Option::as_ref);
            row.push(super::format::opt(limit.map(|l| l.bytes)));
            row.push(limit.map(|l| l.basis.clone()).unwrap_or_default());
            out.push_str(&csv_line(row));
        }
        Ok(out.into_bytes())
    }
}
