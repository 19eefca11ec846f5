//! Command-line definitions of how many rounds `compare` runs and how a
//! comparison is judged (clap only; `options::rounds` checks them).

use super::values;
use clap::Args;
use std::time::Duration;

/// How long `compare --runs auto` goes on, and the user's own metrics.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Rounds and metrics")]
pub struct RoundArgs {
    /// With `--runs auto`: stop after N rounds even when some candidate is
    /// still unsettled (at least 2).
    #[arg(
        long,
        default_value = "20",
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = |s: &str| values::parse_count("--max-runs", s, 2)
    )]
    pub max_runs: u32,
    /// With `--runs auto`: start no new round after DUR (e.g. 30m).
    #[arg(long, value_name = "DUR", value_parser = values::parse_timeout)]
    pub max_time: Option<Duration>,
    /// A figure the workload prints, NAME=REGEX (the first capture group of
    /// the last matching line of stdout, else stderr), stored per run, e.g.
    /// --metric 'ops=([0-9.]+) ops/sec'. Repeatable.
    #[arg(long = "metric", value_name = "NAME=REGEX")]
    pub metric: Vec<String>,
    /// A --metric for which more is better (throughput). Repeatable.
    #[arg(long, value_name = "NAME")]
    pub higher_is_better: Vec<String>,
}

/// What `compare` and `report` judge by (besides `--max-slowdown`).
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Judging")]
pub struct JudgeArgs {
    /// The verdict's performance budget: recommend only configurations at
    /// most PCT percent slower than the baseline at the upper end of the 95%
    /// CI (the tree's CPU time, for a service CPU per request, with wall time,
    /// a service's p95 latency or load duration, as a guard that puts a
    /// candidate over the budget when its whole interval is).
    /// [default: 5; `report`: what `compare` was given]
    #[arg(long, value_name = "PCT", value_parser = values::parse_max_slowdown)]
    pub max_slowdown: Option<f64>,
    /// A memory saving below PCT percent is not a saving. [default: 3;
    /// `report`: what `compare` was given]
    #[arg(long, value_name = "PCT", value_parser = values::parse_min_saving)]
    pub min_saving: Option<f64>,
    /// What the verdict ranks memory by: peak, mean, final or end-of-load,
    /// or a memory row of the summary such as peak_pss or, in a memory
    /// cgroup, peak_working_set (default: mean, end-of-load for a service).
    #[arg(long, value_name = "METRIC")]
    pub memory_metric: Option<String>,
    /// What the budget measures: wall, cpu, p50, p95, p99 or the NAME of a
    /// --metric (default: cpu guarded by wall; for a service CPU per request
    /// guarded by p95 or the load's duration; wall for a fixed-duration
    /// program).
    #[arg(long, value_name = "METRIC")]
    pub perf_metric: Option<String>,
    /// What the memory limit each configuration needs adds to its peak
    /// (working set, else cgroup charge, else PSS or RSS), in percent; the
    /// limit is rounded up to a whole MiB. [default: 20; `report`: what
    /// `compare` was given]
    #[arg(long, value_name = "PCT", value_parser = values::parse_limit_headroom)]
    pub limit_headroom: Option<f64>,
}
