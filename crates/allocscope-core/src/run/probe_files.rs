//! Probe files for processes that run as another user. The heap probe's
//! directory belongs to the user allocscope runs as (mode 0700), so a
//! server that drops its privileges (`runuser -u postgres`, a pre-forking
//! server's workers) can neither create its file there nor open the one
//! its earlier root image made: its probe published nothing, and the old
//! image's words went stale. On each tick this makes the file of every
//! such process, owned by its filesystem uid and gid, mode 0600, and opens
//! the directory to traversal only (0711): no other user can list it,
//! create in it, or open another process's file. The probe retries its
//! open until the file is there. Where allocscope cannot give a process its
//! file (it does not run as root), the process is listed for the run's
//! message, and the words an earlier image left in its file are cleared so
//! that they are not taken for a stale reading.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs::OpenOptions;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Known processes whose owner is looked at again per tick, in turn: a
/// process seen as root may drop its privileges and exec later. One stat
/// of /proc/PID each (1-2 µs), so a tree of a thousand stays cheap.
const RECHECKS_PER_TICK: usize = 16;

pub(crate) struct ProbeFiles {
    dir: PathBuf,
    own_uid: u32,
    /// The owner of /proc/PID when each pid was last checked: it changes
    /// when a process execs under its new uid.
    seen: HashMap<i32, u32>,
    /// Where the next tick's rechecks start among the tree's pids.
    cursor: usize,
    /// The directory was opened to traversal.
    traversable: bool,
    /// Processes allocscope could not give their file, by filesystem uid.
    unreachable: BTreeMap<u32, BTreeSet<i32>>,
}

impl ProbeFiles {
    pub fn new(dir: PathBuf) -> ProbeFiles {
        ProbeFiles {
            dir,
            // SAFETY: geteuid has no preconditions and cannot fail.
            own_uid: unsafe { libc::geteuid() },
            seen: HashMap::new(),
            cursor: 0,
            traversable: false,
            unreachable: BTreeMap::new(),
        }
    }

    /// Checks the tree's new processes, and some known ones in turn.
    pub(crate) fn hand_out(&mut self, pids: &[i32]) {
        if pids.is_empty() {
            return;
        }
        let mut rechecked = 0;
        for &pid in pids {
            if !self.seen.contains_key(&pid) {
                self.check(pid);
            }
        }
        let start = self.cursor % pids.len();
        for &pid in pids.iter().cycle().skip(start).take(pids.len()) {
            if rechecked == RECHECKS_PER_TICK.min(pids.len()) {
                break;
            }
            rechecked += 1;
            let owner = proc_owner(pid);
            if owner.is_some() && owner != self.seen.get(&pid).copied() {
                self.check(pid);
            }
        }
        self.cursor = start + rechecked;
        if self.seen.len() > 2 * pids.len() {
            let live: HashSet<i32> = pids.iter().copied().collect();
            self.seen.retain(|pid, _| live.contains(pid));
        }
    }

    /// Gives `pid` its file when it runs as another user.
    fn check(&mut self, pid: i32) {
        let Some(owner) = proc_owner(pid) else {
            return; // gone: normal
        };
        self.seen.insert(pid, owner);
        // A file whose owner is the process's: its probe made it (or we
        // did), and a process that dropped privileges after keeps its
        // mapping. Two stats, where a status read costs 6-10 µs: a forked
        // tree of a thousand stays cheap.
        let file = std::fs::symlink_metadata(self.dir.join(pid.to_string()));
        if file.is_ok_and(|m| m.uid() == owner) {
            return;
        }
        let Some((uid, gid)) = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|text| fs_ids(&text))
        else {
            return;
        };
        if uid == self.own_uid {
            return;
        }
        if self.open_to_traversal() && give_file(&self.dir.join(pid.to_string()), uid, gid) {
            return;
        }
        clear_words(&self.dir.join(pid.to_string()));
        self.unreachable.entry(uid).or_default().insert(pid);
    }

    fn open_to_traversal(&mut self) -> bool {
        if !self.traversable {
            self.traversable =
                std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o711)).is_ok();
        }
        self.traversable
    }

    /// The run's note when some process could not have its file.
    pub fn note(&self) -> Option<String> {
        if self.unreachable.is_empty() {
            return None;
        }
        let count: usize = self.unreachable.values().map(BTreeSet::len).sum();
        let uids: Vec<String> = self.unreachable.keys().map(u32::to_string).collect();
        let (its, why) = (if count == 1 { "its" } else { "their" }, self.why());
        Some(format!(
            "heap probe: {count} process{} ran as uid {} and could not reach {its} probe \
             file ({why}): {its} heap is inside \"other\"",
            if count == 1 { "" } else { "es" },
            uids.join(", "),
        ))
    }

    fn why(&self) -> String {
        if self.own_uid == 0 {
            format!("allocscope could not make it in '{}'", self.dir.display())
        } else {
            format!(
                "allocscope runs as uid {} and cannot hand a file to another user: run it as root",
                self.own_uid
            )
        }
    }
}

/// The owner of /proc/PID: the process's effective uid (root while it is
/// not dumpable, e.g. between a setuid and its exec).
fn proc_owner(pid: i32) -> Option<u32> {
    std::fs::metadata(format!("/proc/{pid}"))
        .ok()
        .map(|m| m.uid())
}

/// The filesystem uid and gid from /proc/PID/status (the fourth field of
/// `Uid:` and `Gid:`): the ids the kernel checks when the process opens
/// a file.
pub(crate) fn fs_ids(status: &str) -> Option<(u32, u32)> {
    let field = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))?
            .split_whitespace()
            .nth(3)?
            .parse::<u32>()
            .ok()
    };
    Some((field("Uid:")?, field("Gid:")?))
}

/// Makes `path` (or takes the one an earlier image made) owned by
/// `uid:gid`, mode 0600; false when that is not allowed.
fn give_file(path: &Path, uid: u32, gid: u32) -> bool {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path);
    let Ok(file) = file else {
        return false;
    };
    let owned = file
        .metadata()
        .is_ok_and(|m| m.uid() == uid && m.gid() == gid && m.is_file());
    owned || std::os::unix::fs::fchown(&file, Some(uid), Some(gid)).is_ok()
}

/// Clears the magic word of a file an earlier image of the process wrote:
/// its words are not this image's reading, stale or not.
fn clear_words(path: &Path) {
    use std::os::unix::fs::FileExt;
    let Ok(file) = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    else {
        return;
    };
    if file.metadata().is_ok_and(|m| m.len() >= 8) {
        let _ = file.write_at(&[0u8; 8], 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fs_ids_are_the_fourth_uid_and_gid_fields() {
        let status = "Name:\tpostgres\nUmask:\t0077\nState:\tS (sleeping)\n\
                      Uid:\t0\t106\t106\t105\nGid:\t0\t112\t112\t111\nGroups:\t112\n";
        assert_eq!(fs_ids(status), Some((105, 111)));
        assert_eq!(fs_ids("Name:\tx\nUid:\t1\t2\n"), None);
    }

    /// A `sleep 5` running as uid and gid 65534, and its pid, once setpriv
    /// has dropped its ids and exec'd it. Starting it needs root: without,
    /// `None` (the test has nothing to check), and under `CI=true` a
    /// failure naming the fix, as the end-to-end tests' `require_root`.
    fn sleeper_of_another_uid() -> anyhow::Result<Option<(std::process::Child, i32)>> {
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true and root is missing (a process of another uid): run the tests as root"
            );
            eprintln!("skipped: root is missing (a process of another uid): run the tests as root");
            return Ok(None);
        }
        let child = std::process::Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "sleep",
                "5",
            ])
            .spawn()?;
        let pid = i32::try_from(child.id())?;
        std::thread::sleep(std::time::Duration::from_millis(200));
        Ok(Some((child, pid)))
    }

    /// As root: a process of another uid gets its file, owned by its
    /// fs uid and gid, and the directory opens to traversal only.
    #[test]
    fn a_process_of_another_uid_gets_its_own_file_when_run_as_root() -> anyhow::Result<()> {
        let Some((mut child, pid)) = sleeper_of_another_uid()? else {
            return Ok(());
        };
        let tmp = tempfile::tempdir()?;
        let dir = tmp.path().join("probe");
        std::fs::DirBuilder::new().create(&dir)?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
        let mut files = ProbeFiles::new(dir.clone());
        files.hand_out(&[pid]);
        let meta = std::fs::metadata(dir.join(pid.to_string()));
        let mode = std::fs::metadata(&dir)?.permissions().mode() & 0o777;
        child.kill()?;
        child.wait()?;
        let meta = meta?;
        assert_eq!((meta.uid(), meta.gid()), (65534, 65534));
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(mode, 0o711);
        assert_eq!(files.note(), None);
        Ok(())
    }

    /// When the file cannot be handed over, the run's message says so
    /// (rather than the breakdown blaming a stale reading on contention).
    #[test]
    fn a_process_that_cannot_have_its_file_is_named_in_the_note() -> anyhow::Result<()> {
        let Some((mut child, pid)) = sleeper_of_another_uid()? else {
            return Ok(());
        };
        let tmp = tempfile::tempdir()?;
        // A directory that is not there: nothing can be made in it.
        let mut files = ProbeFiles::new(tmp.path().join("gone"));
        files.hand_out(&[pid]);
        child.kill()?;
        child.wait()?;
        let note = files.note().unwrap_or_default();
        assert!(
            note.starts_with(
                "heap probe: 1 process ran as uid 65534 and could not reach its probe file"
            ),
            "{note}"
        );
        Ok(())
    }

    #[test]
    fn an_earlier_images_words_are_cleared() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("1");
        std::fs::write(&path, [0xAAu8; 4096])?;
        clear_words(&path);
        let bytes = std::fs::read(&path)?;
        assert_eq!(&bytes[..8], &[0u8; 8]);
        assert_eq!(bytes[8], 0xAA);
        Ok(())
    }

    /// A process of our own uid needs nothing: its probe makes its file.
    #[test]
    fn a_process_of_our_own_uid_gets_no_file_from_us() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let mut files = ProbeFiles::new(tmp.path().to_path_buf());
        let pid = i32::try_from(std::process::id())?;
        files.hand_out(&[pid]);
        assert!(!tmp.path().join(pid.to_string()).exists());
        assert_eq!(files.note(), None);
        Ok(())
    }
}
