//! The description of every per-run measure that is summarised across runs
//! and that the verdict can judge by: its id (the JSON/CSV key), the words
//! the tables and the verdict use, its unit, how a run yields it, whether it
//! gets a ratio to the baseline, and which way is better. `analyze` builds
//! each configuration's series by iterating this table. An experiment's
//! table (`of_experiment`) is the built-in rows (`summarised()`), a
//! service's rows when it ran one, and one row per `--metric` it stored, so
//! the analysis, the verdict, the adaptive judge, the plots and every
//! reporter read the same rows, looked up by id. `--memory-metric` and
//! `--perf-metric` name a row (`MetricDef::name`, or its id); the words of
//! `TREE_WORDS` name a row by the tree measured (`analyze::choice`).

use super::metrics::of;
use allocscope_core::model::{
    ExperimentInfo, Latency, Reclaim, RunMetrics, ServiceRecord, StoredRun, UserMetricInfo,
};
use std::sync::Arc;

pub use allocscope_core::units::Unit;

/// The suffix an id of this unit ends with (`_bytes`, `_s`, `_ms`).
fn suffix(unit: Unit) -> &'static str {
    match unit {
        Unit::Bytes => "_bytes",
        Unit::Seconds => "_s",
        Unit::Milliseconds => "_ms",
        Unit::Ratio | Unit::Count | Unit::Number => "",
    }
}

/// Whether the human-readable tables (terminal, Markdown, HTML) show a
/// metric; JSON and CSV always carry every row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    Always,
    /// Only when some configuration measured it (e.g. PSS).
    WhenMeasured,
    Never,
}

/// Which way a configuration should move this metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
}

/// How one `ok` run yields the metric; `None` when the run did not measure
/// it (e.g. PSS never read). A closure, so a metric defined at run time
/// (a `--metric NAME=REGEX` over stdout) fits the same table.
pub(crate) type Extractor = Arc<dyn Fn(&StoredRun) -> Option<f64> + Send + Sync>;

/// One row of the metric table.
#[derive(Clone)]
pub struct MetricDef {
    /// The key in JSON and the stem of the CSV columns, e.g. `peak_rss_bytes`.
    pub id: String,
    /// The words the tables and verdict use, e.g. `peak RSS`.
    pub label: String,
    /// How it is computed, added to the terminal block's title, e.g.
    /// `time-weighted`.
    pub detail: Option<String>,
    pub unit: Unit,
    pub extract: Extractor,
    /// Whether the summary has a ratio to the baseline for it.
    pub ratio: bool,
    pub better: Better,
    pub shown: Shown,
}

impl MetricDef {
    /// The terminal block's title: the label with its detail.
    pub fn title(&self) -> String {
        match &self.detail {
            Some(d) => format!("{} ({d})", self.label),
            None => self.label.clone(),
        }
    }

    /// True for a `--metric` row (`user.NAME`).
    pub fn is_user(&self) -> bool {
        self.id.starts_with(USER_PREFIX)
    }

    /// The word `--memory-metric` / `--perf-metric` name it by: a
    /// `--metric`'s NAME, else the id without its unit suffix (`peak_pss`
    /// for `peak_pss_bytes`, `wall` for `wall_s`).
    pub fn name(&self) -> &str {
        match self.id.strip_prefix(USER_PREFIX) {
            Some(name) => name,
            None => self.id.strip_suffix(suffix(self.unit)).unwrap_or(&self.id),
        }
    }

    /// True for a measure of memory: what `--memory-metric` may name;
    /// `--perf-metric` names the others.
    pub fn is_memory(&self) -> bool {
        self.unit == Unit::Bytes
    }

    /// The stem of the CSV ratio columns: the id without its unit suffix,
    /// e.g. `ratio_peak_rss` for `peak_rss_bytes`.
    pub fn ratio_column(&self) -> String {
        let stem = self.id.strip_suffix(suffix(self.unit)).unwrap_or(&self.id);
        format!("ratio_{stem}")
    }

    /// A row no run has a value of: what a stored choice that names no row
    /// of the experiment's table judges by (every side stays open).
    pub fn unmeasured(id: &str, unit: Unit) -> MetricDef {
        MetricDef {
            shown: Shown::Never,
            ..row(id, id, unit, false, |_| None)
        }
    }
}

/// Two rows are equal when they describe the same metric (the extractor, a
/// closure, cannot be compared).
impl PartialEq for MetricDef {
    fn eq(&self, other: &Self) -> bool {
        fn key(m: &MetricDef) -> impl PartialEq + '_ {
            (
                &m.id, &m.label, &m.detail, m.unit, m.ratio, m.better, m.shown,
            )
        }
        key(self) == key(other)
    }
}

impl std::fmt::Debug for MetricDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricDef")
            .field("id", &self.id)
            .field("unit", &self.unit)
            .field("ratio", &self.ratio)
            .finish_non_exhaustive()
    }
}

/// A built-in row: lower is better, shown always, no detail.
fn row(
    id: &str,
    label: &str,
    unit: Unit,
    ratio: bool,
    extract: impl Fn(&StoredRun) -> Option<f64> + Send + Sync + 'static,
) -> MetricDef {
    MetricDef {
        id: id.to_string(),
        label: label.to_string(),
        detail: None,
        unit,
        extract: Arc::new(extract),
        ratio,
        better: Better::Lower,
        shown: Shown::Always,
    }
}

/// The fewest samples a run's time-weighted mean is taken from. A run that
/// ended before its third tick (shorter than two sampling intervals) was
/// read once or twice, at its start-up: that is not its mean memory, so
/// the run has none and the judge falls back to the peak (`choice`).
pub(crate) const MEAN_MIN_SAMPLES: usize = 3;

/// True when `run` was sampled often enough for a time-weighted mean; a
/// run kept from before schema 6 without samples has the mean it stored.
pub(crate) fn sampled_through(run: &StoredRun) -> bool {
    let samples = run.record.samples.len();
    samples >= MEAN_MIN_SAMPLES || (samples == 0 && run.legacy_metrics.is_some())
}

/// A time-weighted mean over the run's samples, absent from a run with
/// too few of them.
fn time_weighted(def: MetricDef) -> MetricDef {
    let extract = Arc::clone(&def.extract);
    MetricDef {
        detail: Some("time-weighted".to_string()),
        extract: Arc::new(move |r| sampled_through(r).then(|| extract(r)).flatten()),
        ..def
    }
}

/// The built-in summarised metrics, in the order the reports list them.
pub fn summarised() -> Vec<MetricDef> {
    let mut rows = vec![
        bytes("peak_rss_bytes", "peak RSS", true, |m| {
            Some(m.peak_rss_bytes)
        }),
        time_weighted(bytes("mean_rss_bytes", "mean RSS", true, |m| {
            Some(m.mean_rss_bytes)
        })),
        // With a ratio: the verdict ranks a tree of several processes by it.
        when_measured(time_weighted(bytes(
            "mean_pss_bytes",
            "mean PSS",
            true,
            |m| m.mean_pss_bytes,
        ))),
        // What `--memory-metric peak` judges a tree of several processes
        // by; in JSON and CSV only.
        never(bytes("peak_pss_bytes", "peak PSS", false, |m| {
            m.peak_pss_bytes
        })),
        // The memory no other process shares; in JSON and CSV only.
        never(row("peak_uss_bytes", "peak USS", Unit::Bytes, false, |r| {
            super::metrics::peak_uss_bytes(r).map(|b| b as f64)
        })),
        // The last sample's RSS, what `--memory-metric final` judges by; in
        // JSON and CSV only.
        never(bytes("final_rss_bytes", "final RSS", false, |m| {
            Some(m.final_rss_bytes)
        })),
    ];
    rows.extend(cgroup_rows());
    rows.extend([
        row("wall_s", "wall time", Unit::Seconds, true, |r| {
            Some(r.record.wall_s)
        }),
        // user + sys of the tree: what the budget judges a batch program
        // by (`analyze::choice`); in JSON and CSV only.
        never(row("cpu_s", "CPU time", Unit::Seconds, true, |r| {
            Some(r.record.user_s + r.record.sys_s)
        })),
    ]);
    rows.extend(reclaim_rows());
    rows
}

/// A row of one of a run's figures in bytes (`metrics::of`).
fn bytes(id: &str, label: &str, ratio: bool, pick: fn(&RunMetrics) -> Option<u64>) -> MetricDef {
    row(id, label, Unit::Bytes, ratio, move |r| {
        pick(&of(r)).map(|b| b as f64)
    })
}

/// The run's memory cgroup: the tree's charge (every page once) and the
/// working set container platforms limit on; shown when measured.
fn cgroup_rows() -> Vec<MetricDef> {
    vec![
        when_measured(time_weighted(bytes(
            "mean_cgroup_bytes",
            "mean cgroup charge",
            true,
            |m| m.cgroup_mean_bytes,
        ))),
        never(bytes(
            "peak_cgroup_bytes",
            "peak cgroup charge",
            false,
            |m| m.cgroup_peak_bytes,
        )),
        never(time_weighted(bytes(
            "mean_working_set_bytes",
            "mean working set",
            false,
            |m| m.working_set_mean_bytes,
        ))),
        when_measured(bytes(
            "peak_working_set_bytes",
            "peak working set",
            true,
            |m| m.working_set_peak_bytes,
        )),
    ]
}

/// The reclaim test's RSS before and after (the processes that ran one;
/// none where no process had a reclaim call); in JSON and CSV only.
fn reclaim_rows() -> Vec<MetricDef> {
    let rss = |id, label, pick: fn(&Reclaim) -> u64| {
        never(row(id, label, Unit::Bytes, false, move |r| {
            let ran = r.record.reclaim.as_ref().filter(|c| c.processes > 0);
            ran.map(|c| pick(c) as f64)
        }))
    };
    vec![
        rss(
            "reclaim_rss_before_bytes",
            "RSS before the reclaim test",
            |c| c.rss_before_bytes,
        ),
        rss(
            "reclaim_rss_after_bytes",
            "RSS after the reclaim test",
            |c| c.rss_after_bytes,
        ),
    ]
}

/// A row shown only when some configuration measured it.
fn when_measured(def: MetricDef) -> MetricDef {
    MetricDef {
        shown: Shown::WhenMeasured,
        ..def
    }
}

/// A row in JSON and CSV only.
fn never(def: MetricDef) -> MetricDef {
    MetricDef {
        shown: Shown::Never,
        ..def
    }
}

/// A service experiment's rows (`compare --server`): the memory at the end
/// of the load and the load's latency and duration, what the verdict judges
/// a service by, with ratios to the baseline (but p99's). Not in the
/// comparison table: the service table shows them (`report::columns`).
pub fn service_rows() -> Vec<MetricDef> {
    let end_of_load = |id, label, pick: fn(&ServiceRecord) -> Option<u64>| {
        never(row(id, label, Unit::Bytes, true, move |r| {
            r.record.service.as_ref().and_then(pick).map(|b| b as f64)
        }))
    };
    let latency = |id, label, ratio, pick: fn(&Latency) -> f64| {
        never(row(id, label, Unit::Milliseconds, ratio, move |r| {
            let service = r.record.service.as_ref()?;
            service.latency.as_ref().map(pick)
        }))
    };
    vec![
        end_of_load("rss_end_load_bytes", "RSS at end of load", |s| {
            s.rss_end_load_bytes
        }),
        end_of_load("pss_end_load_bytes", "PSS at end of load", |s| {
            s.pss_end_load_bytes
        }),
        latency("p50_ms", "median response time", true, |l| l.p50_ms),
        latency("p95_ms", "p95 response time", true, |l| l.p95_ms),
        latency("p99_ms", "p99 response time", false, |l| l.p99_ms),
        never(row("load_s", "load duration", Unit::Seconds, true, |r| {
            r.record.service.as_ref()?.load_duration_s()
        })),
        // The tree's CPU over the requests the built-in load sent: what the
        // budget judges a service by (`analyze::choice`).
        never(row(
            "cpu_per_request_ms",
            "CPU per request",
            Unit::Milliseconds,
            true,
            |r| {
                let latency = r.record.service.as_ref()?.latency.as_ref()?;
                let cpu_s = r.record.user_s + r.record.sys_s;
                (latency.requests > 0).then(|| cpu_s * 1e3 / latency.requests as f64)
            },
        )),
    ]
}

/// A `--memory-metric` word that names a row by the tree measured: its RSS
/// row, or for a tree of several processes its PSS row (RSS counts their
/// shared pages once per process); see `analyze::choice`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeWord {
    pub word: &'static str,
    pub rss: &'static str,
    pub pss: Option<&'static str>,
}

/// The tree words, in the order the usage error lists them.
pub const TREE_WORDS: [TreeWord; 4] = [
    TreeWord {
        word: "peak",
        rss: "peak_rss_bytes",
        pss: Some("peak_pss_bytes"),
    },
    TreeWord {
        word: "mean",
        rss: "mean_rss_bytes",
        pss: Some("mean_pss_bytes"),
    },
    TreeWord {
        word: "final",
        rss: "final_rss_bytes",
        pss: None,
    },
    TreeWord {
        word: "end-of-load",
        rss: "rss_end_load_bytes",
        pss: Some("pss_end_load_bytes"),
    },
];

/// The tree word `word`.
pub fn tree_word(word: &str) -> Option<TreeWord> {
    TREE_WORDS.iter().copied().find(|t| t.word == word)
}

/// The id of a `--metric NAME` row: `user.NAME`. Built-in ids never hold a
/// `.`, so a user's name cannot collide with one (a `--metric wall_s` is
/// `user.wall_s`).
pub(crate) fn user_id(name: &str) -> String {
    format!("{USER_PREFIX}{name}")
}

/// What every `--metric` row's id starts with.
const USER_PREFIX: &str = "user.";

/// The row of one `--metric`: its value is what the run printed, with a
/// ratio to the baseline paired by round like wall time, shown when some
/// configuration has a value.
pub(crate) fn user_row(metric: &UserMetricInfo) -> MetricDef {
    let name = metric.name.clone();
    let (better, direction) = if metric.higher_is_better {
        (Better::Higher, "higher is better")
    } else {
        (Better::Lower, "lower is better")
    };
    MetricDef {
        id: user_id(&metric.name),
        label: metric.name.clone(),
        detail: Some(format!("--metric, {direction}")),
        unit: Unit::Number,
        extract: Arc::new(move |r| r.record.user_metrics.get(&name).copied()),
        ratio: true,
        better,
        shown: Shown::WhenMeasured,
    }
}

/// The table of one experiment: the built-in rows, a service's rows when
/// it ran one, then its `--metric`s in the order they were given. Without
/// `--server` and `--metric` it is `summarised()`.
pub fn of_experiment(info: &ExperimentInfo) -> Vec<MetricDef> {
    of_parts(info.service.is_some(), &info.user_metrics)
}

/// The table of an experiment that ran a service or not, with these
/// `--metric`s: what `compare` checks its judging flags against before it
/// runs anything.
pub fn of_parts(service: bool, user_metrics: &[UserMetricInfo]) -> Vec<MetricDef> {
    let mut table = summarised();
    if service {
        table.extend(service_rows());
    }
    table.extend(user_metrics.iter().map(user_row));
    table
}

/// The row with this id.
pub fn find<'a>(table: &'a [MetricDef], id: &str) -> Option<&'a MetricDef> {
    table.iter().find(|m| m.id == id)
}

/// The row a `--memory-metric` / `--perf-metric` word names: by its name,
/// or by its id (what the store keeps). Built-in rows come first, so a
/// `--metric wall` does not shadow wall time.
pub fn named<'a>(table: &'a [MetricDef], word: &str) -> Option<&'a MetricDef> {
    table.iter().find(|m| m.name() == word || m.id == word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_found_by_name() {
        let table = summarised();
        for m in &table {
            assert_eq!(
                find(&table, &m.id).map(|f| f.id.as_str()),
                Some(m.id.as_str())
            );
        }
        assert!(find(&table, "no_such_metric").is_none());
        let columns: Vec<String> = table
            .iter()
            .filter(|m| m.ratio)
            .map(MetricDef::ratio_column)
            .collect();
        assert_eq!(
            columns,
            [
                "ratio_peak_rss",
                "ratio_mean_rss",
                "ratio_mean_pss",
                "ratio_mean_cgroup",
                "ratio_peak_working_set",
                "ratio_wall",
                "ratio_cpu"
            ]
        );
        let ids: std::collections::BTreeSet<_> = table.iter().map(|m| &m.id).collect();
        assert_eq!(ids.len(), table.len());
    }

    #[test]
    fn a_run_yields_each_metric_from_its_samples() {
        let e = allocscope_core::fixture::experiment();
        let run = &e.configs[0].runs[0];
        let m = of(run);
        let table = summarised();
        let get = |id: &str| find(&table, id).and_then(|d| (d.extract)(run));
        assert_eq!(get("peak_rss_bytes"), Some(m.peak_rss_bytes as f64));
        assert_eq!(get("mean_pss_bytes"), m.mean_pss_bytes.map(|b| b as f64));
        assert_eq!(get("cpu_s"), Some(run.record.user_s + run.record.sys_s));
    }

    #[test]
    fn the_cgroup_rows_are_measured_only_for_a_run_with_a_group_and_can_be_judged_by() {
        let e = allocscope_core::fixture::experiment();
        let mut run = e.configs[0].runs[0].clone();
        let table = summarised();
        let get = |id: &str, run: &StoredRun| find(&table, id).and_then(|d| (d.extract)(run));
        assert_eq!(get("peak_working_set_bytes", &run), None);
        for (k, sample) in run.record.samples.iter_mut().enumerate() {
            sample.cgroup = Some(allocscope_core::model::CgroupSample {
                charge_bytes: 1000 + k as u64,
                working_set_bytes: 900 + k as u64,
                ..Default::default()
            });
        }
        let last = run.record.samples.len() as f64 - 1.0;
        assert_eq!(get("peak_working_set_bytes", &run), Some(900.0 + last));
        assert_eq!(get("peak_cgroup_bytes", &run), Some(1000.0 + last));
        assert!(get("mean_working_set_bytes", &run).is_some_and(|m| m < 900.0 + last));
        let row = named(&table, "peak_working_set").expect("found by its name");
        assert!(row.is_memory() && row.ratio);
    }

    #[test]
    fn an_experiment_without_metrics_has_the_built_in_table() {
        let e = allocscope_core::fixture::experiment();
        assert_eq!(of_experiment(&e.info), summarised());
    }

    #[test]
    fn each_user_metric_is_a_row_after_the_built_ins() {
        let e = allocscope_core::fixture::with_user_metric(true);
        let table = of_experiment(&e.info);
        assert_eq!(table.len(), summarised().len() + 1);
        let row = table.last().expect("a row");
        assert_eq!(row.id, "user.ops");
        assert!(
            summarised().iter().all(|m| !m.id.contains('.')),
            "built-in ids never hold the '.' that user ids do"
        );
        assert_eq!(row.label, "ops");
        assert_eq!(row.title(), "ops (--metric, higher is better)");
        assert_eq!(row.unit, Unit::Number);
        assert!(row.ratio);
        assert_eq!(row.better, Better::Higher);
        assert_eq!(row.shown, Shown::WhenMeasured);
        assert_eq!(row.ratio_column(), "ratio_user.ops");
        let runs = &e.configs[2].runs;
        assert_eq!(
            (row.extract)(&runs[0]),
            runs[0].record.user_metrics.get("ops").copied()
        );
        assert!((row.extract)(&runs[0]).is_some());
        assert_eq!((row.extract)(&runs[1]), None, "run 2 printed no match");
        let lower = user_row(&allocscope_core::model::UserMetricInfo {
            higher_is_better: false,
            ..e.info.user_metrics[0].clone()
        });
        assert_eq!(lower.better, Better::Lower);
        assert_eq!(lower.title(), "ops (--metric, lower is better)");
    }
}
