//! What holds a run's tree: its own memory cgroup by default, where the
//! experiment found a place for one (`cgroup::find`), with a limit only
//! under `--memory-limit`, so the kernel's OOM killer ends the tree at the
//! limit and the run can say `oom`; without a group, `--memory-limit` is an
//! address-space rlimit, under which allocations fail instead (the run says
//! which was used). The workload joins the group (or sets the rlimit)
//! between fork and exec.

use super::extension::ChildStep;
use crate::cgroup::{Parent, RunGroup, Version};

#[derive(Debug)]
pub(crate) struct Containment {
    group: Option<RunGroup>,
    /// `--memory-limit` in bytes.
    limit_bytes: Option<u64>,
    /// Why this run has no group though the experiment found a place for
    /// one (rare: the place became unusable since).
    group_error: Option<String>,
}

impl Containment {
    pub fn prepare(parent: Option<&Parent>, limit_bytes: Option<u64>) -> Containment {
        let (group, group_error) = match parent.map(|p| RunGroup::create(p, limit_bytes)) {
            Some(Ok(group)) => (Some(group), None),
            Some(Err(error)) => (None, Some(error)),
            None => (None, None),
        };
        Containment {
            group,
            limit_bytes,
            group_error,
        }
    }

    /// The run's cgroup, if it has one.
    pub fn group(&self) -> Option<&RunGroup> {
        self.group.as_ref()
    }

    /// How the limit is enforced, for the run's message; `None` without
    /// `--memory-limit`.
    pub(crate) fn describe_limit(&self) -> Option<String> {
        let bytes = self.limit_bytes?;
        let how = match self.group.as_ref().map(RunGroup::version) {
            Some(Version::V2) => "cgroup v2 memory.max",
            Some(Version::V1) => "cgroup v1 memory.limit_in_bytes",
            None => {
                "RLIMIT_AS (no writable memory cgroup); allocations fail instead of an OOM kill"
            }
        };
        Some(format!(
            "memory limit {} via {how}",
            crate::units::format_bytes(bytes as f64)
        ))
    }

    /// Why the run has no group of its own, when it should have had one.
    pub(crate) fn group_error(&self) -> Option<&str> {
        self.group_error.as_deref()
    }

    /// What the child runs between fork and exec: join the group, or set
    /// the rlimit; `None` when there is nothing to do. Only
    /// async-signal-safe calls.
    pub(crate) fn child_hook(&self) -> Option<ChildStep> {
        if let Some(fd) = self.group.as_ref().and_then(RunGroup::procs_fd) {
            return Some(Box::new(move || {
                let mut digits = [0u8; 20];
                let text = format_pid(unsafe { libc::getpid() }, &mut digits);
                // SAFETY: writing a stack buffer to an fd opened before fork.
                if unsafe { libc::write(fd, text.as_ptr().cast(), text.len()) } < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            }));
        }
        let bytes = self.limit_bytes?;
        Some(Box::new(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            // SAFETY: setrlimit with a valid struct.
            if unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        }))
    }

    /// How many processes of the tree the kernel's OOM killer ended: at
    /// `--memory-limit`, or short of memory on the host (0 without a group).
    pub fn oom_kills(&self) -> u64 {
        self.group.as_ref().map_or(0, RunGroup::oom_kills)
    }

    /// The kernel's own peak of the group's charge, where it keeps one.
    pub fn peak_bytes(&self) -> Option<u64> {
        self.group.as_ref().and_then(RunGroup::peak_bytes)
    }
}

/// Decimal digits of `pid` in `buffer`, without allocating.
fn format_pid(pid: i32, buffer: &mut [u8; 20]) -> &[u8] {
    let mut value = pid.max(0) as u64;
    let mut start = buffer.len();
    loop {
        start -= 1;
        buffer[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            return &buffer[start..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_pids_without_allocating() {
        let mut buffer = [0u8; 20];
        assert_eq!(format_pid(0, &mut buffer), b"0");
        assert_eq!(format_pid(4194304, &mut buffer), b"4194304");
    }

    #[test]
    fn without_a_group_a_limit_is_an_rlimit_and_no_limit_needs_no_hook() {
        let limited = Containment::prepare(None, Some(64 << 20));
        assert!(limited.child_hook().is_some());
        assert!(limited
            .describe_limit()
            .is_some_and(|d| d.contains("RLIMIT_AS")));
        let free = Containment::prepare(None, None);
        assert!(free.child_hook().is_none() && free.describe_limit().is_none());
        assert_eq!(free.oom_kills(), 0);
    }
}
