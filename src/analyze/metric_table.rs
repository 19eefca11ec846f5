//! The description of every per-run metric that is summarised across runs:
//! its id (the JSON/CSV key), the words the tables use, its unit, how a run
//! yields it, whether it gets a ratio to the baseline, and which way is
//! better. `analyze` builds each configuration's series by iterating this
//! table; later metrics (user metrics parsed from a run's stdout, choices
//! by name such as `--memory-metric`) are rows added at analysis time, so
//! the table is a `Vec` built by `summarised()`, looked up by id.

use super::metrics::of;
use crate::model::StoredRun;
use std::sync::Arc;

/// What a metric's values measure, for formatting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Bytes,
    Seconds,
    Milliseconds,
    Ratio,
    Count,
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
pub type Extractor = Arc<dyn Fn(&StoredRun) -> Option<f64> + Send + Sync>;

/// One row of the metric table.
#[derive(Clone)]
pub struct MetricDef {
    /// The key in JSON and the stem of the CSV columns, e.g. `peak_rss_bytes`.
    pub id: String,
    /// The words the tables and verdict use, e.g. `peak RSS`.
    pub label: String,
    pub unit: Unit,
    pub extract: Extractor,
    /// Whether the summary has a ratio to the baseline for it.
    pub ratio: bool,
    pub better: Better,
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
        unit,
        extract: Arc::new(extract),
        ratio,
        better: Better::Lower,
    }
}

/// The built-in summarised metrics, in the order the reports list them.
pub fn summarised() -> Vec<MetricDef> {
    vec![
        row("peak_rss_bytes", "peak RSS", Unit::Bytes, true, |r| {
            Some(of(r).peak_rss_bytes as f64)
        }),
        row("mean_rss_bytes", "mean RSS", Unit::Bytes, true, |r| {
            Some(of(r).mean_rss_bytes as f64)
        }),
        row("mean_pss_bytes", "mean PSS", Unit::Bytes, false, |r| {
            of(r).mean_pss_bytes.map(|b| b as f64)
        }),
        row("wall_s", "wall", Unit::Seconds, true, |r| {
            Some(r.record.wall_s)
        }),
        row("cpu_s", "CPU", Unit::Seconds, false, |r| {
            Some(r.record.user_s + r.record.sys_s)
        }),
    ]
}

/// The row with this id.
pub fn find<'a>(table: &'a [MetricDef], id: &str) -> Option<&'a MetricDef> {
    table.iter().find(|m| m.id == id)
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
        let ids: std::collections::BTreeSet<_> = table.iter().map(|m| &m.id).collect();
        assert_eq!(ids.len(), table.len());
    }

    #[test]
    fn a_run_yields_each_metric_from_its_samples() {
        let e = crate::analyze::fixture::experiment();
        let run = &e.configs[0].runs[0];
        let m = of(run);
        let table = summarised();
        let get = |id: &str| find(&table, id).and_then(|d| (d.extract)(run));
        assert_eq!(get("peak_rss_bytes"), Some(m.peak_rss_bytes as f64));
        assert_eq!(get("mean_pss_bytes"), m.mean_pss_bytes.map(|b| b as f64));
        assert_eq!(get("cpu_s"), Some(run.record.user_s + run.record.sys_s));
    }
}
