//! A stored soak as one self-contained HTML page (the core's `page_head`,
//! no script, no network), the answer first as `compare`'s is: the verdict
//! in a card, what was soaked, the configurations' and the instances' tables
//! as HTML tables, then memory over time
//! per configuration (each replica thin, their median bold) with each
//! configuration's projection drawn on as a dashed line in its band, and the
//! breakdown over time of one instance per configuration (the core's
//! stacked panels). Every line's value shows on hover (SVG `<title>`).
//! While the soak runs (`live.rs`) the page reloads itself.

use crate::config::by_label;
use crate::export::{cells, context, header, verdict_text, Rendered, TABLES};
use crate::figures::Row;
use crate::projection::project;
use crate::render::bytes_text;
use crate::stored::{SoakRecord, StoredInstance};
use allocscope_analyze::stats::median;
use allocscope_core::model::Breakdown;
use allocscope_core::units::format_seconds;
use allocscope_report::html::page_head;
use allocscope_report::svg::breakdown::stacked_panels;
use allocscope_report::svg::chart::{Axis, Chart, Kind};
use allocscope_report::svg::plot::Plot;
use allocscope_report::svg::{colour, escape};
use allocscope_report::thin::every_kth;
use std::time::Duration;

/// Points per line at most.
const MAX_POINTS: usize = 600;
/// How far past the last sample the projection of a growing configuration
/// is drawn, as a share of the soak's length: far enough to see where it
/// heads, near enough to keep the measured part readable, and well within
/// `projection::MAX_FACTOR` (the table gives the day and the week).
const PROJECTED_SHARE: f64 = 0.5;

/// The page; with `refresh`, one that reloads itself that often.
pub fn html(record: &SoakRecord, rendered: &Rendered, refresh: Option<Duration>) -> String {
    let mut out = page_head(&format!("allocscope soak {}", record.id));
    if let Some(every) = refresh {
        let meta = format!(
            "<meta http-equiv=\"refresh\" content=\"{}\">\n<title>",
            every.as_secs().max(1)
        );
        out = out.replacen("<title>", &meta, 1);
    }
    let verdict = verdict_text(rendered.verdict.as_ref());
    out.push_str(&format!(
        "<div class=\"verdict card\" id=\"verdict\"><p>{}</p></div>\n",
        escape(&verdict)
    ));
    for line in context(record) {
        out.push_str(&format!("<p>{}</p>\n", escape(&line)));
    }
    for (title, instances) in TABLES {
        out.push_str(&format!("<h2>{title}</h2>\n<table>\n<tr>"));
        for name in header(instances) {
            out.push_str(&format!("<th>{}</th>", escape(name)));
        }
        out.push_str("</tr>\n");
        for row in (rendered.rows.iter()).filter(|r| r.instance.is_some() == instances) {
            out.push_str("<tr>");
            for cell in cells(row) {
                out.push_str(&format!("<td>{}</td>", escape(&cell)));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
    }
    let mut plots = vec![memory(record, rendered)];
    let panels: Vec<(String, Vec<(f64, &Breakdown)>)> = first_of_each(record)
        .into_iter()
        .map(|i| {
            (
                format!("{}: where the memory went", i.name()),
                breakdowns(i),
            )
        })
        .filter(|p| !p.1.is_empty())
        .collect();
    if !panels.is_empty() {
        let title = "Where the memory went over time (one instance per configuration)";
        plots.push(stacked_panels(&panels, "soak_breakdown", title));
    }
    // Each plot's title is drawn in it; a caption would say it twice.
    for plot in plots {
        out.push_str(&format!(
            "<figure id=\"plot-{}\">\n{}</figure>\n",
            plot.name, plot.svg
        ));
    }
    out.push_str("</body></html>\n");
    out
}

/// Each configuration's first instance, in the order given.
fn first_of_each(record: &SoakRecord) -> Vec<&StoredInstance> {
    let configs = by_label(record.instances.iter().map(|i| (i.label(), Some(i), false)));
    (configs.unwrap_or_default().into_iter())
        .filter_map(|(_, members)| members.first().copied())
        .collect()
}

fn breakdowns(instance: &StoredInstance) -> Vec<(f64, &Breakdown)> {
    (instance.samples.iter())
        .filter_map(|s| Some((s.t_s, s.breakdown.as_ref()?)))
        .collect()
}

/// A series thinned to at most `MAX_POINTS`.
fn thinned(series: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let (keep, _) = every_kth(series.len(), MAX_POINTS);
    keep.into_iter().map(|k| series[k]).collect()
}

/// The replicas' median at each sample index (their samples are taken on
/// one loop at one interval, so the k-th of each are close in time).
fn median_line(replicas: &[&[(f64, f64)]]) -> Vec<(f64, f64)> {
    let shortest = replicas.iter().map(|r| r.len()).min().unwrap_or(0);
    (0..shortest)
        .map(|k| {
            let at = |f: fn(&(f64, f64)) -> f64| {
                let values: Vec<f64> = replicas.iter().map(|r| f(&r[k])).collect();
                median(&values).unwrap_or(f64::NAN)
            };
            (at(|p| p.0), at(|p| p.1))
        })
        .collect()
}

/// A dotted line from the axis to `top` at each restart of `config`'s
/// instances, its value on hover (`glibc#2 restarted at 1.00 s: crashed:
/// ...`): the replica's statistics start again there.
fn restart_marks(chart: &mut Chart, record: &SoakRecord, config: &str, colour: &str, top: f64) {
    let instances = (record.instances.iter()).filter(|i| i.label() == config);
    for instance in instances {
        for (t_s, why) in &instance.restarts {
            let x = chart.px(*t_s);
            let line = [(x, chart.py(0.0)), (x, chart.py(top))];
            let tip = format!(
                "{} restarted at {}: {why}",
                instance.name(),
                format_seconds(*t_s)
            );
            chart.svg.titled(&tip, |svg| svg.dotted(&line, colour, 1.2));
        }
    }
}

fn memory(record: &SoakRecord, rendered: &Rendered) -> Plot {
    let configs: Vec<&Row> = (rendered.rows.iter())
        .filter(|r| r.instance.is_none())
        .collect();
    let t_end = record.elapsed_s.max(1.0);
    let t_max = t_end * (1.0 + PROJECTED_SHARE);
    let projected = |row: &Row, t: f64| {
        let f = &row.figures;
        project(&f.level, f.level_at_s, &f.growth, t)
    };
    let top = (record.instances.iter())
        .flat_map(|i| i.series.memory.iter().map(|p| p.1))
        .chain(
            (configs.iter())
                .filter(|r| r.figures.settling.grows())
                .map(|r| projected(r, t_max).ci_high),
        )
        .fold(1.0, f64::max);
    let title = "Memory over time per configuration (projection dashed, in its band)";
    let mut chart = Chart::new(
        title,
        Axis::new(0.0, t_max, "time since start", Kind::Seconds),
        Axis::new(0.0, top * 1.05, "memory", Kind::Bytes),
    );
    let mut legend = Vec::new();
    for (c, row) in configs.iter().enumerate() {
        let members: Vec<&[(f64, f64)]> = (record.instances.iter())
            .filter(|i| i.label() == row.config)
            .map(|i| i.series.memory.as_slice())
            .collect();
        let at = |chart: &Chart, line: &[(f64, f64)]| -> Vec<(f64, f64)> {
            line.iter()
                .map(|p| (chart.px(p.0), chart.py(p.1)))
                .collect()
        };
        for replica in &members {
            let line = at(&chart, &thinned(replica));
            chart.svg.polyline(&line, colour(c), 0.8, 0.5);
        }
        restart_marks(&mut chart, record, &row.config, colour(c), top * 1.05);
        let bold = at(&chart, &thinned(&median_line(&members)));
        let tip = format!("{}: median of {} replicas", row.config, members.len());
        chart
            .svg
            .titled(&tip, |svg| svg.polyline(&bold, colour(c), 2.5, 1.0));
        legend.push((row.config.clone(), colour(c)));
        // Only growth beyond noise is carried on; a level is not a line.
        if !row.figures.settling.grows() {
            continue;
        }
        let from = row.figures.level_at_s;
        let ends = [projected(row, from), projected(row, t_max)];
        let band: Vec<(f64, f64)> = (ends.iter().map(|p| (p.at_s, p.ci_high)))
            .chain(ends.iter().rev().map(|p| (p.at_s, p.ci_low)))
            .map(|(t, v)| (chart.px(t), chart.py(v)))
            .collect();
        let [a, b] = ends;
        let tip = format!(
            "{}: projected {} at the plot's end (a projection, not a measurement)",
            row.config,
            bytes_text(b.value, b.ci_low, b.ci_high)
        );
        let line = [(a.at_s, a.value), (b.at_s, b.value)].map(|(t, v)| (chart.px(t), chart.py(v)));
        chart.svg.titled(&tip, |svg| {
            svg.area(&band, &format!("{}33", colour(c)));
            svg.dashed(&line, colour(c), 2.0);
        });
    }
    chart.legend(&legend);
    // One short note a row: the legend's column is about 26 characters wide.
    let mut notes = vec![
        "dashed: projection",
        "bold: their median",
        "thin: each replica",
    ];
    if record.instances.iter().any(|i| !i.restarts.is_empty()) {
        notes.insert(0, "dotted: a restart");
    }
    for (row, note) in notes.into_iter().enumerate() {
        chart.note(row, note);
    }
    Plot {
        name: "soak_memory",
        title: title.to_string(),
        svg: chart.finish(),
    }
}
