//! One run: start the workload under a configuration, sample its process tree
//! every interval until the whole tree has ended (or the time limit or Ctrl-C),
//! and return what was measured. Never stores or formats anything.

mod interrupt;
mod loaded;
mod process;
mod reaper;

pub use interrupt::Interrupt;
pub use process::become_subreaper;

use crate::model::{Config, RunRecord, RunStatus, Sample};
use crate::sample::{thread_cpu_seconds, Sampler, TreeWalker, DEFAULT_BUDGET};
use loaded::LoadCheck;
use reaper::{Reaped, ReaperEvent};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

/// How long the workload gets between SIGKILLs while it is being ended.
const KILL_RETRY: Duration = Duration::from_millis(100);
/// The longest allocscope sleeps before looking at Ctrl-C and the time limit.
const MAX_NAP: Duration = Duration::from_millis(50);

pub struct Launch<'a> {
    pub program: &'a Path,
    pub args: &'a [OsString],
    pub config: &'a Config,
    pub index: u32,
    pub stdout_path: PathBuf,
    pub stderr_path: PathBuf,
    pub interval: Duration,
    pub timeout: Option<Duration>,
    /// Why a preload cannot take effect in this program (static, setuid, Go),
    /// known beforehand from its ELF file.
    pub preload_ignored: Option<String>,
    /// Allocators the program's ELF file links itself.
    pub linked_allocators: Vec<String>,
}

pub enum Outcome {
    Finished(Box<RunRecord>),
    /// Ctrl-C or SIGTERM: the workload was ended and the run is not kept.
    Interrupted,
}

/// Why allocscope ended the workload itself.
#[derive(Clone, Copy, PartialEq)]
enum Ending {
    TimeLimit,
    Interrupt,
}

/// Tree-wide totals from wait4 of every reaped process.
#[derive(Default)]
struct Usage {
    user_s: f64,
    sys_s: f64,
    max_hwm_bytes: u64,
    minor_faults: u64,
    major_faults: u64,
}

impl Usage {
    fn add(&mut self, reaped: &Reaped) {
        self.user_s += reaped.user_s;
        self.sys_s += reaped.sys_s;
        self.max_hwm_bytes = self.max_hwm_bytes.max(reaped.max_rss_bytes);
        self.minor_faults += reaped.minor_faults;
        self.major_faults += reaped.major_faults;
    }
}

pub fn execute(launch: &Launch, interrupt: &Interrupt) -> anyhow::Result<Outcome> {
    let own_pid = std::process::id() as i32;
    let mut sampler = Sampler::new(DEFAULT_BUDGET);
    let mut walker = TreeWalker::new(own_pid);
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let start = Instant::now();
    let pid = process::spawn(
        launch.program,
        launch.args,
        &launch.config.env,
        &launch.stdout_path,
        &launch.stderr_path,
    )?;
    let (events_tx, events) = mpsc::channel();
    reaper::spawn_reaper(events_tx)?;

    let mut load_check = LoadCheck::new(launch.config.library.clone());
    let mut samples: Vec<Sample> = Vec::new();
    let mut usage = Usage::default();
    let mut main_status: Option<i32> = None;
    let mut ending: Option<Ending> = None;
    let mut last_kill: Option<Instant> = None;
    let mut next_tick = start;
    let ended_at = loop {
        let now = Instant::now();
        if ending.is_none() {
            if interrupt.requested() {
                ending = Some(Ending::Interrupt);
            } else if launch.timeout.is_some_and(|limit| now - start >= limit) {
                ending = Some(Ending::TimeLimit);
            }
        }
        if ending.is_some() && last_kill.is_none_or(|at| now - at >= KILL_RETRY) {
            process::kill_tree(pid, &walker.walk());
            last_kill = Some(now);
        }
        if now >= next_tick && ending.is_none() {
            let cpu_before = thread_cpu_seconds();
            let pids = walker.walk();
            if !load_check.settled() {
                load_check.observe(pid, &pids);
            }
            sampler.charge(thread_cpu_seconds() - cpu_before);
            if !pids.is_empty() {
                let t_s = (now - start).as_secs_f64();
                samples.push(sampler.sample(&pids, t_s));
            }
            next_tick += launch.interval;
            if next_tick <= now {
                next_tick = now + launch.interval;
            }
        } else if !load_check.settled() && ending.is_none() {
            // The dynamic loader maps preloads within milliseconds of exec:
            // look early so that short runs are verified too.
            let cpu_before = thread_cpu_seconds();
            load_check.observe(pid, &walker.walk());
            sampler.charge(thread_cpu_seconds() - cpu_before);
        }
        let mut nap = next_tick
            .saturating_duration_since(Instant::now())
            .min(MAX_NAP);
        if !load_check.settled() {
            nap = nap.min(load_check.poll_interval());
        }
        match events.recv_timeout(nap) {
            Ok(ReaperEvent::Reaped(reaped)) => {
                usage.add(&reaped);
                if reaped.pid == pid {
                    main_status = Some(reaped.status);
                }
            }
            Ok(ReaperEvent::TreeEnded(at)) => break at,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break Instant::now(),
        }
    };

    if ending == Some(Ending::Interrupt) {
        return Ok(Outcome::Interrupted);
    }
    let (mut status, exit_code, signal, mut message) = match (ending, main_status) {
        (Some(_), _) => {
            let limit = launch.timeout.unwrap_or_default();
            let message = format!(
                "killed after the time limit of {}",
                crate::units::format_seconds(limit.as_secs_f64())
            );
            (RunStatus::Timeout, None, None, Some(message))
        }
        (None, Some(raw)) => classify_wait_status(raw),
        (None, None) => (
            RunStatus::Failed,
            None,
            None,
            Some("the workload's exit status was lost".into()),
        ),
    };
    if status != RunStatus::Timeout {
        if let Some(reason) = load_check.not_loaded_reason(launch.preload_ignored.as_deref()) {
            status = RunStatus::NotLoaded;
            message = Some(reason);
        } else if !load_check.verified() && launch.config.library.is_some() {
            let note = "the run ended before allocscope could check that the allocator was loaded";
            message = Some(message.map_or(note.to_string(), |m| format!("{m}; {note}")));
        }
    }
    let mut linked_allocators = launch.linked_allocators.clone();
    for name in load_check.other_allocators() {
        if !linked_allocators.contains(&name) {
            linked_allocators.push(name);
        }
    }
    Ok(Outcome::Finished(Box::new(RunRecord {
        index: launch.index,
        status,
        exit_code,
        signal,
        wall_s: (ended_at - start).as_secs_f64(),
        user_s: usage.user_s,
        sys_s: usage.sys_s,
        max_hwm_bytes: usage.max_hwm_bytes,
        minor_faults: usage.minor_faults,
        major_faults: usage.major_faults,
        samples,
        stdout_path: launch.stdout_path.clone(),
        stderr_path: launch.stderr_path.clone(),
        message,
        linked_allocators,
        sampler_cpu_s: sampler.cpu_seconds(),
        started_at,
    })))
}

/// Turns a raw wait status into (status, exit code, signal, message).
fn classify_wait_status(raw: i32) -> (RunStatus, Option<i32>, Option<i32>, Option<String>) {
    if libc::WIFSIGNALED(raw) {
        let signal = libc::WTERMSIG(raw);
        let message = format!("killed by signal {signal} ({})", signal_name(signal));
        (RunStatus::Crashed, None, Some(signal), Some(message))
    } else {
        let code = libc::WEXITSTATUS(raw);
        if code == 0 {
            (RunStatus::Ok, Some(0), None, None)
        } else {
            (
                RunStatus::Failed,
                Some(code),
                None,
                Some(format!("exited with code {code}")),
            )
        }
    }
}

pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => "signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_exit_codes_and_signals() {
        // Raw statuses as the kernel encodes them.
        assert_eq!(classify_wait_status(0).0, RunStatus::Ok);
        let failed = classify_wait_status(3 << 8);
        assert_eq!((failed.0, failed.1), (RunStatus::Failed, Some(3)));
        let crashed = classify_wait_status(libc::SIGSEGV);
        assert_eq!(
            (crashed.0, crashed.2),
            (RunStatus::Crashed, Some(libc::SIGSEGV))
        );
        assert!(crashed.3.is_some_and(|m| m.contains("SIGSEGV")));
    }
}
