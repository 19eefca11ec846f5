//! `record --pid`: checks that the process exists and that allocscope may
//! read its memory, before anything is stored. Reading smaps_rollup needs
//! the ptrace read right over the process (same user, or root), so that is
//! what is tried; the owner is named when it fails.

use crate::sample::proc;
use crate::usage_error::UsageError;
use std::os::unix::fs::MetadataExt;

/// The process's start time (clock ticks after boot): with the pid, it names
/// one process even after the pid is reused.
pub fn check(pid_text: &str) -> Result<(i32, u64), UsageError> {
    let pid = match pid_text.trim().parse::<i32>() {
        Ok(pid) if pid > 0 => pid,
        _ => {
            return Err(UsageError::Record(format!(
                "--pid '{pid_text}' is not a process id; give a positive number (see `pgrep NAME`)"
            )))
        }
    };
    if pid == std::process::id() as i32 {
        return Err(UsageError::Record(format!(
            "--pid {pid} is allocscope itself; give the pid of the program to record"
        )));
    }
    let Some(stat) = proc::read_stat(pid) else {
        return Err(UsageError::Record(format!(
            "no process {pid}: it does not exist or has already exited (see `pgrep NAME`)"
        )));
    };
    if matches!(stat.state, 'Z' | 'X') {
        return Err(UsageError::Record(format!(
            "process {pid} has already exited (it is a zombie waiting for its parent)"
        )));
    }
    let path = format!("/proc/{pid}/smaps_rollup");
    if let Err(error) = std::fs::File::open(&path) {
        let owner = std::fs::metadata(format!("/proc/{pid}"))
            .map(|m| m.uid().to_string())
            .unwrap_or_else(|_| "?".into());
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        let why = if error.kind() == std::io::ErrorKind::PermissionDenied {
            format!(
                "process {pid} belongs to uid {owner} and allocscope runs as uid {me}, which \
                 may not read its memory; run allocscope as that user (or as root)"
            )
        } else {
            format!("cannot read the memory of process {pid} ({path}: {error})")
        };
        return Err(UsageError::Record(why));
    }
    Ok((pid, stat.start_ticks))
}

/// True while `pid` is still the process that started at `start_ticks`.
pub fn same_process(pid: i32, start_ticks: u64) -> bool {
    proc::read_stat(pid)
        .is_some_and(|s| s.start_ticks == start_ticks && !matches!(s.state, 'Z' | 'X'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_parent_is_attachable_and_nonsense_is_not() {
        // SAFETY: getppid has no preconditions.
        let parent = unsafe { libc::getppid() };
        let (pid, start) = check(&parent.to_string()).expect("may read our parent");
        assert_eq!(pid, parent);
        assert!(same_process(pid, start));
        assert!(!same_process(pid, start + 1));
        for bad in ["0", "-3", "x", &std::process::id().to_string()] {
            assert!(check(bad).is_err(), "{bad}");
        }
        let missing = check(&i32::MAX.to_string()).expect_err("no such pid");
        assert!(missing.to_string().contains("does not exist"), "{missing}");
    }
}
