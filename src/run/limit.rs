//! `--memory-limit`: the workload's tree gets a memory cgroup of its own
//! where the machine allows one (cgroup v2 `memory.max`, else v1
//! `memory.limit_in_bytes`), so the kernel's OOM killer ends it and the run
//! can say `oom`; otherwise an address-space rlimit, under which allocations
//! fail instead (the run says which was used).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT_GROUP: AtomicU32 = AtomicU32::new(1);

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Enforcement {
    CgroupV2,
    CgroupV1,
    Rlimit,
}

/// A limit set up for one run; the cgroup is removed when it is dropped.
#[derive(Debug)]
pub struct MemoryLimit {
    bytes: u64,
    enforcement: Enforcement,
    group: Option<PathBuf>,
    /// `cgroup.procs`, opened before fork: the child writes its pid into it.
    procs: Option<File>,
}

impl MemoryLimit {
    pub fn prepare(bytes: u64) -> MemoryLimit {
        let cgroups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let attempts = [
            (Enforcement::CgroupV2, v2_parent(&cgroups), "memory.max"),
            (
                Enforcement::CgroupV1,
                v1_parent(&cgroups),
                "memory.limit_in_bytes",
            ),
        ];
        for (enforcement, parent, limit_file) in attempts {
            if let Some(limit) = parent.and_then(|p| make_group(&p, limit_file, bytes)) {
                return limit_with(bytes, enforcement, limit);
            }
        }
        MemoryLimit {
            bytes,
            enforcement: Enforcement::Rlimit,
            group: None,
            procs: None,
        }
    }

    /// How the limit is enforced, for the run's message.
    pub fn describe(&self) -> String {
        let how = match self.enforcement {
            Enforcement::CgroupV2 => "cgroup v2 memory.max",
            Enforcement::CgroupV1 => "cgroup v1 memory.limit_in_bytes",
            Enforcement::Rlimit => {
                "RLIMIT_AS (no writable memory cgroup); allocations fail instead of an OOM kill"
            }
        };
        format!(
            "memory limit {} via {how}",
            crate::units::format_bytes(self.bytes as f64)
        )
    }

    /// What the child runs between fork and exec: join the cgroup, or set
    /// the rlimit. Only async-signal-safe calls.
    pub fn child_hook(&self) -> impl Fn() -> std::io::Result<()> + Send + Sync + 'static {
        let procs_fd = self.procs.as_ref().map(|f| f.as_raw_fd());
        let bytes = self.bytes;
        move || {
            match procs_fd {
                Some(fd) => {
                    let mut digits = [0u8; 20];
                    let text = format_pid(unsafe { libc::getpid() }, &mut digits);
                    // SAFETY: writing a stack buffer to an fd opened before fork.
                    if unsafe { libc::write(fd, text.as_ptr().cast(), text.len()) } < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                None => {
                    let limit = libc::rlimit {
                        rlim_cur: bytes,
                        rlim_max: bytes,
                    };
                    // SAFETY: setrlimit with a valid struct.
                    if unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) } != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
            }
            Ok(())
        }
    }

    /// How many processes of the group the kernel's OOM killer ended.
    pub fn oom_kills(&self) -> u64 {
        let Some(group) = &self.group else { return 0 };
        let file = match self.enforcement {
            Enforcement::CgroupV2 => "memory.events",
            _ => "memory.oom_control",
        };
        std::fs::read_to_string(group.join(file))
            .map(|t| parse_oom_kills(&t))
            .unwrap_or(0)
    }
}

impl Drop for MemoryLimit {
    fn drop(&mut self) {
        self.procs = None;
        if let Some(group) = &self.group {
            // The tree is gone by now; the kernel may need a moment to
            // release the group.
            for _ in 0..50 {
                if std::fs::remove_dir(group).is_ok() {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}

fn limit_with(
    bytes: u64,
    enforcement: Enforcement,
    (group, procs): (PathBuf, File),
) -> MemoryLimit {
    MemoryLimit {
        bytes,
        enforcement,
        group: Some(group),
        procs: Some(procs),
    }
}

/// Creates a child group under `parent` with the limit; None if anything fails.
fn make_group(parent: &Path, limit_file: &str, bytes: u64) -> Option<(PathBuf, File)> {
    let name = format!(
        "allocscope-{}-{}",
        std::process::id(),
        NEXT_GROUP.fetch_add(1, Ordering::Relaxed)
    );
    let group = parent.join(name);
    std::fs::create_dir(&group).ok()?;
    let set = |file: &str| -> Option<()> {
        OpenOptions::new()
            .write(true)
            .open(group.join(file))
            .ok()?
            .write_all(bytes.to_string().as_bytes())
            .ok()
    };
    let ready = set(limit_file).and_then(|()| {
        OpenOptions::new()
            .write(true)
            .open(group.join("cgroup.procs"))
            .ok()
    });
    match ready {
        Some(procs) => {
            // No swapping past the limit: v1's memsw counts memory plus swap,
            // v2 limits swap on its own. Absent without swap accounting.
            let _ = set("memory.memsw.limit_in_bytes");
            let _ = OpenOptions::new()
                .write(true)
                .open(group.join("memory.swap.max"))
                .and_then(|mut f| f.write_all(b"0"));
            Some((group, procs))
        }
        None => {
            let _ = std::fs::remove_dir(&group);
            None
        }
    }
}

/// The cgroup v2 directory of this process, if the unified hierarchy has the
/// memory controller there.
fn v2_parent(proc_cgroup: &str) -> Option<PathBuf> {
    let path = proc_cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        .iter()
        .map(|root| Path::new(root).join(path.trim_start_matches('/')))
        .find(|dir| {
            std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                .is_ok_and(|c| c.split_whitespace().any(|w| w == "memory"))
        })
}

/// The cgroup v1 memory directory of this process.
fn v1_parent(proc_cgroup: &str) -> Option<PathBuf> {
    let dir = Path::new("/sys/fs/cgroup/memory")
        .join(v1_memory_path(proc_cgroup)?.trim_start_matches('/'));
    dir.join("memory.limit_in_bytes").exists().then_some(dir)
}

/// The path of the v1 memory controller's line of /proc/self/cgroup.
fn v1_memory_path(proc_cgroup: &str) -> Option<&str> {
    proc_cgroup.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        controllers
            .split(',')
            .any(|c| c == "memory")
            .then_some(path)
    })
}

/// `oom_kill N` from memory.events (v2) or memory.oom_control (v1).
pub fn parse_oom_kills(text: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok())
        .unwrap_or(0)
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
    fn reads_oom_kills_from_v1_and_v2_files() {
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n";
        let v2 = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n";
        assert_eq!((parse_oom_kills(v1), parse_oom_kills(v2)), (2, 1));
        assert_eq!(parse_oom_kills("oom 3\n"), 0);
    }

    #[test]
    fn finds_the_memory_controller_path() {
        let hybrid = "4:memory:/process_api/abc\n3:cpuset:/\n0::/\n";
        assert_eq!(v1_memory_path(hybrid), Some("/process_api/abc"));
        assert_eq!(v1_memory_path("5:cpu,memory:/a\n"), Some("/a"));
        assert_eq!(v1_memory_path("0::/user.slice\n"), None);
    }

    #[test]
    fn formats_pids_without_allocating() {
        let mut buffer = [0u8; 20];
        assert_eq!(format_pid(0, &mut buffer), b"0");
        assert_eq!(format_pid(4194304, &mut buffer), b"4194304");
    }
}
