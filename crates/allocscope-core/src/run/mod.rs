//! One run: start the workload under a configuration, sample its process tree
//! every interval until the whole tree has ended (or the time limit or Ctrl-C),
//! record a marker with the next reading of the tree for each progress line
//! its stdout tap reports (`marks.rs`), and return what was measured. Never stores or formats anything;
//! each tick's sample is also handed to the run's extensions (`extension.rs`).
//!
//! Three threads: this one (spawns, samples, decides), the reaper (blocks in
//! wait4) and the stdout tap (copies the pipe to the stdout file and matches
//! lines). Both helpers send into one channel of `Event`s (`event.rs`), so
//! the main loop wakes at once for an exit or a marker, whichever comes
//! first.
//!
//! The loop is the run engine (`engine.rs`), which `record` and `soak` run
//! their instances on too, and the workload's start (`start.rs`) is theirs
//! too. `execute` only wires the parts: the launch in `launch.rs`, the
//! engine's hooks for a run in `supervise.rs` (ticks in `sampling.rs`, load
//! checks in `settle.rs`, service phases in `service.rs`), the status in
//! `conclude.rs`. This file only re-exports and wires: no file of the
//! module imports from it.

mod conclude;
mod containment;
mod engine;
mod event;
mod extension;
mod heap;
mod interrupt;
mod launch;
mod loaded;
mod marks;
mod pin;
mod probe_files;
mod process;
mod ready;
mod reaper;
mod reclaim;
mod reclaim_at;
pub mod sampling;
mod served_tree;
mod service;
mod service_spec;
mod settle;
mod start;
mod status;
mod stderr_tail;
mod supervise;
mod tap;
mod values;

pub use engine::{unix_now, Clock, Engine, Followed, Hooks, Root, Stopped};
pub use event::{Event, Reaped};
pub use extension::RunExtension;
pub use interrupt::Interrupt;
pub use launch::{Launch, Outcome};
pub use pin::CpuPin;
pub use process::become_subreaper;
pub use reclaim_at::ReclaimAt;
pub use service_spec::{LoadSpec, Readiness, ServiceSettings};
pub use start::{start, Start, Started};
pub use status::classify_wait_status;
pub use status::signal_name;
pub use tap::BUILTIN_MARK;
pub use values::extract_user_metrics;

use crate::model::RunRecord;
use crate::sample::machine_cpu::MachineCpu;
use conclude::{conclude, Ended};
use containment::Containment;
use launch::Spawned;
use loaded::LoadCheck;
use reaper::Usage;
use sampling::SamplingLoop;
use settle::Checks;
use std::time::{Duration, SystemTime};
use supervise::{Supervisor, Tree, MAX_NAP};

pub fn execute(launch: &Launch, interrupt: &Interrupt) -> anyhow::Result<Outcome> {
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    // A subreaper: the tree is every descendant of allocscope.
    let mut sampling = SamplingLoop::new(std::process::id() as i32, launch.interval).ramped();
    let start = sampling.start();
    // The machine's counters read just before the spawn and after the
    // reaping, so the run's foreign CPU spans its whole life.
    let machine_before = MachineCpu::read();
    let Spawned {
        pid,
        heap,
        containment,
        service,
        events,
    } = launch::spawn(launch, &mut sampling)?;
    let checks = Checks {
        main: pid,
        load: LoadCheck::new(launch.config.library.clone()),
        served: served_tree::ServedTracker::new(
            &launch_preloads(launch),
            launch.probe.map(|p| p.library.clone()),
        ),
        heap,
    };
    let mut tree = [Tree {
        pid,
        sampling,
        checks,
    }];
    let mut supervisor = Supervisor {
        start,
        service,
        ending: false,
        samples: Vec::new(),
        marks: marks::Marks::default(),
        usage: Usage::default(),
        main_status: None,
        tap_ended: false,
        reclaim: reclaim::Reclaimer::new(launch.reclaim.clone(), launch.service.is_some()),
        actions: Vec::new(),
    };
    let engine = Engine {
        interrupt,
        until: launch.timeout.and_then(|limit| start.checked_add(limit)),
        extensions: &launch.extensions,
        events: &events,
        max_nap: MAX_NAP,
        // Ended by allocscope, the tree is killed until the reaper saw it go.
        kill_wait: Some(Duration::MAX),
    };
    let stopped = engine.run(&mut tree, &mut supervisor);
    if let Some(failure) = stopped.failure {
        return Err(failure);
    }
    let timed_out = match stopped.status {
        "interrupted" => return Ok(Outcome::Interrupted),
        status => status == "complete",
    };
    supervisor.drain_tap(&events);
    let [tree] = tree;
    let ended = (containment, started_at, stopped.at - start, timed_out);
    let record = finish(launch, supervisor, tree, ended);
    let foreign = machine_before
        .zip(MachineCpu::read())
        .map(|(before, after)| after.foreign_since(&before));
    let record = RunRecord {
        foreign_cpu_s: foreign.map(|f| f.cpu_s),
        cpu_pressure_s: foreign.and_then(|f| f.pressure_s),
        ..record
    };
    Ok(Outcome::Finished(Box::new(record)))
}

/// The run's record once its tree is gone: its status concluded from how
/// it ended (its containment, start, wall time, and whether it was killed
/// at the time limit), and what the engine's hooks measured.
fn finish(
    launch: &Launch,
    supervisor: Supervisor,
    tree: Tree,
    (containment, started_at, wall, timed_out): (Containment, String, Duration, bool),
) -> RunRecord {
    let Supervisor {
        service,
        mut samples,
        marks,
        usage,
        main_status,
        reclaim: reclaimer,
        ..
    } = supervisor;
    let Tree {
        mut sampling,
        mut checks,
        ..
    } = tree;
    let cgroup_peak_kernel_bytes = containment.peak_bytes();
    // Every process's last words: arenas counted at exit, the reclaim test's.
    let readings = checks
        .heap
        .as_mut()
        .map(heap::HeapRun::final_readings)
        .unwrap_or_default();
    let mut times = reclaim::RunTimes {
        wall_s: wall.as_secs_f64(),
        user_s: usage.user_s,
        sys_s: usage.sys_s,
    };
    let reclaim = reclaimer.conclude(&readings, sampling.start(), &mut samples, &mut times);
    heap::keep_final_arenas(&readings, &mut samples);
    let served_tree = checks.served.finish();
    let ended = Ended {
        timed_out,
        main_status,
        service,
        containment,
        checks,
    };
    let concluded = conclude(launch, ended, sampling.sampler_mut());
    // A probe that turned itself off says why; a thinned big tree, last.
    let message = joined([
        concluded.message,
        heap::off_note(&readings),
        sampling.thinning_note(),
    ]);
    RunRecord {
        index: launch.index,
        status: concluded.status,
        exit_code: concluded.exit_code,
        signal: concluded.signal,
        wall_s: times.wall_s,
        user_s: times.user_s,
        sys_s: times.sys_s,
        max_hwm_bytes: usage.max_hwm_bytes,
        minor_faults: usage.minor_faults,
        major_faults: usage.major_faults,
        samples,
        markers: marks.into_markers(),
        stdout_path: launch.stdout_path.clone(),
        stderr_path: launch.stderr_path.clone(),
        message,
        linked_allocators: concluded.linked_allocators,
        // A run whose allocator never loaded was served by something else.
        served_by: (concluded.status != crate::model::RunStatus::NotLoaded)
            .then(|| launch.served_by.clone())
            .flatten(),
        sampler_cpu_s: sampling.sampler().cpu_seconds(),
        started_at,
        probe_mode: concluded.probe_mode,
        probe_cpu_s: concluded.probe_cpu_s,
        service: concluded.service,
        user_metrics: Default::default(),
        reclaim,
        cgroup_peak_kernel_bytes,
        // Why it failed, in the program's own words.
        stderr_tail: (concluded.status != crate::model::RunStatus::Ok)
            .then(|| stderr_tail::stderr_tail(&launch.stderr_path))
            .flatten(),
        served_tree,
        foreign_cpu_s: None,
        cpu_pressure_s: None,
    }
}

/// The run's environment as far as what serves `malloc` goes: the
/// configuration's, with the glibc shim first when it has one.
fn launch_preloads(launch: &Launch) -> Vec<(String, String)> {
    match launch.glibc_shim {
        Some(shim) => crate::probe::preload_first(&launch.config.env, shim),
        None => launch.config.env.clone(),
    }
}

/// The notes present, in order, as one message.
fn joined<const N: usize>(notes: [Option<String>; N]) -> Option<String> {
    notes
        .into_iter()
        .flatten()
        .reduce(|m, note| format!("{m}; {note}"))
}
