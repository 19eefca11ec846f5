//! A service run's phases (`compare --server`): wait until the server is
//! ready, drive the load, sample an idle settle period, then stop the server
//! with SIGTERM and, after the grace period, SIGKILL. The main loop feeds it
//! events and the clock; it answers with `Action`s (take a marked sample,
//! leave the load's processes out of the tree, signal the server) and, at
//! the end, the run's status. It never samples or stores anything itself.

use super::event::Event;
use super::ready::spawn_readiness;
use super::service_spec::{LoadSpec, ServiceSettings};
use super::status::{signal_name, Classified};
use crate::load::LoadReport;
use crate::model::{Latency, RunStatus, ServiceRecord};
use crate::units::format_seconds;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

/// What the main loop must do for the service.
#[derive(Debug, PartialEq)]
pub(super) enum Action {
    /// Take a fresh sample and record it as a marker with this label.
    Mark(&'static str),
    /// A load process: keep it and its descendants out of the sampled tree.
    Exclude(i32),
    /// Send SIGTERM to the server's tree.
    Terminate,
    /// SIGKILL the server's tree.
    Kill,
}

pub(super) const READY: &str = "ready";
pub(super) const LOAD_END: &str = "load end";
pub(super) const SETTLED: &str = "settled";

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Starting {
        deadline: Instant,
    },
    Loading,
    Settling {
        until: Instant,
    },
    /// SIGTERM sent at `since`; `killed` once SIGKILL followed.
    Stopping {
        since: Instant,
        killed: bool,
    },
    /// The server failed (not ready, or ended on its own): its tree is
    /// being killed and the run will not count.
    Failed,
}

/// Where the run's files are, for the load's output and the stderr tail.
pub(super) struct ServicePaths {
    pub stdout: PathBuf,
    pub stderr: PathBuf,
    pub load_stdout: PathBuf,
    pub load_stderr: PathBuf,
}

pub(super) struct ServiceRun<'a> {
    settings: &'a ServiceSettings,
    start: Instant,
    server_pid: i32,
    phase: Phase,
    record: ServiceRecord,
    /// Ends the readiness thread and the load generator.
    stop: Arc<AtomicBool>,
    events: Sender<Event>,
    paths: ServicePaths,
    load_pid: Option<i32>,
    generator: Option<JoinHandle<()>>,
    failure: Option<String>,
    /// The server ended on its own before allocscope stopped it.
    died: bool,
}

impl<'a> ServiceRun<'a> {
    pub fn start(
        settings: &'a ServiceSettings,
        start: Instant,
        server_pid: i32,
        paths: ServicePaths,
        events: Sender<Event>,
    ) -> anyhow::Result<ServiceRun<'a>> {
        let stop = Arc::new(AtomicBool::new(false));
        spawn_readiness(
            settings.ready.clone(),
            paths.stdout.clone(),
            paths.stderr.clone(),
            stop.clone(),
            events.clone(),
        )?;
        Ok(ServiceRun {
            settings,
            start,
            server_pid,
            phase: Phase::Starting {
                deadline: start + settings.ready_timeout,
            },
            record: ServiceRecord {
                rejected_lines: settings.rejected_lines,
                ..ServiceRecord::default()
            },
            stop,
            events,
            paths,
            load_pid: None,
            generator: None,
            failure: None,
            died: false,
        })
    }

    fn t_s(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.start).as_secs_f64()
    }

    /// Whether `pid` is the load command (its CPU time is not the server's).
    pub(crate) fn is_load(&self, pid: i32) -> bool {
        self.load_pid == Some(pid)
    }

    /// Time-driven transitions: readiness deadline, end of settle, grace.
    pub fn poll(&mut self, now: Instant) -> Vec<Action> {
        match self.phase {
            Phase::Starting { deadline } if now >= deadline => {
                let check = &self.settings.info.ready;
                let waited = format_seconds(self.settings.ready_timeout.as_secs_f64());
                self.fail(format!(
                    "the server was not ready after {waited} ({check}){}",
                    stderr_tail(&self.paths.stderr)
                ))
            }
            Phase::Settling { until } if now >= until => {
                self.record.stop_s = Some(self.t_s(now));
                self.phase = Phase::Stopping {
                    since: now,
                    killed: false,
                };
                let mut actions = Vec::new();
                if !self.settings.settle.is_zero() {
                    actions.push(Action::Mark(SETTLED));
                }
                actions.push(Action::Terminate);
                actions
            }
            Phase::Stopping {
                since,
                killed: false,
            } if now - since >= self.settings.grace => {
                self.phase = Phase::Stopping {
                    since,
                    killed: true,
                };
                self.record.stopped_by = Some(format!(
                    "SIGKILL: still running {} after SIGTERM",
                    format_seconds(self.settings.grace.as_secs_f64())
                ));
                vec![Action::Kill]
            }
            _ => Vec::new(),
        }
    }

    pub(crate) fn on_ready(&mut self, at: Instant) -> anyhow::Result<Vec<Action>> {
        if !matches!(self.phase, Phase::Starting { .. }) {
            return Ok(Vec::new());
        }
        let t_s = self.t_s(at);
        self.record.ready_s = Some(t_s);
        self.record.load_start_s = Some(self.t_s(Instant::now()));
        self.phase = Phase::Loading;
        let mut actions = vec![Action::Mark(READY)];
        match &self.settings.load {
            LoadSpec::Command(command) => {
                let pid = super::process::spawn_load(
                    command,
                    &self.paths.load_stdout,
                    &self.paths.load_stderr,
                )?;
                self.load_pid = Some(pid);
                self.record.load_stdout_path = Some(self.paths.load_stdout.clone());
                self.record.load_stderr_path = Some(self.paths.load_stderr.clone());
                actions.insert(0, Action::Exclude(pid));
            }
            LoadSpec::Generator(plan) => {
                let plan = plan.clone();
                let stop = self.stop.clone();
                let events = self.events.clone();
                self.generator = Some(std::thread::Builder::new().name("load".into()).spawn(
                    move || {
                        let report = crate::load::run(&plan, &stop);
                        let _ = events.send(Event::LoadDone(Box::new(report), Instant::now()));
                    },
                )?);
            }
        }
        Ok(actions)
    }

    pub(crate) fn on_load_done(&mut self, report: &LoadReport, at: Instant) -> Vec<Action> {
        if self.phase != Phase::Loading {
            return Vec::new();
        }
        self.record.latency = report.latency.map(|p| Latency {
            p50_ms: p.p50_ms,
            p90_ms: p.p90_ms,
            p95_ms: p.p95_ms,
            p99_ms: p.p99_ms,
            p999_ms: p.p999_ms,
            max_ms: p.max_ms,
            requests: report.requests,
            errors: report.errors,
            throughput_rps: report.throughput_rps,
        });
        let kinds = &report.errors_by_kind;
        self.record.errors_by_kind = [
            ("status", kinds.status),
            ("reset", kinds.reset),
            ("timeout", kinds.timeout),
            ("connect", kinds.connect),
            ("protocol", kinds.protocol),
        ]
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .map(|(kind, n)| (kind.to_string(), n))
        .collect();
        self.record.generator_cpu_s = Some(report.generator_cpu_s);
        self.record.warnings.extend(report.warnings.iter().cloned());
        self.load_ended(at)
    }

    /// A process of the run was reaped: the load command, or the server
    /// itself ending before allocscope stopped it.
    pub(crate) fn on_reaped(&mut self, pid: i32, raw_status: i32, at: Instant) -> Vec<Action> {
        if self.is_load(pid) && self.phase == Phase::Loading {
            self.record.load_exit = Some(describe_exit(raw_status));
            return self.load_ended(at);
        }
        if pid != self.server_pid {
            return Vec::new();
        }
        let when = match self.phase {
            Phase::Starting { .. } => "before it was ready",
            Phase::Loading => "during the load",
            Phase::Settling { .. } => "while settling after the load",
            Phase::Stopping { .. } | Phase::Failed => return Vec::new(),
        };
        let tail = stderr_tail(&self.paths.stderr);
        self.died = true;
        let how = describe_exit(raw_status)
            .replace("exit ", "exited with code ")
            .replace("killed", "was killed");
        self.fail(format!("the server {how} {when}{tail}"))
    }

    fn load_ended(&mut self, at: Instant) -> Vec<Action> {
        self.record.load_end_s = Some(self.t_s(at));
        self.phase = Phase::Settling {
            until: at + self.settings.settle,
        };
        vec![Action::Mark(LOAD_END)]
    }

    fn fail(&mut self, message: String) -> Vec<Action> {
        self.failure = Some(message);
        self.phase = Phase::Failed;
        self.end_load();
        vec![Action::Kill]
    }

    /// Stops the generator and kills the load command's group.
    pub(crate) fn end_load(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(pid) = self.load_pid {
            // SAFETY: kill with plain integers; the group may be gone.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }

    /// The tree's memory in the sample taken for a marker of ours.
    pub fn sampled(&mut self, label: &str, sample: &crate::model::Sample) {
        let r = &mut self.record;
        match label {
            LOAD_END => {
                r.rss_end_load_bytes = Some(sample.rss_bytes);
                r.pss_end_load_bytes = sample.pss_bytes;
            }
            SETTLED => {
                r.rss_end_settle_bytes = Some(sample.rss_bytes);
                r.pss_end_settle_bytes = sample.pss_bytes;
            }
            _ => {}
        }
    }

    /// The run's status once the tree has ended, from the server's raw wait
    /// status (if it was reaped), and the service record. A server that
    /// ended after our SIGTERM ran as it should, whatever its exit code.
    pub fn conclude(mut self, classified: Classified) -> (Classified, ServiceRecord) {
        self.end_load();
        if let Some(handle) = self.generator.take() {
            let _ = handle.join();
        }
        let (status, exit_code, signal, message) = classified;
        let result = match (&self.failure, self.phase) {
            (Some(failure), _) => {
                // A server that died by a signal crashed, whoever sent it; one
                // that was not ready (and that allocscope killed) failed.
                let status = if self.died && signal.is_some() {
                    RunStatus::Crashed
                } else {
                    RunStatus::Failed
                };
                (status, exit_code, signal, Some(failure.clone()))
            }
            (None, Phase::Stopping { .. }) => {
                let stopped_by = self
                    .record
                    .stopped_by
                    .get_or_insert_with(|| "SIGTERM".to_string())
                    .clone();
                (
                    RunStatus::Ok,
                    exit_code,
                    signal,
                    Some(format!("stopped by {stopped_by}")),
                )
            }
            _ => (status, exit_code, signal, message),
        };
        (result, std::mem::take(&mut self.record))
    }
}

/// However the run ends (Ctrl-C included), the readiness thread and the
/// generator stop and the load command's group is killed.
impl Drop for ServiceRun<'_> {
    fn drop(&mut self) {
        self.end_load();
    }
}

/// `exit 0`, `exit 3`, `killed by signal 9 (SIGKILL)`.
fn describe_exit(raw: i32) -> String {
    if libc::WIFSIGNALED(raw) {
        let signal = libc::WTERMSIG(raw);
        format!("killed by signal {signal} ({})", signal_name(signal))
    } else {
        format!("exit {}", libc::WEXITSTATUS(raw))
    }
}

/// `; last stderr lines: a | b | c`, or that stderr is empty.
fn stderr_tail(path: &Path) -> String {
    match super::stderr_tail::stderr_tail(path) {
        Some(tail) => format!("; last stderr lines: {tail}"),
        None => "; its stderr is empty".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tail_keeps_the_last_three_lines() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("err");
        std::fs::write(&path, "one\ntwo\n\nthree\nfour\n")?;
        assert_eq!(
            stderr_tail(&path),
            "; last stderr lines: two | three | four"
        );
        std::fs::write(&path, "")?;
        assert_eq!(stderr_tail(&path), "; its stderr is empty");
        Ok(())
    }

    #[test]
    fn exits_are_described_in_words() {
        assert_eq!(describe_exit(0), "exit 0");
        assert_eq!(describe_exit(3 << 8), "exit 3");
        assert_eq!(
            describe_exit(libc::SIGSEGV),
            "killed by signal 11 (SIGSEGV)"
        );
    }
}
