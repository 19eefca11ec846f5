//! `kv` scenario: models the key-value server report: items are inserted
//! into a hash table, and memory is read against the number of items. Every
//! key (a `String`) and every value (a `Vec<u8>` of 16 to 256 random bytes)
//! is its own allocation, so the allocator sees two small allocations per
//! item, plus the table's own growth by doubling.
//!
//! Markers: `allocscope:mark items=N` when the table holds N items, for each
//! N in `--marks` (the first before any insert when 0 is listed), so a
//! report's marker table reads "items=1000 -> RSS". After each marker the
//! program pauses `--pause-ms` so a sampler ticking at that interval sees
//! the state; after the last it holds `--hold-ms`. Finally it prints
//! `kv: items=... live_bytes=... checksum=...`, where live_bytes is the
//! requested key and value bytes (the table itself not included).

use super::marker::mark;
use super::Rng;
use crate::knob::{in_ranges, KnobError};
use allocscope_core::usage_error::UsageError;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct KvArgs {
    /// Items to insert (1..=100000000).
    #[arg(long, default_value_t = 1_000_000)]
    pub items: u64,
    /// Item counts at which to print a marker, comma-separated, each at most
    /// --items. Default: 0, 100, 1000, ... (powers of ten from 100) up to --items.
    #[arg(long, value_delimiter = ',')]
    pub marks: Vec<u64>,
    /// Smallest value, in bytes (1..=--max-value).
    #[arg(long, default_value_t = 16)]
    pub min_value: usize,
    /// Largest value, in bytes (--min-value..=1048576).
    #[arg(long, default_value_t = 256)]
    pub max_value: usize,
    /// Pause after each marker, in milliseconds, so the sampler sees that state.
    #[arg(long, default_value_t = 100)]
    pub pause_ms: u64,
    /// Hold after the last marker, in milliseconds, before freeing and exiting.
    #[arg(long, default_value_t = 200)]
    pub hold_ms: u64,
    /// Seed of the value sizes and contents.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl KvArgs {
    fn validate(&self) -> Result<(), KnobError> {
        in_ranges(&[("--items", self.items, 1, 100_000_000)])?;
        if let Some(&mark) = self.marks.iter().find(|&&m| m > self.items) {
            return Err(KnobError::MarkBeyondItems {
                items: self.items,
                mark,
            });
        }
        in_ranges(&[("--max-value", self.max_value as u64, 1, 1 << 20)])?;
        if !(1..=self.max_value).contains(&self.min_value) {
            return Err(KnobError::BeyondKnob {
                knob: "--min-value",
                low: 1,
                high: self.max_value as u64,
                bound: "--max-value",
                value: self.min_value as u64,
            });
        }
        Ok(())
    }

    /// The marks in ascending order, without repeats.
    fn sorted_marks(&self) -> Vec<u64> {
        let mut marks = if self.marks.is_empty() {
            std::iter::once(0)
                .chain(std::iter::successors(Some(100u64), |m| m.checked_mul(10)))
                .take_while(|&m| m <= self.items)
                .collect()
        } else {
            self.marks.clone()
        };
        marks.sort_unstable();
        marks.dedup();
        marks
    }
}

/// A fixed-key hasher: the table's layout, and so its probing and resizing,
/// is the same in every run and under every allocator.
type Table = HashMap<String, Vec<u8>, BuildHasherDefault<DefaultHasher>>;

/// The key of item `i`: a memcached-style string, unique per item.
fn key(i: u64) -> String {
    format!("user:{i:010}:profile")
}

/// A value of `min..=max` random bytes (random, so no page is left untouched
/// and nothing is compressible by a clever allocator or kernel).
fn value(rng: &mut Rng, min: usize, max: usize) -> Vec<u8> {
    let len = min + rng.below((max - min + 1) as u64) as usize;
    let mut v = Vec::with_capacity(len);
    while v.len() < len {
        let word = rng.next_u64().to_le_bytes();
        let take = (len - v.len()).min(8);
        v.extend_from_slice(&word[..take]);
    }
    v
}

pub fn run(args: &KvArgs) -> anyhow::Result<i32> {
    args.validate().map_err(UsageError::from)?;
    let marks = args.sorted_marks();
    let mut next_mark = marks.iter().copied().peekable();
    let mut rng = Rng::new(args.seed);
    let mut table = Table::default();
    let mut live_bytes = 0u64;
    let mut checksum = 0u64;
    let pause = Duration::from_millis(args.pause_ms);
    for i in 0..=args.items {
        if next_mark.peek() == Some(&i) {
            next_mark.next();
            mark(&format!("items={i}"));
            if next_mark.peek().is_some() {
                std::thread::sleep(pause);
            }
        }
        if i == args.items {
            break;
        }
        let k = key(i);
        let v = value(&mut rng, args.min_value, args.max_value);
        live_bytes += (k.len() + v.len()) as u64;
        checksum = checksum.wrapping_add(u64::from(v[v.len() - 1]));
        table.insert(k, v);
    }
    std::thread::sleep(Duration::from_millis(args.hold_ms));
    // Read a sample of items back: the table must really hold them.
    for i in (0..args.items).step_by(997) {
        if let Some(v) = table.get(&key(i)) {
            checksum = checksum.wrapping_add(v.iter().map(|&b| u64::from(b)).sum::<u64>());
        }
    }
    println!(
        "kv: items={} live_bytes={live_bytes} checksum={checksum}",
        table.len()
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(extra: &[&str]) -> KvArgs {
        crate::parse_knobs("kv", extra)
    }

    #[test]
    fn defaults_are_valid_with_the_reported_marks() {
        let args = parse(&[]);
        assert!(args.validate().is_ok());
        assert_eq!(
            args.sorted_marks(),
            vec![0, 100, 1000, 10_000, 100_000, 1_000_000]
        );
    }

    #[test]
    fn default_marks_stop_at_the_item_count() {
        assert_eq!(
            parse(&["--items", "20000"]).sorted_marks(),
            vec![0, 100, 1000, 10_000]
        );
    }

    #[test]
    fn marks_are_sorted_and_deduplicated() {
        let args = parse(&["--items", "50", "--marks", "50,10,10,0"]);
        assert!(args.validate().is_ok());
        assert_eq!(args.sorted_marks(), vec![0, 10, 50]);
    }

    #[test]
    fn rejects_bad_knobs_naming_the_knob() {
        for (argv, knob) in [
            (&["--items", "0"][..], "--items"),
            (&["--items", "10", "--marks", "0,100"], "--marks"),
            (&["--max-value", "0"], "--max-value"),
            (&["--min-value", "300"], "--min-value"),
        ] {
            let err = parse(argv).validate().expect_err(knob).to_string();
            assert!(err.starts_with(knob), "{err}");
        }
    }

    #[test]
    fn values_are_deterministic_and_in_range() {
        let lens = |seed| {
            let mut rng = Rng::new(seed);
            (0..2000)
                .map(|_| value(&mut rng, 16, 256))
                .collect::<Vec<_>>()
        };
        let a = lens(9);
        assert_eq!(a, lens(9));
        assert!(a.iter().all(|v| (16..=256).contains(&v.len())));
        assert!(a.iter().any(|v| v.len() == 16) && a.iter().any(|v| v.len() == 256));
        assert_ne!(key(1), key(10));
    }
}
