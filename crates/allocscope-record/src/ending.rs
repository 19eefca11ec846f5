//! The end of a recording: a launched tree that is still running killed,
//! and how the recording ended, in the store's words.

use super::ticks::MAX_NAP;
use allocscope_core::run::sampling::SamplingLoop;
use allocscope_core::run::{classify_wait_status, process, Event};
use allocscope_core::store::Ending;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a launched tree gets to go after allocscope kills it.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// Kills a launched tree that allocscope stops recording (duration reached,
/// Ctrl-C, a failed store) and waits, boundedly, until the reaper reports it
/// gone; returns the main process's wait status if it was reaped.
pub(super) fn end_launched_tree(
    pid: i32,
    sampling: &mut SamplingLoop,
    events: &mpsc::Receiver<Event>,
    mut main_status: Option<i32>,
) -> Option<i32> {
    let deadline = Instant::now() + KILL_WAIT;
    let mut last_kill: Option<Instant> = None;
    while Instant::now() < deadline {
        if last_kill.is_none_or(|at| at.elapsed() >= MAX_NAP) {
            process::kill_tree(pid, &sampling.walk());
            last_kill = Some(Instant::now());
        }
        match events.recv_timeout(MAX_NAP) {
            Ok(Event::Reaped(reaped)) if reaped.pid == pid => main_status = Some(reaped.status),
            Ok(Event::TreeEnded(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
    main_status
}

/// The ending stored for `status`: a failed store's error, an exited
/// command's wait status (an attached process's belongs to its parent).
pub(super) fn ending(
    status: &'static str,
    main_status: Option<i32>,
    failure: Option<&anyhow::Error>,
) -> Ending {
    let (exit_code, signal, message) = match (status, main_status) {
        ("failed", _) => (
            None,
            None,
            failure.map(|e| format!("recording stopped: {e:#}")),
        ),
        ("exited", Some(raw)) => {
            let (_, code, signal, message) = classify_wait_status(raw);
            (code, signal, message)
        }
        ("exited", None) => (
            None,
            None,
            Some("the process exited; only its parent knows its exit status".into()),
        ),
        _ => (None, None, None),
    };
    Ending {
        status,
        exit_code,
        signal,
        message,
    }
}
