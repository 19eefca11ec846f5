//! What one process's heap probe file says, decoded (`probe_shm::decode`):
//! its reading, how far its last reclaim reached and, when the probe
//! turned itself off, why (probe/PROTOCOL.md, words 2-29).

/// One process's reading, taken consistently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProbeReading {
    pub pid: u64,
    /// 0 none (no counters), 1 stats, 2 count.
    pub mode: u64,
    pub live_bytes: u64,
    /// The live heap word when it was a negative that wrapped (2^63 or
    /// more, not the probe's "unknown"): the reading is then discarded
    /// (`heap_vet`), and `live_bytes` is 0.
    pub live_wrapped: Option<u64>,
    pub resident_bytes: Option<u64>,
    pub retained_bytes: Option<u64>,
    pub arenas: Option<u32>,
    /// Resident memory the allocator holds that the program has freed
    /// (glibc `fordblks`, jemalloc resident - allocated - metadata,
    /// gperftools' free lists, mimalloc commit - live); PROTOCOL.md says
    /// what each one counts.
    pub free_bytes: Option<u64>,
    /// The allocator's own bookkeeping, where it reports it (jemalloc,
    /// gperftools).
    pub metadata_bytes: Option<u64>,
    /// The process's threads at the last poll (0 unknown).
    pub threads: u64,
    pub cpu_ns: u64,
    /// CLOCK_MONOTONIC nanoseconds when the last completed poll ended and
    /// began (its figures describe that span: under contention glibc's
    /// locks can hold a poll for seconds); `None` from a probe that
    /// predates these words.
    pub polled_ns: Option<u64>,
    pub poll_start_ns: Option<u64>,
    /// The last reclaim test this process answered, if any.
    pub reclaim: Option<ReclaimReading>,
    /// Why the probe stopped polling in this process for good, if it did
    /// (PROTOCOL.md, word 28): its last reading before that stands.
    pub off: Option<ProbeOff>,
}

/// Why a process's probe turned itself off, leaving the program as it
/// would run without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeOff {
    /// Its thread could not be created (a thread or process limit).
    NoThread,
    /// The program installed a seccomp filter, which might refuse the
    /// probe's system calls.
    Seccomp,
}

impl ProbeOff {
    pub(super) fn from_word(word: u64) -> Option<ProbeOff> {
        match word {
            1 => Some(ProbeOff::NoThread),
            2 => Some(ProbeOff::Seccomp),
            _ => None,
        }
    }

    pub fn reason(self) -> &'static str {
        match self {
            ProbeOff::NoThread => "its thread could not be created (a thread or process limit)",
            ProbeOff::Seccomp => "the program installed a seccomp filter",
        }
    }
}

impl ProbeReading {
    /// Whether the reading is stale at `now_ns`: its poll began more than
    /// `bound_ns` ago (the probe's thread waited on the allocator's locks,
    /// its CPU budget spaced a costly poll, or it is not running). A probe
    /// that predates the words is never called stale.
    pub fn stale_at(&self, now_ns: u64, bound_ns: u64) -> bool {
        let Some(polled) = self.polled_ns else {
            return false;
        };
        let began = self.poll_start_ns.unwrap_or(polled).min(polled);
        now_ns > began.saturating_add(bound_ns)
    }
}

/// One process's answer to a reclaim request (PROTOCOL.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReclaimReading {
    /// Reclaims done so far.
    pub count: u64,
    /// The process's RSS just before and just after; `None` when its
    /// allocator has no call that returns memory.
    pub rss_before_bytes: Option<u64>,
    pub rss_after_bytes: Option<u64>,
    /// CLOCK_MONOTONIC nanoseconds when it started and ended.
    pub start_ns: u64,
    pub end_ns: u64,
    /// The CPU time it cost the process, user and system.
    pub user_ns: u64,
    pub sys_ns: u64,
    /// The allocator's free memory and live heap from the poll just before
    /// the test: what it could return, and what it could not.
    pub free_before_bytes: Option<u64>,
    pub live_before_bytes: Option<u64>,
    /// What the call could reach: 0 none available (unknown, from a probe
    /// that predates the word, when the RSS figures are set), 1 the whole
    /// process, 2 the calling thread's heap only (`RECLAIM_*`).
    pub kind: u64,
    /// The process's anonymous RSS (`RssAnon`) just before and just after:
    /// what its heap can hold at most (`heap_vet::vet_reclaim`); `None`
    /// from a probe that predates these words.
    pub anon_before_bytes: Option<u64>,
    pub anon_after_bytes: Option<u64>,
}

/// `ReclaimReading::kind`'s values (PROTOCOL.md, word 29).
pub const RECLAIM_NONE: u64 = 0;
pub const RECLAIM_WHOLE: u64 = 1;
pub const RECLAIM_CALLING_THREAD: u64 = 2;
