//! The soak's verdict as data: which configuration to run, from each
//! configuration's replicas set against the baseline's (`config.rs`), with
//! the figures that justify it, why each growing configuration grows (its
//! live heap, a leak; or only its allocator's free memory, fragmentation)
//! and when each settled; or, when nothing separates yet, the time it would
//! take at the current noise. `render.rs` says it in sentences.

use crate::config::{combine, separation, ConfigSummary, Separation};
use crate::growth::{part_settling, settling, weighted_sum, Growth, Settling};
use crate::instance::InstanceSummary;
use allocscope_analyze::figures::Ratio;
use allocscope_analyze::interval::welch_log_ratio;

/// The configuration the others are set against: the one labelled
/// `glibc` (the allocator every program already has), else the first.
pub const BASELINE_LABEL: &str = "glibc";

/// Why a configuration's memory grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// Its live heap grows, and accounts for the memory's growth: the
    /// program holds more, a leak.
    Leak,
    /// Its live heap grows, and the memory grows beyond it: a leak, and the
    /// allocator holds more besides.
    LeakAndAllocator,
    /// Its live heap is flat and its allocator's free memory grows: the
    /// allocator holds the memory the program freed (fragmentation).
    AllocatorHolds,
    /// Its live heap and its allocator's free memory are both flat: it
    /// grows outside the malloc heap (file cache, shared memory, memory the
    /// program maps itself), which no allocator setting changes.
    OutsideHeap,
    /// Its live heap neither grows nor is flat yet.
    Unclear,
    /// No live heap was measured (no heap probe, as in a running process).
    Unmeasured,
}

/// One configuration in the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigVerdict {
    pub label: String,
    pub summary: ConfigSummary,
    /// Against the baseline; `None` for the baseline itself.
    pub separation: Option<Separation>,
    /// Why it grows, when it grows beyond noise (`Settling::Grows` or
    /// `Rising`).
    pub cause: Option<Cause>,
    /// When it settled on its plateau: it has been flat at least since this
    /// far into its segment (its recent window's start).
    pub settled_by_s: Option<f64>,
    /// Its CPU time per second against the baseline's; `None` where its
    /// samples or the baseline's carry no CPU time.
    pub cpu: Option<CpuCost>,
    /// Its load's figures against the baseline's (`--metric`), each that
    /// every replica on both sides printed.
    pub load: Vec<LoadCost>,
}

impl ConfigVerdict {
    /// It costs beyond the budget in CPU time or a load figure: never
    /// picked, whatever its memory.
    pub fn over_budget(&self) -> bool {
        self.cpu.as_ref().is_some_and(|c| c.over_budget) || self.load.iter().any(|l| l.over_budget)
    }
}

/// One of a configuration's load figures (the median of each replica's
/// readings over its growth window; the configuration's, their mean), and
/// for one set against the baseline what it costs under the budget.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadCost {
    pub name: String,
    pub higher_is_better: bool,
    pub value: f64,
    /// Its replicas' figures over the baseline's (Welch's t on the logs);
    /// `None` for the baseline.
    pub ratio: Option<Ratio>,
    /// The ratio's whole interval lies on the worse side of the budget:
    /// over it for a latency, under its inverse for a throughput.
    pub over_budget: bool,
}

/// A configuration's CPU time, and for one set against the baseline what
/// it costs: the budget `compare` judges by (`--max-slowdown`'s default).
#[derive(Debug, Clone, PartialEq)]
pub struct CpuCost {
    /// The mean of its replicas' CPU time per second over their growth
    /// windows, in cores (`instance::cpu_cores`).
    pub cores: f64,
    /// Its replicas' rates over the baseline's: Welch's t on their logs,
    /// as the plateaus' (`config::separation`); NaN bounds with one
    /// replica on a side. `None` for the baseline.
    pub ratio: Option<Ratio>,
    /// The ratio's whole interval lies over the budget: never picked.
    pub over_budget: bool,
}

/// The budget a configuration's CPU time (and a load figure) may be worse
/// than the baseline's by, as a ratio: `compare`'s default `--max-slowdown`.
pub const CPU_BUDGET: f64 = 1.0 + allocscope_core::judging::DEFAULT_MAX_SLOWDOWN_PCT / 100.0;

/// `replicas`' CPU cost against `baseline`'s replicas (`None` for the
/// baseline itself); `None` when a replica on either side has no rate.
fn cpu_cost(replicas: &[InstanceSummary], baseline: Option<&[InstanceSummary]>) -> Option<CpuCost> {
    let rates =
        |rs: &[InstanceSummary]| rs.iter().map(|r| r.cpu_cores).collect::<Option<Vec<f64>>>();
    let ours = rates(replicas)?;
    let ratio = match baseline {
        None => None,
        Some(base) => replicas_ratio(&ours, &rates(base)?),
    };
    Some(CpuCost {
        cores: mean(&ours),
        over_budget: ratio.is_some_and(|r| beyond_budget(&r, false)),
        ratio,
    })
}

/// `replicas`' load figures against `baseline`'s (`None` for the baseline
/// itself): each figure every replica has, set against the baseline's where
/// every one of its replicas has it too.
fn load_costs(replicas: &[InstanceSummary], baseline: Option<&[InstanceSummary]>) -> Vec<LoadCost> {
    let values = |rs: &[InstanceSummary], name: &str| {
        (rs.iter())
            .map(|r| r.load.iter().find(|f| f.name == name).map(|f| f.median))
            .collect::<Option<Vec<f64>>>()
    };
    let Some(first) = replicas.first() else {
        return Vec::new();
    };
    (first.load.iter())
        .filter_map(|figure| {
            let ours = values(replicas, &figure.name)?;
            let ratio = baseline
                .and_then(|base| values(base, &figure.name))
                .and_then(|theirs| replicas_ratio(&ours, &theirs));
            Some(LoadCost {
                name: figure.name.clone(),
                higher_is_better: figure.higher_is_better,
                value: mean(&ours),
                over_budget: (ratio.as_ref())
                    .is_some_and(|r| beyond_budget(r, figure.higher_is_better)),
                ratio,
            })
        })
        .collect()
}

/// The replicas' figures over the baseline's replicas': Welch's t on their
/// logs, as the plateaus' (`config::separation`); `None` unless every
/// figure is positive.
fn replicas_ratio(ours: &[f64], theirs: &[f64]) -> Option<Ratio> {
    let positive = ours.iter().chain(theirs).all(|&v| v > 0.0);
    positive
        .then(|| welch_log_ratio(ours, theirs))
        .flatten()
        .map(|r| r.ratio())
}

/// The ratio's whole interval lies on the worse side of `CPU_BUDGET`: over
/// it for a cost (CPU time, a latency), under its inverse for a throughput.
fn beyond_budget(ratio: &Ratio, higher_is_better: bool) -> bool {
    match higher_is_better {
        true => ratio.ci_high < 1.0 / CPU_BUDGET,
        false => ratio.ci_low > CPU_BUDGET,
    }
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// What the soak concludes.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Run this configuration: it grows slower than the baseline, or its
    /// plateau is lower and it grows no faster; of several, the lowest
    /// plateau.
    Pick { label: String, plateau_ratio: Ratio },
    /// Keep the baseline: every other configuration grows faster or
    /// plateaus higher (or there is no other).
    KeepBaseline,
    /// Every configuration grows with its live heap: a leak in the program,
    /// which no allocator fixes.
    LeakEverywhere,
    /// Every configuration grows outside the malloc heap (`Cause::OutsideHeap`)
    /// and none is better than the baseline: no allocator setting changes
    /// that growth, so the baseline stays.
    OutsideHeapEverywhere,
    /// Nothing separates yet. At the current noise and differences the
    /// growth rates would separate after `separate_after_s` of soak, the
    /// plateaus with `replicas` a side (`None`: not at any time, or not
    /// measurable with one replica a side).
    Inconclusive {
        separate_after_s: Option<f64>,
        replicas: Option<usize>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub baseline: String,
    /// In the order given, the baseline among them.
    pub configs: Vec<ConfigVerdict>,
    pub outcome: Outcome,
}

/// The verdict over `configs` (each a label and its replicas' summaries),
/// `elapsed_s` into the soak; `None` without a configuration that has a
/// replica, or when a plateau is not positive.
pub fn verdict(configs: &[(String, Vec<InstanceSummary>)], elapsed_s: f64) -> Option<Verdict> {
    let base = configs
        .iter()
        .position(|(label, _)| label == BASELINE_LABEL)
        .unwrap_or(0);
    let (baseline, base_replicas) = configs.get(base)?;
    let judged = configs
        .iter()
        .enumerate()
        .map(|(i, (label, replicas))| {
            let summary = combine(replicas)?;
            let separation = if i == base {
                None
            } else {
                Some(separation(replicas, base_replicas, elapsed_s)?)
            };
            Some(ConfigVerdict {
                cpu: cpu_cost(replicas, (i != base).then_some(base_replicas.as_slice())),
                load: load_costs(replicas, (i != base).then_some(base_replicas.as_slice())),
                label: label.clone(),
                cause: summary.settling.grows().then(|| cause(replicas, &summary)),
                settled_by_s: (summary.settling == Settling::Plateau)
                    .then_some(summary.window_start_s - summary.start_s),
                separation,
                summary,
            })
        })
        .collect::<Option<Vec<ConfigVerdict>>>()?;
    let outcome = outcome(&judged);
    Some(Verdict {
        baseline: baseline.clone(),
        configs: judged,
        outcome,
    })
}

/// Why a growing configuration grows: its replicas' live heap and
/// allocator free memory set against its memory, each flat when it is
/// under a tenth of the memory's growth (`growth::part_settling`). A flat
/// live heap leaves
/// the growth to the allocator when its free memory grows, and to memory
/// outside the heap when that is flat too (a database's file cache grew
/// 16 MiB/h under pgbench with 0.13 MiB free in glibc's arenas); a growing
/// live heap is a leak, and the allocator's too when what the live heap
/// leaves of the memory's growth grows beyond noise and its free memory
/// grows. The rates are taken as independent, though they rise together:
/// that widens the rest's interval, so a growth is put on the allocator only
/// when the live heap cannot account for it.
fn cause(replicas: &[InstanceSummary], summary: &ConfigSummary) -> Cause {
    let Some(live) = combined(replicas, |r| r.live_heap_growth) else {
        return Cause::Unmeasured;
    };
    let level = summary.level.median;
    let part = |g: &Growth| part_settling(g, &summary.growth, level);
    let free = combined(replicas, |r| r.allocator_free_growth).map(|f| part(&f));
    match part(&live) {
        Settling::Plateau => match free {
            Some(Settling::Grows) => Cause::AllocatorHolds,
            Some(Settling::Plateau) => Cause::OutsideHeap,
            _ => Cause::Unclear,
        },
        Settling::Open | Settling::Rising => Cause::Unclear,
        Settling::Grows => match weighted_sum(&[(1.0, summary.growth), (-1.0, live)]) {
            Some(rest)
                if settling(&rest, level) == Settling::Grows && free == Some(Settling::Grows) =>
            {
                Cause::LeakAndAllocator
            }
            _ => Cause::Leak,
        },
    }
}

/// The replicas' mean growth of one series, `None` when one lacks it.
pub fn combined(
    replicas: &[InstanceSummary],
    series: impl Fn(&InstanceSummary) -> Option<Growth>,
) -> Option<Growth> {
    let share = 1.0 / replicas.len() as f64;
    let parts: Option<Vec<(f64, Growth)>> = replicas
        .iter()
        .map(|r| series(r).map(|g| (share, g)))
        .collect();
    weighted_sum(&parts?)
}

fn outcome(configs: &[ConfigVerdict]) -> Outcome {
    if configs.iter().all(|c| c.cause == Some(Cause::Leak)) {
        return Outcome::LeakEverywhere;
    }
    let mut better: Vec<(&ConfigVerdict, Ratio)> = Vec::new();
    let mut undecided = Vec::new();
    for config in configs {
        let Some(s) = &config.separation else {
            continue;
        };
        let difference = s.growth_difference.per_hour;
        let slower = s.growths_separate && difference < 0.0;
        let faster = s.growths_separate && difference > 0.0;
        let lower = s.levels_separate && s.plateau_ratio.value < 1.0;
        let higher = s.levels_separate && s.plateau_ratio.value > 1.0;
        // What it saves does not count when it costs beyond the budget.
        if config.over_budget() {
            continue;
        }
        if slower || (lower && !faster) {
            better.push((config, s.plateau_ratio));
        } else if !(faster || higher) {
            undecided.push(s);
        }
    }
    if let Some((pick, ratio)) = better
        .into_iter()
        .min_by(|a, b| a.1.value.total_cmp(&b.1.value))
    {
        return Outcome::Pick {
            label: pick.label.clone(),
            plateau_ratio: ratio,
        };
    }
    if configs.iter().all(|c| c.cause == Some(Cause::OutsideHeap)) {
        return Outcome::OutsideHeapEverywhere;
    }
    if undecided.is_empty() {
        return Outcome::KeepBaseline;
    }
    Outcome::Inconclusive {
        separate_after_s: undecided
            .iter()
            .filter_map(|s| s.growths_separate_at_s)
            .min_by(f64::total_cmp),
        replicas: undecided
            .iter()
            .filter_map(|s| s.levels_separate_with_replicas)
            .min(),
    }
}
