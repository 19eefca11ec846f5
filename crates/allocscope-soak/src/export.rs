//! A stored soak rendered by `allocscope report --soak ID`: JSON (schema
//! `allocscope-soak/1`, a `soak` block with a row of figures per
//! configuration and per instance), CSV (those rows, one per line) and
//! Markdown (the summary, then the configurations' and instances' tables),
//! which is also the text report. The HTML is `page.rs`.

use crate::figures::{rows, settling_word, Cell, Row};
use crate::growth::Growth;
use crate::render::{bytes_text, growth_text, ratio_text, render};
use crate::stored::SoakRecord;
use crate::verdict::Verdict;
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
    let mut out = format!(
        "Soak {}: `allocscope {}`, {} instances over {}.\n",
        record.id,
        record.arguments.join(" "),
        record.instances.len(),
        format_seconds(record.elapsed_s)
    );
    if let Some(from) = record.raw_from_s() {
        let _ = writeln!(
            out,
            "Judged on the samples from {} on: the store keeps the last hour of samples in \
             full; older ones are rolled up without the working set and the live heap.",
            format_seconds(from)
        );
    }
    match verdict {
        Some(v) => out.push_str(&render(v)),
        None => out.push_str("No verdict: too few samples for a level and a growth rate."),
    }
    out.push('\n');
    out
}

pub fn json(record: &SoakRecord, rendered: &Rendered) -> serde_json::Result<String> {
    let objects = |instances: bool| -> Vec<Value> {
        (rendered.rows.iter())
            .filter(|r| r.instance.is_some() == instances)
            .map(object)
            .collect()
    };
    let value = json!({
        "schema": "allocscope-soak/1",
        "soak": {
            "id": record.id,
            "arguments": record.arguments,
            "elapsed_s": record.elapsed_s,
            "statistics_from_s": record.raw_from_s(),
            "verdict": rendered.verdict.as_ref().map(render),
            "configurations": objects(false),
            "instances": objects(true),
        }
    });
    serde_json::to_string_pretty(&value).map(|s| s + "\n")
}

fn object(row: &Row) -> Value {
    let mut map = Map::new();
    map.insert("config".into(), json!(row.config));
    if let Some(name) = &row.instance {
        map.insert("instance".into(), json!(name));
    }
    for (name, cell) in row.columns() {
        let value = match cell {
            Cell::Number(v) => json!(v.filter(|v| v.is_finite())),
            Cell::Text(t) => json!(t),
        };
        map.insert(name.into(), value);
    }
    Value::Object(map)
}

/// One line per configuration, then per instance (`instance` empty on a
/// configuration's line).
pub fn csv(rendered: &Rendered) -> String {
    let Some(first) = rendered.rows.first() else {
        return String::new();
    };
    let names = first.columns().into_iter().map(|c| c.0.to_string());
    let mut out = csv_line(
        ["config".to_string(), "instance".into()]
            .into_iter()
            .chain(names),
    );
    for row in &rendered.rows {
        let cells = row.columns().into_iter().map(|(_, cell)| match cell {
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
    for (title, instances) in [("Configurations", false), ("Instances", true)] {
        let _ = writeln!(
            out,
            "\n## {title}\n\n| {} | level | growth | settled | at 24 h (projected) | live heap growth | allocator free growth | plateau vs baseline |\n|---|---|---|---|---|---|---|---|",
            if instances { "instance" } else { "configuration" }
        );
        for row in rendered
            .rows
            .iter()
            .filter(|r| r.instance.is_some() == instances)
        {
            let _ = writeln!(out, "| {} |", markdown_cells(row).join(" | "));
        }
    }
    out
}

fn markdown_cells(row: &Row) -> Vec<String> {
    let f = &row.figures;
    let growth = |g: Option<Growth>| g.map_or("-".into(), |g| growth_text(&g));
    let settled = match (f.settled_at_s(), f.settles_after_s) {
        (Some(at), _) => format!("flat since {}", format_seconds(at)),
        (None, Some(at)) => format!("open (would at about {})", format_seconds(at)),
        (None, None) => settling_word(f.settling).to_string(),
    };
    let day = f.projections()[0].map_or("reached".into(), |p| {
        bytes_text(p.value, p.ci_low, p.ci_high)
    });
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
