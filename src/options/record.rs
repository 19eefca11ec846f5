//! `record`'s arguments checked before anything is stored: what to record
//! (a running process, or a command started under one configuration), how
//! often, for how long, and where to serve its values for Prometheus.

use super::parse::resolve_command;
use crate::cli::RecordArgs;
use allocscope_core::sample::proc;
use allocscope_core::usage_error::UsageError;
use allocscope_record::error::RecordError;
use allocscope_record::Target as RecordTarget;
use std::net::SocketAddr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct RecordSettings {
    pub target: RecordTarget,
    /// `--name`; the command names a recording without one.
    pub name: Option<String>,
    pub interval: Duration,
    /// `--duration`: stop after this long.
    pub duration: Option<Duration>,
    /// `--metrics`, checked (not yet bound).
    pub metrics: Option<SocketAddr>,
    pub quiet: bool,
    pub db: PathBuf,
}

impl RecordSettings {
    pub fn from_args(args: &RecordArgs) -> Result<RecordSettings, UsageError> {
        let (interval, duration) = (args.interval, args.duration);
        let target = match (args.pid, args.command.first()) {
            (Some(pid), _) => {
                let (pid, start_ticks) = check_pid(pid)?;
                RecordTarget::Attach { pid, start_ticks }
            }
            (None, Some(program)) => {
                let program = resolve_command(program)?;
                let spec = args.alloc.as_deref().unwrap_or("glibc");
                let config = allocscope_core::alloc::Registry::discover()
                    .resolve(spec)
                    .map_err(UsageError::Alloc)?;
                RecordTarget::Launch {
                    program,
                    args: args.command[1..].to_vec(),
                    config: Box::new(config),
                    logs_dir: logs_directory(&args.db).join("recordings"),
                }
            }
            (None, None) => return Err(RecordError::NothingToRecord.into()),
        };
        let metrics = args
            .metrics
            .as_deref()
            .map(|text| allocscope_record::prometheus::parse_address(text, args.metrics_public))
            .transpose()?;
        Ok(RecordSettings {
            target,
            name: args.name.clone(),
            interval,
            duration,
            metrics,
            quiet: args.quiet,
            db: args.db.clone(),
        })
    }
}

/// `--pid`: the process exists and allocscope may read its memory. Reading
/// smaps_rollup needs the ptrace read right over the process (same user, or
/// root), so that is what is tried; the owner is named when it fails.
pub(super) fn check_pid(pid: i32) -> Result<(i32, u64), UsageError> {
    if pid == std::process::id() as i32 {
        return Err(RecordError::PidIsSelf(pid).into());
    }
    let Some(stat) = proc::read_stat(pid) else {
        return Err(RecordError::NoProcess(pid).into());
    };
    if matches!(stat.state, 'Z' | 'X') {
        return Err(RecordError::Zombie(pid).into());
    }
    let path = format!("/proc/{pid}/smaps_rollup");
    if let Err(error) = std::fs::File::open(&path) {
        let owner = std::fs::metadata(format!("/proc/{pid}"))
            .map(|m| m.uid().to_string())
            .unwrap_or_else(|_| "?".into());
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        let why = if error.kind() == std::io::ErrorKind::PermissionDenied {
            RecordError::NotPermitted { pid, owner, me }
        } else {
            RecordError::Unreadable {
                pid,
                path,
                reason: error.to_string(),
            }
        };
        return Err(why.into());
    }
    Ok((pid, stat.start_ticks))
}

/// `allocscope-logs/` beside the store, like `compare`'s: where a launched
/// command's stdout and stderr go (`record`'s, `soak`'s). Absolute, since a
/// soak's `{instance}` is a directory below it and a server that changes
/// directory (PostgreSQL into its data directory) must still find it.
pub(super) fn logs_directory(db: &Path) -> PathBuf {
    let parent = match db.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let logs = parent.join("allocscope-logs");
    std::path::absolute(&logs).unwrap_or(logs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_logs_directory_is_absolute_beside_a_relative_store() {
        let logs = logs_directory(Path::new("store.db"));
        assert!(logs.is_absolute(), "{}", logs.display());
        assert!(logs.ends_with("allocscope-logs"), "{}", logs.display());
    }

    #[test]
    fn own_parent_is_attachable_and_nonsense_is_not() {
        // SAFETY: getppid has no preconditions.
        let parent = unsafe { libc::getppid() };
        let (pid, start) = check_pid(parent).expect("may read our parent");
        assert_eq!(pid, parent);
        assert_eq!(proc::read_stat(pid).map(|s| s.start_ticks), Some(start));
        for bad in ["0", "-3", "x"] {
            assert!(crate::cli::values::parse_pid(bad).is_err(), "{bad}");
        }
        assert!(check_pid(std::process::id() as i32).is_err(), "itself");
        let missing = check_pid(i32::MAX).expect_err("no such pid");
        assert!(missing.to_string().contains("does not exist"), "{missing}");
    }
}
