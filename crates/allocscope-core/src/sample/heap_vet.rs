//! Vetting the heap probe's readings before they are summed over the tree:
//! no impossible figure reaches a sample.
//!
//! The counters are the allocator's own, read while the program runs, and
//! some are computed by subtraction inside the allocator: gperftools'
//! `generic.current_allocated_bytes` is its heap minus its caches' free
//! bytes, summed over thread caches without a lock, so mid-update it can
//! go below zero and come out as 2^64 - 1200 (seen on mimalloc-bench's
//! `mstress` under tcmalloc). So:
//! - a word of 2^63 or more is no size: it is a negative that wrapped, and
//!   is read as unknown (`known`), like the probe's own "unknown" word;
//! - a reading whose live heap wrapped is discarded for that tick (the
//!   process counts as without figures, `Tally::discarded`);
//! - a live heap larger than the process's anonymous RSS cannot all be
//!   resident: it is clamped to that RSS (`Tally::clamped`). The heap is
//!   anonymous memory, so that is the most it can hold; what a program
//!   allocated and never touched has no pages, and the live heap figures
//!   count the resident heap. (Swap is not read per process on each tick:
//!   a heap partly swapped out reads clamped to what is resident.)
//! - the allocator's resident figure is capped at the anonymous RSS too,
//!   silently: mimalloc's is what its segments committed (an upper bound:
//!   committed pages never touched have no frame) and jemalloc's
//!   `stats.resident` counts whole extents, so both routinely claim more
//!   than the process holds (measured: mimalloc 2.0 on every tick,
//!   jemalloc up to 3.44x the RSS on mimalloc-bench).
//!
//! The run's message says how many readings were discarded or clamped
//! (`Tally::note`).
//!
//! A reclaim test's figures are vetted by the same rule (`vet_reclaim`):
//! its live heap and free memory from the poll just before it fit in the
//! anonymous RSS the probe read just before the call.

use super::probe_reading::{ProbeReading, ReclaimReading};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The smallest word that is a wrapped negative, not a size.
pub const WRAPPED: u64 = 1 << 63;

/// `word` as a size, `None` when it is the probe's "unknown" or a wrapped
/// negative (both are at least `WRAPPED`).
pub fn known(word: u64) -> Option<u64> {
    (word < WRAPPED).then_some(word)
}

/// A clamp is worth a note only when the live heap claimed more than twice
/// the anonymous RSS, and by at least this much: a program that is filling
/// what it just allocated reads a live heap some MiB ahead of its pages
/// (measured: 7.5 MiB over 20 MiB on `tests/programs/single.c` under glibc
/// at 20 ms ticks), which is clamped silently.
pub const NOTED_EXCESS_BYTES: u64 = 16 << 20;

/// What vetting did over a run, shared between the sampler's reader and
/// the run that reports it.
#[derive(Debug, Default)]
pub struct Tally {
    /// Readings vetted.
    pub readings: AtomicU64,
    /// Readings discarded: their live heap wrapped below zero.
    pub discarded: AtomicU64,
    /// The largest wrapped word seen.
    pub largest_wrapped: AtomicU64,
    /// Readings whose live heap was clamped to the anonymous RSS by more
    /// than that RSS and `NOTED_EXCESS_BYTES`, and the largest excess.
    pub clamped: AtomicU64,
    pub largest_excess: AtomicU64,
}

impl Tally {
    pub fn shared() -> Arc<Tally> {
        Arc::new(Tally::default())
    }

    /// `reading` of a process whose anonymous RSS is `anon_bytes`, as it
    /// may be summed: `None` when it must be discarded, its live heap
    /// clamped to `anon_bytes` otherwise.
    pub fn vet(&self, reading: ProbeReading, anon_bytes: u64) -> Option<ProbeReading> {
        self.readings.fetch_add(1, Ordering::Relaxed);
        if let Some(word) = reading.live_wrapped {
            self.discarded.fetch_add(1, Ordering::Relaxed);
            self.largest_wrapped.fetch_max(word, Ordering::Relaxed);
            return None;
        }
        let excess = reading.live_bytes.saturating_sub(anon_bytes);
        if excess > anon_bytes.max(NOTED_EXCESS_BYTES) {
            self.clamped.fetch_add(1, Ordering::Relaxed);
            self.largest_excess.fetch_max(excess, Ordering::Relaxed);
        }
        Some(ProbeReading {
            live_bytes: reading.live_bytes.min(anon_bytes),
            resident_bytes: reading.resident_bytes.map(|r| r.min(anon_bytes)),
            ..reading
        })
    }

    /// What the run's message says of it; `None` when nothing worth saying
    /// happened.
    pub fn note(&self) -> Option<String> {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let (readings, discarded, clamped) = (
            load(&self.readings),
            load(&self.discarded),
            load(&self.clamped),
        );
        let mut parts = Vec::new();
        if discarded > 0 {
            parts.push(format!(
                "{discarded} of {readings} readings discarded: the allocator's live heap \
                 counter was below zero (read {}), counted mid-update",
                load(&self.largest_wrapped)
            ));
        }
        if clamped > 0 {
            parts.push(format!(
                "{clamped} of {readings} readings clamped to the process's anonymous RSS: \
                 the allocator counted up to {} more live heap than was resident",
                crate::units::format_bytes(load(&self.largest_excess) as f64)
            ));
        }
        (!parts.is_empty()).then(|| format!("heap probe: {}", parts.join("; ")))
    }
}

/// One process's reclaim answer as it may be summed: the live heap and the
/// free memory from the poll just before the test, within what the process
/// held just before the call (its `RssAnon`, or its RSS from a probe that
/// predates that word): the live heap clamped to it, the free memory to
/// what the live heap leaves of it. The allocators' own figures are not
/// always resident: mimalloc's free is its committed memory less the live
/// heap, and it commits whole segments (a 2-thread program read 199.6 MiB
/// free at 72.5 MiB of RSS); glibc's `fordblks` counts free chunks whose
/// pages went back with `madvise`. Also the free memory it claimed, as
/// counted, when that was cut (`None` otherwise).
pub fn vet_reclaim(answer: ReclaimReading) -> (ReclaimReading, Option<u64>) {
    let Some(held) = answer.anon_before_bytes.or(answer.rss_before_bytes) else {
        return (answer, None);
    };
    let live = answer.live_before_bytes.map(|l| l.min(held));
    let room = held - live.unwrap_or(0);
    let free = answer.free_before_bytes.map(|f| f.min(room));
    let counted = answer.free_before_bytes.filter(|&f| Some(f) != free);
    let vetted = ReclaimReading {
        live_before_bytes: live,
        free_before_bytes: free,
        ..answer
    };
    (vetted, counted)
}

#[cfg(test)]
mod tests;
