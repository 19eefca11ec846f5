//! What the verdict compares, and each candidate's standing: the memory and
//! performance measures (chosen by `--memory-metric` / `--perf-metric`, else
//! by the kind of experiment), each `ok` run's value of them, the ratios to
//! the baseline paired within rounds (`interval::log_ratio`), and where each
//! candidate stands against `--min-saving` and `--max-slowdown`
//! (`decide::standing`). The verdict and `compare --runs auto` share it.
//! A `--perf-metric NAME` is the row `user.NAME` of the experiment's metric
//! table, with that row's extractor and direction.

use super::decide::{outrank, standing, Standing, Thresholds};
use super::interval::{log_ratio, LogRatio};
use super::metric_table::{self, Better, MetricDef};
use super::metrics::of;
use super::service::EndOfLoad;
use super::types::Ratio;
use crate::judging::{JudgeSettings, MemoryMetric, PerfMetric};
use crate::model::{RunStatus, StoredConfig, StoredExperiment, StoredRun};

type Value = Box<dyn Fn(&StoredRun) -> Option<f64>>;

/// One measure: its id (a JSON key), its words, and each run's value.
pub struct Measure {
    pub id: String,
    pub words: String,
    pub value: Value,
    /// Throughput-like: the cost ratio is baseline / candidate.
    pub higher_is_better: bool,
}

impl Measure {
    /// A cost ratio (above 1 is worse) as the tables show it: candidate /
    /// baseline, so a throughput's cost ratio 0.91x reads 1.10x.
    pub fn shown(&self, cost: &LogRatio) -> Ratio {
        self.shown_at(cost, 0.05)
    }

    /// `shown` at the two-sided level `1 - alpha`.
    pub fn shown_at(&self, cost: &LogRatio, alpha: f64) -> Ratio {
        let r = cost.ratio_at(alpha);
        if self.higher_is_better {
            Ratio {
                value: 1.0 / r.value,
                ci_low: 1.0 / r.ci_high,
                ci_high: 1.0 / r.ci_low,
            }
        } else {
            r
        }
    }
}

fn measure(id: &str, words: &str, value: Value) -> Measure {
    Measure {
        id: id.to_string(),
        words: words.to_string(),
        value,
        higher_is_better: false,
    }
}

fn ok_runs(config: &StoredConfig) -> impl Iterator<Item = &StoredRun> {
    config
        .runs
        .iter()
        .filter(|r| r.record.status == RunStatus::Ok)
}

/// True when an ok run's tree had several processes and the baseline has
/// PSS: RSS then counts shared pages once per process.
fn judge_by_pss(experiment: &StoredExperiment, baseline: usize) -> bool {
    let multi = experiment
        .configs
        .iter()
        .flat_map(ok_runs)
        .any(|r| r.record.samples.iter().any(|s| s.processes > 1));
    multi
        && experiment
            .configs
            .get(baseline)
            .is_some_and(|c| ok_runs(c).any(|r| of(r).mean_pss_bytes.is_some()))
}

fn end_of_load_measure(end: EndOfLoad) -> Measure {
    let pss = end.metric == super::service::PSS_END_OF_LOAD.metric;
    measure(
        end.metric,
        end.words,
        Box::new(move |r| {
            let s = r.record.service.as_ref()?;
            let bytes = if pss {
                s.pss_end_load_bytes
            } else {
                s.rss_end_load_bytes
            };
            bytes.map(|b| b as f64)
        }),
    )
}

/// The memory measure: `--memory-metric`, else the end of the load for a
/// service, mean PSS for a multi-process tree, mean RSS otherwise.
pub fn memory_measure(
    experiment: &StoredExperiment,
    baseline: usize,
    end: EndOfLoad,
    judging: &JudgeSettings,
) -> Measure {
    let pss = judge_by_pss(experiment, baseline);
    let is_service = experiment
        .configs
        .get(baseline)
        .is_some_and(|c| ok_runs(c).any(|r| (end_of_load_measure(end).value)(r).is_some()));
    let mean = || {
        if pss {
            measure(
                "mean_pss_bytes",
                "mean PSS",
                Box::new(|r| of(r).mean_pss_bytes.map(|b| b as f64)),
            )
        } else {
            measure(
                "mean_rss_bytes",
                "mean RSS",
                Box::new(|r| Some(of(r).mean_rss_bytes as f64)),
            )
        }
    };
    match judging.memory_metric {
        Some(MemoryMetric::Peak) if pss => measure(
            "peak_pss_bytes",
            "peak PSS",
            Box::new(|r| of(r).peak_pss_bytes.map(|b| b as f64)),
        ),
        Some(MemoryMetric::Peak) => measure(
            "peak_rss_bytes",
            "peak RSS",
            Box::new(|r| Some(of(r).peak_rss_bytes as f64)),
        ),
        Some(MemoryMetric::Mean) => mean(),
        Some(MemoryMetric::Final) => measure(
            "final_rss_bytes",
            "final RSS",
            Box::new(|r| Some(of(r).final_rss_bytes as f64)),
        ),
        Some(MemoryMetric::EndOfLoad) => end_of_load_measure(end),
        None if is_service => end_of_load_measure(end),
        None => mean(),
    }
}

fn latency(pick: fn(&crate::model::Latency) -> f64) -> Value {
    Box::new(move |r| {
        r.record
            .service
            .as_ref()
            .and_then(|s| s.latency.as_ref())
            .map(pick)
    })
}

/// The performance measure: `--perf-metric`, else a service's p95 latency
/// (its load duration without latency figures), else wall time. `table` is
/// the experiment's metric table (`metric_table::of_experiment`).
pub fn perf_measure(
    experiment: &StoredExperiment,
    judging: &JudgeSettings,
    table: &[MetricDef],
) -> Measure {
    let runs = || experiment.configs.iter().flat_map(ok_runs);
    let has_latency = runs().any(|r| {
        r.record
            .service
            .as_ref()
            .is_some_and(|s| s.latency.is_some())
    });
    let has_load = runs().any(|r| {
        r.record
            .service
            .as_ref()
            .is_some_and(|s| s.load_duration_s().is_some())
    });
    match &judging.perf_metric {
        Some(PerfMetric::Wall) => {
            measure("wall_s", "wall time", Box::new(|r| Some(r.record.wall_s)))
        }
        Some(PerfMetric::Cpu) => measure(
            "cpu_s",
            "CPU time",
            Box::new(|r| Some(r.record.user_s + r.record.sys_s)),
        ),
        Some(PerfMetric::P50) => measure("p50_ms", "median response time", latency(|l| l.p50_ms)),
        Some(PerfMetric::P95) => measure("p95_ms", "p95 latency", latency(|l| l.p95_ms)),
        Some(PerfMetric::P99) => measure("p99_ms", "p99 latency", latency(|l| l.p99_ms)),
        Some(PerfMetric::User(name)) => {
            match metric_table::find(table, &metric_table::user_id(name)) {
                Some(row) => {
                    let extract = row.extract.clone();
                    Measure {
                        id: name.clone(),
                        words: name.clone(),
                        value: Box::new(move |r| extract(r)),
                        higher_is_better: row.better == Better::Higher,
                    }
                }
                // Not one of the experiment's --metrics (options checks that
                // it is): no run has a value.
                None => measure(name, name, Box::new(|_| None)),
            }
        }
        None if has_latency => measure("p95_ms", "p95 latency", latency(|l| l.p95_ms)),
        None if has_load => measure(
            "load_s",
            "load duration",
            Box::new(|r| r.record.service.as_ref().and_then(|s| s.load_duration_s())),
        ),
        None => measure("wall_s", "wall time", Box::new(|r| Some(r.record.wall_s))),
    }
}

/// Each ok run's value keyed by its round (the run index).
pub fn by_round(config: &StoredConfig, m: &Measure) -> Vec<(u32, f64)> {
    ok_runs(config)
        .filter_map(|r| (m.value)(r).map(|v| (r.record.index, v)))
        .collect()
}

/// The cost ratio of `config` to `base` (above 1 is worse).
pub fn cost_ratio(config: &StoredConfig, base: &StoredConfig, m: &Measure) -> Option<LogRatio> {
    let (c, b) = (by_round(config, m), by_round(base, m));
    if m.higher_is_better {
        log_ratio(&b, &c)
    } else {
        log_ratio(&c, &b)
    }
}

/// One candidate's ratios and standing.
pub struct Judged {
    pub index: usize,
    pub memory: Option<LogRatio>,
    pub perf: Option<LogRatio>,
    pub standing: Standing,
}

/// The measures `judging` and the experiment choose, and every candidate
/// judged by them: what the verdict and the adaptive judge both start from.
/// `table` is the experiment's metric table.
pub fn judge_experiment(
    experiment: &StoredExperiment,
    baseline: usize,
    end: EndOfLoad,
    judging: &JudgeSettings,
    table: &[MetricDef],
) -> (Measure, Measure, Vec<Judged>) {
    let memory = memory_measure(experiment, baseline, end, judging);
    let perf = perf_measure(experiment, judging, table);
    let judged = judge_all(experiment, baseline, &memory, &perf, judging);
    (memory, perf, judged)
}

/// Every candidate (the baseline left out), in configuration order.
fn judge_all(
    experiment: &StoredExperiment,
    baseline: usize,
    memory: &Measure,
    perf: &Measure,
    judging: &JudgeSettings,
) -> Vec<Judged> {
    let thresholds = Thresholds::from_percent(
        judging.min_saving_pct,
        judging.max_slowdown_pct,
        judging.decision_alpha,
    );
    let Some(base) = experiment.configs.get(baseline) else {
        return Vec::new();
    };
    let mut judged: Vec<Judged> = experiment
        .configs
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != baseline)
        .map(|(index, config)| {
            let memory = cost_ratio(config, base, memory);
            let perf = cost_ratio(config, base, perf);
            let standing = standing(memory.as_ref(), perf.as_ref(), thresholds);
            Judged {
                index,
                memory,
                perf,
                standing,
            }
        })
        .collect();
    let mut standings: Vec<Standing> = judged.iter().map(|j| j.standing.clone()).collect();
    outrank(&mut standings);
    for (j, s) in judged.iter_mut().zip(standings) {
        j.standing = s;
    }
    judged
}
