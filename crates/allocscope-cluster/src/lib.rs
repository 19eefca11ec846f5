//! Where the rounds of the experiment matrix run: the one `Engine` trait
//! (`engine`), the engine chosen once by `--executor` with every engine's
//! flags (`executor`, and beside it the engines that submit rounds as jobs:
//! `executor/slurm.rs`, `executor/k8s.rs`; the local engine runs rounds
//! through `commands`' session), what those share (`batch`: `--dry-run`,
//! `--shards`, the plan they write); the plan file the nodes read
//! (`plan_file`), what a node records about itself (`facts`), shards in and
//! out (`shard`), merging them into one experiment (`merge`), the user's
//! mistakes with any of them (`error`). A round runs
//! every configuration once, interleaved, on one node, so that the
//! within-round pairs behind the ratios always share a machine; see
//! docs/cluster.md.

pub mod batch;
pub mod engine;
pub mod error;
pub mod executor;
pub mod facts;
pub mod merge;
pub mod plan_file;
pub mod shard;
