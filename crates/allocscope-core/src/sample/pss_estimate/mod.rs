//! Per-process PSS between full reads. smaps_rollup is rationed by the CPU
//! budget, so on a big tree it reaches every process only every few
//! seconds; /proc/PID/status (`RssAnon`, `RssFile`, `RssShmem`) is cheap
//! enough for every tick. Each process's last full read fixes how its
//! resident memory splits into PSS, and the cheap counters carry that
//! forward:
//! - anonymous memory that appeared or went since the full read counts in
//!   full: what an allocator maps and returns is private to the process;
//! - file and shmem pages a process dropped go at the share its full read
//!   measured; pages it mapped since at the share of its family's newly
//!   mapped pages that is new to the tree, learned between two passes over
//!   the same processes (`learn_growth`) or from one process read alone
//!   when the family grew (`probe_due`), else at its own share.
//!
//! That alone goes wrong when processes come and go, because PSS divides a
//! shared page among its mappers: a forked server's new worker maps pages
//! its siblings already map, which adds nothing to the tree's PSS (each
//! sharer's part shrinks), and a worker that exits leaves its part of every
//! page it shared to the others. So the tree's PSS is kept as a whole:
//! - a process that joins the tree between full reads is read in full once
//!   when first seen (while the budget allows); only its exclusive pages
//!   (its USS) are new to the tree, the rest of its PSS is taken from the
//!   processes of its family (same program name: forked from one another);
//! - a process that leaves takes only its exclusive pages with it; the
//!   rest of its PSS goes back to its family, at most what the survivors
//!   can hold (their RSS not yet counted in their PSS).
//!
//! Both are approximations (what a leaving process shared may have been
//! shared with another that leaves too, a joining one's share shrinks as
//! it touches pages nobody maps), so a pass that the tree moved away from
//! is `stale`, and the sampler redoes it early; after a burst of
//! newcomers or leavers it is `shaken`, and the sampler redoes it at once
//! from budget kept in reserve.
//!
//! A process never read borrows its parent's shares (a forked child shares
//! its parent's pages) for as much anon as the parent had, and counts anon
//! beyond that in full (the child touched it itself), else the shares of
//! the whole tree at the last full read, else counts its RSS in full.
//! Kernels before 5.14 lack `Pss_Anon`/`Pss_File`/`Pss_Shmem`: then every
//! part takes the process's overall PSS/RSS share.

mod baseline;
mod estimate;
mod estimator;
mod growth;
mod parts;
mod reads;
mod scaled;

pub use baseline::Live;
pub use estimate::PssSource;
pub use estimator::PssEstimator;
pub use parts::ratio;
pub use scaled::ScaledPss;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod replay_tests;
