//! `compare`'s progress on stderr: on a terminal, each finished run as a
//! line plus a status line redrawn in place (current configuration and run,
//! elapsed, ETA); otherwise one plain line per run (CI logs, pipes); with
//! `--quiet`, nothing (warnings and the final table still appear).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Quiet,
    Lines,
    Bar,
}

pub struct Progress {
    mode: Mode,
    total: usize,
    started: Instant,
}

/// The remaining time if the remaining steps take as long as the done ones.
pub fn eta(elapsed: Duration, done: usize, total: usize) -> Option<Duration> {
    if done == 0 || done > total {
        return None;
    }
    Some(elapsed.mul_f64((total - done) as f64 / done as f64))
}

/// `75s` -> `1m15s`; whole seconds.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, _) => format!("{h}h{m:02}m"),
    }
}

impl Progress {
    pub fn new(quiet: bool, total: usize) -> Progress {
        let mode = if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            Mode::Bar
        } else {
            Mode::Lines
        };
        Progress {
            mode,
            total,
            started: Instant::now(),
        }
    }

    /// A line for the log (not shown with `--quiet`).
    pub fn say(&self, line: &str) {
        if self.mode != Mode::Quiet {
            self.clear();
            eprintln!("{line}");
        }
    }

    /// Step `done` (0-based count of finished steps) is about to start.
    pub fn starting(&self, done: usize, what: &str) {
        if self.mode != Mode::Bar {
            return;
        }
        let elapsed = self.started.elapsed();
        let eta = eta(elapsed, done, self.total)
            .map(|d| format!(", ETA {}", clock(d)))
            .unwrap_or_default();
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[K[{}/{}] {what}  elapsed {}{eta}",
            done + 1,
            self.total,
            clock(elapsed)
        );
        let _ = err.flush();
    }

    fn clear(&self) {
        if self.mode == Mode::Bar {
            eprint!("\r\x1b[K");
        }
    }
}

/// The status line goes when the progress does, before the final table or
/// an error.
impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_scales_the_elapsed_time_by_the_steps_left() {
        let ten = Duration::from_secs(10);
        assert_eq!(eta(ten, 2, 6), Some(Duration::from_secs(20)));
        assert_eq!(eta(ten, 0, 6), None);
        assert_eq!(clock(Duration::from_secs(75)), "1m15s");
        assert_eq!(clock(Duration::from_secs(7300)), "2h01m");
    }
}
