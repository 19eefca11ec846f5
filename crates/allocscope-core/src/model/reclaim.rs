//! The reclaim test's record (`model::Reclaim`): what one run's allocators
//! returned when asked, and how far their reclaim calls reached. Part of
//! `model`, in a file of its own.

use serde::{Deserialize, Serialize};

/// The reclaim test of one run: the allocators were asked to return what
/// they hold (`malloc_trim(0)`, jemalloc's purge, ...) once, at the end of
/// the measured phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reclaim {
    /// Seconds since the workload started.
    pub t_s: f64,
    /// What triggered it: `exit`, `end of load`, `marker LABEL`, `after 5s`.
    pub trigger: String,
    /// The RSS of the processes that answered, just before and just after.
    pub rss_before_bytes: u64,
    pub rss_after_bytes: u64,
    /// Processes whose allocator answered the request.
    pub processes: u32,
    /// The allocators' own free memory and live heap, summed over the
    /// processes that answered, from the probe's poll just before the
    /// test: what it could return, measured then (`None` from a probe that
    /// predates them, or when an answer lacked them). Each process's are
    /// capped before the sum at what it held just before the call: the
    /// live heap at its anonymous RSS, the free memory at what the live
    /// heap leaves of it (`sample::heap_vet::vet_reclaim`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_before_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_before_bytes: Option<u64>,
    /// The free memory the allocators counted, summed as
    /// `free_before_bytes` but uncapped, when some process's count was
    /// more than it held (mimalloc's committed memory, glibc's free chunks
    /// already given back): `None` when no cap applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_counted_bytes: Option<u64>,
    /// How far the reclaim calls of the processes that answered reached.
    #[serde(default)]
    pub reach: ReclaimReach,
    /// Processes whose allocator has no call to return memory: asked, they
    /// could not run a reclaim (`processes` does not count them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unavailable_processes: u32,
}

impl Reclaim {
    /// Whether a reclaim that reaches the whole process ran in every
    /// process that answered: only then does what stayed free say
    /// anything of fragmentation.
    pub fn reached_everything(&self) -> bool {
        self.processes > 0 && self.reach == ReclaimReach::Whole
    }

    /// Whether its figures say what a reclaim returns: some process ran
    /// one, and none of them was confined to a thread that holds none of
    /// the program's heap.
    pub fn measured(&self) -> bool {
        self.processes > 0 && self.reach != ReclaimReach::CallingThread
    }

    /// The live heap and free memory just before the test within the RSS
    /// the processes held then: the figures as stored, capped once more
    /// for a run stored before each process's were (its allocators' counts
    /// summed unchecked), where the free memory could exceed the RSS.
    pub fn held_before(&self) -> (Option<u64>, Option<u64>) {
        let live = self.live_before_bytes.map(|l| l.min(self.rss_before_bytes));
        let room = self.rss_before_bytes - live.unwrap_or(0);
        (live, self.free_before_bytes.map(|f| f.min(room)))
    }

    /// The free memory the allocators counted, when it was more than the
    /// processes held and the figures were capped.
    pub fn free_counted(&self) -> Option<u64> {
        let stored = self.free_before_bytes;
        self.free_counted_bytes
            .or(stored.filter(|_| self.held_before().1 != stored))
    }
}

/// How far a run's reclaim calls reached (probe/PROTOCOL.md, word 29).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReclaimReach {
    /// The whole process in every process that ran one (glibc
    /// `malloc_trim`, jemalloc's purge of every arena, gperftools'
    /// `ReleaseFreeMemory`, or mimalloc's `mi_collect` in a process whose
    /// only program thread called it).
    Whole,
    /// In some process only the calling thread's heap (mimalloc's
    /// `mi_collect`, from the probe's thread or in a multi-threaded
    /// program): it could not reach the program's threads.
    CallingThread,
    /// A probe that predates the word, or a run stored before it.
    #[default]
    Unknown,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}
