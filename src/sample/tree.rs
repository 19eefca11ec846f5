//! Finds the process tree below a pid. allocscope is a child subreaper, so
//! calling this with its own pid yields every live process the workload
//! started, orphans included.
//!
//! Fast path: /proc/PID/task/TID/children of every thread (a child's parent
//! may be any thread of the process). Kernels built without
//! CONFIG_PROC_CHILDREN lack those files; then every /proc/*/stat is read and
//! the tree is rebuilt from the ppids.

use super::proc::{parse_children, parse_stat};
use std::collections::{HashMap, HashSet, VecDeque};
use std::fs;
use std::path::Path;
use std::sync::OnceLock;

/// All descendants of `root`, not `root` itself, parents before children.
/// Processes that exit during the walk are simply missing.
pub fn descendants(root: i32) -> Vec<i32> {
    if children_files_exist() {
        descendants_via_children(root)
    } else {
        descendants_from_parents(root, &scan_parents())
    }
}

fn children_files_exist() -> bool {
    static EXISTS: OnceLock<bool> = OnceLock::new();
    *EXISTS.get_or_init(|| Path::new("/proc/thread-self/children").exists())
}

fn descendants_via_children(root: i32) -> Vec<i32> {
    let mut seen = HashSet::from([root]);
    let mut queue = VecDeque::from([root]);
    let mut found = Vec::new();
    while let Some(pid) = queue.pop_front() {
        for child in children_of(pid) {
            if seen.insert(child) {
                found.push(child);
                queue.push_back(child);
            }
        }
    }
    found
}

/// Children of every thread of `pid`; empty when the process is gone.
fn children_of(pid: i32) -> Vec<i32> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut children = Vec::new();
    for task in tasks.flatten() {
        if let Ok(text) = fs::read_to_string(task.path().join("children")) {
            children.extend(parse_children(&text));
        }
    }
    children
}

/// `(pid, ppid)` of every process listed in /proc.
fn scan_parents() -> Vec<(i32, i32)> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            Some((pid, parse_stat(&text)?.ppid))
        })
        .collect()
}

/// Walks `(pid, ppid)` pairs down from `root`, breadth first.
pub fn descendants_from_parents(root: i32, parents: &[(i32, i32)]) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for &(pid, ppid) in parents {
        children.entry(ppid).or_default().push(pid);
    }
    let mut seen = HashSet::from([root]);
    let mut queue = VecDeque::from([root]);
    let mut found = Vec::new();
    while let Some(pid) = queue.pop_front() {
        for &child in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
            if seen.insert(child) {
                found.push(child);
                queue.push_back(child);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[test]
    fn walks_parents_to_grandchildren_without_root() {
        let parents = [(1, 0), (10, 1), (11, 10), (12, 10), (13, 12), (20, 2)];
        assert_eq!(descendants_from_parents(10, &parents), vec![11, 12, 13]);
        assert_eq!(descendants_from_parents(13, &parents), Vec::<i32>::new());
    }

    #[test]
    fn survives_parent_cycles_from_pid_reuse() {
        let parents = [(5, 6), (6, 5), (7, 6)];
        let mut found = descendants_from_parents(5, &parents);
        found.sort_unstable();
        assert_eq!(found, vec![6, 7]);
    }

    #[test]
    fn finds_spawned_child_and_grandchild() {
        // sh forks sleep (a grandchild) and then waits on it.
        let mut child = Command::new("sh")
            .args(["-c", "sleep 5 & wait"])
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn sh");
        let me = std::process::id() as i32;
        let sh = child.id() as i32;
        let mut tree = Vec::new();
        for _ in 0..100 {
            tree = descendants(me);
            if tree.len() >= 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(tree.contains(&sh), "{tree:?} lacks {sh}");
        assert!(tree.iter().any(|&p| p != sh), "no grandchild in {tree:?}");
        assert!(!tree.contains(&me));
    }
}
