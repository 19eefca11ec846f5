//! How a comparison is judged (`--max-slowdown`, `--min-saving`,
//! `--memory-metric`, `--perf-metric`): plain settings that `options` checks
//! and `analyze` (the verdict, the adaptive judge) reads, so neither depends
//! on the other. Which way a `--metric` is better (`--higher-is-better`) is
//! the experiment's own, stored with it (`ExperimentInfo::user_metrics`).

/// The default `--max-slowdown`, in percent.
pub const DEFAULT_MAX_SLOWDOWN_PCT: f64 = 5.0;

/// The default `--min-saving`, in percent.
pub const DEFAULT_MIN_SAVING_PCT: f64 = 3.0;

/// What the verdict ranks memory by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryMetric {
    Peak,
    Mean,
    Final,
    EndOfLoad,
}

/// What the performance budget measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PerfMetric {
    Wall,
    Cpu,
    P50,
    P95,
    P99,
    /// A `--metric` by name.
    User(String),
}

impl MemoryMetric {
    /// The `--memory-metric` word for this choice.
    pub fn word(self) -> &'static str {
        match self {
            MemoryMetric::Peak => "peak",
            MemoryMetric::Mean => "mean",
            MemoryMetric::Final => "final",
            MemoryMetric::EndOfLoad => "end-of-load",
        }
    }
}

impl PerfMetric {
    /// The `--perf-metric` word for this choice.
    pub fn word(&self) -> &str {
        match self {
            PerfMetric::Wall => "wall",
            PerfMetric::Cpu => "cpu",
            PerfMetric::P50 => "p50",
            PerfMetric::P95 => "p95",
            PerfMetric::P99 => "p99",
            PerfMetric::User(name) => name,
        }
    }
}

/// The experiment's environment keys under which `compare` keeps the
/// metrics it was told to judge by, so that `report` judges a stored
/// experiment the same way unless told otherwise.
pub const MEMORY_METRIC_KEY: &str = "judge.memory_metric";
pub const PERF_METRIC_KEY: &str = "judge.perf_metric";
pub const MIN_SAVING_KEY: &str = "judge.min_saving_pct";
pub const MAX_SLOWDOWN_KEY: &str = "judge.max_slowdown_pct";

/// How a comparison is judged; `None` metrics keep today's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeSettings {
    pub max_slowdown_pct: f64,
    pub min_saving_pct: f64,
    pub memory_metric: Option<MemoryMetric>,
    pub perf_metric: Option<PerfMetric>,
    /// The two-sided error level the decision settles sides at: 0.05, or
    /// the stricter per-look level `--runs auto` uses while it decides
    /// whether to run another round (`analyze::decide::sequential_alpha`).
    pub decision_alpha: f64,
}

impl JudgeSettings {
    /// The environment entries that record how `compare` judged: the
    /// metric choices made on the command line, and the thresholds.
    pub fn to_environment(&self) -> Vec<(&'static str, String)> {
        let memory = self
            .memory_metric
            .map(|m| (MEMORY_METRIC_KEY, m.word().to_string()));
        let perf = self
            .perf_metric
            .as_ref()
            .map(|p| (PERF_METRIC_KEY, p.word().to_string()));
        let thresholds = [
            (MIN_SAVING_KEY, self.min_saving_pct.to_string()),
            (MAX_SLOWDOWN_KEY, self.max_slowdown_pct.to_string()),
        ];
        memory.into_iter().chain(perf).chain(thresholds).collect()
    }
}

impl Default for JudgeSettings {
    fn default() -> JudgeSettings {
        JudgeSettings {
            max_slowdown_pct: DEFAULT_MAX_SLOWDOWN_PCT,
            min_saving_pct: DEFAULT_MIN_SAVING_PCT,
            memory_metric: None,
            perf_metric: None,
            decision_alpha: 0.05,
        }
    }
}
