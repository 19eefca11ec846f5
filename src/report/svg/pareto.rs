//! The memory-against-performance plot: one point with its CI cross per
//! configuration and the Pareto frontier (the configurations no other beats
//! on both). The memory and performance the verdict judged by (mean RSS or
//! PSS and wall time unless `--memory-metric` / `--perf-metric` chose
//! others, such as a program's own throughput); for a service, end-of-load
//! memory against p95 latency (or the load's duration).

use super::chart::{Axis, Chart, Kind};
use super::colour;
use super::plots::{multi_process, names, Plot};
use crate::analyze::metric_table::{self, Better, MetricDef, Unit};
use crate::analyze::types::{Analysis, Estimate};

/// The configurations no other beats on both memory and performance, by
/// performance: points are (configuration, cost, memory), lower better.
pub fn frontier(points: &[(usize, f64, f64)]) -> Vec<usize> {
    let mut sorted: Vec<&(usize, f64, f64)> = points.iter().collect();
    sorted.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.2.total_cmp(&b.2)));
    let mut best = f64::INFINITY;
    let mut out = Vec::new();
    for &&(i, _, m) in &sorted {
        if m < best {
            best = m;
            out.push(i);
        }
    }
    out
}

/// What the memory-against-performance plot shows: for a service, the RSS
/// at the end of the load against the p95 latency (or the load's duration);
/// otherwise mean memory against wall time. Points are (configuration,
/// performance in seconds, memory in bytes).
pub fn pareto(analysis: &Analysis) -> Plot {
    let service = &analysis.service;
    let seconds = |e: Estimate| Estimate {
        median: e.median / 1000.0,
        ci_low: e.ci_low / 1000.0,
        ci_high: e.ci_high / 1000.0,
    };
    if !service.is_empty() {
        let latency = service.iter().any(|s| s.latency.is_some());
        let points = service
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let perf = if latency {
                    s.latency.map(|l| seconds(l.p95_ms))
                } else {
                    s.load_s
                };
                Some((i, perf?, (analysis.end_of_load.estimate)(s)?))
            })
            .collect();
        let x = if latency {
            "p95 latency"
        } else {
            "load duration"
        };
        let x = Perf {
            what: x,
            kind: Kind::Seconds,
            higher_is_better: false,
        };
        return pareto_chart(
            analysis,
            points,
            x,
            crate::report::markdown::end_of_load_head(analysis),
            "memory_vs_latency",
        );
    }
    let memory = memory_row(analysis);
    let perf = perf_row(analysis);
    let points = analysis
        .summaries
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((i, s.estimate(&perf.id)?, s.estimate(&memory.id)?)))
        .collect();
    let kind = if perf.unit == Unit::Seconds {
        Kind::Seconds
    } else {
        Kind::Plain
    };
    let x = Perf {
        what: &perf.label,
        kind,
        higher_is_better: perf.better == Better::Higher,
    };
    pareto_chart(analysis, points, x, &memory.label, "memory_vs_time")
}

/// The summaries' row of the memory the verdict judged by; mean PSS for a
/// tree of several processes, else mean RSS, when it has none.
fn memory_row(analysis: &Analysis) -> &MetricDef {
    let fallback = if multi_process(analysis) {
        "mean_pss_bytes"
    } else {
        "mean_rss_bytes"
    };
    metric_table::find(&analysis.metrics, &analysis.verdict.memory_metric)
        .filter(|row| row.unit == Unit::Bytes)
        .or_else(|| metric_table::find(&analysis.metrics, fallback))
        .expect("the built-in memory rows")
}

/// The summaries' row of the performance the verdict judged by: wall or
/// CPU time, or a `--metric` chosen by `--perf-metric` (the verdict names
/// it by its name); wall time when it has none.
fn perf_row(analysis: &Analysis) -> &MetricDef {
    let judged = &analysis.verdict.performance_metric;
    metric_table::find(&analysis.metrics, judged)
        .filter(|row| row.unit == Unit::Seconds)
        .or_else(|| metric_table::find(&analysis.metrics, &metric_table::user_id(judged)))
        .or_else(|| metric_table::find(&analysis.metrics, "wall_s"))
        .expect("the built-in wall time row")
}

/// The performance axis: its words, kind, and direction.
struct Perf<'a> {
    what: &'a str,
    kind: Kind,
    higher_is_better: bool,
}

/// Memory against performance, one point with CI cross per configuration
/// and the Pareto frontier.
fn pareto_chart(
    analysis: &Analysis,
    points: Vec<(usize, Estimate, Estimate)>,
    x: Perf,
    what: &str,
    name: &'static str,
) -> Plot {
    // f64::max skips the NaN bound of an estimate without an interval.
    let x_max = points
        .iter()
        .map(|p| p.1.ci_high.max(p.1.median))
        .fold(0.0, f64::max);
    let y_max = points
        .iter()
        .map(|p| p.2.ci_high.max(p.2.median))
        .fold(0.0, f64::max);
    let title = format!(
        "{what} against {} (median, 95% CI; line: Pareto frontier)",
        x.what
    );
    let mut chart = Chart::new(
        &title,
        Axis::new(0.0, x_max * 1.08, x.what, x.kind),
        Axis::new(0.0, y_max * 1.08, what, Kind::Bytes),
    );
    // A throughput's cost falls as it rises.
    let sign = if x.higher_is_better { -1.0 } else { 1.0 };
    let front = frontier(
        &points
            .iter()
            .map(|(i, w, m)| (*i, sign * w.median, m.median))
            .collect::<Vec<_>>(),
    );
    let line: Vec<(f64, f64)> = front
        .iter()
        .filter_map(|i| points.iter().find(|p| p.0 == *i))
        .map(|(_, w, m)| (chart.px(w.median), chart.py(m.median)))
        .collect();
    chart.svg.polyline(&line, "#777777", 1.5, 0.8);
    for (i, w, m) in &points {
        let (x, y) = (chart.px(w.median), chart.py(m.median));
        // The cross's arms are the intervals; below 6 runs there are none.
        if w.ci_low.is_finite() && w.ci_high.is_finite() {
            let (low, high) = (chart.px(w.ci_low), chart.px(w.ci_high));
            chart.svg.line(low, y, high, y, colour(*i), 2.0);
        }
        if m.ci_low.is_finite() && m.ci_high.is_finite() {
            let (low, high) = (chart.py(m.ci_low), chart.py(m.ci_high));
            chart.svg.line(x, low, x, high, colour(*i), 2.0);
        }
        chart.svg.circle(x, y, 5.0, colour(*i));
    }
    chart.legend(&names(analysis));
    chart.note(
        0,
        if x.higher_is_better {
            "lower right is better"
        } else {
            "lower left is better"
        },
    );
    Plot {
        name,
        title,
        svg: chart.finish(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontier_keeps_only_undominated_points() {
        let pts = [
            (0, 1.0, 100.0),
            (1, 2.0, 50.0),
            (2, 3.0, 80.0),
            (3, 0.5, 120.0),
        ];
        assert_eq!(frontier(&pts), [3, 0, 1]);
    }
}
