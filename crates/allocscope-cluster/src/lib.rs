//! Where the rounds of the experiment matrix run other than here: the
//! engines of the core's `Engine` trait (`allocscope_rounds::engine`)
//! chosen once by `--executor` with every engine's flags (`executor`, and
//! beside it the engines that submit rounds as jobs: `executor/slurm.rs`,
//! `executor/k8s.rs`), what those share (`batch`: `--dry-run`, `--shards`,
//! the plan they write), the plan file the nodes read (`plan_file`), and
//! the user's mistakes with any of them (`error`).
//! Their rounds come back as shards, which the core's round driver merges.
//! A round runs every configuration once, interleaved, on one node, so that
//! the within-round pairs behind the ratios always share a machine; see
//! docs/cluster.md.

pub mod batch;
pub mod error;
pub mod executor;
pub mod plan_file;
