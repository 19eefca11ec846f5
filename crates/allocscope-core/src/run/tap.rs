//! The stdout tap: a thread that copies the workload's stdout pipe into the
//! run's stdout file, byte for byte, and reports the lines that match a
//! marker pattern as events on the run's event channel, one event per read
//! of the pipe (a program printing a million markers sends a few hundred
//! events, not a million), stamped with the moment they were read. It ends at EOF, when the last process holding the
//! pipe's write end (the workload or any descendant that inherited stdout)
//! has exited or closed it.

use super::event::Event;
use std::fs::File;
use std::io::{Read, Write};
use std::sync::mpsc::Sender;
use std::time::Instant;

/// The marker pattern that is always active: a line `allocscope:mark LABEL`.
pub const BUILTIN_MARK: &str = r"^allocscope:mark (.+)$";

/// Lines longer than this are copied but never matched: a marker is a short
/// progress line, and a workload writing megabytes without a newline must
/// not make allocscope buffer them.
const MAX_LINE: usize = 4096;

/// Which pattern matched `line` first and the label it yields: the first
/// capture group when it took part in the match, else the whole match.
pub(crate) fn match_line(line: &str, patterns: &[regex::Regex]) -> Option<(u32, String)> {
    patterns.iter().enumerate().find_map(|(i, pattern)| {
        let caps = pattern.captures(line)?;
        let label = caps.get(1).or_else(|| caps.get(0))?.as_str().to_string();
        Some((u32::try_from(i).ok()?, label))
    })
}

/// Splits arriving bytes into lines (without `\n` or a trailing `\r`),
/// skipping lines longer than `MAX_LINE`.
#[derive(Default)]
struct Lines {
    pending: Vec<u8>,
    overflow: bool,
}

impl Lines {
    fn feed(&mut self, mut bytes: &[u8], mut line: impl FnMut(&str)) {
        while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
            self.push(&bytes[..end]);
            self.finish(&mut line);
            bytes = &bytes[end + 1..];
        }
        self.push(bytes);
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.overflow || self.pending.len() + bytes.len() > MAX_LINE {
            self.overflow = true;
            self.pending.clear();
        } else {
            self.pending.extend_from_slice(bytes);
        }
    }

    /// Ends the current line (at a newline, or at EOF for a last line
    /// without one: the program ended it by exiting).
    fn finish(&mut self, line: &mut impl FnMut(&str)) {
        if !self.overflow && !self.pending.is_empty() {
            let text = String::from_utf8_lossy(&self.pending);
            line(text.strip_suffix('\r').unwrap_or(&text));
        }
        self.pending.clear();
        self.overflow = false;
    }
}

/// Starts the tap. It sends `Event::Marks` with the matching lines of each
/// read and `Event::TapEnded` at EOF (or when the pipe or the file fails;
/// what was read so far is kept).
pub(crate) fn spawn_tap(
    mut pipe: impl Read + Send + 'static,
    mut file: File,
    patterns: Vec<regex::Regex>,
    events: Sender<Event>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("stdout-tap".into())
        .spawn(move || {
            let mut lines = Lines::default();
            let mut buf = vec![0u8; 64 * 1024];
            let mut marks = Vec::new();
            let send = |marks: &mut Vec<(u32, String)>, at: Instant| {
                if !marks.is_empty() {
                    let marks = std::mem::take(marks);
                    let _ = events.send(Event::Marks { marks, at });
                }
            };
            loop {
                let (n, at) = match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => (n, Instant::now()),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                // Write before matching so the file is never behind the markers.
                if file.write_all(&buf[..n]).is_err() {
                    break;
                }
                lines.feed(&buf[..n], |line| marks.extend(match_line(line, &patterns)));
                send(&mut marks, at);
            }
            lines.finish(&mut |line: &str| marks.extend(match_line(line, &patterns)));
            send(&mut marks, Instant::now());
            let _ = events.send(Event::TapEnded);
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns() -> Vec<regex::Regex> {
        [BUILTIN_MARK, r"MemoryCheck: event (\d+)", "done"]
            .iter()
            .filter_map(|p| regex::Regex::new(p).ok())
            .collect()
    }

    #[test]
    fn labels_come_from_the_first_group_else_the_match() {
        let p = patterns();
        assert_eq!(
            match_line("allocscope:mark step-1", &p),
            Some((0, "step-1".to_string()))
        );
        assert_eq!(
            match_line("MemoryCheck: event 3 vsz=12", &p),
            Some((1, "3".to_string()))
        );
        assert_eq!(match_line("all done.", &p), Some((2, "done".to_string())));
        assert_eq!(match_line("  allocscope:mark x", &p), None);
        assert_eq!(match_line("nothing here", &p), None);
    }

    #[test]
    fn lines_split_across_reads_and_crlf_and_last_line_without_newline() {
        let mut seen = Vec::new();
        let mut lines = Lines::default();
        let mut push = |l: &str| seen.push(l.to_string());
        lines.feed(b"one\r\ntw", &mut push);
        lines.feed(b"o\n\nthr", &mut push);
        lines.feed(b"ee", &mut push);
        lines.finish(&mut push);
        assert_eq!(seen, ["one", "two", "three"]);
    }

    #[test]
    fn overlong_lines_are_skipped_but_the_next_line_counts() {
        let mut seen = Vec::new();
        let mut lines = Lines::default();
        let mut push = |l: &str| seen.push(l.to_string());
        lines.feed(&vec![b'x'; MAX_LINE + 1], &mut push);
        lines.feed(b"x\nnext\n", &mut push);
        assert_eq!(seen, ["next"]);
    }
}
