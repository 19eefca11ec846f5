//! Where the memory went, drawn: a stacked bar per configuration (its
//! median run at the time-weighted mean and at the peak, side by side), and
//! the breakdown over time of each configuration's median run as stacked
//! areas, one panel per configuration on shared scales. One colour per part.

use super::chart::{Axis, Chart, Kind, HEIGHT, WIDTH};
use super::plot::Plot;
use super::Svg;
use crate::thin;
use allocscope_analyze::cause::{Cause, Part, WhereWent, PARTS};
use allocscope_analyze::types::Analysis;
use allocscope_core::model::{Breakdown, RunStatus, Sample};

/// Points per panel at most: a long run is thinned to every k-th tick.
const MAX_POINTS: usize = 400;

fn part_colour(part: Part) -> &'static str {
    match part {
        Part::LiveHeap => "#0072b2",
        Part::AllocatorFree => "#d55e00",
        Part::AllocatorMetadata => "#cc79a7",
        Part::LazyFree => "#e69f00",
        Part::HugePages => "#f0e442",
        Part::OtherAnon => "#999999",
        Part::File => "#56b4e9",
        Part::Shmem => "#009e73",
        // Black: nothing is known of it.
        Part::Unknown => "#000000",
        Part::Kernel => "#cc79a7",
    }
}

/// The two plots, or none when no configuration had a breakdown.
pub fn plots(analysis: &Analysis) -> Vec<Plot> {
    let Some(cause) = &analysis.verdict.cause else {
        return Vec::new();
    };
    vec![bars(analysis, cause), over_time(analysis, cause)]
}

fn total(b: &Breakdown) -> f64 {
    b.total_bytes() as f64
}

/// The parts some breakdown of `all` has, with their colours, top part
/// first as in the stacks: the legend.
fn legend(all: &[Breakdown]) -> Vec<(String, &'static str)> {
    PARTS
        .into_iter()
        .rev()
        .filter(|p| all.iter().any(|b| p.of(b) > 0))
        .map(|p| (p.label().to_string(), part_colour(p)))
        .collect()
}

/// One bar of stacked parts centred on `x` (in category units).
fn bar(chart: &mut Chart, x: f64, half_width: f64, b: &Breakdown) {
    let (left, right) = (chart.px(x - half_width), chart.px(x + half_width));
    let mut base = 0.0;
    for part in PARTS {
        let v = part.of(b) as f64;
        if v <= 0.0 {
            continue;
        }
        let (y0, y1) = (chart.py(base), chart.py(base + v));
        let tip = format!("{}: {}", part.label(), chart.y.show(v));
        chart.svg.titled(&tip, |svg| {
            svg.rect(
                left,
                y1,
                right - left,
                y0 - y1,
                part_colour(part),
                "#ffffff",
            )
        });
        base += v;
    }
}

fn bars(analysis: &Analysis, cause: &Cause) -> Plot {
    let configs = &analysis.experiment.configs;
    let names: Vec<String> = configs.iter().map(|c| c.config.name.clone()).collect();
    let all: Vec<Breakdown> = cause
        .configs
        .iter()
        .flat_map(|w| [Some(w.mean), w.peak])
        .flatten()
        .collect();
    let top = all.iter().map(total).fold(0.0, f64::max);
    let title = "Where the memory went (median run)";
    let mut chart = Chart::new(
        title,
        Axis::categories(names, "configuration"),
        Axis::new(0.0, top * 1.05, "memory", Kind::Bytes),
    );
    for (i, c) in configs.iter().enumerate() {
        let Some(w) = cause.of(&c.config.name) else {
            continue;
        };
        bar(&mut chart, i as f64 - 0.18, 0.16, &w.mean);
        if let Some(peak) = &w.peak {
            bar(&mut chart, i as f64 + 0.18, 0.16, peak);
        }
    }
    chart.legend(&legend(&all));
    chart.note(1, "left bar: time-weighted mean");
    chart.note(0, "right bar: at the peak RSS");
    Plot {
        name: "breakdown",
        title: title.to_string(),
        svg: chart.finish(),
    }
}

/// The ticks of the configuration's median run that had a breakdown.
fn series<'a>(analysis: &'a Analysis, w: &WhereWent) -> Vec<(f64, &'a Breakdown)> {
    analysis
        .experiment
        .configs
        .iter()
        .filter(|c| c.config.name == w.config)
        .flat_map(|c| &c.runs)
        .filter(|r| r.record.index == w.run && r.record.status == RunStatus::Ok)
        .flat_map(|r| &r.record.samples)
        .filter_map(|s: &Sample| Some((s.t_s, s.breakdown.as_ref()?)))
        .collect()
}

/// The stacked areas of one run: each part a band from the parts below it
/// to itself, through every kept tick.
fn areas(chart: &mut Chart, points: &[(f64, &Breakdown)]) {
    let (keep, _) = thin::every_kth(points.len(), MAX_POINTS);
    let points: Vec<(f64, &Breakdown)> = keep.into_iter().map(|k| points[k]).collect();
    let mut below = vec![0.0; points.len()];
    for part in PARTS {
        if points.iter().all(|(_, b)| part.of(b) == 0) {
            continue;
        }
        let above: Vec<f64> = points
            .iter()
            .zip(&below)
            .map(|((_, b), low)| low + part.of(b) as f64)
            .collect();
        let mut outline: Vec<(f64, f64)> = points
            .iter()
            .zip(&above)
            .map(|((t, _), v)| (chart.px(*t), chart.py(*v)))
            .collect();
        outline.extend(
            points
                .iter()
                .zip(&below)
                .rev()
                .map(|((t, _), v)| (chart.px(*t), chart.py(*v))),
        );
        chart.svg.area(&outline, part_colour(part));
        below = above;
    }
}

fn over_time(analysis: &Analysis, cause: &Cause) -> Plot {
    let panels: Vec<(String, Vec<(f64, &Breakdown)>)> = analysis
        .experiment
        .configs
        .iter()
        .filter_map(|c| cause.of(&c.config.name))
        .map(|w| {
            let heading = format!("{}: where the memory went, run {}", w.config, w.run);
            (heading, series(analysis, w))
        })
        .collect();
    let title = "Where the memory went over time (each configuration's median run)";
    stacked_panels(&panels, "breakdown_over_time", title)
}

/// The breakdown over time as stacked areas, one panel per `(heading,
/// ticks)` on shared scales (`soak`'s report draws one instance per
/// configuration with it).
pub fn stacked_panels(
    panels: &[(String, Vec<(f64, &Breakdown)>)],
    name: &'static str,
    title: &str,
) -> Plot {
    let all: Vec<Breakdown> = panels
        .iter()
        .flat_map(|(_, s)| s.iter().map(|(_, b)| **b))
        .collect();
    let t_max = panels
        .iter()
        .flat_map(|(_, s)| s.last().map(|p| p.0))
        .fold(0.0, f64::max);
    let top = all.iter().map(total).fold(0.0, f64::max);
    let mut figure = Svg::new(WIDTH, HEIGHT * panels.len().max(1) as f64);
    for (k, (heading, points)) in panels.iter().enumerate() {
        let mut chart = Chart::new(
            heading,
            Axis::new(0.0, t_max, "time since start", Kind::Seconds),
            Axis::new(0.0, top * 1.05, "memory", Kind::Bytes),
        );
        areas(&mut chart, points);
        chart.legend(&legend(&all));
        figure.panel(HEIGHT * k as f64, chart.svg);
    }
    Plot {
        name,
        title: title.to_string(),
        svg: figure.finish(),
    }
}
