//! Finds the process tree below a pid. allocscope is a child subreaper, so
//! calling this with its own pid yields every live process the workload
//! started, orphans included.
//!
//! Fast path: /proc/PID/task/TID/children of every thread (a child's parent
//! may be any thread of the process). Kernels built without
//! CONFIG_PROC_CHILDREN lack those files; then every /proc/*/stat is read and
//! the tree is rebuilt from the ppids. `TreeWalker` gives the same answer
//! for repeated calls at a fraction of the cost, by remembering membership.
//! Its walk still lists all of /proc (about 1 µs a process of the machine:
//! 1.3 ms, 1.3% of a core at 100 ms, with a tree of 1,001), so on a big
//! tree `walk_rationed` walks only as often as `WALK_CORE_SHARE` pays for.
//! Walkers that share listings (a soak's instances, ticked in one pass of
//! its loop) list /proc once between them (`share_listing`).

use super::counters::MIN_THINNED_PROCESSES;
use super::cpu_time::thread_cpu_seconds;
use super::proc::parse_children;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fs;
use std::io::Read;
use std::os::unix::fs::DirEntryExt;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// The share of a core that walks of a big tree may use: a quarter of the
/// sampler's default budget (`DEFAULT_BUDGET`).
const WALK_CORE_SHARE: f64 = 0.002;

/// How long a listing of /proc taken by a walker that shares listings may
/// serve the others: a pass of the soak's loop ticks them one after
/// another within a few milliseconds.
const SHARED_LISTING_FOR: Duration = Duration::from_millis(50);

/// The last listing of /proc a walker that shares listings took, and when.
type Listing = Arc<Vec<(i32, u64)>>;
static SHARED_LISTING: Mutex<Option<(Instant, Listing)>> = Mutex::new(None);

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
    breadth_first(root, children_of)
}

/// Every process below `root` by `children`, breadth first, each once.
fn breadth_first<C: IntoIterator<Item = i32>>(root: i32, children: impl Fn(i32) -> C) -> Vec<i32> {
    let mut seen = HashSet::from([root]);
    let mut queue = VecDeque::from([root]);
    let mut found = Vec::new();
    while let Some(pid) = queue.pop_front() {
        for child in children(pid) {
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
    let mut text = String::with_capacity(512);
    list_proc()
        .into_iter()
        .filter_map(|(pid, _)| Some((pid, read_ppid(pid, &mut text)?)))
        .collect()
}

/// `(pid, inode)` of every process directory in /proc. A reused pid gets a
/// new inode, so the pair identifies one process.
fn list_proc() -> Vec<(i32, u64)> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
            Some((pid, entry.ino()))
        })
        .collect()
}

/// Reads /proc/PID/stat into `text` (reused: this runs every tick on kernels
/// without children files) and parses only the ppid.
fn read_ppid(pid: i32, text: &mut String) -> Option<i32> {
    text.clear();
    fs::File::open(format!("/proc/{pid}/stat"))
        .ok()?
        .read_to_string(text)
        .ok()?;
    parse_stat_ppid(text)
}

/// `descendants` for repeated calls with the same root, several times
/// cheaper: it remembers which processes (pid plus /proc inode, which a
/// reused pid does not share) are in the tree, so a walk is one readdir of
/// /proc plus a stat read per process not seen before (measured: ~30 µs
/// against ~215 µs for `descendants` over 10 workers of 3 threads each).
/// Membership cannot change during a process's life when `root` is a child
/// subreaper: orphans are reparented within the tree, and nothing outside it
/// can be reparented into it. (Without a subreaper, an orphan reparented to
/// init stays counted, which is still the workload's memory.)
#[derive(Debug)]
pub struct TreeWalker {
    root: i32,
    /// pid -> (inode of /proc/PID, in the tree).
    known: HashMap<i32, (u64, bool)>,
    /// Children of the root that are not the workload (a service run's load
    /// command): they and their descendants are never members.
    excluded: HashSet<i32>,
    last: Option<LastWalk>,
    /// `Some` once it shares listings: when the listing of its last walk
    /// was taken (`None` before one).
    shared_listing: Option<Option<Instant>>,
    /// Calls of `walk_rationed` that walked, and that gave the last walk's
    /// members again.
    pub walks: u64,
    pub reused: u64,
}

impl TreeWalker {
    pub fn new(root: i32) -> TreeWalker {
        TreeWalker {
            root,
            known: HashMap::new(),
            excluded: HashSet::new(),
            last: None,
            shared_listing: None,
            walks: 0,
            reused: 0,
        }
    }

    /// `walk`, except on a big tree (more than `MIN_THINNED_PROCESSES`
    /// members) that the last walk found unchanged, while walking again
    /// would take walks past `WALK_CORE_SHARE` of a core: then the last
    /// walk's members again. A tree that is forking or exiting is walked
    /// every time (its newcomers are read at once, and the scaled PSS
    /// counts the members of a class when it reads one); a settled one's
    /// next change is found a few ticks late, and processes that exited
    /// meanwhile read as gone.
    pub fn walk_rationed(&mut self) -> Vec<i32> {
        if let Some(last) = &self.last {
            let settled = last.members.len() > MIN_THINNED_PROCESSES && !last.changed;
            if settled && last.at.elapsed().as_secs_f64() * WALK_CORE_SHARE < last.cpu_s {
                self.reused += 1;
                return last.members.clone();
            }
        }
        let start_s = thread_cpu_seconds();
        let members = self.walk();
        self.walks += 1;
        self.last = Some(LastWalk {
            changed: self
                .last
                .as_ref()
                .is_none_or(|last| last.members != members),
            members: members.clone(),
            at: Instant::now(),
            cpu_s: thread_cpu_seconds() - start_s,
        });
        members
    }

    /// Leaves `pid` and its descendants out of every later walk.
    pub fn exclude(&mut self, pid: i32) {
        self.last = None;
        self.excluded.insert(pid);
        if let Some(entry) = self.known.get_mut(&pid) {
            entry.1 = false;
        }
    }

    /// Walks from now on on a listing of /proc another walker that shares
    /// listings took within `SHARED_LISTING_FOR`, when it is newer than the
    /// one of its own last walk; else on one of its own, which the others
    /// may then use. A process that started since is found a walk later.
    pub fn share_listing(&mut self) {
        self.shared_listing.get_or_insert(None);
    }

    /// A listing of /proc for a walk: shared (`share_listing`) or its own.
    fn listing(&mut self) -> Listing {
        let Some(mine) = &mut self.shared_listing else {
            return Arc::new(list_proc());
        };
        let mut shared = SHARED_LISTING
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((taken, listing)) = shared.as_ref() {
            let newer = mine.is_none_or(|mine| *taken > mine);
            if newer && taken.elapsed() < SHARED_LISTING_FOR {
                *mine = Some(*taken);
                return listing.clone();
            }
        }
        let listing = Arc::new(list_proc());
        let taken = Instant::now();
        *shared = Some((taken, listing.clone()));
        *mine = Some(taken);
        listing
    }

    /// All live descendants of the root, not the root itself, ascending.
    pub fn walk(&mut self) -> Vec<i32> {
        let mut seen = HashMap::new();
        let mut new = Vec::new();
        let mut text = String::with_capacity(512);
        for &(pid, ino) in self.listing().iter() {
            match self.known.get(&pid) {
                Some(&(known_ino, member)) if known_ino == ino => {
                    seen.insert(pid, (ino, member));
                }
                _ => {
                    if let Some(ppid) = read_ppid(pid, &mut text) {
                        new.push((pid, ino, ppid));
                    }
                }
            }
        }
        let excluded = new
            .iter()
            .filter(|(pid, ..)| self.excluded.contains(pid))
            .map(|&(pid, ino, _)| (pid, (ino, false)))
            .collect::<Vec<_>>();
        seen.extend(excluded);
        new.retain(|(pid, ..)| !self.excluded.contains(pid));
        classify(self.root, &mut seen, new);
        let mut members: Vec<i32> = seen
            .iter()
            .filter(|&(&pid, &(_, member))| member && pid != self.root)
            .map(|(&pid, _)| pid)
            .collect();
        members.sort_unstable();
        self.known = seen;
        members
    }
}

/// A walk of `walk_rationed`.
#[derive(Debug)]
struct LastWalk {
    members: Vec<i32>,
    /// Its members were not the walk's before.
    changed: bool,
    /// When it ended, and its CPU time.
    at: Instant,
    cpu_s: f64,
}

/// Adds `(pid, inode, ppid)` of newly seen processes to `known`: in the tree
/// when the parent is the root or in the tree. A process whose parent is not
/// known (it exited and the child is being reparented) is left out this time
/// and read again on the next walk.
fn classify(root: i32, known: &mut HashMap<i32, (u64, bool)>, mut new: Vec<(i32, u64, i32)>) {
    loop {
        let before = new.len();
        new.retain(|&(pid, ino, ppid)| {
            let member = match ppid {
                p if p == root => Some(true),
                0 => Some(false),
                p => known.get(&p).map(|&(_, member)| member),
            };
            match member {
                Some(member) => {
                    known.insert(pid, (ino, member));
                    false
                }
                None => true,
            }
        });
        if new.len() == before {
            break;
        }
    }
}

/// The ppid (field 4) of a /proc/PID/stat text.
pub fn parse_stat_ppid(text: &str) -> Option<i32> {
    let after_comm = &text[text.rfind(')')? + 1..];
    after_comm.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// Walks `(pid, ppid)` pairs down from `root`, breadth first.
pub fn descendants_from_parents(root: i32, parents: &[(i32, i32)]) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for &(pid, ppid) in parents {
        children.entry(ppid).or_default().push(pid);
    }
    breadth_first(root, |pid| {
        children.get(&pid).into_iter().flatten().copied()
    })
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
    fn ppid_agrees_with_full_stat_parser() {
        for text in [
            include_str!("fixtures/stat_comm_paren.txt"),
            include_str!("fixtures/stat_python_threads.txt"),
            include_str!("fixtures/stat_kthread.txt"),
        ] {
            let full = super::super::proc::parse_stat(text).map(|s| s.ppid);
            assert_eq!(parse_stat_ppid(text), full);
        }
        assert_eq!(parse_stat_ppid("12 (x"), None);
    }

    proptest::proptest! {
        #[test]
        fn ppid_parser_never_panics(text in "\\PC*") {
            let _ = parse_stat_ppid(&text);
        }
    }

    #[test]
    fn classify_resolves_children_listed_before_parents() {
        let mut known = HashMap::from([(1, (1, false)), (100, (7, false))]);
        // 300's parent 200 is listed after it; 400's parent has exited.
        let new = vec![
            (300, 30, 200),
            (200, 20, 100),
            (150, 15, 1),
            (400, 40, 999),
            (2, 2, 0),
        ];
        classify(100, &mut known, new);
        assert_eq!(known.get(&200), Some(&(20, true)));
        assert_eq!(known.get(&300), Some(&(30, true)));
        assert_eq!(known.get(&150), Some(&(15, false)));
        assert_eq!(known.get(&2), Some(&(2, false)));
        assert_eq!(known.get(&400), None);
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
        // sh forks sleep (a grandchild) and then waits on it. Other tests
        // spawn children too, so look only for these two.
        let mut child = Command::new("sh")
            .args(["-c", "sleep 5 & wait"])
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn sh");
        let me = std::process::id() as i32;
        let sh = child.id() as i32;
        let is_grandchild = |pid: &i32| read_ppid(*pid, &mut String::new()) == Some(sh);
        let mut tree = Vec::new();
        for _ in 0..100 {
            tree = descendants(me);
            if tree.iter().any(is_grandchild) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let mut walker = TreeWalker::new(me);
        // The /proc scan fallback, exercised even where children files exist.
        let scanned = descendants_from_parents(me, &scan_parents());
        let walks = [walker.walk(), walker.walk(), scanned];
        let grandchild = tree.iter().copied().find(is_grandchild);
        let _ = child.kill();
        let _ = child.wait();
        assert!(tree.contains(&sh), "{tree:?} lacks {sh}");
        assert!(grandchild.is_some(), "no grandchild in {tree:?}");
        assert!(!tree.contains(&me));
        for walk in walks {
            assert!(walk.contains(&sh), "{walk:?}");
            assert!(grandchild.is_some_and(|g| walk.contains(&g)), "{walk:?}");
        }
    }

    /// A walker that shares listings walks on another's listing taken just
    /// before, which a child started since is not in yet; its next walk
    /// lists /proc again and finds it.
    #[test]
    fn a_shared_listing_serves_the_next_walker_once() -> std::io::Result<()> {
        let me = std::process::id() as i32;
        let (mut first, mut second) = (TreeWalker::new(me), TreeWalker::new(me));
        first.share_listing();
        second.share_listing();
        // Retried while a loaded machine takes longer than the listing
        // serves between the two walks.
        for _ in 0..20 {
            first.walk();
            let listed = Instant::now();
            let mut child = Command::new("sleep").arg("30").spawn()?;
            let pid = child.id() as i32;
            let on_shared = second.walk();
            let in_time = listed.elapsed() < SHARED_LISTING_FOR;
            let own = second.walk();
            child.kill()?;
            child.wait()?;
            if in_time {
                assert!(!on_shared.contains(&pid), "{pid} in {on_shared:?}");
                assert!(own.contains(&pid), "{pid} not in {own:?}");
                return Ok(());
            }
        }
        panic!("no two walks came within {SHARED_LISTING_FOR:?}");
    }

    #[test]
    fn excluded_child_and_its_descendants_are_left_out() {
        let spawn = |script: &str| {
            Command::new("sh")
                .args(["-c", script])
                .stdin(Stdio::null())
                .spawn()
                .expect("spawn sh")
        };
        let mut kept = spawn("sleep 5 & wait");
        let mut left_out = spawn("sleep 5 & wait");
        let me = std::process::id() as i32;
        let (kept_pid, left_pid) = (kept.id() as i32, left_out.id() as i32);
        let mut walker = TreeWalker::new(me);
        walker.exclude(left_pid);
        let child_of =
            |parent: i32| move |pid: &i32| read_ppid(*pid, &mut String::new()) == Some(parent);
        let mut walk = Vec::new();
        for _ in 0..100 {
            walk = walker.walk();
            let all = descendants(me);
            if all.iter().any(child_of(kept_pid)) && all.iter().any(child_of(left_pid)) {
                walk = walker.walk();
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // Read the parents while every process is still alive.
        let kept_grandchild = walk.iter().any(child_of(kept_pid));
        let left_grandchild = walk.iter().any(child_of(left_pid));
        for child in [&mut kept, &mut left_out] {
            let _ = child.kill();
            let _ = child.wait();
        }
        assert!(walk.contains(&kept_pid), "{walk:?}");
        assert!(kept_grandchild, "{walk:?}");
        assert!(!walk.contains(&left_pid), "{walk:?}");
        assert!(!left_grandchild, "{walk:?}");
    }
}
