//! `compare`'s progress on stderr: on a terminal, one live status area (a
//! bar over the planned runs with the elapsed time and an ETA after the run
//! going on, and below it where the rounds stand: the open candidates, in
//! one line cut to the terminal's width); otherwise one plain line per run
//! and per round (CI logs, pipes); with `--quiet`, nothing (warnings and the
//! final screen still appear).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

pub struct Progress {
    /// On a terminal only.
    bar: Option<ProgressBar>,
    quiet: bool,
}

const STYLE: &str =
    "{prefix} [{bar:30}] {pos}/{len} runs, elapsed {elapsed}, ETA {eta}\n{wide_msg}";

impl Progress {
    pub fn new(quiet: bool, total: usize) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let style = ProgressStyle::with_template(STYLE)
                .expect("a valid template")
                .progress_chars("=> ");
            let bar = ProgressBar::new(total as u64).with_style(style);
            // Redrawn every second, so the elapsed time moves during a long run.
            bar.enable_steady_tick(Duration::from_secs(1));
            bar
        });
        Progress { bar, quiet }
    }

    /// A line for the log (not shown with `--quiet`).
    pub fn say(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None if !self.quiet => eprintln!("{line}"),
            None => {}
        }
    }

    /// A finished run's line: the log's outside a terminal; on one, the
    /// bar's count says it.
    pub fn ran(&self, line: &str) {
        if self.bar.is_none() && !self.quiet {
            eprintln!("{line}");
        }
    }

    /// Where the rounds stand: the status area's second line on a terminal,
    /// a line of the log elsewhere.
    pub fn round(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.set_message(line.trim_start_matches("allocscope: ").to_string()),
            None => self.say(line),
        }
    }

    /// Step `done` (0-based count of finished steps) is about to start.
    pub fn starting(&self, done: usize, what: &str) {
        if let Some(bar) = &self.bar {
            bar.set_position(done as u64);
            bar.set_prefix(what.to_string());
        }
    }
}

/// The bar goes when the progress does, before the final table or an error.
impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
