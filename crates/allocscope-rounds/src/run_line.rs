//! The line `compare` prints when a run ends: its place in the plan, status,
//! wall time and peak RSS, then the service's latency or load time, the
//! run's `--metric` values and its message.

use allocscope_core::model::{RunRecord, ServiceRecord};
use allocscope_core::units::{format_bytes, format_seconds};

/// Where a run sits in the plan, for its line.
pub struct Place<'a> {
    /// 1-based, of `total`.
    pub step: usize,
    pub total: usize,
    pub config: &'a str,
    /// `run` or `warmup`.
    pub kind: &'a str,
    pub repetition: u32,
}

/// `[3/10] glibc  run 2: ok  1.2 s  peak RSS 35 MiB, p50 ...`.
pub(crate) fn run_line(place: &Place, record: &RunRecord, peak_rss_bytes: u64) -> String {
    format!(
        "[{}/{}] {:<24} {} {}: {:<10} {:>9}  peak RSS {}{}{}{}",
        place.step,
        place.total,
        place.config,
        place.kind,
        place.repetition,
        record.status.as_str(),
        format_seconds(record.wall_s),
        format_bytes(peak_rss_bytes as f64),
        record
            .service
            .as_ref()
            .map(service_progress)
            .unwrap_or_default(),
        record
            .user_metrics
            .iter()
            .map(|(name, value)| format!(", {name} {value}"))
            .collect::<String>(),
        record
            .message
            .as_ref()
            .map(|m| format!("  ({m})"))
            .unwrap_or_default()
    )
}

/// `, p50 1.2 ms, p95 3.4 ms, 5000 req/s` for a service run with latency,
/// `, load 12.3 s` for a load command; any generator warning follows.
fn service_progress(service: &ServiceRecord) -> String {
    let mut text = match (&service.latency, service.load_duration_s()) {
        (Some(l), _) => format!(
            ", p50 {:.2} ms, p95 {:.2} ms, {:.0} req/s{}",
            l.p50_ms,
            l.p95_ms,
            l.throughput_rps,
            if l.errors > 0 {
                format!(", {} errors", l.errors)
            } else {
                String::new()
            }
        ),
        (None, Some(load_s)) => format!(", load {}", format_seconds(load_s)),
        (None, None) => String::new(),
    };
    for warning in &service.warnings {
        text.push_str(&format!("; {warning}"));
    }
    text
}
