//! Plots of recordings side by side: RSS (and PSS where it was read) over
//! elapsed time, one colour per recording, the per-bucket min-max range as a
//! thin band where points were rolled up. Long recordings are thinned to
//! `MAX_POINTS` per line, so a month renders as fast as an hour.

use super::chart::{Axis, Chart, Kind};
use super::colour;
use super::plot::Plot;
use allocscope_analyze::recordings::RecordingsAnalysis;
use allocscope_core::recorded::RecordedPoint;

const MAX_POINTS: usize = 1500;

pub fn all(analysis: &RecordingsAnalysis) -> Vec<Plot> {
    let mut plots = vec![over_time(
        analysis,
        "recordings_rss",
        "RSS over elapsed time",
        "RSS",
        |p| Some(p.rss_mean_bytes as f64),
    )];
    let has_pss = analysis
        .recordings
        .iter()
        .any(|r| r.points.iter().any(|p| p.pss_mean_bytes.is_some()));
    if has_pss {
        plots.push(over_time(
            analysis,
            "recordings_pss",
            "PSS over elapsed time (whole process tree)",
            "PSS",
            |p| p.pss_mean_bytes.map(|b| b as f64),
        ));
    }
    plots
}

fn over_time(
    analysis: &RecordingsAnalysis,
    name: &'static str,
    title: &str,
    what: &str,
    value: fn(&RecordedPoint) -> Option<f64>,
) -> Plot {
    let lines: Vec<Vec<(f64, f64, f64, f64)>> = analysis
        .recordings
        .iter()
        .map(|r| thin(&r.points, value))
        .collect();
    let all = lines.iter().flatten();
    let t_max = all.clone().map(|p| p.0).fold(0.0, f64::max).max(1.0);
    let v_max = all.map(|p| p.3).fold(0.0, f64::max).max(1.0);
    let mut chart = Chart::new(
        title,
        Axis::new(0.0, t_max, "elapsed time", Kind::Seconds),
        Axis::new(0.0, v_max * 1.05, what, Kind::Bytes),
    );
    let mut banded = false;
    for (i, line) in lines.iter().enumerate() {
        let band: Vec<(f64, f64)> = line
            .iter()
            .map(|p| (chart.px(p.0), chart.py(p.3)))
            .chain(line.iter().rev().map(|p| (chart.px(p.0), chart.py(p.2))))
            .collect();
        if line.iter().any(|p| p.3 > p.2) {
            chart.svg.polyline(&band, colour(i), 0.8, 0.3);
            banded = true;
        }
        let mean: Vec<(f64, f64)> = line
            .iter()
            .map(|p| (chart.px(p.0), chart.py(p.1)))
            .collect();
        chart.svg.polyline(&mean, colour(i), 2.0, 1.0);
    }
    let labels = legend_labels(
        &analysis
            .summaries
            .iter()
            .map(|s| (s.info.name.as_str(), s.info.config.as_str()))
            .collect::<Vec<_>>(),
    );
    let names: Vec<(String, &str)> = labels
        .into_iter()
        .enumerate()
        .map(|(i, label)| (label, colour(i)))
        .collect();
    chart.legend(&names);
    if banded {
        chart.note(0, "thin: min-max of rolled-up buckets");
    }
    Plot {
        name,
        title: title.to_string(),
        svg: chart.finish(),
    }
}

/// The recordings' names, or all their configurations when some name would
/// not fit the legend (22 characters) and the configurations are short and
/// distinct: one kind of label for every line.
fn legend_labels(recordings: &[(&str, &str)]) -> Vec<String> {
    let fits = |text: &str| text.chars().count() <= 22;
    let configs: Vec<&str> = recordings.iter().map(|r| r.1).collect();
    let distinct = configs
        .iter()
        .enumerate()
        .all(|(i, c)| !configs[..i].contains(c));
    let use_configs =
        !recordings.iter().all(|r| fits(r.0)) && distinct && configs.iter().all(|c| fits(c));
    recordings
        .iter()
        .map(|&(name, config)| if use_configs { config } else { name }.to_string())
        .collect()
}

/// `(t, mean, min, max)` with at most `MAX_POINTS` points: consecutive points
/// merged, keeping the extremes. Min and max are RSS-only; for other values
/// they equal the mean.
fn thin(
    points: &[RecordedPoint],
    value: fn(&RecordedPoint) -> Option<f64>,
) -> Vec<(f64, f64, f64, f64)> {
    let values: Vec<(f64, f64, f64, f64)> = points
        .iter()
        .filter_map(|p| {
            let v = value(p)?;
            let rss = p.rss_mean_bytes as f64;
            let (lo, hi) = if v == rss {
                (p.rss_min_bytes as f64, p.rss_max_bytes as f64)
            } else {
                (v, v)
            };
            Some((p.t_s + p.span_s / 2.0, v, lo, hi))
        })
        .collect();
    let per = values.len().div_ceil(MAX_POINTS).max(1);
    values
        .chunks(per)
        .map(|chunk| {
            let n = chunk.len() as f64;
            (
                chunk.iter().map(|p| p.0).sum::<f64>() / n,
                chunk.iter().map(|p| p.1).sum::<f64>() / n,
                chunk.iter().map(|p| p.2).fold(f64::INFINITY, f64::min),
                chunk.iter().map(|p| p.3).fold(0.0, f64::max),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn legend_uses_one_kind_of_label_for_every_line() {
        let short = [("node-a", "glibc"), ("node-b", "tcmalloc")];
        assert_eq!(super::legend_labels(&short), ["node-a", "node-b"]);
        let long = [
            ("churn-glibc", "glibc"),
            ("churn-glibc-arena_max-2", "glibc:arena_max=2"),
        ];
        assert_eq!(super::legend_labels(&long), ["glibc", "glibc:arena_max=2"]);
        let same_config = [("a-very-long-recording-name-1", "glibc"), ("b", "glibc")];
        assert_eq!(
            super::legend_labels(&same_config),
            ["a-very-long-recording-name-1", "b"]
        );
    }
}
