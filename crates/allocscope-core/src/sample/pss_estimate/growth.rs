//! What a family's newly mapped file and shmem pages add to the tree:
//! learned between two full passes over the same processes
//! (`learn_growth`) or from one process read alone when the family grew
//! (`probe_due`, `record_probe`), and carried over as falling with the
//! family's RSS (`new_share`).

use super::baseline::{Baseline, Live};
use super::estimator::{FamilyPass, PssEstimator};
use super::parts::kinds;
use crate::sample::proc::Rollup;
use std::collections::HashMap;

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

/// A family's live processes: what they held at their reads (RSS by kind)
/// and what they mapped since (`PssEstimator::grown`).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Growth {
    pub(super) base: [f64; 3],
    pub(super) grown: [f64; 3],
}

impl PssEstimator {
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
    pub(super) fn learn_growth(&mut self) {
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
    pub(super) fn family_growth(&self, live: &[Live]) -> HashMap<u64, Growth> {
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
    pub(super) fn new_share(&self, family: u64, growth: &Growth) -> [Option<f64>; 3] {
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

    /// What `p` mapped since the last full pass, by kind: its growth since
    /// its own read; all of it for a child of its own family never read.
    pub(super) fn grown(&self, p: &Live) -> [f64; 3] {
        let since = if let Some(base) = self.baselines.get(&p.pid) {
            kinds(&base.rss)
        } else {
            // A forked child never read: what it mapped since first seen
            // (what it had then it took from its family, see
            // `estimate_alone`).
            match (self.baselines.get(&p.ppid), self.first_seen.get(&p.pid)) {
                (Some(parent), Some((_, first))) if parent.family == p.family => kinds(first),
                _ => return [0.0; 3],
            }
        };
        let rss = kinds(&p.rss);
        [
            0.0,
            (rss[1] - since[1]).max(0.0),
            (rss[2] - since[2]).max(0.0),
        ]
    }
}
