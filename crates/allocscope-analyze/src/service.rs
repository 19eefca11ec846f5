//! Service experiments (`compare --server`): per configuration, the median
//! and 95% CI of each latency figure and of the RSS and PSS at the end of
//! the settle period, and the errors among the requests. The memory at the
//! end of the load, the median, p95 and p99 response times and the load's
//! duration are rows of the metric table, with their ratios to the
//! baseline (`metric_table::service_rows`).

use super::figures::Estimate;
use super::summary::estimate;
use allocscope_core::model::{Latency, ServiceRecord, StoredConfig, StoredExperiment};
use serde::Serialize;

/// Medians and CIs of the `Latency` keys across the ok runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencySummary {
    pub p50_ms: Estimate,
    pub p90_ms: Estimate,
    pub p95_ms: Estimate,
    pub p99_ms: Estimate,
    pub p999_ms: Estimate,
    pub max_ms: Estimate,
    pub requests: Estimate,
    pub errors: Estimate,
    pub throughput_rps: Estimate,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServiceSummary {
    pub latency: Option<LatencySummary>,
    pub rss_end_settle_bytes: Option<Estimate>,
    pub pss_end_settle_bytes: Option<Estimate>,
    /// Errors over every ok run, and the requests they were among.
    pub errors: u64,
    pub requests: u64,
}

/// The ok runs' service records, each with its run's round.
fn ok_services(config: &StoredConfig) -> impl Iterator<Item = (u32, &ServiceRecord)> {
    super::metrics::ok_runs(config)
        .filter_map(|r| Some((r.record.index, r.record.service.as_ref()?)))
}

/// A figure of the ok runs, keyed by round (so ratios pair within rounds).
fn values(config: &StoredConfig, pick: impl Fn(&ServiceRecord) -> Option<f64>) -> Vec<(u32, f64)> {
    ok_services(config)
        .filter_map(|(round, s)| Some((round, pick(s)?)))
        .collect()
}

fn latency(config: &StoredConfig, pick: fn(&Latency) -> f64) -> Vec<(u32, f64)> {
    values(config, |s| s.latency.as_ref().map(pick))
}

fn latency_summary(config: &StoredConfig) -> Option<LatencySummary> {
    let e = |pick: fn(&Latency) -> f64| estimate(&latency(config, pick));
    Some(LatencySummary {
        p50_ms: e(|l| l.p50_ms)?,
        p90_ms: e(|l| l.p90_ms)?,
        p95_ms: e(|l| l.p95_ms)?,
        p99_ms: e(|l| l.p99_ms)?,
        p999_ms: e(|l| l.p999_ms)?,
        max_ms: e(|l| l.max_ms)?,
        requests: e(|l| l.requests as f64)?,
        errors: e(|l| l.errors as f64)?,
        throughput_rps: e(|l| l.throughput_rps)?,
    })
}

/// One summary per configuration, in order; empty unless the experiment
/// ran a service.
pub fn summarize(experiment: &StoredExperiment) -> Vec<ServiceSummary> {
    if experiment.info.service.is_none() {
        return Vec::new();
    }
    let bytes = |b: Option<u64>| b.map(|b| b as f64);
    let summary = |config: &StoredConfig| {
        let (errors, requests) = ok_services(config)
            .filter_map(|(_, s)| s.latency.as_ref())
            .fold((0, 0), |(e, r), l| (e + l.errors, r + l.requests));
        ServiceSummary {
            latency: latency_summary(config),
            rss_end_settle_bytes: estimate(&values(config, |s| bytes(s.rss_end_settle_bytes))),
            pss_end_settle_bytes: estimate(&values(config, |s| bytes(s.pss_end_settle_bytes))),
            errors,
            requests,
        }
    };
    experiment.configs.iter().map(summary).collect()
}

/// The end-of-load memory the service tables show, when the tree word
/// `end-of-load` names no row (`choice::tree_row`): RSS.
pub const RSS_END_OF_LOAD: &str = "rss_end_load_bytes";

/// Warnings about the load, once per distinct text: a saturated
/// generator, a rate not reached, errors, rejected replay lines.
pub fn warnings(experiment: &StoredExperiment, summaries: &[ServiceSummary]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (config, summary) in experiment.configs.iter().zip(summaries) {
        for run in &config.runs {
            let Some(service) = &run.record.service else {
                continue;
            };
            for warning in &service.warnings {
                let line = format!("{} run {}: {warning}", config.config.name, run.record.index);
                if !out.contains(&line) {
                    out.push(line);
                }
            }
        }
        if summary.errors > 0 {
            out.push(format!(
                "{}: {} of {} requests failed (non-2xx, resets, timeouts); latency counts them too",
                config.config.name, summary.errors, summary.requests
            ));
        }
    }
    let rejected = experiment
        .configs
        .iter()
        .flat_map(|c| &c.runs)
        .filter_map(|r| r.record.service.as_ref())
        .map(|s| s.rejected_lines)
        .max()
        .unwrap_or(0);
    if rejected > 0 {
        out.push(format!(
            "{rejected} line(s) of the replayed log could not be replayed (not GET/HEAD, or malformed); they were skipped"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocscope_core::fixture;

    fn with_service(mut experiment: StoredExperiment) -> StoredExperiment {
        experiment.info.service = Some(allocscope_core::model::ServiceInfo::default());
        for (c, config) in experiment.configs.iter_mut().enumerate() {
            for run in &mut config.runs {
                let slow = 1.0 + c as f64; // config c is (c+1)x slower
                let i = f64::from(run.record.index);
                run.record.service = Some(ServiceRecord {
                    load_start_s: Some(1.0),
                    load_end_s: Some(1.0 + 10.0 * slow + i * 0.01),
                    rss_end_load_bytes: Some(
                        ((100 + 10 * c) << 20) as u64 + run.record.index as u64,
                    ),
                    latency: Some(Latency {
                        p50_ms: slow + i * 0.001,
                        p90_ms: 2.0 * slow,
                        p95_ms: 3.0 * slow + i * 0.001,
                        p99_ms: 4.0 * slow,
                        p999_ms: 5.0 * slow,
                        max_ms: 6.0 * slow,
                        requests: 1000,
                        errors: 0,
                        throughput_rps: 1000.0 / slow,
                    }),
                    ..ServiceRecord::default()
                });
            }
        }
        experiment
    }

    #[test]
    fn ratios_follow_the_latency_and_memory_of_each_configuration() {
        let experiment = with_service(fixture::experiment());
        let table = crate::metric_table::of_experiment(&experiment.info);
        let summaries = crate::summary::summarize(&experiment, 0, &table);
        assert_eq!(
            summaries[0].ratio("p95_ms"),
            Some(crate::summary::BASELINE_RATIO)
        );
        let second = |id| summaries[1].ratio(id).map(|r| r.value).unwrap_or_default();
        assert!(
            (second("p95_ms") - 2.0).abs() < 0.01,
            "{}",
            second("p95_ms")
        );
        let rss = second("rss_end_load_bytes");
        assert!((rss - 1.1).abs() < 0.01, "{rss}");
        assert!(
            (second("load_s") - 2.0).abs() < 0.01,
            "{}",
            second("load_s")
        );
        let services = summarize(&experiment);
        assert_eq!(services.len(), experiment.configs.len());
        assert!(services[1].latency.is_some());
    }

    #[test]
    fn ordinary_experiments_have_no_service_summary() {
        assert!(summarize(&fixture::experiment()).is_empty());
    }
}
