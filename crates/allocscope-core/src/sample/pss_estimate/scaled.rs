//! PSS of a big tree from a few processes read at a time, scaled to the
//! processes like them. A full pass reads every process's smaps_rollup,
//! which walks its page tables: on a parent of 64 MiB forked 1,000 times,
//! 1-2.5 ms a process, seconds a pass, so the budget never afforded one
//! and every process was guessed from the first pass, made when the
//! parent was alone (-50% on the tree). There, the sampler reads a few
//! processes as the budget allows (`plan`: every class in turn, the one
//! staler and bigger first) and this scales them to the rest.
//!
//! A class is the processes of one program (family: forks of one another)
//! whose RSS is within a factor of two, and which are all parents of
//! others in the tree or all not: forked workers of one size, not a worker
//! that grew a private heap ten times theirs, nor the parent that forked
//! them. A parent is unlike its forks however close its RSS: what it wrote
//! after forking them is its alone, and read among a thousand children its
//! 8 MiB of it were lent to each of them in proportion to RSS (2,035 MiB
//! for a tree of 104). A read splits
//! a process's PSS by kind into what is its alone (`exclusive_parts`) and
//! its part of pages others map. The class's exclusive memory is taken in
//! the proportion to RSS its reads showed, and anon beyond what its reads
//! held counts in full (a worker read just after its fork, before it
//! filled its own heap, shows none of it). Its part of shared pages is a
//! read's shared part times the class's members at the read: n processes
//! mapping the same pages hold 1/n of each, so the product holds as
//! workers fork (a fork shares its parent's pages and adds nothing) or
//! exit, which a PSS/RSS ratio does not (it falls as 1/n). Reads made when
//! the class had other members count less (a read of the parent alone,
//! before it forked, says its heap is all its own).

use super::baseline::{exclusive_parts, Live};
use super::parts::{kinds, parts_of, ratio};
use crate::sample::proc::{Rollup, RssParts};
use foldhash::{HashMap, HashMapExt, HashSet};
use std::collections::VecDeque;

/// Reads kept per class: enough to cover members that differ within it,
/// few enough to follow it as it changes.
const READS_PER_CLASS: usize = 8;

/// Reads of a few processes of a big tree, by class, and the estimate
/// they give every live process.
#[derive(Debug, Default)]
pub struct ScaledPss {
    classes: HashMap<Class, ClassReads>,
    /// Per live pid, the tick of its last read.
    read_at: HashMap<i32, u64>,
    /// Ticks so far: calls to `retain`.
    tick: u64,
    /// Live processes at the last `retain`.
    last_live: usize,
}

/// Processes of one program whose RSS has the same power of two, parents
/// of others in the tree or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Class {
    family: u64,
    size_log2: u32,
    parent: bool,
}

impl Class {
    /// `p`'s class, `parents` the pids that some live process has as its
    /// parent.
    fn of(p: &Live, parents: &HashSet<i32>) -> Class {
        Class {
            family: p.family,
            size_log2: u64::BITS - p.rss.total_bytes().leading_zeros(),
            parent: parents.contains(&p.pid),
        }
    }
}

/// The pids that some process of `live` has as its parent.
fn parents(live: &[Live]) -> HashSet<i32> {
    live.iter().map(|p| p.ppid).collect()
}

#[derive(Debug, Default)]
struct ClassReads {
    reads: VecDeque<ClassRead>,
    last_tick: u64,
}

/// One read, by kind: its RSS, what of its PSS is its alone and what is
/// its part of pages others map, and how many processes its class had.
#[derive(Debug, Clone, Copy)]
struct ClassRead {
    rss: [f64; 3],
    exclusive: [f64; 3],
    shared: [f64; 3],
    members: f64,
}

/// A class's live members on a tick, and its RSS by kind.
#[derive(Debug, Default)]
struct Members {
    index: Vec<usize>,
    rss: [f64; 3],
}

impl ScaledPss {
    /// Forgets the reads of processes that are gone. Call once per tick,
    /// first: it counts ticks.
    pub fn retain(&mut self, live: &[Live]) {
        self.tick += 1;
        self.last_live = live.len();
        let pids: HashSet<i32> = live.iter().map(|p| p.pid).collect();
        self.read_at.retain(|pid, _| pids.contains(pid));
    }

    /// Whether `live` has fewer processes than the last tick: the tree is
    /// exiting. Its processes' figures are carried until looked at, so
    /// some of the members counted are gone, while a survivor read now
    /// holds a bigger part of what they shared: its read times the
    /// members would over-count the shared pages (+60% on a tree of 1,000
    /// exiting).
    pub fn shrinking(&self, live: &[Live]) -> bool {
        live.len() < self.last_live
    }

    /// Up to `most` processes to read, best first: one of each class in
    /// turn, classes never read first, then by how stale their last read
    /// is times their RSS; within a class, the process read longest ago.
    pub fn plan(&self, live: &[Live], most: usize) -> Vec<Live> {
        let mut classes: Vec<(bool, f64, Vec<usize>)> = group(live)
            .into_iter()
            .map(|(class, mut members)| {
                let rss: f64 = members.rss.iter().sum();
                let last = self.classes.get(&class).map(|c| c.last_tick);
                let score = last.map_or(rss, |t| (self.tick - t) as f64 * rss);
                members
                    .index
                    .sort_by_key(|&i| self.read_at.get(&live[i].pid).map_or(0, |t| t + 1));
                (last.is_none(), score, members.index)
            })
            .collect();
        classes.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.total_cmp(&a.1)));
        let mut plan = Vec::new();
        for round in 0.. {
            let before = plan.len();
            for (_, _, members) in &classes {
                if plan.len() == most {
                    return plan;
                }
                if let Some(&i) = members.get(round) {
                    plan.push(live[i]);
                }
            }
            if plan.len() == before {
                break;
            }
        }
        plan
    }

    /// Whether any process was read: with none, an estimate would count
    /// every RSS in full.
    pub fn has_reads(&self) -> bool {
        self.classes.values().any(|c| !c.reads.is_empty())
    }

    /// How many classes the live processes fall in.
    pub fn classes(&self, live: &[Live]) -> usize {
        group(live).len()
    }

    /// Remembers a read of `p` (with the RSS read just after its rollup).
    pub fn record(&mut self, live: &[Live], p: &Live, rollup: &Rollup) {
        let parents = parents(live);
        let class = Class::of(p, &parents);
        let members = live
            .iter()
            .filter(|q| Class::of(q, &parents) == class)
            .count();
        let pss = rollup.pss_parts.unwrap_or_else(|| {
            let share = ratio(rollup.pss_bytes as f64, rollup.rss_bytes as f64);
            parts_of(kinds(&p.rss).map(|bytes| bytes * share))
        });
        let exclusive = kinds(&exclusive_parts(&p.rss, &pss, rollup.uss_bytes));
        let pss = kinds(&pss);
        let read = ClassRead {
            rss: kinds(&p.rss),
            exclusive,
            shared: std::array::from_fn(|k| (pss[k] - exclusive[k]).max(0.0)),
            members: members.max(1) as f64,
        };
        let reads = self.classes.entry(class).or_default();
        reads.reads.push_back(read);
        if reads.reads.len() > READS_PER_CLASS {
            reads.reads.pop_front();
        }
        reads.last_tick = self.tick;
        self.read_at.insert(p.pid, self.tick);
    }

    /// Every live process's PSS by kind: its class's reads scaled to its
    /// RSS; a class never read takes its family's proportion of PSS to RSS,
    /// else the tree's, else counts its RSS in full.
    pub fn estimate(&self, live: &[Live]) -> Vec<RssParts> {
        let mut est: Vec<Option<[f64; 3]>> = vec![None; live.len()];
        let (mut family, mut tree) = (HashMap::new(), ([0.0; 3], [0.0; 3]));
        for (class, members) in group(live) {
            let Some(reads) = self.classes.get(&class).filter(|c| !c.reads.is_empty()) else {
                continue;
            };
            // Anon beyond what the reads held is the process's own (it
            // grew its heap since, or was read just after its fork).
            let n = members.index.len() as f64;
            let reference = reference_anon(&reads.reads, n);
            let scalable = |rss: [f64; 3]| [rss[0].min(reference), rss[1], rss[2]];
            let mut base = [0.0; 3];
            for &i in &members.index {
                let s = scalable(kinds(&live[i].rss));
                for k in 0..3 {
                    base[k] += s[k];
                }
            }
            let per_rss = scale(&reads.reads, n, base);
            let sums: &mut ([f64; 3], [f64; 3]) = family.entry(class.family).or_default();
            for &i in &members.index {
                let rss = kinds(&live[i].rss);
                let s = scalable(rss);
                let pss: [f64; 3] =
                    std::array::from_fn(|k| (s[k] * per_rss[k] + rss[k] - s[k]).min(rss[k]));
                for k in 0..3 {
                    sums.0[k] += pss[k];
                    sums.1[k] += rss[k];
                    tree.0[k] += pss[k];
                    tree.1[k] += rss[k];
                }
                est[i] = Some(pss);
            }
        }
        let proportion = |(pss, rss): &([f64; 3], [f64; 3])| -> [f64; 3] {
            std::array::from_fn(|k| ratio(pss[k], rss[k]))
        };
        live.iter()
            .zip(est)
            .map(|(p, est)| {
                let rss = kinds(&p.rss);
                parts_of(est.unwrap_or_else(|| {
                    let share = family
                        .get(&p.family)
                        .map(proportion)
                        .or_else(|| (tree.1.iter().sum::<f64>() > 0.0).then(|| proportion(&tree)))
                        .unwrap_or([1.0; 3]);
                    std::array::from_fn(|k| rss[k] * share[k])
                }))
            })
            .collect()
    }
}

/// The live processes by class.
fn group(live: &[Live]) -> HashMap<Class, Members> {
    let parents = parents(live);
    let mut classes: HashMap<Class, Members> = HashMap::new();
    for (i, p) in live.iter().enumerate() {
        let members = classes.entry(Class::of(p, &parents)).or_default();
        members.index.push(i);
        for (sum, bytes) in members.rss.iter_mut().zip(kinds(&p.rss)) {
            *sum += bytes;
        }
    }
    classes
}

/// How much a read weighs in a class of `n` members: the square of the
/// ratio of its class's member count then to `n`. A parent's read alone,
/// all its heap its own, weighs a millionth against a read among 1,000
/// workers, so it adds 0.03 MiB of exclusive heap to each rather than 32.
fn weight(read: &ClassRead, n: f64) -> f64 {
    (read.members.min(n) / read.members.max(n)).powi(2)
}

/// The anonymous RSS of the class's reads, on average.
fn reference_anon(reads: &VecDeque<ClassRead>, n: f64) -> f64 {
    let (sum, weights) = reads.iter().fold((0.0, 0.0), |(s, w), read| {
        let wr = weight(read, n);
        (s + wr * read.rss[0], w + wr)
    });
    sum / f64::max(weights, f64::MIN_POSITIVE)
}

/// Per kind, the PSS of a byte of the class's RSS `base` (of `n`
/// members): its exclusive share, plus its part of the shared pages the
/// reads showed (each read's shared part times the members then), at most
/// what the class can hold.
fn scale(reads: &VecDeque<ClassRead>, n: f64, base: [f64; 3]) -> [f64; 3] {
    let (mut weights, mut rss, mut exclusive, mut shared) = (0.0, [0.0; 3], [0.0; 3], [0.0; 3]);
    for read in reads {
        let w = weight(read, n);
        weights += w;
        for k in 0..3 {
            rss[k] += w * read.rss[k];
            exclusive[k] += w * read.exclusive[k];
            shared[k] += w * read.shared[k] * read.members;
        }
    }
    std::array::from_fn(|k| {
        let own = ratio(exclusive[k], rss[k]);
        if base[k] <= 0.0 {
            return own;
        }
        let union = (shared[k] / weights.max(f64::MIN_POSITIVE)).min((1.0 - own) * base[k]);
        own + union / base[k]
    })
}

#[cfg(test)]
mod tests;
