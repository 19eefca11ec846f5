//! The verdict: which configuration to run with. The lowest mean memory
//! (mean RSS, or mean PSS when the tree had several processes; for a service,
//! the RSS at the end of the load) among the configurations whose
//! performance ratio (wall time; for a service, p95 latency, or the load's
//! duration without latency figures) stays within `--max-slowdown` at the
//! upper end of its CI and whose memory ratio's CI lies below 1.0; otherwise
//! "keep the default". It explains itself with the figures and says how to
//! deploy the winner (shell, systemd, Dockerfile, Kubernetes).

pub use super::deploy::{deploy, sh_quote, Deploy};
use super::service::{EndOfLoad, ServiceSummary};
use super::stats::bootstrap_ratio_ci;
use super::types::{ConfigSummary, Ratio};
use crate::model::{RunStatus, StoredConfig, StoredExperiment, StoredRun};
use serde::Serialize;

/// The default `--max-slowdown`, in percent.
pub const DEFAULT_MAX_SLOWDOWN_PCT: f64 = 5.0;
/// Fewer `ok` runs than this per configuration give no CI worth judging.
pub const MIN_OK_RUNS: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// `config` is recommended over the baseline.
    Recommend,
    /// No configuration qualified: keep the baseline (`config` names it).
    KeepDefault,
    /// Too few successful runs to judge; `config` is absent.
    NoRecommendation,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub outcome: Outcome,
    /// The configuration to run with (the baseline when keeping the default).
    pub config: Option<String>,
    /// One paragraph: why.
    pub reason: String,
    /// One plain sentence per non-baseline configuration: what it saved and cost.
    pub explanation: Vec<String>,
    /// `mean_rss_bytes`, `mean_pss_bytes` or, for a service,
    /// `rss_end_load_bytes` / `pss_end_load_bytes`.
    pub memory_metric: &'static str,
    /// What the budget applies to: `wall_s`, or for a service `p95_ms`
    /// (`load_s` when the load gave no latency).
    pub performance_metric: &'static str,
    pub max_slowdown_pct: f64,
    /// Present only for `Recommend`.
    pub deploy: Option<Deploy>,
}

/// The memory measure the verdict ranks by, per configuration.
struct Memory {
    metric: &'static str,
    words: &'static str,
    median: Vec<Option<f64>>,
    ratio: Vec<Option<Ratio>>,
}

fn ok_values(config: &StoredConfig, pick: fn(&StoredRun) -> Option<f64>) -> Vec<f64> {
    config
        .runs
        .iter()
        .filter(|r| r.record.status == RunStatus::Ok)
        .filter_map(pick)
        .collect()
}

/// The performance measure the budget applies to, per configuration.
struct Performance {
    metric: &'static str,
    words: &'static str,
    ratio: Vec<Option<Ratio>>,
}

/// Wall time, except for a service: its p95 latency, or the load's
/// duration when the load gave no latency (a `--load` command).
fn performance(summaries: &[ConfigSummary], service: &[ServiceSummary]) -> Performance {
    if service.iter().any(|s| s.ratio_p95_ms.is_some()) {
        return Performance {
            metric: "p95_ms",
            words: "p95 latency",
            ratio: service.iter().map(|s| s.ratio_p95_ms).collect(),
        };
    }
    if service.iter().any(|s| s.ratio_load_s.is_some()) {
        return Performance {
            metric: "load_s",
            words: "load duration",
            ratio: service.iter().map(|s| s.ratio_load_s).collect(),
        };
    }
    Performance {
        metric: "wall_s",
        words: "wall time",
        ratio: summaries.iter().map(|s| s.ratio("wall_s")).collect(),
    }
}

/// For a service, the RSS (PSS for a multi-process server) at the end of
/// the load: what the server holds after serving; its mean would depend on
/// how long the load took. Otherwise
/// mean PSS when any ok run's tree had more than one process (RSS counts
/// shared pages once per process there), else mean RSS.
fn memory(
    experiment: &StoredExperiment,
    baseline: usize,
    summaries: &[ConfigSummary],
    (service, end): (&[ServiceSummary], EndOfLoad),
) -> Memory {
    if service
        .get(baseline)
        .is_some_and(|s| (end.estimate)(s).is_some())
    {
        return Memory {
            metric: end.metric,
            words: end.words,
            median: service
                .iter()
                .map(|s| (end.estimate)(s).map(|e| e.median))
                .collect(),
            ratio: service.iter().map(end.ratio).collect(),
        };
    }
    let configs = &experiment.configs;
    let multi = configs
        .iter()
        .flat_map(|c| &c.runs)
        .filter(|r| r.record.status == RunStatus::Ok)
        .any(|r| r.record.samples.iter().any(|s| s.processes > 1));
    let has_pss = summaries
        .get(baseline)
        .is_some_and(|s| s.estimate("mean_pss_bytes").is_some());
    if multi && has_pss {
        let pss = |r: &StoredRun| super::metrics::of(r).mean_pss_bytes.map(|b| b as f64);
        let base = ok_values(&configs[baseline], pss);
        Memory {
            metric: "mean_pss_bytes",
            words: "mean PSS",
            median: summaries
                .iter()
                .map(|s| s.estimate("mean_pss_bytes").map(|e| e.median))
                .collect(),
            ratio: configs
                .iter()
                .map(|c| bootstrap_ratio_ci(&ok_values(c, pss), &base))
                .collect(),
        }
    } else {
        Memory {
            metric: "mean_rss_bytes",
            words: "mean RSS",
            median: summaries
                .iter()
                .map(|s| s.estimate("mean_rss_bytes").map(|e| e.median))
                .collect(),
            ratio: summaries
                .iter()
                .map(|s| s.ratio("mean_rss_bytes"))
                .collect(),
        }
    }
}

fn pct(ratio: f64) -> String {
    format!("{:.0}%", (ratio - 1.0).abs() * 100.0)
}

fn ratio_words(r: &Ratio) -> String {
    format!("{:.2}x [{:.2}, {:.2}]", r.value, r.ci_low, r.ci_high)
}

/// Why a candidate does or does not qualify; `None` when it does.
fn disqualified(
    s: &ConfigSummary,
    mem: Option<&Ratio>,
    perf: (Option<Ratio>, &str),
    budget: f64,
) -> Option<String> {
    if s.ok_runs < MIN_OK_RUNS {
        return Some(format!(
            "only {} ok run{} of {}: too few to judge",
            s.ok_runs,
            if s.ok_runs == 1 { "" } else { "s" },
            s.total_runs
        ));
    }
    let Some(mem) = mem else {
        return Some("no memory figures".to_string());
    };
    let (perf, perf_words) = perf;
    let Some(perf) = perf else {
        return Some(format!("no {perf_words} figures"));
    };
    if perf.ci_high > 1.0 + budget / 100.0 {
        return Some(format!(
            "over the {budget}% budget: {perf_words} up to {:.2}x",
            perf.ci_high
        ));
    }
    if mem.ci_high >= 1.0 {
        return Some(if mem.ci_low > 1.0 {
            "uses more memory than the baseline".to_string()
        } else {
            "its memory ratio's CI includes 1.0: no saving beyond run-to-run noise".to_string()
        });
    }
    None
}

/// Decides, explains, and writes the deploy lines. `baseline` indexes
/// `experiment.configs`; `summaries` are in the same order.
pub fn decide(
    experiment: &StoredExperiment,
    baseline: usize,
    summaries: &[ConfigSummary],
    service: (&[ServiceSummary], EndOfLoad),
    max_slowdown_pct: f64,
) -> Verdict {
    let mem = memory(experiment, baseline, summaries, service);
    let perf = performance(summaries, service.0);
    let configs = &experiment.configs;
    let base_name = configs
        .get(baseline)
        .map(|c| c.config.name.clone())
        .unwrap_or_default();
    let mut verdict = Verdict {
        outcome: Outcome::NoRecommendation,
        config: None,
        reason: String::new(),
        explanation: Vec::new(),
        memory_metric: mem.metric,
        performance_metric: perf.metric,
        max_slowdown_pct,
        deploy: None,
    };
    let base_ok = summaries.get(baseline).map_or(0, |s| s.ok_runs);
    if base_ok < MIN_OK_RUNS {
        verdict.reason = format!(
            "No recommendation: the baseline {base_name} has {base_ok} ok run(s); a verdict \
             needs at least {MIN_OK_RUNS} ok runs per configuration (use --runs 3 or more)."
        );
        return verdict;
    }
    let mut qualified: Vec<(usize, f64)> = Vec::new();
    let mut judged = 0;
    for (i, (c, s)) in configs.iter().zip(summaries).enumerate() {
        if i == baseline {
            continue;
        }
        let name = &c.config.name;
        let ratio = mem.ratio[i].as_ref();
        let perf_ratio = perf.ratio.get(i).copied().flatten();
        let why_not = disqualified(s, ratio, (perf_ratio, perf.words), max_slowdown_pct);
        if s.ok_runs >= MIN_OK_RUNS {
            judged += 1;
        }
        let figures = match (ratio, perf_ratio) {
            (Some(m), Some(w)) => format!(
                "{} {} ({} {}), {} {} ({} {})",
                mem.words,
                ratio_words(m),
                if m.value <= 1.0 { "saves" } else { "costs" },
                pct(m.value),
                perf.words,
                ratio_words(&w),
                if w.value <= 1.0 {
                    "faster by"
                } else {
                    "slower by"
                },
                pct(w.value)
            ),
            _ => "no comparable figures".to_string(),
        };
        let line = match &why_not {
            Some(why) => format!("{name}: {figures}; not chosen: {why}."),
            None => format!("{name}: {figures}; qualifies."),
        };
        verdict.explanation.push(line);
        if why_not.is_none() {
            if let Some(m) = mem.median[i] {
                qualified.push((i, m));
            }
        }
    }
    if judged == 0 {
        verdict.reason = format!(
            "No recommendation: no configuration other than the baseline has at least \
             {MIN_OK_RUNS} ok runs; rerun with more --runs and check why runs failed."
        );
        return verdict;
    }
    qualified.sort_by(|a, b| a.1.total_cmp(&b.1));
    let Some(&(winner, _)) = qualified.first() else {
        verdict.outcome = Outcome::KeepDefault;
        verdict.config = Some(base_name.clone());
        verdict.reason = format!(
            "Keep the default ({base_name}): no configuration lowers {} beyond run-to-run \
             noise while keeping {} within {max_slowdown_pct}% of the baseline at the \
             upper end of its 95% CI.",
            mem.words, perf.words
        );
        return verdict;
    };
    let c = &configs[winner];
    let m = mem.ratio[winner].unwrap_or(super::BASELINE_RATIO);
    let w = perf.ratio[winner].unwrap_or(super::BASELINE_RATIO);
    let saved = match (mem.median[baseline], mem.median[winner]) {
        (Some(b), Some(x)) => format!(" ({} less)", crate::units::format_bytes(b - x)),
        _ => String::new(),
    };
    let others = if qualified.len() > 1 {
        format!(
            " It beats {} other configuration(s) that also qualified.",
            qualified.len() - 1
        )
    } else {
        String::new()
    };
    verdict.outcome = Outcome::Recommend;
    verdict.config = Some(c.config.name.clone());
    verdict.reason = format!(
        "Use {}: the lowest {} among the configurations within the {max_slowdown_pct}% \
         {} budget, {} of {base_name}'s{saved}, a saving beyond noise (95% CI below \
         1.0); {} {} stays within budget.{others}",
        c.config.name,
        mem.words,
        perf.words,
        ratio_words(&m),
        perf.words,
        ratio_words(&w),
    );
    verdict.deploy = Some(deploy(&c.config, &experiment.info.command));
    verdict
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
