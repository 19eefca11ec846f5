//! `churn`'s knobs and their checks: what the workers are given.

use crate::knob::{in_ranges, KnobError};

#[derive(Debug, clap::Args)]
pub struct ChurnArgs {
    /// Worker threads (the reported service ran about 25).
    #[arg(long, default_value_t = 25)]
    pub threads: usize,
    /// Operations in total, split evenly over threads and rotations. One
    /// operation allocates and fills one object, then evicts what exceeds the
    /// thread's share.
    #[arg(long, default_value_t = 10_000_000)]
    pub ops: u64,
    /// Stop after this many seconds even if --ops are not done (0: no limit).
    /// The limit is a safety net: runs cut short by it do different amounts of
    /// work under different allocators, so compare runs that finish their ops.
    #[arg(long, default_value_t = 120.0)]
    pub seconds: f64,
    /// Live data the threads hold together, in MiB.
    #[arg(long, default_value_t = 128)]
    pub live_mib: u64,
    /// Threads in the hot set (1..=--threads).
    #[arg(long, default_value_t = 5)]
    pub hot_threads: usize,
    /// Percentage of the live data the hot set holds (0..=100).
    #[arg(long, default_value_t = 80)]
    pub hot_percent: u64,
    /// Rotations of the hot set; each moves it to the next --hot-threads threads.
    #[arg(long, default_value_t = 10)]
    pub rotations: u64,
    /// Percentage of new objects handed to another thread, which adopts them
    /// and frees them later (0..=100).
    #[arg(long, default_value_t = 50)]
    pub handoff_percent: u64,
    /// Objects a thread's queue holds before senders keep new objects
    /// themselves (1..=1000000).
    #[arg(long, default_value_t = 64)]
    pub queue_depth: usize,
    /// Seed of the allocation sequence (each thread derives its own from it).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Hold the final state this long (milliseconds) before freeing and exiting.
    #[arg(long, default_value_t = 200)]
    pub hold_ms: u64,
}

impl ChurnArgs {
    pub(super) fn validate(&self) -> Result<(), KnobError> {
        in_ranges(&[("--threads", self.threads as u64, 1, 1024)])?;
        if !(1..=self.threads).contains(&self.hot_threads) {
            return Err(KnobError::BeyondKnob {
                knob: "--hot-threads",
                low: 1,
                high: self.threads as u64,
                bound: "--threads",
                value: self.hot_threads as u64,
            });
        }
        in_ranges(&[
            ("--hot-percent", self.hot_percent, 0, 100),
            ("--handoff-percent", self.handoff_percent, 0, 100),
            ("--rotations", self.rotations, 1, 1_000_000),
        ])?;
        let least = self.threads as u64 * self.rotations;
        if self.ops < least {
            return Err(KnobError::TooFewOps {
                least,
                ops: self.ops,
            });
        }
        in_ranges(&[
            ("--live-mib", self.live_mib, 1, 1 << 20),
            ("--queue-depth", self.queue_depth as u64, 1, 1_000_000),
        ])?;
        if !self.seconds.is_finite() || self.seconds < 0.0 {
            return Err(KnobError::Seconds(self.seconds));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(extra: &[&str]) -> ChurnArgs {
        crate::parse_knobs("churn", extra)
    }

    #[test]
    fn defaults_are_valid() {
        assert!(parse(&[]).validate().is_ok());
    }

    #[test]
    fn rejects_bad_knobs_naming_the_knob() {
        for (argv, knob) in [
            (&["--threads", "0"][..], "--threads"),
            (&["--hot-threads", "26"], "--hot-threads"),
            (&["--hot-percent", "101"], "--hot-percent"),
            (&["--handoff-percent", "200"], "--handoff-percent"),
            (&["--rotations", "0"], "--rotations"),
            (&["--ops", "10"], "--ops"),
            (&["--live-mib", "0"], "--live-mib"),
            (&["--seconds=-1"], "--seconds"),
            (&["--queue-depth", "0"], "--queue-depth"),
        ] {
            let err = parse(argv).validate().expect_err(knob).to_string();
            assert!(err.starts_with(knob), "{err}");
        }
    }
}
