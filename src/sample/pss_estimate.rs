//! Per-process PSS between full reads. smaps_rollup is rationed by the CPU
//! budget, so on a big tree it reaches every process only every few
//! seconds; /proc/PID/status (`RssAnon`, `RssFile`, `RssShmem`) is cheap
//! enough for every tick. Each process's last full read fixes how its
//! resident memory splits into PSS, and the cheap counters carry that
//! forward:
//! - anonymous memory that appeared or went since the full read counts in
//!   full: what an allocator maps and returns is private to the process;
//! - file and shmem pages a process dropped go at the share its full read
//!   measured; pages it mapped since at the share of its family's newly
//!   mapped pages that is new to the tree, learned between two passes over
//!   the same processes (`learn_growth`) or from one process read alone
//!   when the family grew (`probe_due`), else at its own share.
//!
//! That alone goes wrong when processes come and go, because PSS divides a
//! shared page among its mappers: a forked server's new worker maps pages
//! its siblings already map, which adds nothing to the tree's PSS (each
//! sharer's part shrinks), and a worker that exits leaves its part of every
//! page it shared to the others. So the tree's PSS is kept as a whole:
//! - a process that joins the tree between full reads is read in full once
//!   when first seen (while the budget allows); only its exclusive pages
//!   (its USS) are new to the tree, the rest of its PSS is taken from the
//!   processes of its family (same program name: forked from one another);
//! - a process that leaves takes only its exclusive pages with it; the
//!   rest of its PSS goes back to its family, at most what the survivors
//!   can hold (their RSS not yet counted in their PSS).
//!
//! Both are approximations (what a leaving process shared may have been
//! shared with another that leaves too, a joining one's share shrinks as
//! it touches pages nobody maps), so a pass that the tree moved away from
//! is `stale`, and the sampler redoes it early; after a burst of
//! newcomers or leavers it is `shaken`, and the sampler redoes it at once
//! from budget kept in reserve.
//!
//! A process never read borrows its parent's shares (a forked child shares
//! its parent's pages) for as much anon as the parent had, and counts anon
//! beyond that in full (the child touched it itself), else the shares of
//! the whole tree at the last full read, else counts its RSS in full.
//! Kernels before 5.14 lack `Pss_Anon`/`Pss_File`/`Pss_Shmem`: then every
//! part takes the process's overall PSS/RSS share.

use super::proc::{Rollup, RssParts};
use std::collections::{HashMap, HashSet};

/// How far the tree's anonymous and shmem RSS may move, summed over its
/// processes and relative to its RSS at the last full pass, before that
/// pass counts as stale (`PssEstimator::stale`).
const DRIFT_SHARE: f64 = 0.1;

/// The least growth of a family's file or shmem RSS between two passes
/// that `learn_growth` learns from, in bytes and as a share of its RSS.
const MIN_GROWTH_BYTES: f64 = 1024.0 * 1024.0;
const MIN_GROWTH_SHARE: f64 = 0.01;

/// How much a family's file and shmem RSS must grow since the last full
/// pass, as a share of the tree's PSS at that pass, before one of its
/// processes is read alone to learn how much of what it maps is new to the
/// tree (`PssEstimator::probe_due`). Replayed over ten recorded
/// PostgreSQL traces, a twentieth took 13-19 probes a run for about the
/// same errors as a tenth's 13-17; a fifth's 11-14 let the worst tick of
/// growth go from 11% to 17% of the tree.
const PROBE_GROWTH_SHARE: f64 = 0.1;

/// `PROBE_GROWTH_SHARE` for a family a process joined since its last
/// probe: what it learned is forgotten, and until a probe its new pages go
/// at its processes' own shares. Replayed over twelve recorded PostgreSQL
/// traces, ticks off by more than 10% went from 28 to 22 of 1290 against
/// probing such a family at a tenth, the worst of four traces by 2-3
/// points, none worse.
const PROBE_AFTER_JOIN_SHARE: f64 = 0.025;

/// The share of the tree that processes which joined or left since the
/// last full pass must hold for the pass to be `shaken`: the joiners' RSS
/// against the tree's, or what the leavers shared against the survivors'
/// PSS at the pass.
const SHAKEN_SHARE: f64 = 0.1;

/// One process's resident memory and PSS, split by kind, at its last full
/// read.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Baseline {
    rss: RssParts,
    pss: RssParts,
    /// The part of `pss` on pages no other process maps (its USS, counted
    /// against anon first: private heap is what USS mostly is).
    exclusive: RssParts,
    family: u64,
    /// Read alone after the last full read, when first seen.
    joined: bool,
    /// The tick it was read on (`PssEstimator::retain` counts them).
    read_tick: u64,
}

impl Baseline {
    fn new(p: &Live, rollup: &Rollup, joined: bool, read_tick: u64) -> Baseline {
        let rss = p.rss;
        let pss = rollup.pss_parts.unwrap_or_else(|| {
            // No split: every part takes the overall share.
            let share = ratio(rollup.pss_bytes as f64, rollup.rss_bytes as f64);
            let scale = |bytes: u64| (bytes as f64 * share).round() as u64;
            RssParts {
                anon_bytes: scale(rss.anon_bytes),
                file_bytes: scale(rss.file_bytes),
                shmem_bytes: scale(rss.shmem_bytes),
            }
        });
        Baseline {
            rss,
            pss,
            exclusive: exclusive_parts(&rss, &pss, rollup.uss_bytes),
            family: p.family,
            joined,
            read_tick,
        }
    }

    /// What it holds of pages others map too.
    fn shared(&self) -> [f64; 3] {
        let (p, e) = (kinds(&self.pss), kinds(&self.exclusive));
        [p[0] - e[0], p[1] - e[1], p[2] - e[2]]
    }

    /// Per kind, the share of its pages that others map too that counts in
    /// its PSS.
    fn shared_shares(&self) -> [f64; 3] {
        let (rss, shared, e) = (kinds(&self.rss), self.shared(), kinds(&self.exclusive));
        std::array::from_fn(|k| ratio(shared[k], rss[k] - e[k]))
    }

    /// How many other processes map its shared pages, on average per kind:
    /// a page of m mappers is in its RSS in full and in its PSS at 1/m.
    fn other_mappers(&self) -> [f64; 3] {
        let (rss, shared, e) = (kinds(&self.rss), self.shared(), kinds(&self.exclusive));
        let mut others = [1.0; 3];
        for k in 0..3 {
            if shared[k] > 0.0 {
                others[k] = ((rss[k] - e[k]) / shared[k] - 1.0).max(1.0);
            }
        }
        others
    }
}

/// `part / whole` within [0, 1]; 1 when there is no whole.
fn ratio(part: f64, whole: f64) -> f64 {
    if whole <= 0.0 {
        1.0
    } else {
        (part / whole).clamp(0.0, 1.0)
    }
}

/// How a process's USS (its pages no other process maps) splits by kind,
/// which smaps_rollup does not say. A page others map too counts at most
/// half in its PSS, so of a kind with RSS r and PSS p at least 2p - r is
/// exclusive: a process whose pages of one kind nobody else maps has that
/// kind's PSS equal to its RSS. The rest of the USS goes to anon first
/// (private heap is what USS mostly is), then to file and shmem in
/// proportion to what each can still hold. Without the bounds, PostgreSQL's
/// checkpointer, whose USS is 124 MiB of shared buffers nobody else
/// touched, counted its 1.6 MiB of anon PSS as exclusive, and leaving
/// gave back none of the anon it shared with the postmaster.
fn exclusive_parts(rss: &RssParts, pss: &RssParts, uss: u64) -> RssParts {
    let (rss, pss) = (kinds(rss), kinds(pss));
    let mut exclusive: [f64; 3] =
        std::array::from_fn(|k| (2.0 * pss[k] - rss[k]).clamp(0.0, pss[k]));
    let mut rest = (uss as f64 - exclusive.iter().sum::<f64>()).max(0.0);
    let anon = rest.min(pss[0] - exclusive[0]);
    exclusive[0] += anon;
    rest -= anon;
    let room = |k: usize| pss[k] - exclusive[k];
    let others = room(1) + room(2);
    let part = |k: usize| (rest * ratio(room(k), others)).min(room(k));
    let (file, shmem) = (part(1), part(2));
    exclusive[1] += file;
    exclusive[2] += shmem;
    parts_of(exclusive)
}

fn kinds(parts: &RssParts) -> [f64; 3] {
    [
        parts.anon_bytes as f64,
        parts.file_bytes as f64,
        parts.shmem_bytes as f64,
    ]
}

fn parts_of(kinds: [f64; 3]) -> RssParts {
    let bytes = |x: f64| x.max(0.0).round() as u64;
    RssParts {
        anon_bytes: bytes(kinds[0]),
        file_bytes: bytes(kinds[1]),
        shmem_bytes: bytes(kinds[2]),
    }
}

/// Shares of resident memory that count in PSS, per kind.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shares {
    anon: f64,
    file: f64,
    shmem: f64,
}

impl Shares {
    fn of(rss: &RssParts, pss: &RssParts) -> Shares {
        let share = |pss: u64, rss: u64| ratio(pss as f64, rss as f64);
        Shares {
            anon: share(pss.anon_bytes, rss.anon_bytes),
            file: share(pss.file_bytes, rss.file_bytes),
            shmem: share(pss.shmem_bytes, rss.shmem_bytes),
        }
    }

    fn split(&self, rss: &RssParts) -> RssParts {
        let part = |bytes: u64, share: f64| (bytes as f64 * share).round() as u64;
        RssParts {
            anon_bytes: part(rss.anon_bytes, self.anon),
            file_bytes: part(rss.file_bytes, self.file),
            shmem_bytes: part(rss.shmem_bytes, self.shmem),
        }
    }
}

/// Where a process's PSS on a tick came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PssSource {
    /// Read from its smaps_rollup on this tick.
    Read,
    /// Estimated from its own last full read.
    Own,
    /// Never read: its parent's shares.
    Parent,
    /// Never read, nor its parent: the tree's shares.
    Tree,
    /// Nothing read yet: its RSS in full.
    Rss,
}

/// A live process on this tick, as its cheap counters describe it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Live {
    pub pid: i32,
    pub ppid: i32,
    /// Its program name's hash (`Stat::comm_hash`).
    pub family: u64,
    pub rss: RssParts,
}

/// What one process that left held of pages others map too, by kind, and
/// how many others mapped those pages on average.
type Departure = ([f64; 3], [f64; 3]);

/// The last full read of every live process of the tree, and what changed
/// in the tree since.
#[derive(Debug, Default)]
pub struct PssEstimator {
    baselines: HashMap<i32, Baseline>,
    /// Reads of the full pass under way.
    pass: HashMap<i32, Baseline>,
    /// Per family, what processes that left since the last full pass held
    /// of pages others map too, by kind, and how many others mapped those
    /// pages on average.
    departed: HashMap<u64, Vec<Departure>>,
    /// The tree's shares over its last full read, for orphans never read.
    tree_shares: Option<Shares>,
    /// Per family, its processes at the last complete pass.
    families: HashMap<u64, FamilyPass>,
    /// Per family and kind (file, shmem): the share of newly mapped pages
    /// that was new to the tree, times the RSS it was measured at
    /// (`learn_growth`).
    new_page_scale: HashMap<u64, [Option<f64>; 3]>,
    /// Ticks so far: calls to `retain`.
    tick: u64,
    /// The tick each live process was first seen on, and its RSS then.
    first_seen: HashMap<i32, (u64, RssParts)>,
    /// Per family probed since the last full pass, its growth (`grown`,
    /// summed) at its last probe.
    probed: HashMap<u64, [f64; 3]>,
    /// Families a process joined since their last probe.
    joined_families: HashSet<u64>,
}

/// A family's live processes: what they held at their reads (RSS by kind)
/// and what they mapped since (`PssEstimator::grown`).
#[derive(Debug, Default, Clone, Copy)]
struct Growth {
    base: [f64; 3],
    grown: [f64; 3],
}

/// A family's processes at a full pass: RSS and PSS summed by kind.
#[derive(Debug, Default)]
struct FamilyPass {
    rss: [f64; 3],
    pss: [f64; 3],
    /// Sorted.
    pids: Vec<i32>,
}

impl PssEstimator {
    /// Remembers a full read of `p` during a full pass: its RSS from its
    /// status, `rollup` from its smaps_rollup, read one after the other.
    pub fn record(&mut self, p: &Live, rollup: &Rollup) {
        self.pass
            .insert(p.pid, Baseline::new(p, rollup, false, self.tick));
    }

    /// Call after a full pass read every process: its reads become the
    /// baselines, and its overall shares the default for processes with no
    /// read of their own or of a parent.
    pub fn full_read_done(&mut self) {
        self.baselines = std::mem::take(&mut self.pass);
        self.departed.clear();
        self.probed.clear();
        self.learn_growth();
        // The tree's sums are its families' sums, just taken.
        let (mut rss, mut pss) = ([0.0; 3], [0.0; 3]);
        for family in self.families.values() {
            for k in 0..3 {
                rss[k] += family.rss[k];
                pss[k] += family.pss[k];
            }
        }
        self.tree_shares =
            (!self.baselines.is_empty()).then(|| Shares::of(&parts_of(rss), &parts_of(pss)));
    }

    /// A full pass that could not read every process: its reads are
    /// dropped, the last complete pass stays the reference.
    pub fn full_read_failed(&mut self) {
        self.pass.clear();
    }

    /// Learns, per family and kind (file, shmem), how much of what its
    /// processes newly map is new to the tree, from the last two passes.
    ///
    /// A process that maps a page others map already adds nothing to the
    /// tree (the sharers' parts shrink), one that maps a page nobody maps
    /// adds all of it. As processes that share memory come to map the same
    /// pages, the share of new ones falls: PostgreSQL's backends under
    /// pgbench, between passes 2-5 s apart, added 0.43, 0.24, 0.14 of what
    /// they mapped while their RSS went from 55 to 115, 214, 410 MiB. That
    /// share times the RSS it was measured at stayed within 36-53 MiB, so
    /// the share is carried over as falling with the RSS (PSS growing with
    /// the log of RSS): on recorded traces, carried over unchanged it missed
    /// by up to 17% of the tree and an exponent fitted to RSS by 34%. Learned only
    /// between passes over the same processes (one that joins or leaves
    /// moves sharing in ways the growth does not show) whose RSS grew
    /// enough to tell; a family whose processes changed forgets what it
    /// learned (new processes map pages differently: PostgreSQL's
    /// initialising backend added 0.8-0.9 of what it mapped, the clients
    /// after it 0.5 falling to 0.1), and probes learn it again.
    fn learn_growth(&mut self) {
        let mut totals: HashMap<u64, FamilyPass> = HashMap::new();
        for (pid, b) in &self.baselines {
            let family = totals.entry(b.family).or_default();
            let (r, p) = (kinds(&b.rss), kinds(&b.pss));
            for k in 0..3 {
                family.rss[k] += r[k];
                family.pss[k] += p[k];
            }
            family.pids.push(*pid);
        }
        for (id, now) in &mut totals {
            now.pids.sort_unstable();
            let Some(before) = self.families.get(id) else {
                continue;
            };
            if before.pids != now.pids {
                self.new_page_scale.remove(id);
                continue;
            }
            let learned = self.new_page_scale.entry(*id).or_default();
            for (k, slot) in learned.iter_mut().enumerate().skip(1) {
                let (r0, r1) = (before.rss[k], now.rss[k]);
                let grown = r1 - r0;
                if grown > MIN_GROWTH_BYTES.max(MIN_GROWTH_SHARE * r0) {
                    let share = ((now.pss[k] - before.pss[k]) / grown).clamp(0.0, 1.0);
                    *slot = Some(share * (r0 + r1) / 2.0);
                }
            }
        }
        self.families = totals;
    }

    /// Per family, what its live processes held at their reads and mapped
    /// since.
    fn family_growth(&self, live: &[Live]) -> HashMap<u64, Growth> {
        let mut growth: HashMap<u64, Growth> = HashMap::new();
        for p in live {
            let g = self.grown(p);
            let base = self.baselines.get(&p.pid).map(|b| kinds(&b.rss));
            let sum = growth.entry(p.family).or_default();
            for k in 0..3 {
                sum.grown[k] += g[k];
                sum.base[k] += base.map_or(0.0, |b| b[k]);
            }
        }
        growth
    }

    /// A process worth reading alone now: in the family whose file and
    /// shmem RSS grew most since its last probe, by at least
    /// `PROBE_GROWTH_SHARE` of the tree's PSS at the last full pass and by
    /// as much as it had grown from that pass to its last probe (so probes
    /// thin out as the growth goes on), or by `PROBE_AFTER_JOIN_SHARE` if a
    /// process joined it since, the process that grew most since its own
    /// read.
    ///
    /// What a family's new pages add to the tree changes as its processes
    /// come to map the same pages, and is unknown until two passes over the
    /// same processes measured it (`learn_growth`): a burst of new
    /// connections starts growth that no pass has seen. One process's read
    /// tells it: its PSS gained since its last read, over the RSS it
    /// gained, counts both the pages it alone maps and what the others
    /// took of its older pages. On PostgreSQL's backends under pgbench,
    /// the one that grew most showed within 0.05 of the family's share.
    pub fn probe_due(&self, live: &[Live]) -> Option<Live> {
        let grown = self.family_growth(live);
        let tree_pss: f64 = self.families.values().flat_map(|f| f.pss).sum();
        let mut best: Option<(f64, u64)> = None;
        for (id, growth) in &grown {
            if !self.families.contains_key(id) {
                continue;
            }
            let (since, g) = (
                self.probed.get(id).copied().unwrap_or_default(),
                growth.grown,
            );
            let (then, now) = (since[1] + since[2], g[1] + g[2]);
            let more = now - then;
            let need = if self.joined_families.contains(id) {
                MIN_GROWTH_BYTES.max(PROBE_AFTER_JOIN_SHARE * tree_pss)
            } else {
                MIN_GROWTH_BYTES
                    .max(PROBE_GROWTH_SHARE * tree_pss)
                    .max(then)
            };
            if more > need && best.is_none_or(|(m, _)| more > m) {
                best = Some((more, *id));
            }
        }
        let (_, family) = best?;
        live.iter()
            .filter(|p| p.family == family && self.baselines.contains_key(&p.pid))
            .map(|p| {
                let g = self.grown(p);
                (g[1] + g[2], *p)
            })
            .filter(|(g, _)| *g > 0.0)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, p)| p)
    }

    /// Learns from a read of `p` alone (`probe_due`; `p` with the RSS read
    /// with it) what share of its family's pages mapped since the last full
    /// pass is new to the tree: the share of its own since its last read,
    /// carried over as `learn_growth` does.
    pub fn record_probe(&mut self, live: &[Live], p: &Live, rollup: &Rollup) {
        let Some(base) = self.baselines.get(&p.pid) else {
            return;
        };
        let now = Baseline::new(p, rollup, false, self.tick);
        let growth = self.family_growth(live)[&p.family];
        let (rss0, pss0) = (kinds(&base.rss), kinds(&base.pss));
        let (rss1, pss1) = (kinds(&now.rss), kinds(&now.pss));
        let learned = self.new_page_scale.entry(p.family).or_default();
        for k in 1..3 {
            let own = rss1[k] - rss0[k];
            let (r0, g) = (growth.base[k], growth.grown[k]);
            if own <= MIN_GROWTH_BYTES || r0 <= 0.0 || g <= 0.0 {
                continue;
            }
            let share = ((pss1[k] - pss0[k]) / own).clamp(0.0, 1.0);
            // The scale at which the family's growth so far adds `share`.
            learned[k] = Some(share * g / ((r0 + g) / r0).ln());
        }
        self.probed.insert(p.family, growth.grown);
        self.joined_families.remove(&p.family);
    }

    /// Per kind, the share of the family's newly mapped pages (`grown`,
    /// summed over its processes) that is new to the tree, where learned:
    /// the learned share at RSS `R` is `scale / R`, so growing from `R0` to
    /// `R0 + grown` adds `scale * ln((R0 + grown) / R0)`.
    fn new_share(&self, family: u64, growth: &Growth) -> [Option<f64>; 3] {
        let Some(scale) = self.new_page_scale.get(&family) else {
            return [None; 3];
        };
        let mut share = [None; 3];
        for k in 1..3 {
            let (r0, g) = (growth.base[k], growth.grown[k]);
            share[k] = scale[k].filter(|_| r0 > 0.0).map(|c| {
                if g <= 0.0 {
                    (c / r0).min(1.0)
                } else {
                    (c * ((r0 + g) / r0).ln() / g).clamp(0.0, 1.0)
                }
            });
        }
        share
    }

    /// Whether the last full pass no longer describes the tree well, so the
    /// next one should come early: a process joined or left since (sharing
    /// moved between processes in ways the cheap counters cannot show), or
    /// the tree's anonymous and shmem RSS moved by more than `DRIFT_SHARE`
    /// of what the pass saw, summed over processes (a process that grows
    /// fast is where a stale read errs most).
    pub fn stale(&self, live: &[Live]) -> bool {
        if self.baselines.is_empty() {
            return false;
        }
        if !self.departed.is_empty() || self.baselines.values().any(|b| b.joined) {
            return true;
        }
        let (mut moved, mut seen) = (0u64, 0u64);
        for Live { pid, rss, .. } in live {
            let Some(b) = self.baselines.get(pid) else {
                return true;
            };
            moved += rss.anon_bytes.abs_diff(b.rss.anon_bytes)
                + rss.shmem_bytes.abs_diff(b.rss.shmem_bytes);
            seen += b.rss.total_bytes();
        }
        moved as f64 > DRIFT_SHARE * seen as f64
    }

    /// Whether the tree changed since the last full pass in a way the
    /// estimate cannot follow, so the sampler keeps budget in reserve for a
    /// full pass right then:
    /// - two or more processes joined, holding more than `SHAKEN_SHARE` of
    ///   the tree's RSS (a burst of workers or connections): what newcomers
    ///   share only among themselves is new to the tree, what they share
    ///   with older processes is not, and a newcomer's read alone does not
    ///   tell the two apart. One newcomer alone is followed well by its
    ///   own read;
    /// - processes left holding, of pages others map too, more than
    ///   `SHAKEN_SHARE` of what the survivors held at the pass (a shutdown):
    ///   what leavers shared among themselves goes with them, and the rest
    ///   passes to survivors that may not map it.
    pub fn shaken(&self, live: &[Live]) -> bool {
        if self.baselines.is_empty() {
            return false;
        }
        let (mut joiners, mut joined, mut all) = (0, 0u64, 0u64);
        for p in live {
            let total = p.rss.total_bytes();
            all += total;
            if self.baselines.get(&p.pid).is_none_or(|b| b.joined) {
                joiners += 1;
                joined += total;
            }
        }
        let left: f64 = self
            .departed
            .values()
            .flatten()
            .map(|(shared, _)| shared.iter().sum::<f64>())
            .sum();
        let survivors: f64 = self
            .baselines
            .values()
            .filter(|b| !b.joined)
            .map(|b| b.pss.total_bytes() as f64)
            .sum();
        (joiners >= 2 && joined as f64 > SHAKEN_SHARE * all as f64)
            || left > SHAKEN_SHARE * survivors
    }

    /// Whether `pid` has no read since the last full pass began: a process
    /// that joined the tree since.
    pub fn unread(&self, pid: i32) -> bool {
        !self.baselines.contains_key(&pid)
    }

    /// Remembers a read of `pid` made alone, the first time it was seen
    /// after the last full pass.
    pub fn record_joined(&mut self, p: &Live, rollup: &Rollup) {
        self.new_page_scale.remove(&p.family);
        self.joined_families.insert(p.family);
        self.baselines
            .insert(p.pid, Baseline::new(p, rollup, true, self.tick));
    }

    /// Forgets processes that are gone (their pids may be reused); what
    /// they held of shared pages passes to their family.
    ///
    /// Call once per tick, first: it counts ticks and notes when each
    /// process was first seen, and its RSS then.
    pub fn retain(&mut self, live: &[Live]) {
        self.tick += 1;
        for p in live {
            self.first_seen.entry(p.pid).or_insert((self.tick, p.rss));
        }
        let live: HashSet<i32> = live.iter().map(|p| p.pid).collect();
        self.first_seen.retain(|pid, _| live.contains(pid));
        let departed = &mut self.departed;
        self.baselines.retain(|pid, b| {
            let alive = live.contains(pid);
            // A process that joined since the last full pass took its shared
            // part from the others; leaving, it gives it back: no change.
            if !alive && !b.joined {
                departed
                    .entry(b.family)
                    .or_default()
                    .push((b.shared(), b.other_mappers()));
            }
            alive
        });
    }

    /// PSS of every live process, split by kind, with where it came from.
    pub fn estimate(&self, live: &[Live]) -> Vec<(RssParts, PssSource)> {
        let grown = self.family_growth(live);
        let own: Vec<Alone> = live
            .iter()
            .map(|p| self.estimate_alone(p, self.new_share(p.family, &grown[&p.family])))
            .collect();
        let mut est: Vec<[f64; 3]> = own.iter().map(|a| a.pss).collect();
        // What processes that left held of shared pages goes to the rest of
        // their family, in proportion to what each can still take (RSS not
        // counted in its PSS). Where those pages had more mappers than the
        // family had (a library every program maps), the mappers outside
        // it take their part: of n family members left and o mappers
        // outside, the family gets n/(n+o).
        for (family, left) in &self.departed {
            let members: Vec<usize> = (0..live.len())
                .filter(|&i| live[i].family == *family)
                .collect();
            let n = members.len() as f64;
            let had = self.families.get(family).map_or(1, |f| f.pids.len()) as f64;
            let mut passed = [0.0; 3];
            for (shared, others) in left {
                for k in 0..3 {
                    let outside = (others[k] - (had - 1.0)).max(0.0);
                    passed[k] += shared[k] * n / (n + outside).max(1.0);
                }
            }
            for k in 0..3 {
                let room: Vec<f64> = members
                    .iter()
                    .map(|&i| (kinds(&live[i].rss)[k] - est[i][k]).max(0.0))
                    .collect();
                let total: f64 = room.iter().sum();
                if passed[k] <= 0.0 || total <= 0.0 {
                    continue;
                }
                let gain = passed[k].min(total);
                for (&i, r) in members.iter().zip(&room) {
                    est[i][k] += gain * r / total;
                }
            }
        }
        // What a newcomer shares with its family it took from the members
        // read before it was first seen, in proportion to their PSS: a read
        // made while it lived already divided their pages with it.
        let mut takers: Vec<(u64, usize)> = (0..live.len())
            .filter(|&i| own[i].taken.iter().any(|&t| t > 0.0))
            .map(|i| {
                (
                    self.first_seen
                        .get(&live[i].pid)
                        .map_or(self.tick, |seen| seen.0),
                    i,
                )
            })
            .collect();
        takers.sort_unstable();
        for (seen, t) in takers {
            let givers: Vec<usize> = (0..live.len())
                .filter(|&i| {
                    i != t
                        && live[i].family == live[t].family
                        && own[i].read_tick.is_some_and(|read| read < seen)
                })
                .collect();
            if givers.is_empty() {
                // Its family was read after it came: the reads already
                // divided their pages with it.
                continue;
            }
            #[allow(clippy::needless_range_loop)] // k indexes est rows of several processes
            for k in 0..3 {
                let held: f64 = givers.iter().map(|&i| est[i][k]).sum();
                let loss = own[t].taken[k].min(held);
                if loss > 0.0 {
                    for &i in &givers {
                        est[i][k] -= loss * est[i][k] / held;
                    }
                }
                // What the givers no longer held (others took it first) it
                // cannot have either.
                est[t][k] = (est[t][k] - (own[t].taken[k] - loss)).max(0.0);
            }
        }
        est.into_iter()
            .zip(own)
            .map(|(est, alone)| (parts_of(est), alone.source))
            .collect()
    }

    /// What `p` mapped since the last full pass, by kind: its growth since
    /// its own read; all of it for a child of its own family never read.
    fn grown(&self, p: &Live) -> [f64; 3] {
        let rss = kinds(&p.rss);
        if let Some(base) = self.baselines.get(&p.pid) {
            let base = kinds(&base.rss);
            return [
                0.0,
                (rss[1] - base[1]).max(0.0),
                (rss[2] - base[2]).max(0.0),
            ];
        }
        // A forked child never read: what it mapped since first seen (what
        // it had then it took from its family, see `estimate_alone`).
        match (self.baselines.get(&p.ppid), self.first_seen.get(&p.pid)) {
            (Some(parent), Some((_, first))) if parent.family == p.family => {
                let first = kinds(first);
                [
                    0.0,
                    (rss[1] - first[1]).max(0.0),
                    (rss[2] - first[2]).max(0.0),
                ]
            }
            _ => [0.0; 3],
        }
    }

    /// One process's PSS from its own read or its parent's, and what of it
    /// was taken from the rest of its family since the last full pass.
    /// `new_share`: per kind, the share of pages mapped since that is new
    /// to the tree, where the family's growth is learned.
    fn estimate_alone(&self, p: &Live, new_share: [Option<f64>; 3]) -> Alone {
        let rss = kinds(&p.rss);
        if let Some(base) = self.baselines.get(&p.pid) {
            let shares = kinds_of(&Shares::of(&base.rss, &base.pss));
            let (base_rss, base_pss) = (kinds(&base.rss), kinds(&base.pss));
            let mut pss = [0.0; 3];
            for k in 0..3 {
                let grown = rss[k] - base_rss[k];
                // Anon that appeared or went is the process's own; file and
                // shmem pages it mapped since count at the share of them
                // that is new to the tree, else at its own share; pages it
                // dropped at its own share.
                pss[k] = if k == 0 {
                    base_pss[k] + grown
                } else if grown >= 0.0 {
                    base_pss[k] + new_share[k].unwrap_or(shares[k]) * grown
                } else {
                    shares[k] * rss[k]
                }
                .clamp(0.0, rss[k]);
            }
            // A process that joined since the last full pass took its
            // shared part from the others.
            let taken = if base.joined { base.shared() } else { [0.0; 3] };
            return Alone {
                pss,
                source: PssSource::Own,
                read_tick: Some(base.read_tick),
                taken,
            };
        }
        if let Some(parent) = self.baselines.get(&p.ppid) {
            // At most as much anon as the parent had can be pages inherited
            // copy-on-write (at the parent's share); anon beyond that the
            // child touched itself: private, in full.
            // A parent read while the child lived divided with it only pages
            // it shares: its exclusive ones the child does not map.
            let read_since = self
                .first_seen
                .get(&p.pid)
                .is_some_and(|seen| parent.read_tick >= seen.0);
            let (shares, inheritable) = if read_since {
                let anon =
                    parent.rss.anon_bytes - parent.exclusive.anon_bytes.min(parent.rss.anon_bytes);
                (parent.shared_shares(), anon)
            } else {
                (
                    kinds_of(&Shares::of(&parent.rss, &parent.pss)),
                    parent.rss.anon_bytes,
                )
            };
            let inherited = rss[0].min(inheritable as f64);
            let pss = [
                inherited * shares[0] + (rss[0] - inherited),
                rss[1] * shares[1],
                rss[2] * shares[2],
            ];
            // A child of the same program was forked, not exec'd: what it
            // inherited and the libraries and shared memory it maps, its
            // parent's family maps too, so its part of them is taken from
            // the family. New to the tree: its own anon, and of what it
            // mapped since, what the family's growth showed to be new.
            let taken = if p.family == parent.family {
                // What it mapped since it was first seen (`grown`).
                let since = self.grown(p);
                let new = [
                    rss[0] - inherited,
                    since[1] * new_share[1].unwrap_or(shares[1]),
                    since[2] * new_share[2].unwrap_or(shares[2]),
                ];
                std::array::from_fn(|k| (pss[k] - new[k]).max(0.0))
            } else {
                [0.0; 3]
            };
            return Alone {
                pss,
                source: PssSource::Parent,
                read_tick: None,
                taken,
            };
        }
        let (pss, source) = match self.tree_shares {
            Some(shares) => (kinds(&shares.split(&p.rss)), PssSource::Tree),
            None => (rss, PssSource::Rss),
        };
        Alone {
            pss,
            source,
            read_tick: None,
            taken: [0.0; 3],
        }
    }
}

/// One process's PSS before the family's changes are spread.
struct Alone {
    pss: [f64; 3],
    source: PssSource,
    /// The tick of its read, if it has one.
    read_tick: Option<u64>,
    /// What of `pss` it took from its family since the last full pass.
    taken: [f64; 3],
}

fn kinds_of(shares: &Shares) -> [f64; 3] {
    [shares.anon, shares.file, shares.shmem]
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;
    const SERVER: u64 = 1;

    fn parts(anon: u64, file: u64, shmem: u64) -> RssParts {
        RssParts {
            anon_bytes: anon * MIB,
            file_bytes: file * MIB,
            shmem_bytes: shmem * MIB,
        }
    }

    fn rollup_uss(pss: RssParts, uss_mib: u64) -> Rollup {
        Rollup {
            pss_bytes: pss.total_bytes(),
            uss_bytes: uss_mib * MIB,
            swap_bytes: 0,
            rss_bytes: 0,
            pss_parts: Some(pss),
        }
    }

    fn rollup(pss: RssParts) -> Rollup {
        rollup_uss(pss, 0)
    }

    /// Processes as `retain` sees them, with no RSS yet.
    fn pids(pids: &[i32]) -> Vec<Live> {
        pids.iter()
            .map(|&pid| live(pid, 1, RssParts::default()))
            .collect()
    }

    /// A process of `family` as read: its parent is the tree's root.
    fn at(pid: i32, family: u64, rss: RssParts) -> Live {
        Live {
            pid,
            ppid: 1,
            family,
            rss,
        }
    }

    fn live(pid: i32, ppid: i32, rss: RssParts) -> Live {
        Live {
            pid,
            ppid,
            family: SERVER,
            rss,
        }
    }

    /// `bytes` within an eighth of a MiB of `mib`.
    fn assert_near_mib(bytes: u64, mib: u64) {
        assert!(
            bytes.abs_diff(mib * MIB) < MIB / 8,
            "{} MiB, not {mib}",
            bytes as f64 / MIB as f64
        );
    }

    /// The tree's estimated PSS.
    fn total(est: &PssEstimator, tree: &[Live]) -> u64 {
        est.estimate(tree)
            .iter()
            .map(|(p, _)| p.total_bytes())
            .sum()
    }

    fn one(est: &PssEstimator, pid: i32, ppid: i32, rss: RssParts) -> u64 {
        total(est, &[live(pid, ppid, rss)])
    }

    #[test]
    fn grown_anon_counts_in_full_and_shared_parts_keep_their_share() {
        let mut est = PssEstimator::default();
        // A forked child: 40 MiB anon shared copy-on-write with its parent
        // (PSS 20), 10 MiB of libraries shared by 10, 100 MiB of shm by 4.
        est.record(
            &at(7, SERVER, parts(40, 10, 100)),
            &rollup(parts(20, 1, 25)),
        );
        est.full_read_done();
        assert_eq!(one(&est, 7, 1, parts(40, 10, 100)), 46 * MIB);
        // It allocates 30 MiB and touches another 40 MiB of the shm.
        assert_eq!(one(&est, 7, 1, parts(70, 10, 140)), (50 + 1 + 35) * MIB);
        // Freeing more than it ever had cannot go below zero.
        assert_eq!(one(&est, 7, 1, parts(0, 10, 100)), 26 * MIB);
    }

    #[test]
    fn an_unread_childs_anon_beyond_its_parents_counts_in_full() {
        let mut est = PssEstimator::default();
        // The parent's 10 MiB anon is shared with its children (share 0.2).
        est.record(&at(1, SERVER, parts(10, 0, 0)), &rollup(parts(2, 0, 0)));
        est.full_read_done();
        // A child that touched 64 MiB of its own on top of what it inherited.
        assert_eq!(
            est.estimate(&[live(9, 1, parts(74, 0, 0))])[0].0,
            parts(66, 0, 0)
        );
    }

    #[test]
    fn unread_child_borrows_parent_then_tree_then_full() {
        let mut est = PssEstimator::default();
        assert_eq!(one(&est, 9, 1, parts(8, 8, 0)), 16 * MIB);
        est.record(&at(1, SERVER, parts(10, 10, 0)), &rollup(parts(10, 5, 0)));
        est.record(&at(2, SERVER, parts(10, 10, 0)), &rollup(parts(10, 1, 0)));
        est.full_read_done();
        // Child of 1: anon in full, files at half.
        let child = est.estimate(&[live(9, 1, parts(8, 8, 0))]);
        assert_eq!(child[0], (parts(8, 4, 0), PssSource::Parent));
        // Orphan: the tree's shares (files 6 of 20).
        assert_eq!(one(&est, 9, 99, parts(8, 10, 0)), 11 * MIB);
        est.retain(&pids(&[2]));
        est.record(&at(2, SERVER, parts(10, 10, 0)), &rollup(parts(10, 1, 0)));
        est.full_read_done();
        assert_eq!(one(&est, 9, 1, parts(8, 10, 0)), 9 * MIB);
    }

    #[test]
    fn a_joining_worker_adds_only_its_exclusive_pages_to_the_tree() {
        let mut est = PssEstimator::default();
        // A server and one worker share 100 MiB of shm and 20 MiB of heap
        // copy-on-write: 50 + 10 each; the worker has 5 MiB of its own.
        est.retain(&pids(&[1, 2]));
        est.record(
            &at(1, SERVER, parts(20, 0, 100)),
            &rollup_uss(parts(10, 0, 50), 0),
        );
        est.record(
            &at(2, SERVER, parts(25, 0, 100)),
            &rollup_uss(parts(15, 0, 50), 5),
        );
        est.full_read_done();
        let before = [live(1, 0, parts(20, 0, 100)), live(2, 1, parts(25, 0, 100))];
        assert_eq!(total(&est, &before), 125 * MIB);
        // A second worker forks, maps the same shm and heap and 3 MiB of
        // its own: its read says 20/3 + 3 anon, 100/3 shm, USS 3.
        let third = parts(20 + 3, 0, 100);
        let read = rollup_uss(
            RssParts {
                anon_bytes: 20 * MIB / 3 + 3 * MIB,
                file_bytes: 0,
                shmem_bytes: 100 * MIB / 3,
            },
            3,
        );
        est.retain(&pids(&[1, 2, 3]));
        est.record_joined(&at(3, SERVER, third), &read);
        assert!(!est.unread(3));
        let after = [before[0], before[1], live(3, 1, third)];
        let tree = total(&est, &after);
        assert_near_mib(tree, 128);
    }

    #[test]
    fn a_leaving_worker_leaves_its_shared_part_to_its_family_not_to_others() {
        let mut est = PssEstimator::default();
        // Server and worker share 100 MiB of shm; a shell (another program)
        // shares nothing with them.
        est.record(
            &at(1, SERVER, parts(10, 0, 100)),
            &rollup_uss(parts(10, 0, 50), 10),
        );
        est.record(
            &at(2, SERVER, parts(10, 0, 100)),
            &rollup_uss(parts(10, 0, 50), 10),
        );
        est.record(&at(3, 7, parts(1, 0, 0)), &rollup_uss(parts(1, 0, 0), 1));
        est.full_read_done();
        est.retain(&pids(&[1, 3]));
        let shell = Live {
            family: 7,
            ..live(3, 0, parts(1, 0, 0))
        };
        let tree = est.estimate(&[live(1, 0, parts(10, 0, 100)), shell]);
        // The server now holds the whole shm; the shell gains nothing.
        assert_eq!(tree[0].0, parts(10, 0, 100));
        assert_eq!(tree[1].0, parts(1, 0, 0));
        // With the whole family gone, nothing is passed on.
        est.retain(&pids(&[3]));
        assert_eq!(total(&est, &[shell]), MIB);
    }

    #[test]
    fn a_worker_that_joins_and_leaves_between_full_reads_changes_nothing() {
        let mut est = PssEstimator::default();
        est.record(
            &at(1, SERVER, parts(10, 0, 100)),
            &rollup_uss(parts(10, 0, 100), 10),
        );
        est.full_read_done();
        est.record_joined(
            &at(2, SERVER, parts(1, 0, 100)),
            &rollup_uss(parts(1, 0, 50), 1),
        );
        est.retain(&pids(&[1]));
        assert_eq!(total(&est, &[live(1, 0, parts(10, 0, 100))]), 110 * MIB);
    }

    #[test]
    fn a_pass_goes_stale_when_the_tree_changes_or_moves() {
        let mut est = PssEstimator::default();
        assert!(!est.stale(&[live(1, 0, parts(10, 0, 100))]));
        est.record(&at(1, SERVER, parts(10, 0, 100)), &rollup(parts(10, 0, 50)));
        est.record(&at(2, SERVER, parts(10, 0, 100)), &rollup(parts(10, 0, 50)));
        est.full_read_done();
        let tree = |a: u64, b: u64| [live(1, 0, parts(10, 0, a)), live(2, 1, parts(10, 0, b))];
        assert!(!est.stale(&tree(100, 100)));
        // 20 MiB moved of 220 seen: under a tenth.
        assert!(!est.stale(&tree(110, 90)));
        assert!(est.stale(&tree(112, 89)));
        // A process joined, read alone or not yet.
        assert!(est.stale(&[
            tree(100, 100)[0],
            tree(100, 100)[1],
            live(3, 1, parts(1, 0, 0))
        ]));
        est.record_joined(&at(3, SERVER, parts(1, 0, 0)), &rollup(parts(1, 0, 0)));
        assert!(est.stale(&tree(100, 100)));
        // It left again: the pass describes the tree as before.
        est.retain(&pids(&[1, 2]));
        assert!(!est.stale(&tree(100, 100)));
        // One that the pass read left.
        est.retain(&pids(&[1]));
        assert!(est.stale(&tree(100, 100)[..1]));
        est.record(
            &at(1, SERVER, parts(10, 0, 100)),
            &rollup(parts(10, 0, 100)),
        );
        est.full_read_done();
        assert!(!est.stale(&tree(100, 100)[..1]));
    }

    #[test]
    fn a_burst_of_newcomers_or_a_shutdown_shakes_the_pass_one_process_does_not() {
        let mut est = PssEstimator::default();
        // A server and its 4 workers, 20 MiB RSS each, sharing 10 MiB of shm.
        let worker = |pid: i32| at(pid, SERVER, parts(5, 5, 10));
        for pid in 1..=5 {
            est.record(&worker(pid), &rollup_uss(parts(5, 1, 2), 5));
        }
        est.full_read_done();
        let old: Vec<Live> = (1..=5).map(worker).collect();
        assert!(!est.shaken(&old));
        // One connection joins, holding over a tenth of the tree: its own
        // read follows it.
        let with = |pids: std::ops::RangeInclusive<i32>| {
            let mut tree = old.clone();
            tree.extend(pids.map(worker));
            tree
        };
        assert!(est.stale(&with(6..=6)));
        assert!(!est.shaken(&with(6..=6)));
        // Two join: they may share pages only among themselves.
        assert!(est.shaken(&with(6..=7)));
        // Read alone when first seen, they still shake it.
        est.record_joined(&worker(6), &rollup_uss(parts(5, 1, 2), 5));
        est.record_joined(&worker(7), &rollup_uss(parts(5, 1, 2), 5));
        assert!(est.shaken(&with(6..=7)));
        // Two small ones (a tenth of the tree between them) do not.
        let small = |pid: i32| at(pid, SERVER, parts(1, 1, 0));
        let mut tree = old.clone();
        tree.extend([small(8), small(9)]);
        est.retain(&tree);
        assert!(!est.shaken(&tree));

        // Shutdown: leavers held 3 MiB each of pages others map (PSS 8 of
        // which 5 exclusive). One of five leaving is 3 of the survivors' 32.
        est.retain(&old[..4]);
        assert!(!est.shaken(&old[..4]));
        est.retain(&old[..3]);
        assert!(est.shaken(&old[..3]));
    }

    #[test]
    fn a_reads_uss_is_split_by_kind_within_what_its_pss_and_rss_allow() {
        // PostgreSQL's checkpointer at shutdown: 124 MiB of shared buffers
        // nobody else touched (PSS = RSS), anon and files shared with the
        // postmaster. Its USS is mostly the shmem, not its anon.
        let split = exclusive_parts(&parts(7, 5, 125), &parts(4, 2, 124), 124 * MIB);
        assert_eq!(split.shmem_bytes, 123 * MIB);
        assert_eq!(split.anon_bytes, MIB);
        assert_eq!(split.file_bytes, 0);
        // Without a bound binding, the USS goes to anon first, then to file
        // and shmem in proportion to what they can still take.
        let split = exclusive_parts(&parts(40, 20, 20), &parts(20, 6, 2), 24 * MIB);
        assert_eq!(split, parts(20, 3, 1));
        // Never more of a kind than its PSS, however large the USS read.
        let split = exclusive_parts(&parts(4, 4, 4), &parts(2, 2, 2), 100 * MIB);
        assert_eq!(split, parts(2, 2, 2));
    }

    #[test]
    fn a_failed_pass_keeps_the_last_complete_one() {
        let mut est = PssEstimator::default();
        est.record(&at(1, SERVER, parts(10, 0, 0)), &rollup(parts(5, 0, 0)));
        est.full_read_done();
        est.record(&at(1, SERVER, parts(10, 0, 0)), &rollup(parts(10, 0, 0)));
        est.full_read_failed();
        assert_eq!(one(&est, 1, 0, parts(10, 0, 0)), 5 * MIB);
    }

    #[test]
    fn without_pss_parts_every_part_takes_the_overall_share() {
        let mut est = PssEstimator::default();
        let old_kernel = Rollup {
            pss_bytes: 30 * MIB,
            uss_bytes: 0,
            swap_bytes: 0,
            rss_bytes: 60 * MIB,
            pss_parts: None,
        };
        est.record(&at(3, SERVER, parts(20, 40, 0)), &old_kernel);
        est.full_read_done();
        assert_eq!(one(&est, 3, 1, parts(20, 40, 0)), 30 * MIB);
        assert_eq!(one(&est, 3, 1, parts(30, 40, 0)), 40 * MIB);
    }

    /// A parent with 6 MiB of heap, read once, and four children forked
    /// from it that share that heap and touched 1 MiB each of their own,
    /// not read yet: first seen after the parent's read, or before it.
    fn forked(children_seen_before_read: bool) -> (PssEstimator, Vec<Live>) {
        let mut est = PssEstimator::default();
        let all = [1, 10, 11, 12, 13];
        // Read after the fork, the parent's read divides the heap 5 ways.
        let (seen, sharers) = if children_seen_before_read {
            (&all[..], 5)
        } else {
            (&all[..1], 1)
        };
        est.retain(&pids(seen));
        let heap = RssParts {
            anon_bytes: 6 * MIB / sharers,
            ..RssParts::default()
        };
        est.record(&at(1, SERVER, parts(6, 0, 0)), &rollup(heap));
        est.full_read_done();
        est.retain(&pids(&all));
        let tree: Vec<Live> = std::iter::once(live(1, 0, parts(6, 0, 0)))
            .chain(all[1..].iter().map(|&pid| live(pid, 1, parts(7, 0, 0))))
            .collect();
        (est, tree)
    }

    #[test]
    fn unread_forked_children_share_their_parents_heap_not_copy_it() {
        // Read before the fork: the parent's heap was its own; the children
        // take their part of it from the parent, and add their own 1 MiB.
        let (est, tree) = forked(false);
        let sum = total(&est, &tree);
        assert_near_mib(sum, 10);
    }

    #[test]
    fn a_read_made_after_the_fork_already_divided_the_heap() {
        let (est, tree) = forked(true);
        let sum = total(&est, &tree);
        // The parent's 1.2 MiB read after the fork, each child 1.2 + 1.
        assert_near_mib(sum, 10);
    }

    #[test]
    fn an_unread_child_of_a_parent_read_since_shares_only_its_shared_pages() {
        let mut est = PssEstimator::default();
        // The child is seen, then its parent read: 4 MiB of files only it
        // maps, 6 MiB mapped by it, the child and one other program.
        est.retain(&pids(&[1, 9]));
        est.record_joined(
            &at(1, SERVER, parts(0, 10, 0)),
            &rollup_uss(parts(0, 6, 0), 4),
        );
        // The child maps the 6 shared MiB, at a third each; not the
        // parent's own 4.
        let child = est.estimate(&[live(9, 1, parts(0, 6, 0))]);
        assert_eq!(child[0], (parts(0, 2, 0), PssSource::Parent));
    }

    #[test]
    fn a_probe_of_the_process_that_grew_most_tells_its_familys_new_pages() {
        let mut est = PssEstimator::default();
        // A server and two workers map the same 10 MiB of shm (a third
        // each).
        let at_pass: Vec<Live> = (1..=3)
            .map(|pid| at(pid, SERVER, parts(0, 0, 10)))
            .collect();
        est.retain(&at_pass);
        for p in &at_pass {
            est.record(
                p,
                &rollup(RssParts {
                    shmem_bytes: 10 * MIB / 3,
                    ..RssParts::default()
                }),
            );
        }
        est.full_read_done();
        assert_eq!(est.probe_due(&at_pass), None);
        // Each worker then maps 20 MiB more: 10 only it maps, 10 the
        // other maps too. The tree's shm grew from 10 to 40 MiB.
        let grown = [
            at_pass[0],
            at(2, SERVER, parts(0, 0, 30)),
            at(3, SERVER, parts(0, 0, 30)),
        ];
        est.retain(&grown);
        let guessed = total(&est, &grown);
        assert!(guessed < 25 * MIB, "{}", guessed as f64 / MIB as f64);
        let probed = est.probe_due(&grown).expect("a probe is due");
        assert!(probed.pid == 2 || probed.pid == 3);
        // Its read: a third of 10, half of 10, all of 10.
        let read = RssParts {
            shmem_bytes: 10 * MIB / 3 + 5 * MIB + 10 * MIB,
            ..RssParts::default()
        };
        est.record_probe(&grown, &probed, &rollup(read));
        let learned = total(&est, &grown);
        assert_near_mib(learned, 40);
        // Not again until the family grows as much once more.
        assert_eq!(est.probe_due(&grown), None);
    }

    /// Two passes over a server and a worker whose shm RSS doubles from
    /// 100 to 200 MiB while their PSS goes from 20 to 40.
    fn grown_once(pids_change: bool) -> PssEstimator {
        let mut est = PssEstimator::default();
        for (rss, pss) in [(50, 10), (100, 20)] {
            est.retain(&pids(&[1, 2]));
            est.record(&at(1, SERVER, parts(0, 0, rss)), &rollup(parts(0, 0, pss)));
            let second = if pids_change && rss == 100 { 3 } else { 2 };
            est.record(
                &at(second, SERVER, parts(0, 0, rss)),
                &rollup(parts(0, 0, pss)),
            );
            est.full_read_done();
        }
        est
    }

    #[test]
    fn shared_pages_mapped_since_count_at_the_share_the_family_last_added() {
        let est = grown_once(false);
        // Learned: 0.2 of what they mapped was new at 150 MiB mapped. Both
        // map 50 MiB more: 0.2 * 150 * ln(300 / 200) = 12.2 MiB new.
        let tree = [live(1, 0, parts(0, 0, 150)), live(2, 1, parts(0, 0, 150))];
        let sum = total(&est, &tree) as f64 / MIB as f64;
        assert!((sum - 52.16).abs() < 0.05, "{sum}");
        // Their own shares (0.2) would have counted 20 MiB.
        let other = grown_once(true);
        let tree = [live(1, 0, parts(0, 0, 150)), live(3, 1, parts(0, 0, 150))];
        let sum = total(&other, &tree) as f64 / MIB as f64;
        assert!((sum - 60.0).abs() < 0.05, "{sum}");
    }
}

#[cfg(test)]
#[path = "pss_replay_tests.rs"]
mod replay_tests;
