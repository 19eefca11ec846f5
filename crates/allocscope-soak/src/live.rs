//! A soak watched while it runs: every `Live::every` the progress block
//! (`progress.rs`) on stderr, redrawn in place on a terminal and printed as
//! plain lines elsewhere (CI, a pipe), and with `--html` the soak's page
//! (`page.rs`, as `report --soak ID` writes it) rewritten from the store
//! with a refresh, then once more at the end without one.

use crate::config::{by_label, combine};
use crate::export::figures;
use crate::page::html;
use crate::progress::{block, ConfigNow, Pace};
use crate::stored::load;
use crate::watched::Watched;
use allocscope_core::store::{commit_together, Store};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a soak shows while it runs.
pub struct Live {
    pub every: Duration,
    /// The progress block (not with `--quiet`).
    pub progress: bool,
    /// `--html FILE`.
    pub page: Option<PathBuf>,
}

/// The live view between its looks.
pub struct Showing<'a> {
    live: &'a Live,
    soak_id: i64,
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
        soak_id: i64,
        duration: Option<Duration>,
        until_settled: bool,
        start: Instant,
    ) -> Self {
        Showing {
            live,
            soak_id,
            duration_s: duration.map(|d| d.as_secs_f64()),
            until_settled,
            next: start + live.every,
            terminal: std::io::stderr().is_terminal(),
            drawn: 0,
            settled_by: Vec::new(),
        }
    }

    /// At `now`, `elapsed_s` into the soak, shows it if a look is due. The
    /// page is rendered from the store, so each instance's pending samples
    /// are committed first; only that commit's error is returned (a page
    /// that cannot be written is said, and the soak goes on).
    pub fn look(
        &mut self,
        now: Instant,
        elapsed_s: f64,
        watched: &mut [Watched],
        store: &mut Store,
    ) -> anyhow::Result<()> {
        if now < self.next {
            return Ok(());
        }
        self.next = now + self.live.every;
        if self.live.progress {
            let configs = self.configs(watched, elapsed_s);
            let pace = Pace {
                elapsed_s,
                duration_s: self.duration_s,
                until_settled: self.until_settled,
            };
            self.draw(&block(&configs, &pace));
        }
        if let Some(path) = &self.live.page {
            // The page reads the store: what the instances hold goes first.
            commit_together(store, now, watched.iter_mut().map(|w| &mut w.appender))?;
            if let Err(error) = write_page(store, self.soak_id, path, Some(self.live.every)) {
                eprintln!("allocscope: {error:#}; the soak goes on");
            }
        }
        Ok(())
    }

    /// Each configuration's replicas combined, in the order given, and
    /// since which look it has settled.
    fn configs(&mut self, watched: &[Watched], elapsed_s: f64) -> Vec<ConfigNow> {
        let groups = by_label(watched.iter().map(|w| (w.label.as_str(), Some(w), false)));
        let groups = groups.unwrap_or_default();
        // The instances' order is fixed, so is their configurations'.
        self.settled_by.resize(groups.len(), None);
        let by = self.settled_by.iter_mut();
        (groups.into_iter().zip(by))
            .map(|((label, members), by)| {
                // `None` while a running replica has no summary yet.
                let summaries = members
                    .iter()
                    .map(|w| (w.label.as_str(), w.summary(), w.running()));
                let summary = by_label(summaries).and_then(|g| combine(&g.first()?.1));
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

/// Soak `soak_id`'s page from `store` written to `path`, whole or not at
/// all (written beside it, then renamed over it); with `refresh`, the page
/// reloads itself that often.
pub fn write_page(
    store: &Store,
    soak_id: i64,
    path: &Path,
    refresh: Option<Duration>,
) -> anyhow::Result<()> {
    let record = load(store, soak_id)?;
    let page = html(&record, &figures(&record), refresh);
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let failed = |e: std::io::Error| anyhow::anyhow!("writing '{}': {e}", path.display());
    std::fs::write(&partial, page).map_err(failed)?;
    std::fs::rename(&partial, path).map_err(failed)
}
