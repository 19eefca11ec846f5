//! Rounds: one driver (`driver.rs`) over one `Engine` trait (`engine.rs`),
//! whichever command runs them (`compare`'s rounds, a tuning race, a
//! cluster cell) and wherever they run. The local engine (`local.rs`) runs
//! rounds here through one session (`session.rs`: the experiment set up
//! once, then one planned run at a time, with `cpus.rs`, `serving.rs`,
//! `logs.rs`, `run_line.rs` and `progress.rs`); the engines that submit
//! jobs are allocscope-cluster's, whose rounds come back as shards
//! (`shard.rs`) merged into one experiment (`merge.rs`, with where each
//! round ran, `facts.rs`). `judge.rs` is `--runs auto`'s judge;
//! `throughput.rs` reads the throughput figures of fixed-duration runs.

mod cpus;
pub mod driver;
pub mod engine;
pub mod facts;
pub mod judge;
pub mod local;
pub mod logs;
pub mod merge;
mod progress;
mod run_line;
mod serving;
pub mod session;
pub mod shard;
pub mod throughput;

/// How many rounds `compare` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// `--runs N`: exactly N rounds.
    Fixed(u32),
    /// `--runs auto`: until the judge says stop, at most `max_runs` rounds.
    Auto { max_runs: u32 },
}

impl Schedule {
    /// The most rounds this schedule can run.
    pub fn max_rounds(self) -> u32 {
        match self {
            Schedule::Fixed(n) | Schedule::Auto { max_runs: n } => n,
        }
    }
}
