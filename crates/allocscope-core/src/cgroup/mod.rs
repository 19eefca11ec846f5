//! A memory cgroup per run, where the machine allows one: the tree's memory
//! of record (every page of every process counted once, in one read), the
//! figure container platforms limit and kill on, and the `--memory-limit`
//! the kernel enforces. `place.rs` finds where groups can be made (or why
//! not), `group.rs` is one run's group, `reader.rs` its per-tick reads,
//! `stat.rs` the parsers over the files' text, `version.rs` the v1 and v2
//! file names. This file only declares and re-exports.

mod group;
mod place;
mod reader;
mod stat;
mod version;

pub use group::RunGroup;
pub use place::{find, Parent, Unavailable, HOW_TO_GET_ONE};
pub use reader::Reader;
pub use version::Version;
