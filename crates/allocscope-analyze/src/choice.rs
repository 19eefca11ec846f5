//! Which rows of the metric table judge an experiment: the row
//! `--memory-metric` / `--perf-metric` named, the row a tree word names for
//! the tree measured (`peak`: peak PSS when a run's tree had several
//! processes and the baseline and every configuration have PSS, else peak
//! RSS), or, without a choice, the kind of experiment's: a service's memory
//! at the end of the load, else the mean memory; and for the budget the
//! tree's CPU time (per request where the load counted them), guarded by
//! the time a reader waits (wall time; a service's p95 latency, else its
//! load's duration): the guard settles a candidate out when its own
//! interval lies wholly over the budget, and never holds one open
//! (docs/statistics.md, "Which figure the budget judges"). The judge, the
//! verdict and the plots read the rows chosen here and nothing else.

use super::metric_table::{self, MetricDef, TreeWord, Unit};
use super::metrics::ok_runs;
use allocscope_core::judging::{JudgeSettings, MemoryChoice};
use allocscope_core::model::{StoredConfig, StoredExperiment};

/// The memory and performance rows an experiment is judged by.
#[derive(Debug, Clone, PartialEq)]
pub struct Measures {
    pub memory: MetricDef,
    pub perf: MetricDef,
    /// The time a reader waits, beside a CPU `perf` chosen by default: a
    /// candidate whose interval of it lies wholly over the budget is over
    /// the budget, whatever its CPU (threads serialized on one arena's lock
    /// spend less CPU and take longer); `None` with `--perf-metric`.
    pub guard: Option<MetricDef>,
}

/// The tree words tried in turn without `--memory-metric`: the first whose
/// row every ok run of the baseline and of each other configuration
/// measured (a service's end of load, the mean, or the peak for runs too
/// short for a mean), else the mean.
const DEFAULT_MEMORY: [&str; 3] = ["end-of-load", "mean", "peak"];

/// The time rows tried in turn without `--perf-metric`: the first that
/// some run measured (a service's latency, else its load's duration), else
/// wall time. The guard beside the CPU figure, and the budget's row when
/// CPU cannot be (`perf_rows`).
const DEFAULT_PERF: [&str; 3] = ["p95_ms", "load_s", "wall_s"];

/// The CPU rows tried in turn without `--perf-metric`: CPU per request
/// where the load counted them, else the tree's CPU time.
const DEFAULT_CPU: [&str; 2] = ["cpu_per_request_ms", "cpu_s"];

/// How far apart the configurations' fastest runs of a time row may be for
/// a fixed-duration program or load (`flat_fastest`): its start-up and
/// exit still vary with the allocator (jemalloc's start of a 1.5 s run
/// took up to 30 ms longer on a busy 2-core machine).
pub const FLAT_WALLS: f64 = 0.02;

/// The shortest fastest run a fixed duration is told from: programs are
/// told to run for seconds (`wrk -d 3s`, a benchmark's `--duration`), and
/// the fastest runs of a 0.1 s program agree within 2% (2 ms) by chance
/// in one experiment and not in the next.
pub const FIXED_MIN_S: f64 = 1.0;

/// The share of one core the tree's CPU time must hold over its wall time
/// (median of the ok runs) for flat wall times to mean that the program
/// was busy for a fixed time, so that its CPU time is not per unit of work.
/// A program that sleeps through a set time (a 24 MiB allocation in a
/// 0.1 s run holds 5-10% of a core) spends CPU on its work alone, and CPU
/// judges it.
pub const BUSY_SHARE: f64 = 0.25;

/// The fastest runs of `row`, one per configuration, when every
/// configuration's fastest is within `FLAT_WALLS` of the others' and at
/// least `FIXED_MIN_S` long (at least 4 ok runs in all): a fixed-duration
/// program (or load). Each run's value, for the median.
pub fn flat_fastest(experiment: &StoredExperiment, row: &MetricDef) -> Option<Vec<f64>> {
    let mut all: Vec<f64> = Vec::new();
    let mut fastest: Vec<f64> = Vec::new();
    for config in &experiment.configs {
        let values: Vec<f64> = ok_runs(config).filter_map(|r| (row.extract)(r)).collect();
        all.extend(&values);
        fastest.extend(values.iter().copied().reduce(f64::min));
    }
    let (lo, hi) = fastest
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &w| {
            (lo.min(w), hi.max(w))
        });
    let flat =
        all.len() >= 4 && fastest.len() >= 2 && lo >= FIXED_MIN_S && hi / lo <= 1.0 + FLAT_WALLS;
    flat.then_some(all)
}

/// True when the tree kept `BUSY_SHARE` of a core busy over its wall time
/// (median of every ok run).
fn busy(experiment: &StoredExperiment) -> bool {
    let shares: Vec<f64> = experiment
        .configs
        .iter()
        .flat_map(ok_runs)
        .filter(|r| r.record.wall_s > 0.0)
        .map(|r| (r.record.user_s + r.record.sys_s) / r.record.wall_s)
        .collect();
    super::stats::median(&shares).is_some_and(|share| share >= BUSY_SHARE)
}

/// True when some ok run of `config` has a value of `row`.
fn measured(config: &StoredConfig, row: &MetricDef) -> bool {
    ok_runs(config).any(|r| (row.extract)(r).is_some())
}

/// True when `config` has ok runs and each has a value of `row`.
fn measured_by_all(config: &StoredConfig, row: &MetricDef) -> bool {
    measured(config, row) && ok_runs(config).all(|r| (row.extract)(r).is_some())
}

/// True when the baseline's ok runs and those of every other configuration
/// that has any each have a value of `row`: a row some candidate's runs
/// lack (runs too short for a mean under a slower allocator) would leave
/// that candidate without a figure, ranked with the ones that failed.
fn measured_by_every_config(
    experiment: &StoredExperiment,
    baseline: usize,
    row: &MetricDef,
) -> bool {
    let configs = &experiment.configs;
    configs
        .get(baseline)
        .is_some_and(|c| measured_by_all(c, row))
        && configs
            .iter()
            .filter(|c| ok_runs(c).next().is_some())
            .all(|c| measured_by_all(c, row))
}

/// The warning when, without `--memory-metric`, the judge fell back to the
/// peak because runs were too short for a mean: how many, and the
/// interval that would give one.
pub(crate) fn short_runs_warning(
    experiment: &StoredExperiment,
    baseline: usize,
    table: &[MetricDef],
    judging: &JudgeSettings,
) -> Option<String> {
    let peak = metric_table::tree_word("peak")?;
    let memory = measures(experiment, baseline, table, judging).memory;
    let judged_peak = judging.memory_metric.is_none()
        && (memory.id == peak.rss || Some(memory.id.as_str()) == peak.pss);
    let short = experiment
        .configs
        .iter()
        .flat_map(ok_runs)
        .filter(|r| !metric_table::sampled_through(r))
        .count();
    (judged_peak && short > 0).then(|| {
        let interval = experiment.info.interval_ms;
        format!(
            "{short} runs were sampled fewer than {} times at --interval {interval}ms, too few \
             for a time-weighted mean: judged by the peak (the kernel's high-water mark); \
             --interval {}ms gives a mean",
            metric_table::MEAN_MIN_SAMPLES,
            (interval / 10).max(10)
        )
    })
}

/// True when an ok run's tree had several processes: RSS then counts their
/// shared pages once per process.
pub fn several_processes(experiment: &StoredExperiment) -> bool {
    experiment
        .configs
        .iter()
        .flat_map(ok_runs)
        .any(|r| r.record.samples.iter().any(|s| s.processes > 1))
}

/// The row `tree` names for this experiment: its PSS row for a tree of
/// several processes when the baseline, and every configuration that
/// measured the RSS row, measured the PSS row too; else its RSS row. `None`
/// when the table has no RSS row for it (`end-of-load` outside a service).
pub(crate) fn tree_row<'a>(
    experiment: &StoredExperiment,
    baseline: usize,
    table: &'a [MetricDef],
    tree: TreeWord,
) -> Option<&'a MetricDef> {
    let rss = metric_table::find(table, tree.rss)?;
    let pss = tree.pss.and_then(|id| metric_table::find(table, id));
    let pss = pss.filter(|pss| {
        let configs = &experiment.configs;
        several_processes(experiment)
            && configs.get(baseline).is_some_and(|c| measured(c, pss))
            && configs
                .iter()
                .filter(|c| measured(c, rss))
                .all(|c| measured(c, pss))
    });
    Some(pss.unwrap_or(rss))
}

/// The memory row: `--memory-metric`'s, else a service's end of load when
/// the baseline measured it, else the mean memory.
fn memory_row(
    experiment: &StoredExperiment,
    baseline: usize,
    table: &[MetricDef],
    choice: Option<&MemoryChoice>,
) -> MetricDef {
    let tree = |word: &str| {
        metric_table::tree_word(word).and_then(|t| tree_row(experiment, baseline, table, t))
    };
    let row = match choice {
        Some(MemoryChoice::Row(id)) => metric_table::find(table, id),
        Some(MemoryChoice::Tree(word)) => tree(word),
        None => DEFAULT_MEMORY
            .iter()
            .filter_map(|word| tree(word))
            .find(|row| measured_by_every_config(experiment, baseline, row))
            .or_else(|| tree("mean")),
    };
    match row {
        Some(row) => row.clone(),
        // A stored choice this experiment's table lacks: no run has a value.
        None => MetricDef::unmeasured(choice.map_or("mean", MemoryChoice::stored), Unit::Bytes),
    }
}

/// The time row without `--perf-metric`: the first default that some run
/// measured.
fn time_row<'a>(experiment: &StoredExperiment, table: &'a [MetricDef]) -> Option<&'a MetricDef> {
    DEFAULT_PERF
        .iter()
        .filter_map(|id| metric_table::find(table, id))
        .find(|row| experiment.configs.iter().any(|c| measured(c, row)))
        .or_else(|| metric_table::find(table, "wall_s"))
}

/// The CPU row without `--perf-metric`, when every configuration's ok runs
/// measured it (a configuration whose runs were stored without CPU times
/// reads 0 in each) and the program was not busy for a fixed time: such a
/// program or load spends about the same CPU whatever it gets done, so
/// there its time row (and the note that says to give a figure of its
/// work) stays the budget's.
fn cpu_row<'a>(
    experiment: &StoredExperiment,
    baseline: usize,
    table: &'a [MetricDef],
    time: &MetricDef,
) -> Option<&'a MetricDef> {
    // Whether some run read more than 0, per configuration: one run of a
    // short program may read 0 where its siblings do not.
    let recorded = |row: &MetricDef| {
        experiment
            .configs
            .iter()
            .filter(|c| ok_runs(c).next().is_some())
            .all(|c| ok_runs(c).any(|r| (row.extract)(r).is_some_and(|v| v > 0.0)))
    };
    let per_request = DEFAULT_CPU[0];
    let flat = flat_fastest(experiment, time).is_some() && busy(experiment);
    DEFAULT_CPU
        .iter()
        .filter_map(|id| metric_table::find(table, id))
        .filter(|row| row.id == per_request || !flat)
        .find(|row| measured_by_every_config(experiment, baseline, row) && recorded(row))
}

/// The performance row and its guard: `--perf-metric`'s alone, else the
/// CPU row guarded by the time row, else the time row alone.
fn perf_rows(
    experiment: &StoredExperiment,
    baseline: usize,
    table: &[MetricDef],
    choice: Option<&str>,
) -> (MetricDef, Option<MetricDef>) {
    if let Some(id) = choice {
        return match metric_table::find(table, id) {
            Some(row) => (row.clone(), None),
            // A stored choice this experiment's table lacks: no run has a value.
            None => (MetricDef::unmeasured(id, Unit::Number), None),
        };
    }
    let Some(time) = time_row(experiment, table) else {
        return (MetricDef::unmeasured("wall_s", Unit::Number), None);
    };
    match cpu_row(experiment, baseline, table, time) {
        Some(cpu) => (cpu.clone(), Some(time.clone())),
        None => (time.clone(), None),
    }
}

/// The rows `judging` and the experiment choose; `table` is the
/// experiment's metric table (`metric_table::of_experiment`).
pub fn measures(
    experiment: &StoredExperiment,
    baseline: usize,
    table: &[MetricDef],
    judging: &JudgeSettings,
) -> Measures {
    let (perf, guard) = perf_rows(experiment, baseline, table, judging.perf_metric.as_deref());
    Measures {
        memory: memory_row(experiment, baseline, table, judging.memory_metric.as_ref()),
        perf,
        guard,
    }
}

#[cfg(test)]
mod tests;
