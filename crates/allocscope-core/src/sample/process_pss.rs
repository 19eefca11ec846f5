//! One process's PSS on a tick, as the sampler gives it (`Sampler::processes`)
//! and the tree's shares (`shares.rs`) read it.

use super::proc::RssParts;
use super::pss_estimate::PssSource;

/// One process's PSS on a tick, split by kind, read or estimated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProcessPss {
    pub pid: i32,
    pub ppid: i32,
    /// `RssAnon`, `RssFile`, `RssShmem` from its status.
    pub rss: RssParts,
    /// `Pss_Anon`, `Pss_File`, `Pss_Shmem`, read or estimated.
    pub pss: RssParts,
    pub source: PssSource,
}
