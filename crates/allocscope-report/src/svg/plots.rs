//! allocscope's plots, each an SVG string from an `Analysis`: memory over
//! time (RSS, and PSS for multi-process trees), memory at markers, ratios to
//! the baseline with CI whiskers, the memory and performance the verdict
//! judged by with the Pareto frontier (`pareto`), page faults over time,
//! and where the memory went (`breakdown`). One colour per configuration.

use super::chart::{Axis, Chart, Kind};
use super::colour;
use super::plot::names;
pub use super::plot::Plot;
use crate::{columns, thin};
use allocscope_analyze::choice::several_processes;
use allocscope_analyze::interval::has_interval;
use allocscope_analyze::metric_table::{Shown, Unit};
use allocscope_analyze::stats::median;
use allocscope_analyze::types::{Analysis, Ratio};
use allocscope_core::model::{RunStatus, Sample, StoredConfig};

/// Points on the common time grid of the median line.
const GRID: usize = 200;

/// Every plot that applies to this analysis, in reading order.
pub fn all(analysis: &Analysis) -> Vec<Plot> {
    let mut plots = vec![over_time(
        analysis,
        "rss_over_time",
        "RSS over time",
        "RSS",
        |s| Some(s.rss_bytes as f64),
        false,
    )];
    // RSS counts a tree's shared pages once per process: show PSS too,
    // whatever the verdict was judged by.
    let pss = |s: &Sample| s.pss_bytes.map(|b| b as f64);
    let read_pss = runs_of(analysis, pss).iter().any(|runs| !runs.is_empty());
    if several_processes(&analysis.experiment) && read_pss {
        plots.push(over_time(
            analysis,
            "pss_over_time",
            "PSS over time (whole process tree)",
            "PSS",
            pss,
            true,
        ));
    }
    if !analysis.markers.is_empty() {
        plots.push(markers(analysis));
    }
    plots.push(ratios(analysis));
    plots.push(super::pareto::pareto(analysis));
    plots.push(over_time(
        analysis,
        "faults_over_time",
        "Page faults over time (minor + major, cumulative)",
        "page faults",
        |s| Some((s.minor_faults + s.major_faults) as f64),
        false,
    ));
    plots.extend(super::breakdown::plots(analysis));
    plots
}

fn ok_runs(c: &StoredConfig) -> impl Iterator<Item = &[Sample]> {
    c.runs
        .iter()
        .filter(|r| r.record.status == RunStatus::Ok)
        .map(|r| r.record.samples.as_slice())
}

/// The last value at or before `t` (a step function), `None` past the end.
fn value_at(series: &[(f64, f64)], t: f64) -> Option<f64> {
    let last = series.last()?;
    if t > last.0 {
        return None;
    }
    let i = series.partition_point(|p| p.0 <= t);
    series.get(i.saturating_sub(1)).map(|p| p.1)
}

/// Per configuration, per ok run, the `(t_s, value)` points that have a value.
fn runs_of(analysis: &Analysis, value: fn(&Sample) -> Option<f64>) -> Vec<Vec<Vec<(f64, f64)>>> {
    analysis
        .experiment
        .configs
        .iter()
        .map(|c| {
            ok_runs(c)
                .map(|samples| {
                    samples
                        .iter()
                        .filter_map(|s| Some((s.t_s, value(s)?)))
                        .collect::<Vec<_>>()
                })
                .filter(|s| !s.is_empty())
                .collect()
        })
        .collect()
}

/// The median of the runs on a common grid, in chart coordinates.
fn median_line(chart: &Chart, runs: &[Vec<(f64, f64)>]) -> Vec<(f64, f64)> {
    let end = runs
        .iter()
        .filter_map(|r| r.last())
        .map(|p| p.0)
        .fold(0.0, f64::max);
    (0..=GRID)
        .filter_map(|k| {
            let t = end * k as f64 / GRID as f64;
            let here: Vec<f64> = runs.iter().filter_map(|r| value_at(r, t)).collect();
            Some((chart.px(t), chart.py(median(&here)?)))
        })
        .collect()
}

/// A series per run (thin) and the per-configuration median on a common
/// grid (bold), for one value of the samples; on the RSS plot also the
/// median live heap (dashed) when the heap probe measured it.
fn over_time(
    analysis: &Analysis,
    name: &'static str,
    title: &str,
    what: &str,
    value: fn(&Sample) -> Option<f64>,
    steps: bool,
) -> Plot {
    let series = runs_of(analysis, value);
    // Under RSS, the live heap the heap probe measured (when it ran).
    let live = if name == "rss_over_time" {
        runs_of(analysis, |s| s.live_heap_bytes.map(|b| b as f64))
    } else {
        Vec::new()
    };
    let has_live = live.iter().flatten().any(|run| !run.is_empty());
    let all = series.iter().flatten().flatten();
    let t_max = all.clone().map(|p| p.0).fold(0.0, f64::max);
    let v_max = all.map(|p| p.1).fold(0.0, f64::max);
    let kind = if name == "faults_over_time" {
        Kind::Plain
    } else {
        Kind::Bytes
    };
    let mut chart = Chart::new(
        title,
        Axis::new(0.0, t_max, "time since start", Kind::Seconds),
        Axis::new(0.0, v_max * 1.05, what, kind),
    );
    for (i, runs) in series.iter().enumerate() {
        for run in runs {
            let mut pts: Vec<(f64, f64)> = Vec::new();
            for &(t, v) in run {
                // Sparse series (PSS is read at an adaptive rate) are drawn as
                // steps: the last reading holds until the next, like the median.
                if let (true, Some(&(_, prev))) = (steps, pts.last()) {
                    pts.push((chart.px(t), prev));
                }
                pts.push((chart.px(t), chart.py(v)));
            }
            chart.svg.polyline(&pts, colour(i), 1.0, 0.35);
        }
        let pts = median_line(&chart, runs);
        let peak = runs.iter().flatten().map(|p| p.1).fold(0.0, f64::max);
        let name = &analysis.experiment.configs[i].config.name;
        let tip = format!("{name}: median of its runs; highest {}", chart.y.show(peak));
        chart
            .svg
            .titled(&tip, |svg| svg.polyline(&pts, colour(i), 2.5, 1.0));
        if let Some(live_runs) = live.get(i).filter(|_| has_live) {
            let pts = median_line(&chart, live_runs);
            chart.svg.dashed(&pts, colour(i), 1.8);
        }
    }
    chart.legend(&names(analysis));
    if has_live {
        chart.note(2, "thin: each run");
        chart.note(1, "bold: median of the runs");
        chart.note(0, "dashed: live heap (probe)");
    } else {
        chart.note(1, "thin: each run");
        chart.note(0, "bold: median of the runs");
    }
    Plot {
        name,
        title: title.to_string(),
        svg: chart.finish(),
    }
}

/// More marker labels than this are thinned to every k-th and the last: a
/// million points would make an SVG of tens of megabytes that the PNG
/// renderer refuses, and the plot is not 400 pixels wide.
const MAX_MARKER_POINTS: usize = 400;

/// Median RSS at each marker label, one line per configuration.
fn markers(analysis: &Analysis) -> Plot {
    let (shown, step) = thin::every_kth(analysis.markers.len(), MAX_MARKER_POINTS);
    let markers = &analysis.markers;
    let labels: Vec<String> = shown
        .iter()
        .map(|&i| markers.label(i).to_string())
        .collect();
    let v_max = shown
        .iter()
        .flat_map(|&i| markers.cells(i).iter().filter_map(|c| c.rss_bytes_median))
        .fold(0.0, f64::max);
    let title = "Memory at markers (median RSS over the ok runs)";
    let mut chart = Chart::new(
        title,
        Axis::categories(labels, "marker"),
        Axis::new(0.0, v_max * 1.05, "RSS", Kind::Bytes),
    );
    for i in 0..analysis.experiment.configs.len() {
        let pts: Vec<(usize, f64, f64, f64)> = shown
            .iter()
            .enumerate()
            .filter_map(|(k, &row)| {
                let v = markers.cells(row).get(i)?.rss_bytes_median?;
                Some((k, chart.px(k as f64), chart.py(v), v))
            })
            .collect();
        let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.1, p.2)).collect();
        chart.svg.polyline(&line, colour(i), 2.0, 1.0);
        let name = &analysis.experiment.configs[i].config.name;
        for (k, x, y, v) in pts {
            let tip = format!("{name} at {}: {}", chart.x.categories[k], chart.y.show(v));
            chart
                .svg
                .titled(&tip, |svg| svg.circle(x, y, 3.0, colour(i)));
        }
    }
    chart.legend(&names(analysis));
    if step > 1 {
        // Two short lines: the note sits in the legend's column.
        chart.note(1, &format!("every {step}th marker"));
        chart.note(0, &format!("of {}, and the last", analysis.markers.len()));
    }
    Plot {
        name: "memory_at_markers",
        title: title.to_string(),
        svg: chart.finish(),
    }
}

/// The ratio groups of the ratios plot: each comparison-table row with a
/// ratio that some configuration measured (no empty group for a cgroup
/// charge an experiment without cgroups never read), and for a service, in
/// place of the whole-run times (a server's lifetime says nothing), the
/// service table's columns: the end-of-load memory and the median and p95
/// response times (or the load's duration).
fn ratio_groups(analysis: &Analysis) -> Vec<(&str, Vec<Option<Ratio>>)> {
    let service = !analysis.service.is_empty();
    let rows = analysis.metrics.iter().enumerate().filter(|(_, m)| {
        m.ratio && m.shown != Shown::Never && !(service && m.unit == Unit::Seconds)
    });
    let groups = rows.map(|(k, m)| (m.label.as_str(), columns::metric_figures(analysis, k)));
    let service_groups = service.then(|| columns::service_figures(analysis, false));
    groups
        .chain(service_groups.into_iter().flatten())
        .map(|(label, figures)| (label, figures.iter().map(|f| f.ratio).collect()))
        .filter(|(_, ratios): &(&str, Vec<Option<Ratio>>)| ratios.iter().any(Option::is_some))
        .collect()
}

/// Ratios to the baseline: one group per metric, one point with its CI
/// whisker per configuration, a reference line at 1.0.
fn ratios(analysis: &Analysis) -> Plot {
    let groups = ratio_groups(analysis);
    let all: Vec<Ratio> = groups
        .iter()
        .flat_map(|(_, r)| r.iter().flatten().copied())
        .collect();
    // f64::min/max skip the NaN bounds of a ratio without an interval.
    let lo = all
        .iter()
        .map(|r| r.ci_low.min(r.value))
        .fold(1.0, f64::min);
    let hi = all
        .iter()
        .map(|r| r.ci_high.max(r.value))
        .fold(1.0, f64::max);
    let pad = (hi - lo).max(0.1) * 0.08;
    let title = "Ratio to the baseline (paired by round, 95% interval)";
    let mut chart = Chart::new(
        title,
        Axis::categories(groups.iter().map(|g| g.0.to_string()).collect(), "metric"),
        Axis::new(
            (lo - pad).max(0.0),
            hi + pad,
            "ratio to the baseline",
            Kind::Plain,
        ),
    );
    let one = chart.py(1.0);
    let last = groups.len() as f64 - 0.5;
    chart
        .svg
        .line(chart.px(-0.5), one, chart.px(last), one, "#555555", 1.0);
    let n = analysis.summaries.len().max(1) as f64;
    for (k, (_, ratios)) in groups.iter().enumerate() {
        for (i, r) in ratios.iter().enumerate() {
            let Some(r) = r else { continue };
            let x = chart.px(k as f64 - 0.3 + 0.6 * (i as f64 + 0.5) / n);
            if has_interval(r) {
                whisker(&mut chart, x, r, colour(i));
            }
            let name = &analysis.experiment.configs[i].config.name;
            let tip = format!("{name}, {}: {:.2}x", groups[k].0, r.value);
            let y = chart.py(r.value);
            chart
                .svg
                .titled(&tip, |svg| svg.circle(x, y, 4.0, colour(i)));
        }
    }
    chart.legend(&names(analysis));
    chart.note(0, "below 1.0: less than the baseline");
    Plot {
        name: "ratios",
        title: title.to_string(),
        svg: chart.finish(),
    }
}

/// A ratio's 95% interval as a vertical line with end ticks at `x`.
fn whisker(chart: &mut Chart, x: f64, r: &Ratio, colour: &str) {
    let (low, high) = (chart.py(r.ci_low), chart.py(r.ci_high));
    chart.svg.line(x, low, x, high, colour, 2.0);
    for end in [low, high] {
        chart.svg.line(x - 4.0, end, x + 4.0, end, colour, 2.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_values_stop_at_the_end_of_a_run() {
        let s = [(0.0, 1.0), (1.0, 2.0)];
        assert_eq!(value_at(&s, 0.5), Some(1.0));
        assert_eq!(value_at(&s, 1.0), Some(2.0));
        assert_eq!(value_at(&s, 1.5), None);
    }

    fn names_of(analysis: &Analysis) -> Vec<&'static str> {
        all(analysis).iter().map(|p| p.name).collect()
    }

    #[test]
    fn a_tree_of_several_processes_has_its_pss_plot_whatever_it_was_judged_by() {
        use allocscope_analyze::analyze_with;
        use allocscope_core::fixture;
        use allocscope_core::judging::{JudgeSettings, MemoryChoice};
        for memory in ["peak", "mean", "final"] {
            let judging = JudgeSettings {
                memory_metric: Some(MemoryChoice::Tree(memory.to_string())),
                ..JudgeSettings::default()
            };
            let a = analyze_with(fixture::experiment(), "glibc", &judging).expect("analysis");
            assert!(names_of(&a).contains(&"pss_over_time"), "{memory}");
        }
        let mut single = fixture::experiment();
        for run in single.configs.iter_mut().flat_map(|c| &mut c.runs) {
            for s in &mut run.record.samples {
                s.processes = 1;
            }
        }
        let a = analyze_with(single, "glibc", &JudgeSettings::default()).expect("analysis");
        assert!(!names_of(&a).contains(&"pss_over_time"));
    }
}
