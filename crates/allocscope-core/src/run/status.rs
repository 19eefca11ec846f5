//! What a wait status means for a run: `ok`, `failed` with the exit code,
//! `crashed` with the signal, and signal names for messages.

use crate::model::RunStatus;

/// A run's ending: (status, exit code, signal, message).
pub(crate) type Classified = (RunStatus, Option<i32>, Option<i32>, Option<String>);

/// Turns a raw wait status into (status, exit code, signal, message).
pub fn classify_wait_status(raw: i32) -> Classified {
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

/// The signal's name (`SIGSEGV`), from signal-hook's table of them; `signal`
/// for a number it does not know.
pub fn signal_name(signal: i32) -> &'static str {
    signal_hook::low_level::signal_name(signal).unwrap_or("signal")
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
