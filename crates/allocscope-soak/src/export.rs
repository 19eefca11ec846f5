//! A stored soak rendered by `allocscope report --soak ID`: JSON (schema
//! `allocscope-soak/2`, a `soak` block with the verdict as data
//! (`verdict_json.rs`) and its text beside it, and a row of figures per
//! configuration and per instance), CSV (those rows, one per line) and
//! Markdown (the summary, then the configurations' and instances' tables),
//! which is also the text report. The HTML is `page.rs`.

use crate::figures::{load_names, rows, Cell, Row};
use crate::growth::{Growth, Settling};
use crate::projection::Reach;
use crate::render::{bytes_text, factor_text, growth_text, ratio_text, render};
use crate::stored::SoakRecord;
use crate::verdict::Verdict;
use crate::verdict_json::verdict_json;
use allocscope_core::units::format_seconds;
use allocscope_report::format::{csv_line, num};
use serde_json::{json, Map, Value};
use std::fmt::Write;

/// The soak's rows, with its verdict.
pub struct Rendered {
    pub verdict: Option<Verdict>,
    pub rows: Vec<Row>,
}

pub fn figures(record: &SoakRecord) -> Rendered {
    let verdict = record.verdict();
    let rows = rows(&record.named_groups(), verdict.as_ref());
    Rendered { verdict, rows }
}

/// The summary: what was soaked, for how long, on what, and the verdict.
pub fn summary(record: &SoakRecord, verdict: Option<&Verdict>) -> String {
    let mut out = context(record)
        .iter()
        .map(|line| format!("{line}\n"))
        .collect::<String>();
    out.push_str(&verdict_text(verdict));
    out.push('\n');
    out
}

/// What was soaked, for how long, and from when it is judged: a line each.
pub fn context(record: &SoakRecord) -> Vec<String> {
    let mut lines = vec![format!(
        "Soak {}: `allocscope {}`, {} instances over {}.",
        record.id,
        record.arguments.join(" "),
        record.instances.len(),
        format_seconds(record.elapsed_s)
    )];
    if let Some(from) = record.raw_from_s() {
        lines.push(format!(
            "Judged on the samples from {} on: the store keeps the last hour of samples in \
             full; older ones are rolled up without the working set and the live heap.",
            format_seconds(from)
        ));
    }
    lines
}

/// The verdict in sentences, or why there is none.
pub fn verdict_text(verdict: Option<&Verdict>) -> String {
    match verdict {
        Some(v) => render(v),
        None => "No verdict: too few samples for a level and a growth rate.".into(),
    }
}

pub fn json(record: &SoakRecord, rendered: &Rendered) -> serde_json::Result<String> {
    let load = load_names(&rendered.rows);
    let objects = |instances: bool| -> Vec<Value> {
        (rendered.rows.iter())
            .filter(|r| r.instance.is_some() == instances)
            .map(|row| object(row, &load))
            .collect()
    };
    let value = json!({
        "schema": "allocscope-soak/2",
        "soak": {
            "id": record.id,
            "arguments": record.arguments,
            "elapsed_s": record.elapsed_s,
            "statistics_from_s": record.raw_from_s(),
            "verdict": rendered.verdict.as_ref().map(verdict_json),
            "verdict_text": rendered.verdict.as_ref().map(render),
            "configurations": objects(false),
            "instances": objects(true),
        }
    });
    serde_json::to_string_pretty(&value).map(|s| s + "\n")
}

/// A row's figures, with the columns of the `load` figures.
fn object(row: &Row, load: &[String]) -> Value {
    let mut map = Map::new();
    map.insert("config".into(), json!(row.config));
    if let Some(name) = &row.instance {
        map.insert("instance".into(), json!(name));
    }
    for (name, cell) in all_columns(row, load) {
        let value = match cell {
            Cell::Number(v) => json!(v.filter(|v| v.is_finite())),
            Cell::Text(t) => json!(t),
        };
        map.insert(name, value);
    }
    Value::Object(map)
}

/// A row's named columns, then those of the `load` figures.
fn all_columns(row: &Row, load: &[String]) -> Vec<(String, Cell)> {
    let fixed = row.columns().into_iter().map(|(n, c)| (n.to_string(), c));
    fixed.chain(row.load_columns(load)).collect()
}

/// One line per configuration, then per instance (`instance` empty on a
/// configuration's line); the load's figures last, blank where a row has
/// none.
pub fn csv(rendered: &Rendered) -> String {
    let Some(first) = rendered.rows.first() else {
        return String::new();
    };
    let load = load_names(&rendered.rows);
    let names = all_columns(first, &load).into_iter().map(|c| c.0);
    let mut out = csv_line(
        ["config".to_string(), "instance".into()]
            .into_iter()
            .chain(names),
    );
    for row in &rendered.rows {
        let cells = all_columns(row, &load)
            .into_iter()
            .map(|(_, cell)| match cell {
                Cell::Number(v) => num(v),
                Cell::Text(t) => t,
            });
        let head = [row.config.clone(), row.instance.clone().unwrap_or_default()];
        out.push_str(&csv_line(head.into_iter().chain(cells)));
    }
    out
}

/// The summary, then a table of the configurations and one of the instances.
pub fn markdown(record: &SoakRecord, rendered: &Rendered) -> String {
    let mut out = format!("# allocscope soak {}\n\n", record.id);
    out.push_str(&summary(record, rendered.verdict.as_ref()));
    for (title, instances) in TABLES {
        let _ = writeln!(
            out,
            "\n## {title}\n\n| {} |\n|{}",
            header(instances).join(" | "),
            "---|".repeat(COLUMNS.len() + 1)
        );
        for row in rendered
            .rows
            .iter()
            .filter(|r| r.instance.is_some() == instances)
        {
            let _ = writeln!(out, "| {} |", cells(row).join(" | "));
        }
    }
    out
}

/// The two tables: their titles, and whether they hold instances.
pub const TABLES: [(&str, bool); 2] = [("Configurations", false), ("Instances", true)];

/// The tables' columns after the first.
const COLUMNS: [&str; 7] = [
    "level",
    "growth",
    "settled",
    "at 24 h (projected)",
    "live heap growth",
    "allocator free growth",
    "plateau vs baseline",
];

/// A table's header: `configuration` or `instance`, then `COLUMNS`.
pub fn header(instances: bool) -> Vec<&'static str> {
    let first = if instances {
        "instance"
    } else {
        "configuration"
    };
    std::iter::once(first).chain(COLUMNS).collect()
}

/// A row's cells, in words, under `header`.
pub fn cells(row: &Row) -> Vec<String> {
    let f = &row.figures;
    let growth = |g: Option<Growth>| g.map_or("-".into(), |g| growth_text(&g));
    let settled = match (f.settled_at_s(), f.settles_after_s) {
        (Some(at), _) => format!("flat since {}", format_seconds(at)),
        (None, Some(at)) if f.settling == Settling::Rising => {
            format!("rising (persists at about {})", format_seconds(at))
        }
        (None, Some(at)) => format!("open (would at about {})", format_seconds(at)),
        (None, None) => f.settling.word().to_string(),
    };
    let day = match f.projections()[0] {
        None => "reached".into(),
        Some(h) => match h.reach {
            Reach::Projected(p) => format!(
                "{} ({} the {} seen)",
                bytes_text(p.value, p.ci_low, p.ci_high),
                factor_text(h.factor),
                format_seconds(h.observed_s)
            ),
            Reach::TooFar => format!(
                "not projected: {} the {} seen",
                factor_text(h.factor),
                format_seconds(h.observed_s)
            ),
            Reach::Slowing => "not projected: its growth slows".into(),
            Reach::NotGrowing => "no growth to project".into(),
        },
    };
    vec![
        row.instance.clone().unwrap_or_else(|| row.config.clone()),
        bytes_text(f.level.median, f.level.ci_low, f.level.ci_high),
        growth(Some(f.growth)),
        settled,
        day,
        growth(f.live_heap),
        growth(f.allocator_free),
        f.ratio.map_or("-".into(), |r| ratio_text(&r)),
    ]
}
