//! /proc files kept open between ticks. Opening and closing `stat` and
//! `status` for every process on every tick costs two extra system calls per
//! file, which dominate the cheap reads on a virtual machine; a kept file is
//! re-read from offset 0 (procfs regenerates it). A process that exited makes
//! the read fail (ESRCH), so a reused pid is reopened, never read stale.
//! A big tree keeps thousands open (three files a process); past the
//! process's limit on open files a file is read once and closed, as
//! before keeping, rather than taken for a process that is gone.

use foldhash::{HashMap, HashSet};
use std::fs::File;
use std::os::unix::fs::FileExt;

#[derive(Debug, Default)]
pub struct KeptOpen {
    files: HashMap<(i32, &'static str), File>,
    buffer: Vec<u8>,
    /// How many files may be kept, once opening one failed for the limit
    /// on open files: half of what was kept then.
    cap: Option<usize>,
}

impl KeptOpen {
    /// The current text of /proc/PID/NAME, or None when the process is gone.
    pub fn read(&mut self, pid: i32, name: &'static str) -> Option<&str> {
        if self.buffer.len() < 4096 {
            self.buffer.resize(4096, 0);
        }
        let key = (pid, name);
        let kept_len = self
            .files
            .get(&key)
            .and_then(|file| read_whole(file, &mut self.buffer));
        let len = match kept_len {
            Some(len) => len,
            None => {
                self.files.remove(&key);
                let file = self.open(&format!("/proc/{pid}/{name}"))?;
                let len = read_whole(&file, &mut self.buffer)?;
                if self.cap.is_none_or(|cap| self.files.len() < cap) {
                    self.files.insert(key, file);
                }
                len
            }
        };
        std::str::from_utf8(&self.buffer[..len]).ok()
    }

    /// Opens `path`; at the limit on open files, closes half of those kept
    /// and keeps no more than that from then on.
    fn open(&mut self, path: &str) -> Option<File> {
        match File::open(path) {
            Ok(file) => Some(file),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                let cap = self.files.len() / 2;
                let closed: Vec<(i32, &'static str)> =
                    self.files.keys().skip(cap).copied().collect();
                for key in closed {
                    self.files.remove(&key);
                }
                self.cap = Some(cap);
                File::open(path).ok()
            }
            Err(_) => None,
        }
    }

    /// Closes the files of processes not in `live`.
    pub fn retain(&mut self, live: &HashSet<i32>) {
        self.files.retain(|(pid, _), _| live.contains(pid));
    }
}

/// Reads from offset 0 until EOF, growing the buffer if the text is longer.
fn read_whole(file: &File, buffer: &mut Vec<u8>) -> Option<usize> {
    let mut len = 0;
    loop {
        if len == buffer.len() {
            buffer.resize(buffer.len() * 2, 0);
        }
        match file.read_at(&mut buffer[len..], len as u64) {
            Ok(0) => return (len > 0).then_some(len),
            Ok(n) => len += n,
            Err(_) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[test]
    fn rereads_fresh_text_and_reopens_after_exit() {
        let mut kept = KeptOpen::default();
        let own = std::process::id() as i32;
        let first = kept.read(own, "status").map(str::to_string);
        // Grow our own RSS so that status changes between the two reads.
        let block = vec![1u8; 64 << 20];
        let second = kept.read(own, "status").map(str::to_string);
        assert!(block.iter().step_by(4096).all(|&b| b == 1));
        assert_ne!(first, second, "a kept file must be regenerated on re-read");

        let mut child = Command::new("sleep")
            .arg("0.05")
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn");
        let pid = child.id() as i32;
        assert!(kept.read(pid, "stat").is_some());
        let _ = child.wait();
        assert!(
            kept.read(pid, "stat").is_none(),
            "a reaped process reads as gone"
        );
        kept.retain(&HashSet::from_iter([own]));
        assert_eq!(kept.files.len(), 1);
    }
}
