//! `events` scenario: models the CMS reconstruction job of the jemalloc
//! report. A loop over events whose memory need varies widely: most events
//! need a few MiB, an occasional one needs hundreds of MiB, built from many
//! small and medium blocks that are replaced while the event is processed and
//! freed at its end in random order. A few small objects survive each event
//! (histograms, output collections); they are made late in the event, so
//! they sit above its temporaries in the heap, as in the real job.
//!
//! With `--procs N` the job runs as N worker processes (the report used 4 and
//! 8), so the total PSS of the tree can be compared: the parent re-executes
//! this program with the same arguments plus a hidden `--worker-index K`,
//! waits for every worker, and fails if any failed. Worker K uses seed
//! `--seed + K`, so workers are at different kinds of event at any moment.
//!
//! Markers: `allocscope:mark event-N` after event N (1-based) has been freed,
//! the state a per-event memory check sees. With several processes every
//! worker marks its own events, labelled `wK/event-N`, so the markers of one
//! worker can be followed. Each process ends with
//! `events: worker=K events=... live_bytes=... peak_live_bytes=... checksum=...`.

use super::marker::mark;
use super::Rng;
use crate::knob::{in_ranges, KnobError};
use allocscope_core::usage_error::UsageError;
use anyhow::{bail, Context};
use std::process::Command;

#[derive(Debug, clap::Args)]
pub struct EventsArgs {
    /// Events each process handles (1..=1000000).
    #[arg(long, default_value_t = 250)]
    pub events: u64,
    /// Worker processes (1..=256); 1 runs the loop in this process.
    #[arg(long, default_value_t = 1)]
    pub procs: u32,
    /// On average one event in this many is big (drawn at random; 1..=1000000).
    #[arg(long, default_value_t = 20)]
    pub big_every: u64,
    /// Memory a big event needs, in MiB (each big event draws from half of it
    /// to all of it; 1..=65536).
    #[arg(long, default_value_t = 200)]
    pub big_mib: u64,
    /// Memory an ordinary event needs at most, in MiB (each draws from an
    /// eighth of it to all of it; 1..=65536).
    #[arg(long, default_value_t = 16)]
    pub small_mib: u64,
    /// Objects (64 B to 4 KiB) that survive each event until the job ends.
    #[arg(long, default_value_t = 4)]
    pub survivors: u64,
    /// Processing passes per event; each frees and re-allocates a random half
    /// of the event's blocks (0..=100).
    #[arg(long, default_value_t = 30)]
    pub passes: u64,
    /// Seed of the event sequence; worker K uses seed + K.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Set by the parent on the worker processes it starts.
    #[arg(long, hide = true)]
    pub worker_index: Option<u32>,
}

impl EventsArgs {
    fn validate(&self) -> Result<(), KnobError> {
        in_ranges(&[
            ("--events", self.events, 1, 1_000_000),
            ("--procs", u64::from(self.procs), 1, 256),
            ("--big-every", self.big_every, 1, 1_000_000),
            ("--big-mib", self.big_mib, 1, 65_536),
            ("--small-mib", self.small_mib, 1, 65_536),
            ("--survivors", self.survivors, 0, 1_000_000),
            ("--passes", self.passes, 0, 100),
        ])?;
        match self.worker_index {
            Some(index) if index >= self.procs => Err(KnobError::WorkerIndex {
                procs: self.procs,
                index,
            }),
            _ => Ok(()),
        }
    }
}

pub fn run(args: &EventsArgs) -> anyhow::Result<i32> {
    args.validate().map_err(UsageError::from)?;
    match (args.procs, args.worker_index) {
        (1, _) => process_events(args, 0, "event-"),
        (_, Some(k)) => process_events(args, k, &format!("w{k}/event-")),
        (n, None) => run_workers(n),
    }
}

/// Starts `n` copies of this program as workers and waits for all of them.
fn run_workers(n: u32) -> anyhow::Result<i32> {
    let exe = std::env::current_exe().context("finding this program to start the workers")?;
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let mut children = Vec::new();
    for k in 0..n {
        let child = Command::new(&exe)
            .args(&args)
            .arg(format!("--worker-index={k}"))
            .spawn()
            .with_context(|| format!("starting worker {k} ('{}')", exe.display()));
        match child {
            Ok(child) => children.push((k, child)),
            Err(e) => {
                // Do not leave the started workers running unattended.
                for (_, mut c) in children {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                return Err(e);
            }
        }
    }
    let mut failed = Vec::new();
    for (k, mut child) in children {
        let status = child
            .wait()
            .with_context(|| format!("waiting for worker {k}"))?;
        if !status.success() {
            failed.push(format!("worker {k}: {status}"));
        }
    }
    if !failed.is_empty() {
        bail!(
            "{} of {n} workers failed ({})",
            failed.len(),
            failed.join("; ")
        );
    }
    println!("events: procs={n} all workers succeeded");
    Ok(0)
}

/// Bytes an event needs: ordinary events draw from small/8 to small; about
/// one in `big_every` draws from big/2 to big.
fn event_need(rng: &mut Rng, args: &EventsArgs) -> u64 {
    let (top, bottom) = if rng.below(args.big_every) == 0 {
        (args.big_mib << 20, (args.big_mib << 20) / 2)
    } else {
        (args.small_mib << 20, (args.small_mib << 20) / 8)
    };
    bottom + rng.below(top - bottom + 1)
}

/// A block of an event: mostly small (16 B to 64 KiB, skewed to small), one
/// in 16 medium (64 KiB to 1 MiB; with glibc these straddle its mmap
/// threshold, which moves as such blocks are freed).
fn block_size(rng: &mut Rng) -> usize {
    if rng.below(16) == 0 {
        (64 << 10) + rng.below(960 << 10) as usize
    } else {
        rng.skewed_size()
    }
}

/// Allocates and fills a block; the fill is never zero, so every page is
/// written (a zero fill could become a calloc that skips fresh pages).
fn new_block(rng: &mut Rng, size: usize) -> Vec<u8> {
    let fill = (rng.next_u64() as u8) | 1;
    vec![fill; size]
}

/// Reads one byte per page and the last: the blocks must really be there.
fn digest(block: &[u8]) -> u64 {
    let pages: u64 = block.iter().step_by(4096).map(|&b| u64::from(b)).sum();
    pages + block.last().map_or(0, |&b| u64::from(b))
}

fn process_events(args: &EventsArgs, worker: u32, label: &str) -> anyhow::Result<i32> {
    let mut rng = Rng::new(args.seed.wrapping_add(u64::from(worker)));
    let mut survivors: Vec<Vec<u8>> = Vec::new();
    let mut survivor_bytes = 0u64;
    let mut peak_live = 0u64;
    let mut checksum = 0u64;
    for event in 1..=args.events {
        let need = event_need(&mut rng, args);
        let mut blocks = Vec::new();
        let mut bytes = 0u64;
        while bytes < need {
            let size = block_size(&mut rng);
            let block = new_block(&mut rng, size);
            bytes += block.len() as u64;
            blocks.push(block);
        }
        peak_live = peak_live.max(bytes + survivor_bytes);
        // Intermediate products: half the blocks replaced, pass after pass.
        for _ in 0..args.passes {
            for _ in 0..blocks.len() / 2 {
                let at = rng.below(blocks.len() as u64) as usize;
                let size = block_size(&mut rng);
                let old = std::mem::replace(&mut blocks[at], new_block(&mut rng, size));
                checksum = checksum.wrapping_add(digest(&old));
                bytes = bytes - old.len() as u64 + size as u64;
                drop(old);
                peak_live = peak_live.max(bytes + survivor_bytes);
            }
        }
        for _ in 0..args.survivors {
            let size = 64 + rng.below(4033) as usize;
            survivor_bytes += size as u64;
            survivors.push(new_block(&mut rng, size));
        }
        peak_live = peak_live.max(bytes + survivor_bytes);
        // End of event: temporaries freed in random order, not LIFO.
        while !blocks.is_empty() {
            let at = rng.below(blocks.len() as u64) as usize;
            checksum = checksum.wrapping_add(digest(&blocks.swap_remove(at)));
        }
        mark(&format!("{label}{event}"));
    }
    checksum = survivors
        .iter()
        .fold(checksum, |c, s| c.wrapping_add(digest(s)));
    println!(
        "events: worker={worker} events={} live_bytes={survivor_bytes} peak_live_bytes={peak_live} checksum={checksum}",
        args.events
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(extra: &[&str]) -> EventsArgs {
        crate::parse_knobs("events", extra)
    }

    #[test]
    fn defaults_are_valid() {
        assert!(parse(&[]).validate().is_ok());
    }

    #[test]
    fn rejects_bad_knobs_naming_the_knob() {
        for (argv, knob) in [
            (&["--events", "0"][..], "--events"),
            (&["--procs", "0"], "--procs"),
            (&["--big-every", "0"], "--big-every"),
            (&["--big-mib", "0"], "--big-mib"),
            (&["--small-mib", "100000"], "--small-mib"),
            (&["--passes", "101"], "--passes"),
            (&["--procs", "2", "--worker-index", "2"], "--worker-index"),
        ] {
            let err = parse(argv).validate().expect_err(knob).to_string();
            assert!(err.starts_with(knob), "{err}");
        }
    }

    #[test]
    fn event_needs_are_deterministic_mostly_small_some_big() {
        let args = parse(&[]);
        let needs = |seed| {
            let mut rng = Rng::new(seed);
            (0..2000)
                .map(|_| event_need(&mut rng, &args))
                .collect::<Vec<_>>()
        };
        let a = needs(3);
        assert_eq!(a, needs(3));
        let big = a.iter().filter(|&&n| n >= 100 << 20).count();
        assert!((50..=150).contains(&big), "about 1 in 20 big: {big}");
        assert!(a.iter().all(|&n| (2 << 20..=200 << 20).contains(&n)));
    }

    #[test]
    fn block_sizes_are_small_or_medium() {
        let mut rng = Rng::new(5);
        let sizes: Vec<usize> = (0..4000).map(|_| block_size(&mut rng)).collect();
        assert!(sizes.iter().all(|&s| (16..=1 << 20).contains(&s)));
        let medium = sizes.iter().filter(|&&s| s > 65_536).count();
        assert!((150..=350).contains(&medium), "one in 16 medium: {medium}");
    }
}
