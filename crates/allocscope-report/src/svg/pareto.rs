//! The memory-against-performance plot: one point with its CI cross per
//! configuration and the Pareto frontier (the configurations no other beats
//! on both), on the two rows of the metric table the verdict judged by
//! (`Verdict::memory`, `Verdict::performance`): mean RSS or PSS against wall
//! time unless `--memory-metric` / `--perf-metric` chose others, such as a
//! program's own throughput; for a service, its memory at the end of the
//! load against its p95 latency (or the load's duration).

use super::chart::{Axis, Chart, Kind};
use super::colour;
use super::plot::{names, Plot};
use allocscope_analyze::metric_table::{Better, Unit};
use allocscope_analyze::types::{Analysis, Estimate};

/// The configurations no other beats on both memory and performance, by
/// performance: points are (configuration, cost, memory), lower better.
pub(crate) fn frontier(points: &[(usize, f64, f64)]) -> Vec<usize> {
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

/// Each configuration's (index, performance, memory) on the rows the
/// verdict judged by; milliseconds as seconds.
fn points(analysis: &Analysis) -> Vec<(usize, Estimate, Estimate)> {
    let (memory, perf) = (&analysis.verdict.memory, &analysis.verdict.performance);
    let scale = if perf.unit == Unit::Milliseconds {
        1000.0
    } else {
        1.0
    };
    let in_seconds = |e: Estimate| Estimate {
        median: e.median / scale,
        ci_low: e.ci_low / scale,
        ci_high: e.ci_high / scale,
    };
    analysis
        .summaries
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let perf = s.estimate(&perf.id).map(in_seconds)?;
            Some((i, perf, s.estimate(&memory.id)?))
        })
        .collect()
}

/// The memory-against-performance plot of the rows the verdict judged by:
/// one point with its CI cross per configuration, and the Pareto frontier.
pub fn pareto(analysis: &Analysis) -> Plot {
    let (memory, perf) = (&analysis.verdict.memory, &analysis.verdict.performance);
    let points = points(analysis);
    let kind = match perf.unit {
        Unit::Seconds | Unit::Milliseconds => Kind::Seconds,
        _ => Kind::Plain,
    };
    let higher_is_better = perf.better == Better::Higher;
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
        "{} against {} (median, 95% CI; line: Pareto frontier)",
        memory.label, perf.label
    );
    let mut chart = Chart::new(
        &title,
        Axis::new(0.0, x_max * 1.08, &perf.label, kind),
        Axis::new(0.0, y_max * 1.08, &memory.label, Kind::Bytes),
    );
    // A throughput's cost falls as it rises.
    let sign = if higher_is_better { -1.0 } else { 1.0 };
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
    for &(i, w, m) in &points {
        cross(
            &mut chart,
            &analysis.experiment.configs[i].config.name,
            i,
            w,
            m,
        );
    }
    chart.legend(&names(analysis));
    chart.note(
        0,
        if higher_is_better {
            "lower right is better"
        } else {
            "lower left is better"
        },
    );
    let name = if analysis.service.is_empty() {
        "memory_vs_time"
    } else {
        "memory_vs_latency"
    };
    Plot {
        name,
        title,
        svg: chart.finish(),
    }
}

/// Configuration `i`'s point at its medians, its arms the intervals.
fn cross(chart: &mut Chart, name: &str, i: usize, w: Estimate, m: Estimate) {
    let (x, y) = (chart.px(w.median), chart.py(m.median));
    // Below 6 runs there are no intervals.
    if w.ci_low.is_finite() && w.ci_high.is_finite() {
        let (low, high) = (chart.px(w.ci_low), chart.px(w.ci_high));
        chart.svg.line(low, y, high, y, colour(i), 2.0);
    }
    if m.ci_low.is_finite() && m.ci_high.is_finite() {
        let (low, high) = (chart.py(m.ci_low), chart.py(m.ci_high));
        chart.svg.line(x, low, x, high, colour(i), 2.0);
    }
    let tip = format!(
        "{name}: {} {}, {} {}",
        chart.y.title,
        chart.y.show(m.median),
        chart.x.title,
        chart.x.show(w.median)
    );
    chart
        .svg
        .titled(&tip, |svg| svg.circle(x, y, 5.0, colour(i)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocscope_analyze::analyze_with;
    use allocscope_core::fixture;
    use allocscope_core::judging::{JudgeSettings, MemoryChoice};

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

    /// The fixture (a tree of several processes) judged by `memory`, and
    /// by CPU time.
    fn judged_by(memory: MemoryChoice) -> Analysis {
        let judging = JudgeSettings {
            memory_metric: Some(memory),
            perf_metric: Some("cpu_s".to_string()),
            ..JudgeSettings::default()
        };
        analyze_with(fixture::experiment(), "glibc", &judging).expect("analysis")
    }

    #[test]
    fn the_axes_are_the_rows_the_verdict_judged_by() {
        let a = judged_by(MemoryChoice::Row("peak_pss_bytes".to_string()));
        let medians = |id: &str| -> Vec<f64> {
            a.summaries
                .iter()
                .filter_map(|s| s.estimate(id).map(|e| e.median))
                .collect()
        };
        let pts = points(&a);
        let memory: Vec<f64> = pts.iter().map(|p| p.2.median).collect();
        let perf: Vec<f64> = pts.iter().map(|p| p.1.median).collect();
        assert_eq!(memory, medians("peak_pss_bytes"));
        assert_ne!(memory, medians("mean_pss_bytes"));
        assert_ne!(memory, medians("peak_rss_bytes"));
        assert_eq!(perf, medians("cpu_s"));
        assert_ne!(perf, medians("wall_s"));
        let plot = pareto(&a);
        assert!(
            plot.title.starts_with("peak PSS against CPU time ("),
            "{}",
            plot.title
        );
        // The tree word: peak PSS for this tree too.
        let a = judged_by(MemoryChoice::Tree("peak".to_string()));
        assert_eq!(
            points(&a).iter().map(|p| p.2.median).collect::<Vec<_>>(),
            memory
        );
    }
}
