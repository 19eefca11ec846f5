//! Samples the memory of a process tree from /proc into `model::Sample`s.
//!
//! The `Sampler` composes parts with one job each, all within one CPU
//! budget for the *whole* sampler, tree walks and maps checks charged by
//! the caller included (`budget.rs`: a token bucket, and the sampler's own
//! CPU time, which every run reports). RSS, VSZ, faults and threads are
//! cheap and read on every tick (`counters.rs`: `stat` and `status`, which
//! has what `statm` has plus the RSS split the PSS estimate needs, two
//! kept-open files per process). PSS/USS/swap come from `smaps_rollup`,
//! rationed by the budget and estimated between reads (`pss/`). With the
//! heap probe, each tick also reads every process's shared-memory file
//! (`probe_shm`) for the live heap, and with it each tick's RSS is split
//! into the parts of a `model::Breakdown` (`heap_split.rs`, `breakdown.rs`:
//! arithmetic on the reads above).

mod breakdown;
mod budget;
mod counters;
mod cpu_time;
mod heap_split;
pub mod heap_vet;
mod kept_open;
pub mod machine_cpu;
pub mod maps;
mod probe_reading;
pub mod probe_shm;
pub mod proc;
mod pss;
mod pss_estimate;
mod shares;
pub mod tree;

use crate::cgroup;
use crate::model::Sample;
use budget::Budget;
use counters::Counters;
pub use cpu_time::thread_cpu_seconds;
use heap_split::HeapSplit;
pub use pss::ProcessPss;
use pss::PssReader;
pub use pss_estimate::PssSource;

pub use probe_shm::ProbeReader;
pub use tree::{descendants, TreeWalker};

/// The whole sampler's CPU budget during runs, as a share of one core. Kept
/// under 1% with a margin, since the bucket spends right up to it and PSS
/// reads may use the floor (`PSS_FLOOR_SHARE`) on top: 0.87-1.15% of a core
/// measured on PostgreSQL under pgbench.
pub const DEFAULT_BUDGET: f64 = 0.008;

/// Share of the budget the cheap reads of a big tree may spend a tick
/// (`counters`); the walk has its own (`tree::WALK_CORE_SHARE`), and PSS
/// reads what is left.
const CHEAP_SHARE: f64 = 0.35;
/// The same with the run's cgroup attached: the tree's total comes from
/// it, exact at any size, so per-process figures may go staler.
const CHEAP_SHARE_WITH_CGROUP: f64 = 0.2;

/// Reads /proc for a set of pids, one `sample()` per tick: its parts, each
/// with one job, in the order a tick uses them.
#[derive(Debug)]
pub struct Sampler {
    budget: Budget,
    /// `stat` and `status`, every tick.
    counters: Counters,
    /// The run's memory cgroup: the tree's total in one read.
    cgroup: Option<cgroup::Reader>,
    pss: PssReader,
    /// With the heap probe: its readings and the breakdown of RSS.
    heap: Option<HeapSplit>,
    ticks: u64,
}

impl Sampler {
    /// `budget_fraction` is the share of one core the whole sampler may use,
    /// e.g. 0.01 for 1%.
    pub fn new(budget_fraction: f64) -> Sampler {
        Sampler {
            budget: Budget::new(budget_fraction),
            counters: Counters::default(),
            cgroup: None,
            pss: PssReader::default(),
            heap: None,
            ticks: 0,
        }
    }

    /// Its share of `total` (of one core), spent by `samplers` samplers
    /// running side by side (a soak's instances) together.
    pub fn share_budget(&mut self, total: f64, samplers: usize) {
        self.budget.share(total, samplers);
    }

    /// Reads the heap probe's files on every tick from now on.
    pub fn attach_probe(&mut self, reader: ProbeReader) {
        self.heap = Some(HeapSplit::new(reader));
    }

    /// Reads the run's memory cgroup on every tick from now on.
    pub fn attach_cgroup(&mut self, reader: cgroup::Reader) {
        self.cgroup = Some(reader);
    }

    /// The probes' CPU seconds and the mode that gave numbers, once the
    /// tree has ended; `None` without the probe.
    pub fn finish_probe(&mut self) -> Option<(f64, &'static str)> {
        self.heap.as_mut().map(|h| h.probe.finish())
    }

    /// Counts CPU time the caller spent for the sampler (walking the tree,
    /// reading maps) against the budget and in `cpu_seconds()`.
    pub fn charge(&mut self, cpu_s: f64) {
        self.budget.charge(cpu_s);
    }

    /// Sums the live processes among `pids` at time `t_s` (seconds since the
    /// workload started). Pids that are gone are skipped; `processes` counts
    /// the rest.
    pub fn sample(&mut self, pids: &[i32], t_s: f64) -> Sample {
        self.sample_inner(pids, t_s, false)
    }

    /// `sample`, with PSS read whatever the budget holds (charged to it, so
    /// later ticks make up for it): for the few readings a report quotes,
    /// such as a service's memory at the end of its load.
    pub fn sample_with_pss(&mut self, pids: &[i32], t_s: f64) -> Sample {
        self.sample_inner(pids, t_s, true)
    }

    fn sample_inner(&mut self, pids: &[i32], t_s: f64, force_pss: bool) -> Sample {
        let cpu_start_s = thread_cpu_seconds();
        // What the cheap reads may spend: their share of what the budget
        // gave since the last tick.
        let share = match self.cgroup {
            Some(_) => CHEAP_SHARE_WITH_CGROUP,
            None => CHEAP_SHARE,
        };
        let allowance_s = self.budget.refill(share);
        let mut sample = Sample {
            t_s,
            ..Sample::default()
        };
        let tick = self.counters.count(pids, allowance_s, &mut sample);
        if let Some(heap) = &mut self.heap {
            heap.read(&tick.tree, &mut sample);
        }
        sample.cgroup = self.cgroup.as_mut().and_then(cgroup::Reader::read);
        self.budget
            .spend((thread_cpu_seconds() - cpu_start_s).max(0.0));
        let mut with = pss::ReadWith {
            budget: &mut self.budget,
            force: force_pss,
            counters: &mut self.counters,
        };
        self.pss.tick(&mut with, &tick, &mut sample);
        if let Some(heap) = &mut self.heap {
            heap.split_rss(&tick, &mut self.pss, &mut sample);
        }
        self.ticks += 1;
        self.budget.cpu_s += (thread_cpu_seconds() - cpu_start_s).max(0.0);
        sample
    }

    /// Every process's PSS on the last tick, split by kind: what was read
    /// or estimated for it (empty when the tick had no PSS).
    pub fn processes(&self) -> &[ProcessPss] {
        &self.pss.processes
    }

    /// Thread CPU time the sampler used so far (`sample()` plus what was
    /// charged): its own overhead, reported with every run.
    pub fn cpu_seconds(&self) -> f64 {
        self.budget.cpu_s
    }

    /// The part of `cpu_seconds()` spent reading smaps_rollup.
    pub fn pss_cpu_seconds(&self) -> f64 {
        self.budget.pss_cpu_s
    }

    /// Ticks that read smaps_rollup (for every pid of that tick).
    pub fn pss_reads(&self) -> u64 {
        self.pss.passes
    }

    /// Processes read alone between passes to learn how much of what their
    /// family maps is new to the tree (`PssEstimator::probe_due`).
    pub fn probes(&self) -> u64 {
        self.pss.probes
    }

    /// Calls to `sample()` so far.
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// What the sampler thinned over the run on a big tree, in words
    /// (`None` when it read every process on every tick): how many of the
    /// thinned ticks' processes `stat` and `status` were looked at and read,
    /// how many heap probe files a tick were read, and how many processes'
    /// PSS was read when full passes gave way to reads of a few.
    pub fn thinning_note(&self) -> Option<String> {
        let probe = self.heap.as_ref().and_then(|h| h.probe.thinned.note());
        let parts: Vec<String> = [
            self.counters.thinned.note(),
            probe,
            self.pss.thinning_note(),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!parts.is_empty()).then(|| format!("big tree: {}", parts.join("; ")))
    }
}

#[cfg(test)]
mod tests;
