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

/// How a comparison is judged; `None` metrics keep today's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeSettings {
    pub max_slowdown_pct: f64,
    pub min_saving_pct: f64,
    pub memory_metric: Option<MemoryMetric>,
    pub perf_metric: Option<PerfMetric>,
}

impl Default for JudgeSettings {
    fn default() -> JudgeSettings {
        JudgeSettings {
            max_slowdown_pct: DEFAULT_MAX_SLOWDOWN_PCT,
            min_saving_pct: DEFAULT_MIN_SAVING_PCT,
            memory_metric: None,
            perf_metric: None,
        }
    }
}
