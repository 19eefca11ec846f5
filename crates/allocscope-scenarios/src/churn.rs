//! `churn` scenario: models the RocksDB-based services of the Besu and
//! Cloudflare reports (about 25 threads; RSS two to three times the live heap
//! under glibc's default of 8 arenas per core).
//!
//! Each worker thread owns a shard of a long-lived working set. One operation
//! allocates an object (16 B to 64 KiB, skewed to small) and fills it; part of
//! the new objects are handed through a queue to another thread, which adopts
//! them and frees them later (allocated in one thread, freed in another). A
//! thread over its share of the live data evicts objects at random positions,
//! so the working set is replaced in non-LIFO order. A hot set of threads
//! holds most of the live data; it rotates, so every thread in turn grows a
//! large share and then shrinks, leaving scattered survivors behind.
//!
//! Output: `allocscope:mark rotation-N` at the start of each rotation,
//! `allocscope:mark done` when the work ends, then
//! `churn: live_bytes=... peak_live_bytes=... ops=... checksum=...` and, under
//! glibc only, `churn: glibc_arenas=N threads=T`. The final state is held for
//! `--hold-ms` so a sampler sees it next to the live figure.

mod args;
mod glibc;
mod worker;

pub use args::ChurnArgs;

use super::marker::mark;
use allocscope_core::usage_error::UsageError;
use std::time::Duration;

pub fn run(args: &ChurnArgs) -> anyhow::Result<i32> {
    args.validate().map_err(UsageError::from)?;
    let outcome = worker::run_threads(args)?;
    mark("done");
    let live_bytes: u64 = outcome.shards.iter().map(|s| s.bytes).sum();
    let checksum = outcome.shards.iter().fold(0u64, |acc, s| {
        s.objects.iter().fold(acc.wrapping_add(s.checksum), |a, o| {
            a.wrapping_add(worker::sum_ends(o))
        })
    });
    println!(
        "churn: live_bytes={live_bytes} peak_live_bytes={} ops={} checksum={checksum}",
        outcome.peak_live_bytes, outcome.ops,
    );
    if let Some(arenas) = glibc::arenas() {
        println!("churn: glibc_arenas={arenas} threads={}", args.threads);
    }
    if outcome.stopped {
        eprintln!(
            "churn: stopped by --seconds {} before all --ops were done",
            args.seconds
        );
    }
    std::thread::sleep(Duration::from_millis(args.hold_ms));
    drop(outcome);
    Ok(0)
}
