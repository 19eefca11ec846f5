//! How a recording ended, in the store's words.

use allocscope_core::run::classify_wait_status;
use allocscope_core::store::Ending;

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
