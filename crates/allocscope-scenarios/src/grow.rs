//! `grow` scenario: models the long-running services whose memory grew for
//! days under glibc's default while their heap did not (the Besu node and
//! the RocksDB service of docs/scenarios.md): a workload for `soak`. A step
//! every `--step-ms`, `--steps` times, then it holds until killed.
//!
//! `arenas`: each step wakes a thread of its own (all started at the
//! beginning, each with an arena of its own under glibc, up to 8 per core);
//! it mallocs `--step-mib` MiB in 2 KiB blocks (beyond glibc's tcache, whose
//! cached blocks its counters count as in use) and frees all but the last,
//! which pins the arena's heap, then frees a block of the same size that the
//! main thread reserved for it: the live heap stays flat while each new
//! arena keeps what it was given back. With fewer arenas (`arena_max`) the
//! next step reuses it.
//! `leak`: each step mallocs and touches `--step-mib` MiB, never freed.
//!
//! Markers: `allocscope:mark step-N` as step N begins.

use super::marker::mark;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::{park, sleep, Thread};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Memory freed into new glibc arenas, the live heap flat.
    Arenas,
    /// Memory never freed: the live heap grows with it.
    Leak,
}

#[derive(Debug, clap::Args)]
pub struct GrowArgs {
    #[arg(long, value_enum, default_value_t = Mode::Arenas)]
    pub mode: Mode,
    /// Time before each step, in milliseconds.
    #[arg(long, default_value_t = 40_000, value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub step_ms: u64,
    /// MiB each step allocates.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub step_mib: u64,
    /// Steps. glibc makes at most 8 arenas per core: in arenas mode the
    /// steps past 8 x cores - 1 share one and grow no more.
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub steps: u64,
}

const BLOCK: usize = 2048;
/// Steps released so far: step thread `k` runs once it exceeds `k`.
static RELEASED: AtomicU64 = AtomicU64::new(0);

pub fn run(args: &GrowArgs) -> anyhow::Result<i32> {
    let mib = args.step_mib as usize;
    let threads = match args.mode {
        Mode::Arenas => (0..args.steps)
            .map(|k| step_thread(k, mib))
            .collect::<std::io::Result<Vec<_>>>()?,
        Mode::Leak => Vec::new(),
    };
    for k in 0..args.steps {
        sleep(Duration::from_millis(args.step_ms));
        mark(&format!("step-{}", k + 1));
        match threads.get(k as usize) {
            Some(thread) => {
                RELEASED.store(k + 1, Ordering::Release);
                thread.unpark();
            }
            None => std::mem::forget(black_box(vec![7u8; mib << 20])),
        }
    }
    loop {
        park();
    }
}

/// A thread that waits for step `k`, then runs it and waits for ever (its
/// arena stays its own while it lives). Every block is a malloc that is
/// written (the global allocator is the C one), kept from being optimised
/// away by `black_box`.
fn step_thread(k: u64, mib: usize) -> std::io::Result<Thread> {
    let reserve = vec![7u8; BLOCK];
    let handle = std::thread::Builder::new().spawn(move || {
        // A first malloc attaches the thread to its arena (and gives it its
        // tcache) now, so that a step adds only the block it keeps.
        drop(black_box(vec![7u8; BLOCK]));
        while RELEASED.load(Ordering::Acquire) <= k {
            park();
        }
        let mut blocks: Vec<Vec<u8>> = (0..(mib << 20) / BLOCK).map(|_| vec![7; BLOCK]).collect();
        let last = blocks.pop();
        drop(black_box(blocks));
        std::mem::forget(black_box(last));
        drop(reserve);
        loop {
            park();
        }
    })?;
    Ok(handle.thread().clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Args, Command};

    fn parse(extra: &[&str]) -> Result<GrowArgs, String> {
        let command = GrowArgs::augment_args(Command::new("grow"));
        let matches = command
            .try_get_matches_from(std::iter::once("grow").chain(extra.iter().copied()))
            .map_err(|e| e.to_string())?;
        Ok(<GrowArgs as clap::FromArgMatches>::from_arg_matches(&matches).expect("args"))
    }

    #[test]
    fn defaults_are_a_ten_minute_soak_of_arenas() {
        let args = parse(&[]).expect("defaults parse");
        assert_eq!(args.mode, Mode::Arenas);
        assert_eq!(args.step_ms * args.steps, 600_000);
        let leak = parse(&["--mode", "leak", "--step-ms", "500", "--step-mib", "2"]).expect("leak");
        assert_eq!(
            (leak.mode, leak.step_ms, leak.step_mib),
            (Mode::Leak, 500, 2)
        );
    }

    #[test]
    fn rejects_bad_knobs_naming_the_knob() {
        for (argv, knob) in [
            (&["--step-ms", "0"][..], "--step-ms"),
            (&["--step-ms", "86400001"], "--step-ms"),
            (&["--step-mib", "0"], "--step-mib"),
            (&["--step-mib", "4097"], "--step-mib"),
            (&["--steps", "0"], "--steps"),
            (&["--steps", "1025"], "--steps"),
            (&["--mode", "fragment"], "--mode"),
        ] {
            let err = parse(argv).expect_err(knob);
            assert!(err.contains(knob), "{err}");
        }
    }
}
