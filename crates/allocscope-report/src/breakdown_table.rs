//! "Where the memory went": per configuration, its median run's breakdown
//! at the time-weighted mean and at the peak, its arenas and what its
//! reclaim test returned, as one grid of cells (one unit for every figure)
//! that the terminal table, Markdown and HTML each lay out. Parts that are
//! zero everywhere are left out.

use allocscope_analyze::cause::{Part, WhereWent, PARTS};
use allocscope_analyze::types::Analysis;
use allocscope_core::model::Breakdown;
use allocscope_core::units::{ColumnUnit, Unit};
use std::fmt::Write;

pub(crate) const TITLE: &str = "where the memory went";

/// The section's cells: heads and one row per configuration and moment.
pub(crate) struct Grid {
    /// The unit every size is shown in (`MiB`).
    pub unit: &'static str,
    /// `RSS`, each part shown, `arenas`, `reclaim returned`.
    pub heads: Vec<&'static str>,
    /// The same in one word each, for the terminal.
    pub short_heads: Vec<&'static str>,
    /// The configuration's name on its first row (empty on its second),
    /// the moment (`mean` or `peak`), then a cell per head.
    pub rows: Vec<Vec<String>>,
}

/// The grid, or `None` when no configuration had a breakdown.
pub fn grid(analysis: &Analysis) -> Option<Grid> {
    let cause = analysis.verdict.cause.as_ref()?;
    // A run covered on too few ticks is shown as read just before its
    // reclaim test (the verdict's line says so too).
    let shown: Vec<(WhereWent, &'static str)> = cause
        .configs
        .iter()
        .map(|w| match w.at_reclaim_instead() {
            Some(at) => (at, "reclaim"),
            None => (w.clone(), "mean"),
        })
        .collect();
    let moments = |(w, _): &(WhereWent, &str)| [Some(w.mean), w.peak];
    let all: Vec<Breakdown> = shown.iter().flat_map(moments).flatten().collect();
    let parts: Vec<Part> = PARTS
        .into_iter()
        .filter(|p| all.iter().any(|b| p.of(b) > 0))
        .collect();
    let unit = ColumnUnit::for_values(Unit::Bytes, all.iter().map(|b| b.total_bytes() as f64));
    let mut heads = vec!["RSS"];
    heads.extend(parts.iter().map(|p| p.label()));
    heads.extend(["arenas", "reclaim returned"]);
    let mut short_heads = vec!["RSS"];
    short_heads.extend(parts.iter().map(|&p| short(p)));
    short_heads.extend(["arenas", "reclaimed"]);
    let rows = analysis
        .experiment
        .configs
        .iter()
        .filter_map(|c| shown.iter().find(|(w, _)| w.config == c.config.name))
        .flat_map(|(w, at)| rows_of(w, at, &parts, unit))
        .collect();
    Some(Grid {
        unit: unit.name(),
        heads,
        short_heads,
        rows,
    })
}

impl Grid {
    /// The heads of Markdown's and HTML's table: the configuration, the
    /// moment, then `heads`.
    fn line_heads(&self) -> Vec<&'static str> {
        [vec!["configuration", "at"], self.heads.clone()].concat()
    }

    /// The rows, each cell escaped.
    fn lines(&self, escape: fn(&str) -> String) -> impl Iterator<Item = Vec<String>> + '_ {
        (self.rows.iter()).map(move |row| row.iter().map(|c| escape(c)).collect())
    }
}

/// A part's terminal head: one word.
fn short(part: Part) -> &'static str {
    match part {
        Part::LiveHeap => "live",
        Part::AllocatorFree => "free",
        Part::AllocatorMetadata => "metadata",
        Part::LazyFree => "lazyfree",
        Part::HugePages => "hugepages",
        Part::OtherAnon => "other",
        Part::File => "file",
        Part::Shmem => "shared",
        Part::Unknown => "unknown",
        Part::Kernel => "kernel",
    }
}

/// A configuration's mean row (or its row at the reclaim test), with its
/// arenas and reclaim, and its peak row.
fn rows_of(w: &WhereWent, at: &str, parts: &[Part], unit: ColumnUnit) -> Vec<Vec<String>> {
    let sizes = |b: &Breakdown| {
        std::iter::once(b.total_bytes())
            .chain(parts.iter().map(|p| p.of(b)))
            .map(|v| unit.number(v as f64))
            .collect::<Vec<_>>()
    };
    let mut mean = vec![w.config.clone(), at.to_string()];
    mean.extend(sizes(&w.mean));
    mean.push(w.arenas.map_or("-".to_string(), |a| a.to_string()));
    mean.push(reclaim_cell(w, unit));
    let mut rows = vec![mean];
    if let Some(peak) = &w.peak {
        let mut cells = vec![String::new(), "peak".to_string()];
        cells.extend(sizes(peak));
        cells.extend([String::new(), String::new()]);
        rows.push(cells);
    }
    rows
}

/// `150 (94%)`: what the reclaim test returned, and its share of the free
/// memory the allocator held then.
fn reclaim_cell(w: &WhereWent, unit: ColumnUnit) -> String {
    match (w.returned_bytes(), w.reclaimed_share()) {
        (Some(r), Some(share)) => format!("{} ({:.0}%)", unit.number(r as f64), share * 100.0),
        (Some(r), None) => unit.number(r as f64),
        _ => "-".to_string(),
    }
}

/// The terminal block: a title line, the heads, then the rows.
pub(crate) fn breakdown_block(
    out: &mut String,
    analysis: &Analysis,
    width: usize,
) -> std::fmt::Result {
    let Some(grid) = grid(analysis) else {
        return Ok(());
    };
    writeln!(out)?;
    writeln!(
        out,
        "{TITLE} ({}; median run, time-weighted mean and peak)",
        grid.unit
    )?;
    let heads = [vec!["", ""], grid.short_heads.clone()].concat();
    super::section::terminal(out, width, &heads, &grid.rows, |k| k >= 2)
}

/// The Markdown table under its own heading.
pub(crate) fn breakdown_markdown(
    out: &mut String,
    analysis: &Analysis,
    escape: fn(&str) -> String,
) -> std::fmt::Result {
    let Some(grid) = grid(analysis) else {
        return Ok(());
    };
    writeln!(
        out,
        "### Where the memory went ({}; median run)\n",
        grid.unit
    )?;
    super::section::markdown(out, &grid.line_heads(), grid.lines(escape))?;
    writeln!(
        out,
        "\nThe parts add up to the RSS: the mean row time-weighted over the run, the peak row at \
         its highest RSS (a reclaim row instead: read just before the reclaim test, for a run \
         whose heap probe was stale on over half its ticks); arenas are the most of one \
         process.{}\n",
        unknown_note(&grid)
    )
}

/// What the unknown column holds, when the grid has one.
fn unknown_note(grid: &Grid) -> &'static str {
    if grid.heads.contains(&Part::Unknown.label()) {
        " Unknown is memory the breakdown cannot attribute: that of processes without allocator \
         counters holding over a fifth of the RSS, and in the mean row the RSS of the ticks \
         without a fresh heap probe reading."
    } else {
        ""
    }
}

/// The HTML table under its own heading; `escape` is the page's.
pub(crate) fn breakdown_html(
    out: &mut String,
    analysis: &Analysis,
    escape: fn(&str) -> String,
) -> std::fmt::Result {
    let Some(grid) = grid(analysis) else {
        return Ok(());
    };
    write!(
        out,
        "<h2 id=\"breakdown\">Where the memory went</h2>\n<table>"
    )?;
    super::section::html(out, &grid.line_heads(), grid.lines(escape))?;
    writeln!(
        out,
        "</table><p>In {}, each configuration's median run: the parts add up to its RSS, \
         time-weighted over the run (mean) and at its highest RSS (peak); arenas are the most \
         of one process; the reclaim test's share is of the free memory the allocator held \
         just before it.{}</p>",
        grid.unit,
        unknown_note(&grid)
    )
}
