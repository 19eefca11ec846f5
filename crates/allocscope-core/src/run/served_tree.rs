//! Which allocator served `malloc` in each process of the tree, weighed by
//! the memory each one holds: a wrapper script that `exec`s a daemon
//! linking jemalloc, which forks its workers, is served by jemalloc where
//! the memory is, whatever the script itself was served by.
//!
//! Each process is resolved from its executable (`/proc/PID/exe`) and the
//! LD_PRELOAD its loader saw (`/proc/PID/environ`, the run's own when that
//! cannot be read), in the loader's lookup order (`alloc::served`), the
//! heap probe left out (it passes calls on); the same executable and
//! preloads resolve once per allocscope process. Every tick with PSS adds
//! each process's PSS to its allocator's part. A pid is looked at again
//! every `RECHECK_TICKS` ticks, since `exec` keeps the pid: the wrapper's
//! pid becomes the daemon's. Resolving also finds the calls the tree's
//! programs make to an allocator's own API (`alloc::own_api`).

use crate::alloc::served::{resolve, Resolution};
use crate::model::{OwnApiUse, ServedPart, ServedTree};
use crate::sample::ProcessPss;
use foldhash::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// How often (in ticks) a known pid's executable is read again.
const RECHECK_TICKS: u64 = 8;
/// On a tree this large, a known pid is read again this much less often.
const BIG_TREE: usize = 256;
/// The programs a part names, at most.
const PART_PROGRAMS: usize = 4;

/// One process as last resolved.
struct Known {
    exe: PathBuf,
    /// Index into `ServedTracker::resolved`.
    at: usize,
}

/// A distinct executable and preload list, resolved.
struct Resolved {
    program: String,
    resolution: Option<Resolution>,
}

pub(super) struct ServedTracker {
    /// LD_PRELOAD as the run set it, for a process whose environment
    /// cannot be read.
    run_preloads: Vec<PathBuf>,
    /// The heap probe's library: an interposer, never what serves.
    probe_library: Option<PathBuf>,
    known: HashMap<i32, Known>,
    resolved: Vec<Resolved>,
    /// PSS summed over ticks, per entry of `resolved`.
    bytes: Vec<f64>,
    /// Processes seen, per entry of `resolved` (the weight when no tick
    /// had PSS).
    seen: Vec<u64>,
    ticks: u64,
}

impl ServedTracker {
    pub fn new(env: &[(String, String)], probe_library: Option<PathBuf>) -> ServedTracker {
        let run_preloads = env
            .iter()
            .filter(|(name, _)| name == "LD_PRELOAD")
            .flat_map(|(_, value)| split_preloads(value))
            .collect();
        ServedTracker {
            run_preloads,
            probe_library,
            known: HashMap::default(),
            resolved: Vec::new(),
            bytes: Vec::new(),
            seen: Vec::new(),
            ticks: 0,
        }
    }

    /// The tree's pids on a tick, PSS or not: a new one is resolved, so a
    /// run without a tick of PSS still says what served its processes.
    pub(crate) fn note_pids(&mut self, pids: &[i32]) {
        for &pid in pids {
            if !self.known.contains_key(&pid) {
                self.classify(pid, false);
            }
        }
    }

    /// A tick's processes (`Sampler::processes`: empty when it had no PSS).
    pub fn on_sample(&mut self, processes: &[ProcessPss]) {
        self.ticks += 1;
        let every = if processes.len() > BIG_TREE {
            RECHECK_TICKS * 8
        } else {
            RECHECK_TICKS
        };
        let recheck = self.ticks.is_multiple_of(every);
        if self.known.len() > processes.len().max(64) * 2 {
            let live: foldhash::HashSet<i32> = processes.iter().map(|p| p.pid).collect();
            self.known.retain(|pid, _| live.contains(pid));
        }
        for p in processes {
            let Some(at) = self.classify(p.pid, recheck) else {
                continue;
            };
            self.bytes[at] += p.pss.total_bytes() as f64;
        }
    }

    /// The entry of `resolved` serving `pid`; `None` when its executable
    /// cannot be read (it exited, or another user's).
    fn classify(&mut self, pid: i32, recheck: bool) -> Option<usize> {
        if let Some(known) = self.known.get(&pid) {
            if !recheck {
                return Some(known.at);
            }
        }
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
        if let Some(known) = self.known.get(&pid).filter(|k| k.exe == exe) {
            return Some(known.at);
        }
        let preloads: Vec<PathBuf> = environ_preloads(pid)
            .unwrap_or_else(|| self.run_preloads.clone())
            .into_iter()
            .filter(|p| !self.is_probe(p))
            .collect();
        let resolution = resolved(&exe, &preloads, pid);
        let program = file_name(&exe);
        let at = match self
            .resolved
            .iter()
            .position(|r| r.program == program && r.resolution == resolution)
        {
            Some(at) => at,
            None => {
                self.resolved.push(Resolved {
                    program,
                    resolution,
                });
                self.bytes.push(0.0);
                self.seen.push(0);
                self.resolved.len() - 1
            }
        };
        self.seen[at] += 1;
        self.known.insert(pid, Known { exe, at });
        Some(at)
    }

    fn is_probe(&self, path: &Path) -> bool {
        self.probe_library.as_deref() == Some(path) || crate::probe::is_probe_library(path)
    }

    /// The run's tree view; `None` when no process was ever resolved.
    pub fn finish(&self) -> Option<ServedTree> {
        if self.resolved.is_empty() {
            return None;
        }
        let by_pss = self.bytes.iter().sum::<f64>() > 0.0;
        let weights: Vec<f64> = if by_pss {
            self.bytes.clone()
        } else {
            self.seen.iter().map(|&n| n as f64).collect()
        };
        let total: f64 = weights.iter().sum();
        // Parts by allocator and how it came, each program's weight in it.
        let mut parts: Vec<(ServedPart, Vec<(String, f64)>)> = Vec::new();
        for (r, &w) in self.resolved.iter().zip(&weights) {
            let (allocator, via) = match &r.resolution {
                Some(res) => (res.malloc.clone(), Some(res.via)),
                None => ("unknown".to_string(), None),
            };
            let at = match parts
                .iter()
                .position(|(p, _)| p.allocator == allocator && p.via == via)
            {
                Some(at) => at,
                None => {
                    let part = ServedPart {
                        allocator,
                        via,
                        share: 0.0,
                        programs: Vec::new(),
                    };
                    parts.push((part, Vec::new()));
                    parts.len() - 1
                }
            };
            let (part, programs) = &mut parts[at];
            part.share += if total > 0.0 { w / total } else { 0.0 };
            match programs.iter_mut().find(|(name, _)| *name == r.program) {
                Some((_, sum)) => *sum += w,
                None => programs.push((r.program.clone(), w)),
            }
        }
        let mut parts: Vec<ServedPart> = parts
            .into_iter()
            .map(|(mut part, mut programs)| {
                programs.sort_by(|a, b| b.1.total_cmp(&a.1));
                part.programs = programs
                    .into_iter()
                    .take(PART_PROGRAMS)
                    .map(|(name, _)| name)
                    .collect();
                part
            })
            .collect();
        parts.sort_by(|a, b| b.share.total_cmp(&a.share));
        let mut programs: Vec<String> = Vec::new();
        let mut own_api: Vec<OwnApiUse> = Vec::new();
        for r in &self.resolved {
            if !programs.contains(&r.program) {
                programs.push(r.program.clone());
            }
            let Some(res) = &r.resolution else {
                continue;
            };
            for calls in &res.own_api {
                let usage = OwnApiUse {
                    program: r.program.clone(),
                    caller: if calls.from_program {
                        r.program.clone()
                    } else {
                        calls.caller.clone()
                    },
                    api_of: calls.api_of.to_string(),
                    reach: calls.reach.clone(),
                    malloc: res.malloc.clone(),
                    symbols: calls.symbols.clone(),
                };
                if !own_api.contains(&usage) {
                    own_api.push(usage);
                }
            }
        }
        Some(ServedTree {
            parts,
            weighed_by: if by_pss { "pss" } else { "processes" }.to_string(),
            own_api,
            programs,
        })
    }
}

/// `exe` with `preloads` resolved, once per allocscope process: the ELF
/// files are read through `/proc/PID/exe`, which reaches the file even in
/// another mount namespace or once deleted.
fn resolved(exe: &Path, preloads: &[PathBuf], pid: i32) -> Option<Resolution> {
    type Cache = Mutex<std::collections::HashMap<(PathBuf, Vec<PathBuf>), Option<Resolution>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Cache::default);
    let key = (exe.to_path_buf(), preloads.to_vec());
    if let Some(hit) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return hit;
    }
    let resolution = resolve(Path::new(&format!("/proc/{pid}/exe")), preloads);
    if let Ok(mut c) = cache.lock() {
        c.insert(key, resolution.clone());
    }
    resolution
}

/// The LD_PRELOAD in `pid`'s environment at exec, split as the loader
/// splits it; `None` when it cannot be read or is empty (mid-`execve`), empty when unset.
fn environ_preloads(pid: i32) -> Option<Vec<PathBuf>> {
    preloads_in_environ(&std::fs::read(format!("/proc/{pid}/environ")).ok()?)
}

/// The `LD_PRELOAD` entries of a process's environment block; `None` for an
/// empty block, which is what a process in the middle of `execve` shows
/// (its new executable already in `/proc/PID/exe`, its environment not yet
/// in place): read then, a preloaded jemalloc would be taken for glibc and
/// kept for as long as the executable stays the same.
fn preloads_in_environ(bytes: &[u8]) -> Option<Vec<PathBuf>> {
    if bytes.is_empty() {
        return None;
    }
    let value = bytes
        .split(|&b| b == 0)
        .find_map(|entry| entry.strip_prefix(b"LD_PRELOAD="))
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .unwrap_or_default();
    Some(split_preloads(&value).collect())
}

fn split_preloads(value: &str) -> impl Iterator<Item = PathBuf> + '_ {
    value
        .split([' ', ':'])
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
}

fn file_name(path: &Path) -> String {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    name.strip_suffix(" (deleted)").unwrap_or(name).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_environment_block_is_unknown_and_one_without_ld_preload_preloads_nothing() {
        assert_eq!(preloads_in_environ(b""), None);
        assert_eq!(
            preloads_in_environ(b"PATH=/bin\0HOME=/root\0"),
            Some(Vec::new())
        );
        assert_eq!(
            preloads_in_environ(b"PATH=/bin\0LD_PRELOAD=/p/probe.so:libjemalloc.so.2\0"),
            Some(vec![
                PathBuf::from("/p/probe.so"),
                PathBuf::from("libjemalloc.so.2")
            ])
        );
    }
}
