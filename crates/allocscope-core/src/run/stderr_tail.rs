//! The last words of a program's stderr, kept with a run that did not end
//! `ok` so that every report can say why in the program's own words
//! (`initdb: cannot write /nonexistent`), not only "exited with code 1":
//! its last few non-empty lines, joined by ` | `, bounded in bytes.

use std::path::Path;

/// Lines kept: enough for an error and the line or two that led to it.
pub(crate) const TAIL_LINES: usize = 3;

/// Bytes kept at most (a program may end on a megabyte-long line); the
/// line's end is kept, where its error usually is.
pub(crate) const TAIL_BYTES: usize = 400;

/// How much of the file's end is read: a few long lines.
const READ_BYTES: u64 = 16 * 1024;

/// The last `TAIL_LINES` non-empty lines of the file at `path`, at most
/// `TAIL_BYTES` (cut at the front, on a character boundary); `None` when it
/// is empty or cannot be read.
pub fn stderr_tail(path: &Path) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(READ_BYTES)))
        .ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    tail_of(&String::from_utf8_lossy(&bytes))
}

/// `tail_of` over text already read.
pub(crate) fn tail_of(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let last = &lines[lines.len().saturating_sub(TAIL_LINES)..];
    let joined = last.join(" | ");
    if joined.is_empty() {
        return None;
    }
    if joined.len() <= TAIL_BYTES {
        return Some(joined);
    }
    // Keep the end: cut the front at a character boundary.
    let mut from = joined.len() - (TAIL_BYTES - 3);
    while !joined.is_char_boundary(from) {
        from += 1;
    }
    Some(format!("...{}", &joined[from..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_three_non_empty_lines() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("err");
        std::fs::write(&path, "one\ntwo\n\n  three \nfour\n\n")?;
        assert_eq!(stderr_tail(&path).as_deref(), Some("two | three | four"));
        std::fs::write(&path, "\n\n")?;
        assert_eq!(stderr_tail(&path), None);
        assert_eq!(stderr_tail(&dir.path().join("missing")), None);
        Ok(())
    }

    #[test]
    fn a_long_tail_keeps_its_end_within_the_bound() {
        let long = format!("{}é error: the end", "x".repeat(5000));
        let tail = tail_of(&long).unwrap_or_default();
        assert!(tail.len() <= TAIL_BYTES, "{} bytes", tail.len());
        assert!(tail.starts_with("...") && tail.ends_with("error: the end"));
        // Multi-byte characters at the cut are not split.
        let wide = "é".repeat(1000);
        assert!(tail_of(&wide).is_some_and(|t| t.len() <= TAIL_BYTES));
    }

    #[test]
    fn reads_only_the_end_of_a_big_file() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("err");
        let mut text = "noise line\n".repeat(100_000);
        text.push_str("fatal: disk full\n");
        std::fs::write(&path, text)?;
        assert_eq!(
            stderr_tail(&path).as_deref(),
            Some("noise line | noise line | fatal: disk full")
        );
        Ok(())
    }
}
