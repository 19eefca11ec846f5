//! The marker lines the scenarios print as they go (`allocscope:mark LABEL`).

use std::io::Write;

/// Prints a progress marker and flushes at once: allocscope timestamps the
/// marker when the line arrives, and stdout is a pipe (block-buffered).
pub fn mark(label: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "allocscope:mark {label}");
    let _ = out.flush();
}
