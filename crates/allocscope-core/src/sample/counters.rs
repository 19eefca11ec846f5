//! The cheap counters of the tree's processes on a tick: `stat` (parent,
//! state, faults, threads, name) and `status` (VSZ, RSS and its split),
//! kept open between ticks.
//!
//! A small tree has both read for every process on every tick. On a big
//! one that alone passes the budget: 15 µs a process, 15-19% of a core for
//! 1,001 processes at 100 ms. There, a tick *looks* at as many processes
//! as its allowance buys, new ones first (read in full: nothing to carry),
//! then those whose last look saw a change, up to half, then the others
//! in turn. A look reads `statm` (3 µs): when its text is the one the last
//! look saw, sizes and resident pages have not moved and the last `stat`
//! and `status` carry over; otherwise both are read again. Every
//! `REFRESH_LOOKS`-th look reads them anyway, for the faults and threads
//! a sleeping process may still change. A process not looked at carries
//! its last figures.

use super::cpu_time::thread_cpu_seconds;
use super::kept_open::KeptOpen;
use super::proc::{self, fnv1a, RssParts, Stat, StatusMemory};
use super::pss_estimate::Live;
use crate::model::Sample;
// foldhash, not SipHash: a big tree's bookkeeping hashes every pid a
// tick, which SipHash made a third of the tick's cost.
use foldhash::{HashMap, HashSet, HashSetExt};

/// Trees up to this size are read in full on every tick, whatever it
/// costs (as before thinning: the estimate and its tests rest on it).
pub const MIN_THINNED_PROCESSES: usize = 32;
/// The fewest processes a thinned tick looks at, however short its
/// allowance (very short intervals).
const MIN_LOOKS: usize = 16;
/// A look whose `statm` did not change reads `stat` and `status` anyway
/// after this many looks.
const REFRESH_LOOKS: u32 = 20;

/// The last figures of every live process, and what reading them costs.
#[derive(Debug)]
pub struct Counters {
    kept: KeptOpen,
    known: HashMap<i32, Known>,
    /// The pids of the last tick: when they are this tick's too, no
    /// figures or kept files are dropped.
    last_pids: Vec<i32>,
    /// Where the next thinned tick's turn starts: the first pid above it.
    cursor: i32,
    /// CPU seconds of one process's `stat` and `status`, and of one look.
    full_cost_s: f64,
    look_cost_s: f64,
    /// Ticks that were thinned, and their reads summed.
    pub thinned: ThinnedTotals,
}

/// One process's last figures.
#[derive(Debug, Clone, Copy)]
pub struct Known {
    pub stat: Stat,
    pub memory: StatusMemory,
    /// Hash of the `statm` text at its last look; `None` before one.
    statm: Option<u64>,
    /// Looks since its last full read.
    unchanged: u32,
    /// Its last look saw a change.
    changed: bool,
}

/// How a tick read the tree's processes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct TickReads {
    /// Looked at (`statm`), of them read in full (`stat` and `status`).
    looked: usize,
    full: usize,
}

/// Thinned ticks and their reads, summed.
#[derive(Debug, Default, Clone, Copy)]
pub struct ThinnedTotals {
    pub ticks: u64,
    pub processes: u64,
    pub looked: u64,
    pub full: u64,
}

impl ThinnedTotals {
    /// On how many ticks the counters were thinned, and how many of their
    /// processes were looked at and read, in words (`None` when none was).
    pub fn note(&self) -> Option<String> {
        let per_tick = |n: u64| n as f64 / self.ticks as f64;
        (self.ticks > 0).then(|| format!(
            "on {} ticks of about {:.0} processes, {:.0} looked at a tick (statm), {:.0} of them read in full (stat, status), the rest carried",
            self.ticks,
            per_tick(self.processes),
            per_tick(self.looked),
            per_tick(self.full)
        ))
    }
}

impl Default for Counters {
    fn default() -> Counters {
        Counters {
            kept: KeptOpen::default(),
            known: HashMap::default(),
            last_pids: Vec::new(),
            cursor: 0,
            full_cost_s: 15e-6,
            look_cost_s: 5e-6,
            thinned: ThinnedTotals::default(),
        }
    }
}

/// A tick's processes with memory (not zombies), as the PSS estimate sees
/// them.
pub struct Counted {
    pub tree: Vec<Live>,
    /// Every status had the RSS split; without it (kernels before 4.5)
    /// nothing is estimated.
    pub split_known: bool,
}

impl Counters {
    /// The cheap counters of every pid still there, summed into `sample`,
    /// thinned on a big tree to about `allowance_s` of CPU (`read`); the
    /// processes with memory.
    pub fn count(
        &mut self,
        pids: &[i32],
        allowance_s: Option<f64>,
        sample: &mut Sample,
    ) -> Counted {
        let mut counted = Counted {
            tree: Vec::with_capacity(pids.len()),
            split_known: true,
        };
        let mut cpu_ticks = 0u64;
        for (pid, Known { stat, memory, .. }) in self.read(pids, allowance_s) {
            sample.processes += 1;
            cpu_ticks = cpu_ticks.saturating_add(stat.cpu_ticks);
            sample.threads = sample.threads.saturating_add(stat.threads);
            sample.minor_faults = sample.minor_faults.saturating_add(stat.minor_faults);
            sample.major_faults = sample.major_faults.saturating_add(stat.major_faults);
            sample.rss_bytes = sample.rss_bytes.saturating_add(memory.rss_bytes);
            sample.vsz_bytes = sample.vsz_bytes.saturating_add(memory.vsz_bytes);
            // Zombies have no mm: smaps_rollup fails with ESRCH, and they
            // hold no memory to count.
            if !matches!(stat.state, 'Z' | 'X') && memory.vsz_bytes > 0 {
                counted.split_known &= memory.rss_parts.is_some();
                counted.tree.push(Live {
                    pid,
                    ppid: stat.ppid,
                    family: stat.comm_hash,
                    rss: memory.rss_parts.unwrap_or_default(),
                });
            }
        }
        if sample.processes > 0 {
            sample.cpu_s = Some(cpu_ticks as f64 / super::machine_cpu::clock_ticks_per_second());
        }
        counted
    }

    /// Reads the counters of `pids` for this tick, spending about
    /// `allowance_s` of CPU when reading all of them in full would cost
    /// more (`None`: read all); returns every process still there, with
    /// its figures, in the order of `pids`.
    fn read(&mut self, pids: &[i32], allowance_s: Option<f64>) -> Vec<(i32, Known)> {
        let start_s = thread_cpu_seconds();
        if pids != self.last_pids.as_slice() {
            let live: HashSet<i32> = pids.iter().copied().collect();
            self.known.retain(|pid, _| live.contains(pid));
            self.kept.retain(&live);
            self.last_pids = pids.to_vec();
        }
        let looks = allowance_s
            .filter(|_| pids.len() > MIN_THINNED_PROCESSES)
            .filter(|a| pids.len() as f64 * self.full_cost_s > *a)
            .map(|a| ((a / self.look_cost_s) as usize).max(MIN_LOOKS));
        let mut reads = TickReads::default();
        match looks {
            None => {
                for &pid in pids {
                    reads.full += usize::from(self.read_full(pid));
                }
                let cost_s = thread_cpu_seconds() - start_s;
                if reads.full > 0 {
                    self.full_cost_s = ewma(self.full_cost_s, cost_s / reads.full as f64);
                }
            }
            Some(looks) => {
                self.read_thinned(pids, looks, &mut reads);
                let cost_s = thread_cpu_seconds() - start_s;
                if reads.looked > 0 {
                    self.look_cost_s = ewma(self.look_cost_s, cost_s / reads.looked as f64);
                }
            }
        }
        let figures: Vec<(i32, Known)> = pids
            .iter()
            .filter_map(|pid| Some((*pid, *self.known.get(pid)?)))
            .collect();
        if looks.is_some() {
            self.thinned.ticks += 1;
            self.thinned.processes += figures.len() as u64;
            self.thinned.looked += reads.looked as u64;
            self.thinned.full += reads.full as u64;
        }
        figures
    }

    /// A thinned tick: new processes in full (counted as looks), then
    /// looks up to `looks`, half at most at those that changed at their
    /// last, the rest in turn.
    fn read_thinned(&mut self, pids: &[i32], looks: usize, reads: &mut TickReads) {
        let mut pids = pids.to_vec();
        if !pids.is_sorted() {
            pids.sort_unstable();
        }
        let start = pids.partition_point(|&pid| pid <= self.cursor);
        let turn: Vec<i32> = pids[start..]
            .iter()
            .chain(&pids[..start])
            .copied()
            .collect();
        let mut looked: HashSet<i32> = HashSet::new();
        for &pid in &turn {
            if !self.known.contains_key(&pid) {
                looked.insert(pid);
                reads.looked += 1;
                reads.full += usize::from(self.read_full(pid));
            }
        }
        let changed: Vec<i32> = turn
            .iter()
            .copied()
            .filter(|pid| self.known.get(pid).is_some_and(|k| k.changed) && !looked.contains(pid))
            .take(looks / 2)
            .collect();
        for pid in changed {
            looked.insert(pid);
            self.look(pid, reads);
        }
        for &pid in &turn {
            if reads.looked >= looks {
                break;
            }
            if looked.insert(pid) {
                self.look(pid, reads);
                self.cursor = pid;
            }
        }
    }

    /// `statm`, and `stat` and `status` when it changed or is due.
    fn look(&mut self, pid: i32, reads: &mut TickReads) {
        reads.looked += 1;
        let Some(statm) = self.kept.read(pid, "statm").map(|t| fnv1a(t.as_bytes())) else {
            self.known.remove(&pid);
            return;
        };
        let Some(known) = self.known.get_mut(&pid) else {
            return;
        };
        let same = known.statm == Some(statm);
        if same && known.unchanged + 1 < REFRESH_LOOKS {
            known.unchanged += 1;
            known.changed = false;
            return;
        }
        if self.read_full(pid) {
            reads.full += 1;
            if let Some(known) = self.known.get_mut(&pid) {
                known.statm = Some(statm);
                known.changed = !same;
            }
        }
    }

    /// `stat` and `status` of `pid` into its figures; false (and its
    /// figures dropped) when it is gone.
    fn read_full(&mut self, pid: i32) -> bool {
        let stat = self.kept.read(pid, "stat").and_then(proc::parse_stat);
        let memory = stat.and_then(|_| {
            self.kept
                .read(pid, "status")
                .and_then(proc::parse_status_memory)
        });
        let (Some(stat), Some(memory)) = (stat, memory) else {
            self.known.remove(&pid);
            return false;
        };
        let before = self.known.get(&pid);
        let known = Known {
            stat,
            memory,
            statm: before.and_then(|k| k.statm),
            unchanged: 0,
            changed: before.is_none_or(|k| k.memory != memory),
        };
        self.known.insert(pid, known);
        true
    }

    /// `pid`'s RSS split from its status read now (just after its
    /// smaps_rollup), kept as its figures.
    pub fn status_now(&mut self, pid: i32) -> Option<RssParts> {
        let memory = self
            .kept
            .read(pid, "status")
            .and_then(proc::parse_status_memory)?;
        if let Some(known) = self.known.get_mut(&pid) {
            known.memory = memory;
        }
        memory.rss_parts
    }
}

fn ewma(old: f64, new: f64) -> f64 {
    0.8 * old + 0.2 * new
}
