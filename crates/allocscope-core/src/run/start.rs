//! A workload started the one way `compare`'s runs, `record -- COMMAND`
//! and each of a soak's instances start it: its stdout file, its memory
//! cgroup (`containment.rs`), the heap probe preloaded before the allocator
//! (`heap.rs`), its own process group with a parent-death signal
//! (`process.rs`), the reaper when it is the only workload of allocscope
//! (`reaper.rs`), and the stdout tap (`tap.rs`). The sampler is handed the
//! cgroup's and the probe's readers (`Started::feed`); a started workload is stopped here
//! too (`Started::stop`), SIGTERM first.

use super::containment::Containment;
use super::event::Event;
use super::extension::ChildStep;
use super::heap::HeapRun;
use super::sampling::SamplingLoop;
use super::{process, reaper, tap};
use crate::cgroup::Parent;
use crate::probe::ProbeLaunch;
use anyhow::Context;
use std::ffi::OsString;
use std::path::Path;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// What to start, and how.
pub struct Start<'a> {
    pub program: &'a Path,
    pub args: &'a [OsString],
    /// The configuration's environment; the probe's variables are added.
    pub env: &'a [(String, String)],
    pub stdout_path: &'a Path,
    pub stderr_path: &'a Path,
    /// Where its memory cgroup goes; `None` for none.
    pub cgroup: Option<&'a Parent>,
    /// `--memory-limit` in bytes.
    pub memory_limit: Option<u64>,
    pub probe: Option<&'a ProbeLaunch>,
    /// The probe runs the reclaim test from its exit handler.
    pub reclaim_at_exit: bool,
    /// The sampling interval, which the probe writes its readings at.
    pub interval: Duration,
    /// Marker patterns for stdout lines.
    pub marks: &'a [regex::Regex],
    /// Steps of the run's extensions in the child, after the cgroup's.
    pub child_steps: Vec<ChildStep>,
    /// Reap every child into the events: only where this workload is
    /// allocscope's one tree (a soak waits for each instance by its pid).
    pub reaper: bool,
}

/// A workload started: its main process, its probe and its cgroup.
pub struct Started {
    pub(crate) pid: i32,
    pub(crate) heap: Option<HeapRun>,
    pub(crate) containment: Containment,
    interval: Duration,
    /// Its load command (a soak's `--load`), while one runs.
    load_pid: Option<i32>,
}

/// Starts `spec`'s workload; its reaper and tap send into `events`.
pub fn start(spec: Start, events: &Sender<Event>) -> anyhow::Result<Started> {
    let stdout_file = std::fs::File::create(spec.stdout_path)
        .with_context(|| format!("creating '{}'", spec.stdout_path.display()))?;
    let containment = Containment::prepare(spec.cgroup, spec.memory_limit);
    let heap = spec.probe.map(HeapRun::new).transpose()?;
    let env = match &heap {
        Some(h) => h.env(spec.env, spec.interval, spec.reclaim_at_exit),
        None => spec.env.to_vec(),
    };
    let (pid, pipe) = process::spawn(
        spec.program,
        spec.args,
        &env,
        spec.stderr_path,
        // The cgroup joined first, so what extensions do counts in it.
        (containment.child_hook().into_iter())
            .chain(spec.child_steps)
            .collect(),
    )?;
    if spec.reaper {
        reaper::spawn_reaper(events.clone())?;
    }
    tap::spawn_tap(pipe, stdout_file, spec.marks.to_vec(), events.clone())
        .context("starting the stdout tap")?;
    Ok(Started {
        pid,
        heap,
        containment,
        interval: spec.interval,
        load_pid: None,
    })
}

impl Started {
    /// `sampling`'s sampler made to read its cgroup and its probe.
    pub fn feed(&self, sampling: &mut SamplingLoop) {
        if let Some(reader) = self.containment.group().and_then(|g| g.reader().ok()) {
            sampling.sampler_mut().attach_cgroup(reader);
        }
        if let Some(reader) = self.heap.as_ref().and_then(|h| h.reader(self.interval)) {
            sampling.sampler_mut().attach_probe(reader);
        }
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// How many times the kernel's OOM killer killed in its cgroup.
    pub fn oom_kills(&self) -> u64 {
        self.containment.oom_kills()
    }

    /// Starts its load command with `sh -c` (`process::spawn_load`); a
    /// command that cannot start runs no load.
    pub fn start_load(&mut self, command: &str, stdout_path: &Path, stderr_path: &Path) {
        self.load_pid = process::spawn_load(command, stdout_path, stderr_path).ok();
    }

    /// Its load command, if one runs, killed and reaped.
    pub fn stop_load(&mut self) {
        if let Some(pid) = self.load_pid.take() {
            process::kill_tree(pid, &[]);
            wait(pid, 0);
        }
    }

    /// Its raw wait status once it has exited, without waiting.
    pub fn exited(&self) -> Option<i32> {
        wait(self.pid, libc::WNOHANG)
    }

    /// Stops it: its load killed, SIGTERM to its group and tree, SIGKILL
    /// after `grace`; reaped.
    pub fn stop(&mut self, sampling: &mut SamplingLoop, grace: Duration) {
        self.stop_load();
        process::terminate_tree(self.pid, &sampling.walk());
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if self.exited().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        process::kill_tree(self.pid, &sampling.walk());
        wait(self.pid, 0);
    }

    /// SIGKILL to its group and to `sampling`'s walk of its tree.
    pub fn kill(&self, sampling: &mut SamplingLoop) {
        process::kill_tree(self.pid, &sampling.walk());
    }

    /// Makes the probe files of the tree's processes that run as another
    /// user, before the sampler reads.
    pub(crate) fn hand_out_files(&mut self, tree: &[i32]) {
        if let Some(heap) = self.heap.as_mut() {
            heap.hand_out_files(tree);
        }
    }
}

/// `wait4(pid)` with `flags`: the raw wait status once it has exited.
fn wait(pid: i32, flags: i32) -> Option<i32> {
    let mut status = 0;
    // SAFETY: a valid pointer to a local; a null rusage is allowed.
    let reaped = unsafe { libc::wait4(pid, &mut status, flags, std::ptr::null_mut()) };
    (reaped == pid).then_some(status)
}
