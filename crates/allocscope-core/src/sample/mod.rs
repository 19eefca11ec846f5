//! Samples the memory of a process tree from /proc into `model::Sample`s.
//!
//! RSS, VSZ, faults and threads are cheap and read on every tick: `stat`
//! and `status` (which has what `statm` has plus the RSS split the PSS
//! estimate needs), two kept-open files per process. PSS/USS/swap come
//! from `smaps_rollup`, which walks the page tables under the mm lock:
//! 20-90 µs on a quiet process, 1-4 ms on a busy many-threaded one, and it
//! can stall the workload's own mmap/madvise.
//! So those reads are rationed by a CPU budget for the *whole* sampler (tree
//! walks and maps checks charged by the caller included): a token bucket
//! fills at `budget` seconds of CPU per second and every read spends from it.
//! The bucket keeps what the last pass cost in reserve for a tree the
//! estimate cannot follow (`PssEstimator::shaken`: a burst of processes
//! came or left), whose pass runs at once, in debt if need be; a stale
//! last pass (a process came or went, RSS drifted: `PssEstimator::stale`)
//! is redone when the reserve is whole, any other when the bucket holds a
//! pass beyond it. A process that exits during a pass is left out of its
//! sum, not counted as a failed read. A smaller floor keeps PSS coming when
//! the cheap reads alone use the budget (very short intervals), and a
//! pass's worth of it for processes read alone. A sample carries PSS only
//! when it was read for every process of that tick. The sampler measures
//! its own CPU time so every run can report it. With the heap probe, each
//! tick also reads every process's shared-memory file (`probe_shm`) for
//! the live heap, and with it each tick's RSS is split into the parts of
//! a `model::Breakdown` (`breakdown.rs`: arithmetic on the reads above).

mod breakdown;
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
mod process_pss;
mod pss_estimate;
mod rollup_cost;
mod scaled_reads;
mod shares;
pub mod tree;

use crate::model::Sample;
use breakdown::Splitter;
use counters::Counters;
pub use cpu_time::thread_cpu_seconds;
use probe_shm::ProbeReading;
use proc::{Rollup, RssParts};
pub use process_pss::ProcessPss;
pub use pss_estimate::PssSource;
use pss_estimate::{Live, PssEstimator, ScaledPss};
use rollup_cost::RollupCost;
use shares::ShareTable;
use std::time::{Duration, Instant};

pub use probe_shm::ProbeReader;
pub use tree::{descendants, TreeWalker};

/// The whole sampler's CPU budget during runs, as a share of one core. Kept
/// under 1% with a margin, since the bucket spends right up to it and PSS
/// reads may use the floor (`PSS_FLOOR_SHARE`) on top: 0.87-1.15% of a core
/// measured on PostgreSQL under pgbench.
pub const DEFAULT_BUDGET: f64 = 0.008;

/// Share of the budget that PSS reads may always use, even when the cheap
/// reads have spent the rest.
const PSS_FLOOR_SHARE: f64 = 0.2;
/// The most CPU time the bucket saves up, so a quiet spell cannot buy a
/// burst of PSS passes.
const MAX_SAVED_CPU: Duration = Duration::from_millis(20);
/// Share of the budget the cheap reads of a big tree may spend a tick
/// (`counters`); the walk has its own (`tree::WALK_CORE_SHARE`), and PSS
/// reads what is left.
const CHEAP_SHARE: f64 = 0.35;
/// The same with the run's cgroup attached: the tree's total comes from
/// it, exact at any size, so per-process figures may go staler.
const CHEAP_SHARE_WITH_CGROUP: f64 = 0.2;

/// Reads /proc for a set of pids, one `sample()` per tick.
#[derive(Debug)]
pub struct Sampler {
    counters: Counters,
    budget_fraction: f64,
    /// CPU seconds the sampler may still spend (may go negative).
    tokens_s: f64,
    /// The same for the PSS floor.
    floor_tokens_s: f64,
    last_fill: Option<Instant>,
    /// What the last PSS pass cost; the next one is expected to cost as much.
    last_pss_cost_s: f64,
    cpu_s: f64,
    pss_cpu_s: f64,
    pss_reads: u64,
    /// Processes read alone to learn their family's growth.
    probes: u64,
    ticks: u64,
    probe: Option<ProbeReader>,
    /// The run's memory cgroup: the tree's total in one read.
    cgroup: Option<crate::cgroup::Reader>,
    estimator: PssEstimator,
    /// A full pass is due at once: the first, and the first after a big
    /// tree's scaled reads (`scaled_reads`) gave way to full passes again.
    full_pass_due: bool,
    /// Big trees: a few processes read at a time, scaled to their class.
    scaled: Option<ScaledPss>,
    /// One process of each class is read at once: scaled reads just began.
    scaled_read_due: bool,
    /// What a process's smaps_rollup costs, learned from every read.
    rollup_cost: RollupCost,
    /// Processes read alone by `scaled`, and the ticks it estimated.
    scaled_reads: u64,
    scaled_ticks: u64,
    /// Every process's PSS on the last tick, by kind.
    processes: Vec<ProcessPss>,
    /// What the breakdown carries between ticks.
    split: Splitter,
    /// This tick's heap probe readings, weighted once the tick's PSS is
    /// known (`split_rss`).
    heap_readings: Vec<(i32, ProbeReading)>,
    /// Each process's last PSS split: what of its figures counts in a tree.
    shares: ShareTable,
}

impl Sampler {
    /// Its share of `total` (of one core), spent by `samplers` samplers
    /// running side by side (a soak's instances) together.
    pub fn share_budget(&mut self, total: f64, samplers: usize) {
        self.budget_fraction = total.max(0.0) / samplers.max(1) as f64;
    }

    /// `budget_fraction` is the share of one core the whole sampler may use,
    /// e.g. 0.01 for 1%.
    pub fn new(budget_fraction: f64) -> Sampler {
        Sampler {
            counters: Counters::default(),
            budget_fraction: budget_fraction.max(0.0),
            tokens_s: 0.0,
            floor_tokens_s: 0.0,
            last_fill: None,
            last_pss_cost_s: 0.0,
            cpu_s: 0.0,
            pss_cpu_s: 0.0,
            pss_reads: 0,
            probes: 0,
            ticks: 0,
            probe: None,
            cgroup: None,
            estimator: PssEstimator::default(),
            full_pass_due: true,
            scaled: None,
            scaled_read_due: false,
            rollup_cost: RollupCost::default(),
            scaled_reads: 0,
            scaled_ticks: 0,
            processes: Vec::new(),
            split: Splitter::default(),
            heap_readings: Vec::new(),
            shares: ShareTable::default(),
        }
    }

    /// Reads the heap probe's files on every tick from now on.
    pub fn attach_probe(&mut self, reader: ProbeReader) {
        self.probe = Some(reader);
    }

    /// Reads the run's memory cgroup on every tick from now on.
    pub fn attach_cgroup(&mut self, reader: crate::cgroup::Reader) {
        self.cgroup = Some(reader);
    }

    /// The probes' CPU seconds and the mode that gave numbers, once the
    /// tree has ended; `None` without the probe.
    pub fn finish_probe(&mut self) -> Option<(f64, &'static str)> {
        self.probe.as_mut().map(ProbeReader::finish)
    }

    /// Counts CPU time the caller spent for the sampler (walking the tree,
    /// reading maps) against the budget and in `cpu_seconds()`.
    pub fn charge(&mut self, cpu_s: f64) {
        self.cpu_s += cpu_s.max(0.0);
        self.tokens_s -= cpu_s.max(0.0);
    }

    fn refill(&mut self, now: Instant) {
        // Room for the reserve and a pass beyond it, and some slack.
        let cap = MAX_SAVED_CPU.as_secs_f64().max(3.0 * self.last_pss_cost_s);
        if let Some(last) = self.last_fill {
            let elapsed = (now - last).as_secs_f64();
            self.tokens_s = (self.tokens_s + elapsed * self.budget_fraction).min(cap);
            self.floor_tokens_s =
                (self.floor_tokens_s + elapsed * self.budget_fraction * PSS_FLOOR_SHARE).min(cap);
        }
        self.last_fill = Some(now);
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
        let now = Instant::now();
        // What the cheap reads may spend: their share of what the budget
        // gave since the last tick.
        let share = if self.cgroup.is_some() {
            CHEAP_SHARE_WITH_CGROUP
        } else {
            CHEAP_SHARE
        };
        let allowance_s = self
            .last_fill
            .map(|last| share * self.budget_fraction * (now - last).as_secs_f64());
        self.refill(now);
        let mut sample = Sample {
            t_s,
            ..Sample::default()
        };
        self.processes.clear();
        let tick = self.read_counters(pids, allowance_s, &mut sample);
        self.read_heap(&tick.tree, &mut sample);
        sample.cgroup = self.cgroup.as_mut().and_then(crate::cgroup::Reader::read);
        let cheap_cost_s = (thread_cpu_seconds() - cpu_start_s).max(0.0);
        self.tokens_s -= cheap_cost_s;
        if self.choose_scaled(&tick.tree) {
            self.scaled_tick(&tick, force_pss, &mut sample);
        } else {
            self.full_tick(&tick, force_pss, &mut sample);
        }
        self.split_rss(&tick, &mut sample);
        self.ticks += 1;
        self.cpu_s += (thread_cpu_seconds() - cpu_start_s).max(0.0);
        sample
    }

    /// A tick of a tree read in full passes, estimated between them.
    fn full_tick(&mut self, tick: &Counted, force_pss: bool, sample: &mut Sample) {
        self.estimator.retain(&tick.tree);
        let force = self.full_pass_due || force_pss;
        if let Some(payer) = self.pass_payer(tick, force) {
            self.full_pass(tick, payer, sample);
        }
        if sample.pss_bytes.is_none() && !tick.live.is_empty() && tick.split_known {
            self.processes.clear();
            self.read_joined(&tick.tree);
            self.read_probe(&tick.tree);
            // Nothing read (a pass failed as the tree forked or exited):
            // no PSS rather than every RSS counted in full.
            if !self.estimator.has_reads() {
                return;
            }
            sample.pss_bytes = Some(self.estimate_pss(&tick.tree));
            sample.pss_estimated_processes = u32::try_from(tick.live.len()).unwrap_or(u32::MAX);
        }
    }

    /// The cheap counters (`stat`, `status`) of every pid still there, summed
    /// into `sample`, thinned on a big tree to about `allowance_s` of CPU
    /// (`counters`); the processes with memory, as the estimate sees them.
    fn read_counters(
        &mut self,
        pids: &[i32],
        allowance_s: Option<f64>,
        sample: &mut Sample,
    ) -> Counted {
        let mut counted = Counted {
            live: Vec::with_capacity(pids.len()),
            tree: Vec::with_capacity(pids.len()),
            split_known: true,
        };
        for (pid, known) in self.counters.read(pids, allowance_s) {
            let (stat, memory) = (known.stat, known.memory);
            sample.processes += 1;
            sample.threads = sample.threads.saturating_add(stat.threads);
            sample.minor_faults = sample.minor_faults.saturating_add(stat.minor_faults);
            sample.major_faults = sample.major_faults.saturating_add(stat.major_faults);
            sample.rss_bytes = sample.rss_bytes.saturating_add(memory.rss_bytes);
            sample.vsz_bytes = sample.vsz_bytes.saturating_add(memory.vsz_bytes);
            // Zombies have no mm: smaps_rollup fails with ESRCH, and they
            // hold no memory to count.
            let has_mm = !matches!(stat.state, 'Z' | 'X') && memory.vsz_bytes > 0;
            if has_mm {
                counted.live.push(pid);
                counted.split_known &= memory.rss_parts.is_some();
                counted.tree.push(Live {
                    pid,
                    ppid: stat.ppid,
                    family: stat.comm_hash,
                    rss: memory.rss_parts.unwrap_or_default(),
                });
            }
        }
        counted
    }

    /// Whether this tick makes a full PSS pass, and which bucket pays for
    /// it; `force` for the first one and those a caller asks for.
    ///
    /// The bucket keeps one pass in reserve for a tree the estimate
    /// cannot follow (`PssEstimator::shaken`: a burst of connections, a
    /// shutdown), whose pass may then borrow up to `MAX_SAVED_CPU` or
    /// one pass; a stale pass (a process came or went, RSS drifted)
    /// waits for the reserve to be whole, others for a pass beyond it.
    /// Over a run this spends what passes did without the reserve, but
    /// a burst no longer comes right after a pass that left the bucket
    /// in debt (PostgreSQL's 8 backends connect just after the pass that
    /// pgbench's first connection made stale) and is guessed for the
    /// seconds the debt takes to repay.
    fn pass_payer(&self, tick: &Counted, force: bool) -> Option<Payer> {
        let pass_s = self.last_pss_cost_s;
        let due = if !tick.split_known {
            // Nothing is estimated: no reserve to keep.
            pass_s
        } else if self.estimator.shaken(&tick.tree) {
            -pass_s.max(MAX_SAVED_CPU.as_secs_f64())
        } else if self.estimator.stale(&tick.tree) {
            pass_s
        } else {
            2.0 * pass_s
        };
        let affordable = self.tokens_s >= due;
        // The floor keeps a pass's worth for processes read alone (new
        // ones, probes): after a burst's pass has put the bucket in debt,
        // they are what keeps the estimate following the newcomers' growth.
        let on_floor = self.floor_tokens_s >= 2.0 * pass_s;
        if force || affordable {
            Some(Payer::Bucket)
        } else if on_floor {
            Some(Payer::Floor)
        } else {
            None
        }
    }

    /// Reads every process's smaps_rollup, charged to `payer`; the tree's
    /// sums go into `sample` when every process still there was read.
    fn full_pass(&mut self, tick: &Counted, payer: Payer, sample: &mut Sample) {
        let pss_start_s = thread_cpu_seconds();
        let totals = self.read_pss_totals(&tick.tree, tick.split_known);
        let pss_cost_s = (thread_cpu_seconds() - pss_start_s).max(0.0);
        self.pss_cpu_s += pss_cost_s;
        self.pss_reads += 1;
        self.full_pass_due = false;
        self.last_pss_cost_s = pss_cost_s;
        let rss: u64 = tick.tree.iter().map(|p| p.rss.total_bytes()).sum();
        self.rollup_cost.note(pss_cost_s, tick.tree.len(), rss);
        self.pay(payer, pss_cost_s);
        if let Some((pss, uss, swap)) = totals {
            sample.pss_bytes = Some(pss);
            sample.uss_bytes = Some(uss);
            sample.swap_bytes = Some(swap);
        }
    }

    fn pay(&mut self, payer: Payer, cost_s: f64) {
        match payer {
            Payer::Bucket => self.tokens_s -= cost_s,
            Payer::Floor => self.floor_tokens_s -= cost_s,
        }
    }

    /// Reads in full, once, each process that joined the tree since the
    /// last full pass, while the budget is less than one pass in debt or
    /// its PSS floor holds tokens: what it shares with the others is taken
    /// from them, not added (see `pss_estimate`).
    fn read_joined(&mut self, tree: &[Live]) {
        for p in tree {
            if !self.estimator.unread(p.pid) {
                continue;
            }
            if let Some((rollup, read)) = self.read_alone(p) {
                self.estimator.record_joined(&read, &rollup);
            }
        }
    }

    /// Reads alone the process whose read would tell how much of what its
    /// family maps is new to the tree, when one is due
    /// (`PssEstimator::probe_due`), on the same terms as a joined one.
    fn read_probe(&mut self, tree: &[Live]) {
        let Some(p) = self.estimator.probe_due(tree) else {
            return;
        };
        if let Some((rollup, read)) = self.read_alone(&p) {
            self.probes += 1;
            self.estimator.record_probe(tree, &read, &rollup);
        }
    }

    /// One process's smaps_rollup between full passes, while the budget is
    /// less than one pass in debt or its PSS floor holds tokens. A new
    /// process is read even when that puts the bucket in debt: a burst of
    /// them (a server's workers, a pool of connections) often comes right
    /// after a pass, and unread they are guessed from their parent for
    /// seconds. The debt is repaid by the next pass waiting longer.
    fn read_alone(&mut self, p: &Live) -> Option<(Rollup, Live)> {
        let payer = if self.tokens_s > -self.last_pss_cost_s {
            Payer::Bucket
        } else if self.floor_tokens_s > 0.0 {
            Payer::Floor
        } else {
            return None;
        };
        let start_s = thread_cpu_seconds();
        let read = self.read_rollup(p);
        let cost_s = (thread_cpu_seconds() - start_s).max(0.0);
        self.pay(payer, cost_s);
        self.pss_cpu_s += cost_s;
        self.rollup_cost.note(cost_s, 1, p.rss.total_bytes());
        let (rollup, rss) = read?;
        Some((rollup, Live { rss: rss?, ..*p }))
    }

    /// `p`'s smaps_rollup, and its RSS split from its status read right
    /// after. The status of the tick was read before every rollup of a full
    /// pass; a process that maps or frees memory in between (a pass takes
    /// tens of milliseconds on a big tree) would leave a baseline whose RSS
    /// and PSS describe different moments, and its anon would be off by
    /// the difference in every estimate until its next read (17 MiB of a
    /// PostgreSQL backend's 23 was).
    fn read_rollup(&mut self, p: &Live) -> Option<(Rollup, Option<RssParts>)> {
        let (rollup, anon_pages) = proc::read_smaps_rollup_with_anon(p.pid)?;
        self.split.record_anon_pages(p.pid, anon_pages);
        Some((rollup, self.counters.status_now(p.pid)))
    }

    /// Summed (PSS, USS, swap) of the tree, or `None` if any process still
    /// running could not be read (a partial sum would look like a drop in
    /// memory) or none could. Every read also becomes that process's
    /// baseline for the estimates until its next one.
    fn read_pss_totals(&mut self, tree: &[Live], split_known: bool) -> Option<(u64, u64, u64)> {
        let mut totals = (0u64, 0u64, 0u64);
        let mut read_any = false;
        for p in tree {
            let Some((rollup, rss)) = self.read_rollup(p) else {
                // One that exited since the tick's status read holds
                // nothing now: the others' sum is the tree's. Shutdowns
                // and connection churn would otherwise spoil the very
                // passes the estimate needs most.
                if exited(p.pid) {
                    continue;
                }
                self.estimator.full_read_failed();
                return None;
            };
            if let Some(rss) = rss.filter(|_| split_known) {
                let read = Live { rss, ..*p };
                self.estimator.record(&read, &rollup);
                self.processes.push(ProcessPss {
                    pid: p.pid,
                    ppid: p.ppid,
                    rss,
                    pss: rollup.pss_parts.unwrap_or(RssParts {
                        anon_bytes: rollup.pss_bytes,
                        ..RssParts::default()
                    }),
                    source: PssSource::Read,
                });
            }
            read_any = true;
            totals.0 = totals.0.saturating_add(rollup.pss_bytes);
            totals.1 = totals.1.saturating_add(rollup.uss_bytes);
            totals.2 = totals.2.saturating_add(rollup.swap_bytes);
        }
        if !read_any {
            self.estimator.full_read_failed();
            return None;
        }
        self.estimator.full_read_done();
        Some(totals)
    }

    /// The tree's PSS from the status counters and the last full reads.
    fn estimate_pss(&mut self, tree: &[Live]) -> u64 {
        let mut total = 0u64;
        for (p, (pss, source)) in tree.iter().zip(self.estimator.estimate(tree)) {
            total = total.saturating_add(pss.total_bytes());
            self.processes.push(ProcessPss {
                pid: p.pid,
                ppid: p.ppid,
                rss: p.rss,
                pss,
                source,
            });
        }
        total
    }

    /// Every process's PSS on the last tick, split by kind: what was read
    /// or estimated for it (empty when the tick had no PSS).
    pub fn processes(&self) -> &[ProcessPss] {
        &self.processes
    }

    /// Thread CPU time the sampler used so far (`sample()` plus what was
    /// charged): its own overhead, reported with every run.
    pub fn cpu_seconds(&self) -> f64 {
        self.cpu_s
    }

    /// The part of `cpu_seconds()` spent reading smaps_rollup.
    pub fn pss_cpu_seconds(&self) -> f64 {
        self.pss_cpu_s
    }

    /// Ticks that read smaps_rollup (for every pid of that tick).
    pub fn pss_reads(&self) -> u64 {
        self.pss_reads
    }

    /// Processes read alone between passes to learn how much of what their
    /// family maps is new to the tree (`PssEstimator::probe_due`).
    pub fn probes(&self) -> u64 {
        self.probes
    }

    /// Calls to `sample()` so far.
    pub fn ticks(&self) -> u64 {
        self.ticks
    }
}

/// A tick's processes, from their cheap counters.
struct Counted {
    /// Those with memory (not zombies).
    live: Vec<i32>,
    /// The same, as the PSS estimate sees them.
    tree: Vec<Live>,
    /// Every status had the RSS split; without it (kernels before 4.5)
    /// nothing is estimated.
    split_known: bool,
}

/// Which bucket a PSS read spends from.
#[derive(Debug, Clone, Copy)]
enum Payer {
    Bucket,
    /// The PSS floor, when the bucket is spent.
    Floor,
}

/// Whether `pid` has exited (gone, or a zombie with no memory left).
fn exited(pid: i32) -> bool {
    proc::read_stat(pid).is_none_or(|stat| matches!(stat.state, 'Z' | 'X'))
}

#[cfg(test)]
mod tests;
