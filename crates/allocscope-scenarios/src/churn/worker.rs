//! The churn threads: each owns a shard of the working set, hands new
//! objects to others through bounded queues, evicts at random positions, and
//! follows the rotating hot set from one barrier-separated rotation to the next.

use super::args::ChurnArgs;
use crate::marker::mark;
use crate::Rng;
use anyhow::Context;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// What the threads leave behind: the working set (still allocated) and counts.
pub struct Outcome {
    pub shards: Vec<Shard>,
    pub peak_live_bytes: u64,
    pub ops: u64,
    /// --seconds ran out before --ops were done.
    pub stopped: bool,
}

/// Starts one thread per shard and waits for all; the shards come back
/// still allocated so the caller can report on them while they are live.
pub(crate) fn run_threads(args: &ChurnArgs) -> anyhow::Result<Outcome> {
    let mut senders = Vec::with_capacity(args.threads);
    let mut receivers = Vec::with_capacity(args.threads);
    for _ in 0..args.threads {
        let (tx, rx) = sync_channel(args.queue_depth);
        senders.push(tx);
        receivers.push(rx);
    }
    let deadline =
        (args.seconds > 0.0).then(|| Instant::now() + Duration::from_secs_f64(args.seconds));
    let shared = Shared {
        args,
        senders,
        barrier: Barrier::new(args.threads),
        live: Live {
            bytes: AtomicU64::new(0),
            peak: AtomicU64::new(0),
        },
        stop: AtomicBool::new(false),
        deadline,
        ops_done: AtomicU64::new(0),
    };
    let shards = std::thread::scope(|scope| -> anyhow::Result<Vec<Shard>> {
        let mut handles = Vec::with_capacity(args.threads);
        for (index, inbox) in receivers.into_iter().enumerate() {
            let shared = &shared;
            let handle = std::thread::Builder::new()
                .name(format!("churn-{index}"))
                .spawn_scoped(scope, move || worker(index, inbox, shared))
                .with_context(|| format!("starting churn thread {index}"))?;
            handles.push(handle);
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| anyhow::anyhow!("a churn thread panicked"))
            })
            .collect()
    })?;
    Ok(Outcome {
        shards,
        peak_live_bytes: shared.live.peak.load(Ordering::Relaxed),
        ops: shared.ops_done.load(Ordering::Relaxed),
        stopped: shared.stop.load(Ordering::Relaxed),
    })
}

/// Each thread's share of the live data during `rotation`: the hot set is
/// `hot` consecutive threads starting at `rotation * hot` (mod threads), so
/// successive rotations hand the bulk of the data to different threads.
fn shares(rotation: u64, threads: usize, hot: usize, hot_percent: u64, live: u64) -> Vec<u64> {
    let cold = threads - hot;
    let hot_total = if cold == 0 {
        live
    } else {
        live * hot_percent / 100
    };
    let cold_each = if cold == 0 {
        0
    } else {
        (live - hot_total) / cold as u64
    };
    let hot_each = hot_total / hot as u64;
    let start = (rotation as usize).wrapping_mul(hot) % threads;
    let mut out = vec![cold_each; threads];
    for j in 0..hot {
        out[(start + j) % threads] = hot_each;
    }
    out
}

/// Live-byte accounting shared by all threads (objects in queues count too).
struct Live {
    bytes: AtomicU64,
    peak: AtomicU64,
}

impl Live {
    fn add(&self, n: u64) {
        let now = self.bytes.fetch_add(n, Ordering::Relaxed) + n;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }
    fn sub(&self, n: u64) {
        self.bytes.fetch_sub(n, Ordering::Relaxed);
    }
}

/// What the threads share: queues, phase barrier, accounting, the plan.
struct Shared<'a> {
    args: &'a ChurnArgs,
    senders: Vec<SyncSender<Vec<u8>>>,
    barrier: Barrier,
    live: Live,
    stop: AtomicBool,
    deadline: Option<Instant>,
    ops_done: AtomicU64,
}

/// One thread's shard of the working set.
pub struct Shard {
    pub objects: Vec<Vec<u8>>,
    pub bytes: u64,
    pub checksum: u64,
}

impl Shard {
    fn adopt(&mut self, object: Vec<u8>) {
        self.bytes += object.len() as u64;
        self.objects.push(object);
    }

    /// Frees objects at random positions until the shard fits `target`.
    fn evict_to(&mut self, target: u64, rng: &mut Rng, live: &Live) {
        while self.bytes > target && !self.objects.is_empty() {
            let at = rng.below(self.objects.len() as u64) as usize;
            let object = self.objects.swap_remove(at);
            self.checksum = self.checksum.wrapping_add(sum_ends(&object));
            self.bytes -= object.len() as u64;
            live.sub(object.len() as u64);
        }
    }
}

/// Reads the first and last byte: the fill must really have happened.
pub(crate) fn sum_ends(object: &[u8]) -> u64 {
    match (object.first(), object.last()) {
        (Some(a), Some(b)) => u64::from(*a) + u64::from(*b),
        _ => 0,
    }
}

/// Allocates and fills an object; the fill is never zero, so the allocation
/// is a malloc plus a write to every page (not a calloc that may skip them).
fn new_object(rng: &mut Rng) -> Vec<u8> {
    let size = rng.skewed_size();
    let fill = (rng.next_u64() as u8) | 1;
    vec![fill; size]
}

fn worker(index: usize, inbox: Receiver<Vec<u8>>, shared: &Shared) -> Shard {
    let args = shared.args;
    let threads = args.threads;
    let mut rng = Rng::new(args.seed ^ (index as u64 + 1).wrapping_mul(0x2545_F491_4F6C_DD1D));
    let mut shard = Shard {
        objects: Vec::new(),
        bytes: 0,
        checksum: 0,
    };
    let live_bytes = args.live_mib << 20;
    let per_phase = args.ops / threads as u64 / args.rotations;
    for rotation in 0..args.rotations {
        if index == 0 {
            mark(&format!("rotation-{}", rotation + 1));
        }
        let target = shares(
            rotation,
            threads,
            args.hot_threads,
            args.hot_percent,
            live_bytes,
        )[index];
        let mut done = 0;
        while done < per_phase {
            // Time check every 256 operations: reading the clock each time
            // would add a syscall-free but measurable cost to every object.
            if done % 256 == 0 && shared.deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            for object in inbox.try_iter() {
                shard.adopt(object);
            }
            let object = new_object(&mut rng);
            shared.live.add(object.len() as u64);
            if threads > 1 && rng.below(100) < args.handoff_percent {
                let to = (index + 1 + rng.below(threads as u64 - 1) as usize) % threads;
                if let Some(kept) = send(shared, to, object) {
                    shard.adopt(kept);
                }
            } else {
                shard.adopt(object);
            }
            shard.evict_to(target, &mut rng, &shared.live);
            done += 1;
        }
        shared.ops_done.fetch_add(done, Ordering::Relaxed);
        // Nobody sends after this barrier until the last one: drain what is
        // in flight so the rotation ends with every object in a shard. The
        // leader decides whether time is up; the second barrier publishes it.
        if shared.barrier.wait().is_leader() {
            let late = shared.deadline.is_some_and(|d| Instant::now() >= d);
            shared.stop.store(late, Ordering::Relaxed);
        }
        shared.barrier.wait();
        let stop = shared.stop.load(Ordering::Relaxed);
        for object in inbox.try_iter() {
            shard.adopt(object);
        }
        // Shrink to the next rotation's share now, before anyone grows into
        // it: otherwise the peak of live data depends on the scheduler.
        let next = if rotation + 1 < args.rotations && !stop {
            shares(
                rotation + 1,
                threads,
                args.hot_threads,
                args.hot_percent,
                live_bytes,
            )[index]
        } else {
            target
        };
        shard.evict_to(target.min(next), &mut rng, &shared.live);
        shared.barrier.wait();
        if stop {
            break;
        }
    }
    shard
}

/// Hands `object` to thread `to`; gives it back when that thread's queue is
/// full, so a descheduled thread (25 threads on a few cores) cannot pile up
/// objects in flight that are nobody's working set.
fn send(shared: &Shared, to: usize, object: Vec<u8>) -> Option<Vec<u8>> {
    match shared.senders[to].try_send(object) {
        Ok(()) => None,
        Err(TrySendError::Full(object)) => Some(object),
        // The receiver lives as long as the scope; if it is gone, so is the
        // object, which is then no longer live.
        Err(TrySendError::Disconnected(object)) => {
            shared.live.sub(object.len() as u64);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_sum_to_live_data_and_rotate_the_hot_set() {
        let live = 128 << 20;
        let first = shares(0, 25, 5, 80, live);
        let second = shares(1, 25, 5, 80, live);
        let total: u64 = first.iter().sum();
        assert!(live - total < 25, "{total}");
        assert!(first[..5].iter().all(|&s| s == first[0]) && first[0] > first[5] * 10);
        assert_eq!(second[5], first[0]);
        assert_eq!(second[0], first[5]);
        // Five rotations of five threads make every thread hot once.
        let hot_once = (0..25).all(|t| {
            (0..5)
                .filter(|&r| shares(r, 25, 5, 80, live)[t] == first[0])
                .count()
                == 1
        });
        assert!(hot_once);
        assert_eq!(shares(3, 4, 4, 10, 400), vec![100; 4]);
    }

    #[test]
    fn object_sizes_are_deterministic_and_in_range() {
        let sizes = |seed| {
            let mut rng = Rng::new(seed);
            (0..1000)
                .map(|_| new_object(&mut rng).len())
                .collect::<Vec<_>>()
        };
        let a = sizes(7);
        assert_eq!(a, sizes(7));
        assert!(a.iter().all(|&s| (16..=65_536).contains(&s)));
        let small = a.iter().filter(|&&s| s < 1024).count();
        assert!(small > 400, "skewed to small: {small} of 1000 under 1 KiB");
    }
}
