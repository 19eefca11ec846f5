//! The one trait every engine implements: where the rounds of `compare` run
//! (this machine, a Slurm job array, a Kubernetes Indexed Job). A round runs
//! every open configuration once; the round driver (`driver.rs`)
//! decides which rounds start and with which configurations, and records
//! how each ended; an engine only starts rounds and says how they ended.
//! allocscope-cluster's `executor` chooses the engine once, from `--executor`.

use allocscope_core::store::Store;
use std::path::{Path, PathBuf};

/// One round to run: each listed configuration once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    /// From 0; its runs are repetition `index + 1`.
    pub index: u32,
    /// The configurations (indices into the experiment's) it runs.
    pub configs: Vec<usize>,
}

/// How a round ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Its runs are in the store already, in this experiment (a round run
    /// by this process).
    Stored { experiment_id: i64 },
    /// It wrote this shard, to merge.
    Shard(PathBuf),
    /// It left nothing; the engine's word for how it ended (`FAILED`,
    /// `CANCELLED`, `TIMEOUT`, ...).
    Lost(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundEnd {
    pub round: u32,
    pub ended: Ended,
}

/// What starting rounds did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Started {
    /// The engine follows them: `wait` reports how each ends.
    Following,
    /// Handed to something this process does not follow (a Kubernetes Job
    /// whose shards are on a volume it cannot read); the engine has said
    /// what to do next. `ok`: the hand-over succeeded.
    HandedOver { ok: bool },
}

/// Where rounds run. The contract: every round given to `start` is
/// reported by `wait` exactly once, cancelled ones included.
pub trait Engine {
    /// How many rounds it runs at once: 1 lets the driver look at each
    /// round's results before the next starts (`--runs auto`); an engine
    /// that submits all rounds as one job takes them all.
    fn rounds_at_once(&self) -> usize;

    /// `--dry-run`: writes and prints what it would submit and how to submit
    /// it and merge the shards, and submits nothing.
    fn dry_run(&self) -> anyhow::Result<()> {
        anyhow::bail!("this engine submits nothing, so it has no dry run")
    }

    /// Starts `rounds`; an engine that runs them itself stores their runs in
    /// `store` as they end.
    fn start(&mut self, store: &mut Store, rounds: &[Round]) -> anyhow::Result<Started>;

    /// The rounds that ended since the last call, after waiting a moment
    /// (about a second at most) for one; empty while they all still run.
    fn wait(&mut self, store: &mut Store) -> anyhow::Result<Vec<RoundEnd>>;

    /// Ctrl-C: stops the rounds that have not ended (`wait` still reports
    /// them).
    fn cancel(&mut self) -> anyhow::Result<()>;

    /// A line for the user (not with `--quiet`), through the engine's own
    /// progress display.
    fn say(&self, line: &str);

    /// A folder this process and the rounds' nodes both see while the
    /// rounds run (a soak's instances send their series through it); `None`
    /// for an engine without one.
    fn shared_dir(&self) -> Option<&Path> {
        None
    }

    /// Where the rounds stand (the open candidates after a look): a line
    /// like `say`'s, unless the engine's display has a place of its own.
    fn round(&self, line: &str) {
        self.say(line);
    }
}
