//! A soak watched while it runs: every `Live::every` the progress block
//! (`progress.rs`) on stderr, redrawn in place on a terminal and printed as
//! plain lines elsewhere (CI, a pipe).

use crate::config::combine;
use crate::progress::{block, ConfigNow, Pace};
use crate::watched::Watched;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// What a soak shows while it runs.
pub struct Live {
    pub every: Duration,
}

/// The live view between its looks.
pub struct Showing<'a> {
    live: &'a Live,
    duration_s: Option<f64>,
    until_settled: bool,
    next: Instant,
    terminal: bool,
    /// The lines of the block last drawn on a terminal, drawn over next.
    drawn: usize,
    /// Per configuration, the first look of those in a row that found it
    /// settled.
    settled_by: Vec<Option<f64>>,
}

impl<'a> Showing<'a> {
    /// The first look `live.every` after `start`.
    pub fn new(
        live: &'a Live,
        duration: Option<Duration>,
        until_settled: bool,
        start: Instant,
    ) -> Self {
        Showing {
            live,
            duration_s: duration.map(|d| d.as_secs_f64()),
            until_settled,
            next: start + live.every,
            terminal: std::io::stderr().is_terminal(),
            drawn: 0,
            settled_by: Vec::new(),
        }
    }

    /// At `now`, `elapsed_s` into the soak, shows it if a look is due.
    pub fn look(&mut self, now: Instant, elapsed_s: f64, watched: &[Watched]) {
        if now < self.next {
            return;
        }
        self.next = now + self.live.every;
        let configs = self.configs(watched, elapsed_s);
        let pace = Pace {
            elapsed_s,
            duration_s: self.duration_s,
            until_settled: self.until_settled,
        };
        self.draw(&block(&configs, &pace));
    }

    /// Each configuration's replicas combined, in the order given, and
    /// since which look it has settled.
    fn configs(&mut self, watched: &[Watched], elapsed_s: f64) -> Vec<ConfigNow> {
        let mut groups: Vec<(String, Vec<&Watched>)> = Vec::new();
        for w in watched {
            match groups.iter_mut().find(|g| g.0 == w.label) {
                Some(g) => g.1.push(w),
                None => groups.push((w.label.clone(), vec![w])),
            }
        }
        // The instances' order is fixed, so is their configurations'.
        self.settled_by.resize(groups.len(), None);
        let by = self.settled_by.iter_mut();
        (groups.into_iter().zip(by))
            .map(|((label, members), by)| {
                let summaries: Vec<_> =
                    members.iter().map(|w| (w.summary(), w.running())).collect();
                let waiting = summaries.iter().any(|(s, running)| s.is_none() && *running);
                let known: Vec<_> = summaries.into_iter().filter_map(|s| s.0).collect();
                let summary = combine(&known).filter(|_| !waiting);
                let settled = summary.as_ref().is_some_and(|s| s.settling.is_settled());
                *by = settled.then(|| by.unwrap_or(elapsed_s));
                ConfigNow {
                    label,
                    replicas: members.len(),
                    summary,
                    settled_by_s: *by,
                }
            })
            .collect()
    }

    /// `lines` on stderr, over the last block on a terminal.
    fn draw(&mut self, lines: &[String]) {
        let mut text = String::new();
        if self.terminal && self.drawn > 0 {
            // Up over the last block, and clear to the end of the screen.
            text.push_str(&format!("\x1b[{}A\x1b[J", self.drawn));
        }
        for line in lines {
            text.push_str(line);
            text.push('\n');
        }
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
        self.drawn = lines.len();
    }
}
