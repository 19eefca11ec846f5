//! One run's memory cgroup: created under the experiment's `Parent` with a
//! limit only when `--memory-limit` asks for one, joined by the workload
//! between fork and exec through `cgroup.procs` (opened here, before the
//! fork), asked at the end for the kernel's peak and OOM kills, and removed
//! when dropped.

use super::place::{group_name, Parent};
use super::reader::Reader;
use super::stat::{parse_number, parse_oom_kills};
use super::version::Version;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct RunGroup {
    version: Version,
    dir: PathBuf,
    /// `cgroup.procs`, opened before fork: the child writes its pid into it.
    procs: Option<File>,
    limit_bytes: Option<u64>,
}

impl RunGroup {
    /// A new group under `parent`, with `limit_bytes` as its memory limit
    /// (and no swapping past it) when given.
    pub fn create(parent: &Parent, limit_bytes: Option<u64>) -> Result<RunGroup, String> {
        let dir = parent.dir.join(group_name());
        std::fs::create_dir(&dir)
            .map_err(|e| format!("cannot create a group in {}: {e}", parent.dir.display()))?;
        let mut group = RunGroup {
            version: parent.version,
            dir,
            procs: None,
            limit_bytes,
        };
        // On error `group` is dropped, which removes the directory.
        if let Some(bytes) = limit_bytes {
            group.set_limit(bytes)?;
        }
        let procs_path = group.dir.join("cgroup.procs");
        group.procs = Some(
            OpenOptions::new()
                .write(true)
                .open(&procs_path)
                .map_err(|e| format!("opening {}: {e}", procs_path.display()))?,
        );
        Ok(group)
    }

    fn set_limit(&self, bytes: u64) -> Result<(), String> {
        write(&self.dir.join(self.version.limit_file()), bytes)?;
        // No swapping past the limit: v1's memsw counts memory plus swap, v2
        // limits swap on its own. Absent without swap accounting.
        let _ = match self.version {
            Version::V1 => write(&self.dir.join("memory.memsw.limit_in_bytes"), bytes),
            Version::V2 => write(&self.dir.join("memory.swap.max"), 0),
        };
        Ok(())
    }

    pub fn version(&self) -> Version {
        self.version
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn limit_bytes(&self) -> Option<u64> {
        self.limit_bytes
    }

    /// The open `cgroup.procs` the child writes its pid to between fork and
    /// exec (`write(2)` only: async-signal-safe).
    pub fn procs_fd(&self) -> Option<RawFd> {
        self.procs.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// The files a tick reads, opened once.
    pub fn reader(&self) -> std::io::Result<Reader> {
        Reader::open(self.version, &self.dir)
    }

    /// The kernel's own peak of the charge, where it keeps one.
    pub fn peak_bytes(&self) -> Option<u64> {
        self.read(self.version.peak_file())
            .and_then(|t| parse_number(&t))
    }

    /// How many processes of the group the kernel's OOM killer ended.
    pub fn oom_kills(&self) -> u64 {
        self.read(self.version.oom_file())
            .map_or(0, |t| parse_oom_kills(&t))
    }

    fn read(&self, file: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(file)).ok()
    }
}

impl Drop for RunGroup {
    fn drop(&mut self) {
        self.procs = None;
        // The tree is gone by now; the kernel may need a moment to release
        // the group.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

fn write(path: &Path, value: u64) -> Result<(), String> {
    OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|mut f| f.write_all(value.to_string().as_bytes()))
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// A real group on this machine: a child joins it and its memory is
    /// charged there; the group is gone once dropped. Needs a usable cgroup
    /// (root here); without one the e2e test of the note covers the path.
    #[test]
    fn a_joined_process_is_charged_to_the_group_which_is_removed_when_dropped() {
        let parent = match super::super::place::find() {
            Ok(parent) => parent,
            Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
                panic!(
                    "no usable memory cgroup ({}): run the tests as root",
                    e.reason
                )
            }
            Err(_) => return,
        };
        let group = RunGroup::create(&parent, Some(512 << 20)).expect("a group");
        let dir = group.dir().to_path_buf();
        let procs = dir.join("cgroup.procs");
        // 32 MiB of anonymous memory, held while the group is read.
        let script = format!(
            "echo $$ > {}; x=$(head -c 33554432 /dev/zero | tr '\\0' a); \
             cat {}/{}; cat {}/{}",
            procs.display(),
            dir.display(),
            parent.version.charge_file(),
            dir.display(),
            parent.version.limit_file()
        );
        let out = Command::new("sh")
            .args(["-c", &script])
            .output()
            .expect("sh");
        let text = String::from_utf8_lossy(&out.stdout);
        let numbers: Vec<u64> = text.lines().filter_map(parse_number).collect();
        assert_eq!(numbers.len(), 2, "{text}");
        assert!(numbers[0] > 32 << 20, "charge {} for 32 MiB", numbers[0]);
        assert_eq!(numbers[1], 512 << 20);
        assert!(group.peak_bytes().is_some_and(|p| p >= 32 << 20));
        assert_eq!(group.oom_kills(), 0);
        drop(group);
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
}
