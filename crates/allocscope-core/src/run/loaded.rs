//! Did the configuration's allocator really load? Read from /proc/PID/maps of
//! the workload: static, setuid and Go programs ignore LD_PRELOAD, and a run
//! under an allocator that never loaded must not be compared as if it had.

use crate::alloc::allocator_of_library;
use crate::sample::maps::{is_mapped, mapped_paths_whole};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub(crate) struct LoadCheck {
    library: Option<PathBuf>,
    /// The library was seen mapped in a process of the tree.
    seen: bool,
    /// A process had libc mapped but not the library: the dynamic loader was
    /// done with preloads, so the library is not coming.
    missing_after_libc: bool,
    /// Other allocator libraries seen mapped (ones the program links itself).
    others: Vec<String>,
    observations: u32,
}

impl LoadCheck {
    pub fn new(library: Option<PathBuf>) -> LoadCheck {
        LoadCheck {
            library,
            seen: false,
            missing_after_libc: false,
            others: Vec::new(),
            observations: 0,
        }
    }

    /// True once there is nothing left to find out.
    pub fn settled(&self) -> bool {
        self.library.is_none() || self.seen
    }

    pub(crate) fn verified(&self) -> bool {
        self.seen
    }

    /// Poll quickly right after exec, then back off.
    pub(crate) fn poll_interval(&self) -> Duration {
        if self.observations < 10 {
            Duration::from_millis(2)
        } else {
            Duration::from_millis(20)
        }
    }

    /// Looks at the workload's own process first, then the rest of the tree.
    pub(crate) fn observe(&mut self, main: i32, tree: &[i32]) {
        let Some(library) = self.library.clone() else {
            return;
        };
        self.observations += 1;
        let candidates = std::iter::once(main).chain(tree.iter().copied().filter(|&p| p != main));
        for pid in candidates {
            let Some((paths, whole)) = mapped_paths_whole(pid) else {
                continue;
            };
            if self.note(&paths, whole, &library) {
                return;
            }
        }
    }

    /// One process's mapped `paths`; `whole`: the read reached its stack.
    /// True once the library is seen. Only a whole read with libc but not
    /// the library says the library is not coming: a process exiting while
    /// it was read (a run of a few milliseconds) gives a short read that
    /// may hold libc, mapped lower, but not the library.
    fn note(&mut self, paths: &[PathBuf], whole: bool, library: &Path) -> bool {
        self.note_other_allocators(paths, library);
        if is_mapped(paths, library) {
            self.seen = true;
            self.missing_after_libc = false;
            return true;
        }
        if whole && paths.iter().any(|p| is_libc(p)) {
            self.missing_after_libc = true;
        }
        false
    }

    fn note_other_allocators(&mut self, paths: &[PathBuf], library: &Path) {
        let ours = allocator_of_library(library);
        for path in paths {
            if let Some(name) = allocator_of_library(path) {
                if Some(name) != ours && !self.others.iter().any(|o| o == name) {
                    self.others.push(name.to_string());
                }
            }
        }
    }

    /// The message for a `not_loaded` run, or None when the run counts.
    /// `even_if_mapped`: the program does not allocate through malloc (Go),
    /// so a mapped library does not make the run count.
    pub(crate) fn not_loaded_reason(
        &self,
        preload_ignored: Option<&str>,
        even_if_mapped: bool,
    ) -> Option<String> {
        let library = self.library.as_ref()?;
        if self.seen && !even_if_mapped {
            return None;
        }
        let name = library.display();
        match preload_ignored {
            Some(reason) => Some(format!("'{name}' was not loaded: {reason}")),
            None if self.missing_after_libc => Some(format!(
                "'{name}' was not mapped in the workload; static and setuid binaries and programs \
                 with their own allocator (such as Go binaries) ignore LD_PRELOAD"
            )),
            None => None,
        }
    }

    pub(crate) fn other_allocators(&self) -> Vec<String> {
        self.others.clone()
    }
}

fn is_libc(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("libc.so") || n.starts_with("libc-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_whole_read_with_libc_and_without_the_library_says_it_is_missing() {
        let library = PathBuf::from("/usr/lib/x86_64-linux-gnu/libmimalloc.so.2.0");
        let libc = vec![
            PathBuf::from("/usr/bin/prog"),
            PathBuf::from("/usr/lib/x86_64-linux-gnu/libc.so.6"),
        ];
        let mut short = LoadCheck::new(Some(library.clone()));
        assert!(!short.note(&libc, false, &library));
        assert_eq!(short.not_loaded_reason(None, false), None, "a short read");
        let mut whole = LoadCheck::new(Some(library.clone()));
        assert!(!whole.note(&libc, true, &library));
        assert!(whole
            .not_loaded_reason(None, false)
            .is_some_and(|r| r.contains("was not mapped in the workload")));
        let mut both = libc.clone();
        both.push(library.clone());
        assert!(
            whole.note(&both, false, &library),
            "seen, even in a short read"
        );
        assert_eq!(whole.not_loaded_reason(None, false), None);
    }
}
