//! Every live process's PSS on a tick: each from its own last read, its
//! parent's or the tree's (`estimate_alone`), then what leavers held
//! passed to their family and what newcomers share taken from theirs.

use super::baseline::{Baseline, Live};
use super::estimator::PssEstimator;
use super::parts::{kinds, parts_of, Shares};
use crate::sample::proc::RssParts;

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
    /// A big tree's: the reads of a few processes of its class, scaled to
    /// its RSS (`ScaledPss`).
    Scaled,
}

impl PssEstimator {
    /// PSS of every live process, split by kind, with where it came from.
    pub fn estimate(&self, live: &[Live]) -> Vec<(RssParts, PssSource)> {
        let grown = self.family_growth(live);
        let own: Vec<Alone> = live
            .iter()
            .map(|p| self.estimate_alone(p, self.new_share(p.family, &grown[&p.family])))
            .collect();
        let mut est: Vec<[f64; 3]> = own.iter().map(|a| a.pss).collect();
        self.give_back_departed(live, &mut est);
        self.take_for_newcomers(live, &own, &mut est);
        est.into_iter()
            .zip(own)
            .map(|(est, alone)| (parts_of(est), alone.source))
            .collect()
    }

    /// What processes that left held of shared pages goes to the rest of
    /// their family, in proportion to what each can still take (RSS not
    /// counted in its PSS). Where those pages had more mappers than the
    /// family had (a library every program maps), the mappers outside it
    /// take their part: of n family members left and o mappers outside, the
    /// family gets n/(n+o).
    fn give_back_departed(&self, live: &[Live], est: &mut [[f64; 3]]) {
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
    }

    /// What a newcomer shares with its family it took from the members
    /// read before it was first seen, in proportion to their PSS: a read
    /// made while it lived already divided their pages with it. Newcomers
    /// take in the order they were first seen.
    fn take_for_newcomers(&self, live: &[Live], own: &[Alone], est: &mut [[f64; 3]]) {
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
    }

    /// One process's PSS from its own read or its parent's, and what of it
    /// was taken from the rest of its family since the last full pass.
    /// `new_share`: per kind, the share of pages mapped since that is new
    /// to the tree, where the family's growth is learned.
    fn estimate_alone(&self, p: &Live, new_share: [Option<f64>; 3]) -> Alone {
        if let Some(base) = self.baselines.get(&p.pid) {
            return by_own_read(p, base, new_share);
        }
        if let Some(parent) = self.baselines.get(&p.ppid) {
            return self.by_parent(p, parent, new_share);
        }
        let (pss, source) = match self.tree_shares {
            Some(shares) => (kinds(&shares.split(&p.rss)), PssSource::Tree),
            None => (kinds(&p.rss), PssSource::Rss),
        };
        Alone {
            pss,
            source,
            read_tick: None,
            taken: [0.0; 3],
        }
    }

    /// A process never read, from its parent's read `parent`.
    fn by_parent(&self, p: &Live, parent: &Baseline, new_share: [Option<f64>; 3]) -> Alone {
        let rss = kinds(&p.rss);
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
        Alone {
            pss,
            source: PssSource::Parent,
            read_tick: None,
            taken,
        }
    }
}

/// A process's PSS from its own last read `base`.
fn by_own_read(p: &Live, base: &Baseline, new_share: [Option<f64>; 3]) -> Alone {
    let rss = kinds(&p.rss);
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
    Alone {
        pss,
        source: PssSource::Own,
        read_tick: Some(base.read_tick),
        taken,
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
