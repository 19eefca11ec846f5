//! How the terminal, Markdown and HTML lay out a section's table: its
//! heads, then one line per row. Each section builds its cells once
//! (escaped for the format by its caller); the comparison (the terminal's
//! block per metric), service, breakdown and limit tables all go through
//! these layouts.

use std::fmt::{Result, Write};

/// `| head | ... |`, the rule, then `| cell | ... |` per row.
pub fn markdown(
    out: &mut String,
    heads: &[impl AsRef<str>],
    rows: impl IntoIterator<Item = Vec<String>>,
) -> Result {
    let heads: Vec<&str> = heads.iter().map(AsRef::as_ref).collect();
    writeln!(out, "| {} |", heads.join(" | "))?;
    writeln!(out, "|{}", " --- |".repeat(heads.len()))?;
    for row in rows {
        writeln!(out, "| {} |", row.join(" | "))?;
    }
    Ok(())
}

/// `<tr><th>head</th>...</tr>`, then `<tr><td>cell</td>...</tr>` per row,
/// each on a line; the caller opens and closes the `<table>`.
pub fn html(
    out: &mut String,
    heads: &[impl AsRef<str>],
    rows: impl IntoIterator<Item = Vec<String>>,
) -> Result {
    let line = |tag: &str, cells: &mut dyn Iterator<Item = &str>| {
        let cells: String = cells.map(|c| format!("<{tag}>{c}</{tag}>")).collect();
        format!("<tr>{cells}</tr>")
    };
    writeln!(out, "{}", line("th", &mut heads.iter().map(AsRef::as_ref)))?;
    for row in rows {
        writeln!(out, "{}", line("td", &mut row.iter().map(String::as_str)))?;
    }
    Ok(())
}

/// Each column's width: its widest cell or head.
pub fn widths(heads: &[impl AsRef<str>], rows: &[Vec<String>]) -> Vec<usize> {
    (0..heads.len())
        .map(|k| {
            let cells = rows.iter().map(|r| r[k].chars().count());
            cells.fold(heads[k].as_ref().chars().count(), usize::max)
        })
        .collect()
}

/// The terminal's layout of a block: the head line (its first head, the
/// block's title or nothing, over the indent and the name column `width`
/// wide), then one line per row, its name indented by two. Every other
/// column is as wide as its widest cell or head, right-aligned where
/// `right` says so, and left out when empty throughout.
pub fn terminal(
    out: &mut String,
    width: usize,
    heads: &[impl AsRef<str>],
    rows: &[Vec<String>],
    right: impl Fn(usize) -> bool,
) -> Result {
    let heads: Vec<&str> = heads.iter().map(AsRef::as_ref).collect();
    let widths = widths(&heads, rows);
    let line = |mut line: String, cells: &[&str]| {
        for (k, cell) in cells.iter().enumerate().skip(1) {
            match widths[k] {
                0 => {}
                w if right(k) => line.push_str(&format!("  {cell:>w$}")),
                w => line.push_str(&format!("  {cell:<w$}")),
            }
        }
        line.trim_end().to_string()
    };
    writeln!(
        out,
        "{}",
        line(format!("{:<w$}", heads[0], w = width + 2), &heads)
    )?;
    for row in rows {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        writeln!(out, "{}", line(format!("  {:<width$}", row[0]), &cells))?;
    }
    Ok(())
}
