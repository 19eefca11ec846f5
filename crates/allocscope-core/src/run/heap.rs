//! The heap probe during one run: its shared-memory directory (created before
//! the launch, removed after), the launch environment that preloads it,
//! whether it really loaded, and what the run records about it: the
//! reclaim requests (`reclaim.rs` decides when) and, once the tree has
//! ended, every process's last words, whose arena counts were read at exit.

use super::loaded::LoadCheck;
use super::probe_files::ProbeFiles;
use crate::model::{ProcessName, RunStatus, Sample};
use crate::probe::{launch_env, ProbeLaunch, ENV_RECLAIM_AT_EXIT};
use crate::sample::heap_vet::Tally;
use crate::sample::probe_shm::{most_arenas, ProbeOff, ProbeReading};
use crate::sample::ProbeReader;
use anyhow::Context;
use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

static RUNS: AtomicU32 = AtomicU32::new(0);

pub(crate) struct HeapRun {
    probe: ProbeLaunch,
    shm_dir: Option<PathBuf>,
    check: LoadCheck,
    /// allocscope's own mappings of the files, apart from the sampler's:
    /// for reclaim requests and the reading after the end.
    control: Option<ProbeReader>,
    /// The files of processes that run as another user.
    files: Option<ProbeFiles>,
    /// What the sampler's reader discarded or clamped (`heap_vet`), for the
    /// run's message.
    tally: Arc<Tally>,
}

impl HeapRun {
    pub fn new(probe: &ProbeLaunch) -> anyhow::Result<HeapRun> {
        let shm_dir = if probe.measure {
            // tmpfs when there is one: the files are memory either way, but
            // /dev/shm keeps them off a disk-backed /tmp.
            let base = ["/dev/shm", "/run/shm"]
                .iter()
                .map(PathBuf::from)
                .find(|p| p.is_dir())
                .unwrap_or_else(std::env::temp_dir);
            let dir = base.join(format!(
                "allocscope-{}-{}",
                std::process::id(),
                RUNS.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&dir)
                .with_context(|| {
                    format!("creating the heap probe's directory '{}'", dir.display())
                })?;
            Some(dir)
        } else {
            None
        };
        Ok(HeapRun {
            probe: probe.clone(),
            // Never stale: it answers reclaims and reads the last words.
            control: shm_dir
                .clone()
                .map(|dir| ProbeReader::new(dir, Duration::MAX)),
            files: shm_dir.clone().map(ProbeFiles::new),
            shm_dir,
            check: LoadCheck::new(Some(probe.library.clone())),
            tally: Tally::shared(),
        })
    }

    /// The launch environment; `reclaim_at_exit` asks every probed process
    /// for the reclaim test from its exit handler.
    pub fn env(
        &self,
        env: &[(String, String)],
        interval: Duration,
        reclaim_at_exit: bool,
    ) -> Vec<(String, String)> {
        let interval_ms = u64::try_from(interval.as_millis()).unwrap_or(u64::MAX);
        let mut out = launch_env(env, &self.probe, self.shm_dir.as_deref(), interval_ms);
        if reclaim_at_exit && self.shm_dir.is_some() {
            out.push((ENV_RECLAIM_AT_EXIT.to_string(), "1".to_string()));
        }
        out
    }

    /// Asks the probed processes among `pids` for the reclaim test; how
    /// many were asked.
    pub(crate) fn request_reclaim(&mut self, pids: &[i32]) -> usize {
        self.control.as_mut().map_or(0, |c| c.request_reclaim(pids))
    }

    /// How many of `pids` have not answered a reclaim request yet.
    pub fn unanswered(&mut self, pids: &[i32]) -> usize {
        self.control.as_mut().map_or(0, |c| c.unanswered(pids))
    }

    /// Every probed process's last words, once the tree has ended.
    pub(crate) fn final_readings(&mut self) -> Vec<(i32, ProbeReading)> {
        self.control
            .as_mut()
            .map(ProbeReader::read_all)
            .unwrap_or_default()
    }

    /// The sampler's reader: a reading `STALE_AFTER_TICKS` sampling
    /// `interval`s late is stale.
    pub fn reader(&self, interval: Duration) -> Option<ProbeReader> {
        self.shm_dir
            .clone()
            .map(|dir| ProbeReader::new(dir, interval).vetting_into(Arc::clone(&self.tally)))
    }

    pub fn settled(&self) -> bool {
        self.check.settled()
    }

    pub(crate) fn observe(&mut self, main: i32, tree: &[i32]) {
        self.check.observe(main, tree);
    }

    /// Makes the probe files of the tree's processes that run as another
    /// user (`probe_files.rs`); on every tick, before the sampler reads.
    pub(crate) fn hand_out_files(&mut self, tree: &[i32]) {
        if let Some(files) = self.files.as_mut() {
            files.hand_out(tree);
        }
    }

    /// The run's probe mode and CPU time, adjusting its status and message
    /// when the probe could not load: `not_loaded` when it was required,
    /// else a note that the run was measured from /proc alone.
    pub fn conclude(
        &self,
        finished: Option<(f64, &'static str)>,
        preload_ignored: Option<&str>,
        status: &mut RunStatus,
        message: &mut Option<String>,
    ) -> (Option<String>, Option<f64>) {
        let reason = (*status != RunStatus::Timeout)
            .then(|| self.check.not_loaded_reason(preload_ignored, false))
            .flatten();
        if let Some(reason) = reason {
            let note = if self.probe.required {
                if *status != RunStatus::NotLoaded {
                    *status = RunStatus::NotLoaded;
                    *message = None;
                }
                format!("heap probe: {reason}")
            } else {
                format!("heap probe not loaded, measured from /proc alone: {reason}")
            };
            *message = Some(match message.take() {
                Some(m) => format!("{m}; {note}"),
                None => note,
            });
            return (Some("not_loaded".to_string()), None);
        }
        if let Some(note) = self.files.as_ref().and_then(ProbeFiles::note) {
            *message = Some(match message.take() {
                Some(m) => format!("{m}; {note}"),
                None => note,
            });
        }
        match (self.probe.measure, finished) {
            (true, Some((cpu_s, mode))) => {
                if mode == "none" {
                    let note =
                        "heap probe: the allocator offers no counters it knows; use --heap=count";
                    *message = Some(match message.take() {
                        Some(m) => format!("{m}; {note}"),
                        None => note.to_string(),
                    });
                }
                // Readings discarded (a counter below zero) or clamped
                // (more live heap than resident) are said, not hidden.
                if let Some(note) = self.tally.note() {
                    *message = Some(match message.take() {
                        Some(m) => format!("{m}; {note}"),
                        None => note,
                    });
                }
                (Some(mode.to_string()), Some(cpu_s))
            }
            _ => (None, None),
        }
    }
}

/// The processes whose probe turned itself off (PROTOCOL.md, "What the
/// probe never changes"), by reason: the run says so rather than letting
/// their last reading pass for the whole run.
pub(super) fn off_note(readings: &[(i32, ProbeReading)]) -> Option<String> {
    let mut by_reason: Vec<(ProbeOff, Vec<i32>)> = Vec::new();
    for (pid, off) in readings.iter().filter_map(|(pid, r)| Some((*pid, r.off?))) {
        match by_reason.iter_mut().find(|(o, _)| *o == off) {
            Some((_, pids)) => pids.push(pid),
            None => by_reason.push((off, vec![pid])),
        }
    }
    let notes: Vec<String> = by_reason
        .iter()
        .map(|(off, pids)| {
            const SHOWN: usize = 5;
            let listed: Vec<String> = pids.iter().take(SHOWN).map(i32::to_string).collect();
            let more = match pids.len().saturating_sub(SHOWN) {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            let label = if pids.len() == 1 { "PID" } else { "PIDs" };
            format!(
                "heap probe off in {label} {}{more}: {}; its heap figures end at its last reading",
                listed.join(", "),
                off.reason()
            )
        })
        .collect();
    (!notes.is_empty()).then(|| notes.join("; "))
}

/// A short run's arenas, as its processes left them: the probe reads the
/// count once more at exit, after the last tick. The last sample gets the
/// count of the process with the most when that is more than it saw (arenas
/// are never given back, so the count at exit is the run's highest), with
/// that process's name from an earlier sample.
pub(super) fn keep_final_arenas(readings: &[(i32, ProbeReading)], samples: &mut [Sample]) {
    let Some((arenas, pid)) = most_arenas(readings) else {
        return;
    };
    let name: Option<ProcessName> = samples
        .iter()
        .rev()
        .find(|s| s.arenas_pid == Some(pid))
        .and_then(|s| s.arenas_process);
    let Some(last) = samples.last_mut() else {
        return;
    };
    if last.arenas.is_none_or(|seen| seen < arenas) {
        last.arenas = Some(arenas);
        last.arenas_pid = Some(pid);
        last.arenas_process = name;
    }
}

impl Drop for HeapRun {
    fn drop(&mut self) {
        if let Some(dir) = &self.shm_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn off(pid: i32, off: Option<ProbeOff>) -> (i32, ProbeReading) {
        (
            pid,
            ProbeReading {
                off,
                ..ProbeReading::default()
            },
        )
    }

    #[test]
    fn processes_whose_probe_turned_off_are_named_with_the_reason() {
        let readings = [
            off(10, None),
            off(11, Some(ProbeOff::Seccomp)),
            off(12, Some(ProbeOff::NoThread)),
            off(13, Some(ProbeOff::Seccomp)),
        ];
        let note = off_note(&readings).unwrap_or_default();
        assert!(
            note.contains("heap probe off in PIDs 11, 13: the program installed a seccomp filter"),
            "{note}"
        );
        assert!(
            note.contains("heap probe off in PID 12: its thread could not be created"),
            "{note}"
        );
        assert!(!note.contains("10"), "{note}");
        assert_eq!(off_note(&[off(1, None)]), None);
    }
}
