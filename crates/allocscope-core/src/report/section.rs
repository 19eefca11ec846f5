//! How Markdown and HTML lay out a section's table: its heads, then one
//! line per row. Each section builds its cells once (escaped for the format
//! by its caller); the comparison, service, breakdown and limit tables all
//! go through these two layouts.

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
