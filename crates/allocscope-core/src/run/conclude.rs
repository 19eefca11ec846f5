//! A run's status and message once its tree is gone, decided in order: the
//! time limit or the main process's wait status (`status.rs`), a service's
//! own verdict, OOM kills in the run's cgroup, whether the allocator
//! loaded, then the heap probe's notes; and the allocators the workload
//! mapped besides its configuration's.

use super::containment::Containment;
use super::launch::Launch;
use super::service::ServiceRun;
use super::settle::Checks;
use super::status::{classify_wait_status, Classified};
use crate::model::{RunStatus, ServiceRecord};
use crate::sample::Sampler;

/// What the run knows of its end when the tree is gone.
pub(super) struct Ended<'a> {
    /// allocscope killed it at the time limit.
    pub timed_out: bool,
    /// The main process's raw wait status, if the reaper reported it.
    pub main_status: Option<i32>,
    pub service: Option<ServiceRun<'a>>,
    pub containment: Containment,
    pub checks: Checks,
}

/// The run record's fields that say how the run ended.
pub(super) struct Concluded {
    pub status: RunStatus,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub message: Option<String>,
    pub service: Option<ServiceRecord>,
    pub probe_mode: Option<String>,
    pub probe_cpu_s: Option<f64>,
    pub linked_allocators: Vec<String>,
}

pub(super) fn conclude(launch: &Launch, ended: Ended, sampler: &mut Sampler) -> Concluded {
    let Ended {
        timed_out,
        main_status,
        service,
        containment,
        checks,
    } = ended;
    let classified = match (timed_out, main_status) {
        (true, _) => {
            let limit = launch.timeout.unwrap_or_default();
            let message = format!(
                "killed after the time limit of {}",
                crate::units::format_seconds(limit.as_secs_f64())
            );
            (RunStatus::Timeout, None, None, Some(message))
        }
        (false, Some(raw)) => classify_wait_status(raw),
        (false, None) => (
            RunStatus::Failed,
            None,
            None,
            Some("the workload's exit status was lost".into()),
        ),
    };
    // A service decides its run's status unless allocscope ended it; its
    // record is kept either way.
    let (classified, service) = match service {
        Some(service) if !timed_out => {
            let (classified, record) = service.conclude(classified);
            (classified, Some(record))
        }
        Some(service) => {
            let record = service.conclude(classified.clone()).1;
            (classified, Some(record))
        }
        None => (classified, None),
    };
    let (mut status, exit_code, signal, mut message): Classified = classified;
    note_containment(&containment, &mut status, &mut message);
    let load = &checks.load;
    if status != RunStatus::Timeout && status != RunStatus::Oom {
        if let Some(reason) =
            load.not_loaded_reason(launch.preload_ignored.as_deref(), launch.own_allocator)
        {
            status = RunStatus::NotLoaded;
            message = Some(reason);
        } else if !load.verified() && launch.config.library.is_some() {
            let note = "the run ended before allocscope could check that the allocator was loaded";
            message = Some(message.map_or(note.to_string(), |m| format!("{m}; {note}")));
        }
    }
    let (probe_mode, probe_cpu_s) = match &checks.heap {
        Some(h) => h.conclude(
            sampler.finish_probe(),
            launch.preload_ignored.as_deref(),
            &mut status,
            &mut message,
        ),
        None => (None, None),
    };
    let mut linked_allocators = launch.linked_allocators.clone();
    for name in load.other_allocators() {
        if !linked_allocators.contains(&name) {
            linked_allocators.push(name);
        }
    }
    Concluded {
        status,
        exit_code,
        signal,
        message,
        service,
        probe_mode,
        probe_cpu_s,
        linked_allocators,
    }
}

/// An OOM kill makes the run `oom` (a timeout stays one); the limit, and
/// a group that could not be made, are named in the message either way.
fn note_containment(
    containment: &Containment,
    status: &mut RunStatus,
    message: &mut Option<String>,
) {
    let mut append = |note: String| {
        *message = Some(
            message
                .take()
                .map_or(note.clone(), |m| format!("{m}; {note}")),
        );
    };
    if let Some(error) = containment.group_error() {
        append(format!("no memory cgroup for this run: {error}"));
    }
    let oom_kills = containment.oom_kills();
    let described = containment.describe_limit();
    if oom_kills > 0 && *status != RunStatus::Timeout {
        *status = RunStatus::Oom;
        let killed = format!("the kernel's OOM killer ended {oom_kills} process(es)");
        *message = Some(match described {
            Some(limit) => format!("{killed}; {limit}"),
            None => killed,
        });
    } else if let Some(limit) = described {
        append(limit);
    }
}
