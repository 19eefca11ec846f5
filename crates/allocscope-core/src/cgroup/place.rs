//! Where this process can make a memory cgroup for each run, found once per
//! experiment: under its own cgroup v2 directory when the memory controller
//! is enabled for its children (as root, or in a subtree delegated to the
//! user, e.g. `systemd-run --user --scope -p Delegate=yes`), else under its
//! cgroup v1 memory directory (as root). Found by really creating and
//! removing a group, so a read-only or unwritable hierarchy is told apart
//! from a usable one; when neither works, why not.

use super::version::Version;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT_GROUP: AtomicU32 = AtomicU32::new(1);

/// A directory under which each run gets a group of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Parent {
    pub version: Version,
    pub dir: PathBuf,
}

/// Why no group can be made, in words for the note.
#[derive(Debug, Clone, PartialEq)]
pub struct Unavailable {
    pub reason: String,
}

/// How to get a memory cgroup per run, as the note and the reports say it.
pub const HOW_TO_GET_ONE: &str = "to get one, run as root or under systemd: systemd-run --user \
                                  --scope -p Delegate=yes allocscope ...";

impl Unavailable {
    /// The one-line note every command that runs workloads prints.
    pub fn note(&self) -> String {
        format!(
            "note: runs are not in a memory cgroup of their own ({}), so memory is measured \
             from /proc alone (RSS, PSS) without the tree's charge and working set; \
             {HOW_TO_GET_ONE}; --cgroup off silences this",
            self.reason
        )
    }
}

/// Where runs' groups go, or why there is none.
pub fn find() -> Result<Parent, Unavailable> {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let v2 = v2_parent(&own);
    let v1 = v1_parent(&own);
    match (v2, v1) {
        (Ok(parent), _) | (_, Ok(parent)) => Ok(parent),
        // v1's reason when a v1 memory hierarchy exists: it is the one that
        // could have worked.
        (Err(_), Err(Some(v1))) => Err(Unavailable { reason: v1 }),
        (Err(v2), Err(None)) => Err(Unavailable { reason: v2 }),
    }
}

/// A new, unique group name under `parent`.
pub(super) fn group_name() -> String {
    format!(
        "allocscope-{}-{}",
        std::process::id(),
        NEXT_GROUP.fetch_add(1, Ordering::Relaxed)
    )
}

/// Creates and removes a group under `dir`: the only sure test that runs
/// can have one there.
fn try_group(version: Version, dir: &Path) -> Result<Parent, String> {
    let probe = dir.join(group_name());
    std::fs::create_dir(&probe)
        .map_err(|e| format!("cannot create a group in {}: {e}", dir.display()))?;
    let usable = probe.join(version.charge_file()).exists();
    let _ = std::fs::remove_dir(&probe);
    if !usable {
        return Err(format!(
            "a group in {} has no {}",
            dir.display(),
            version.charge_file()
        ));
    }
    Ok(Parent {
        version,
        dir: dir.to_path_buf(),
    })
}

/// This process's cgroup v2 directory, when its children can have the
/// memory controller.
fn v2_parent(proc_cgroup: &str) -> Result<Parent, String> {
    let path = proc_cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or("no cgroup v2 hierarchy")?;
    let root = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        .iter()
        .map(Path::new)
        .find(|root| root.join("cgroup.controllers").exists())
        .ok_or("cgroup v2 is not mounted")?;
    let dir = root.join(path.trim().trim_start_matches('/'));
    let controllers = std::fs::read_to_string(dir.join("cgroup.controllers")).unwrap_or_default();
    if !has_word(&controllers, "memory") {
        return Err(format!(
            "cgroup v2 at {} has no memory controller",
            dir.display()
        ));
    }
    let subtree = std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
    if !has_word(&subtree, "memory") {
        enable_memory_for_children(&dir)?;
    }
    try_group(Version::V2, &dir)
}

/// In a delegated subtree where allocscope is the only process (a
/// `systemd-run --user --scope`), moves it into a leaf of its own so the
/// memory controller can be enabled for its children: cgroup v2 allows
/// controllers only for groups without processes of their own.
fn enable_memory_for_children(dir: &Path) -> Result<(), String> {
    let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
    let own = std::process::id().to_string();
    if procs.lines().any(|p| p.trim() != own) {
        return Err(format!(
            "the memory controller is not enabled for the children of {}, which holds \
             other processes",
            dir.display()
        ));
    }
    let leaf = dir.join("allocscope");
    let write = |path: PathBuf, text: &str| {
        std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))
    };
    if !leaf.exists() {
        std::fs::create_dir(&leaf)
            .map_err(|e| format!("cannot create a group in {}: {e}", dir.display()))?;
    }
    write(leaf.join("cgroup.procs"), &own)?;
    write(dir.join("cgroup.subtree_control"), "+memory").inspect_err(|_| {
        let _ = std::fs::write(dir.join("cgroup.procs"), &own);
    })
}

/// This process's cgroup v1 memory directory. The error is `None` when
/// there is no v1 memory hierarchy at all.
fn v1_parent(proc_cgroup: &str) -> Result<Parent, Option<String>> {
    let path = v1_memory_path(proc_cgroup).ok_or(None)?;
    let dir = Path::new("/sys/fs/cgroup/memory").join(path.trim_start_matches('/'));
    if !dir.join("memory.usage_in_bytes").exists() {
        return Err(None);
    }
    try_group(Version::V1, &dir).map_err(Some)
}

/// The path of the v1 memory controller's line of /proc/self/cgroup.
pub(super) fn v1_memory_path(proc_cgroup: &str) -> Option<&str> {
    proc_cgroup.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        controllers
            .split(',')
            .any(|c| c == "memory")
            .then_some(path)
    })
}

fn has_word(text: &str, word: &str) -> bool {
    text.split_whitespace().any(|w| w == word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_memory_controller_path() {
        let hybrid = "4:memory:/process_api/abc\n3:cpuset:/\n0::/\n";
        assert_eq!(v1_memory_path(hybrid), Some("/process_api/abc"));
        assert_eq!(v1_memory_path("5:cpu,memory:/a\n"), Some("/a"));
        assert_eq!(v1_memory_path("0::/user.slice\n"), None);
    }

    #[test]
    fn the_note_says_why_and_how_on_one_line() {
        let note = Unavailable {
            reason: "cannot create a group in /sys/fs/cgroup/memory: Permission denied".into(),
        }
        .note();
        assert!(!note.contains('\n'));
        assert!(note.contains("Permission denied"), "{note}");
        assert!(note.contains("systemd-run --user --scope -p Delegate=yes"));
    }
}
