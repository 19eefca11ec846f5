//! The verdict's grounds as data: why it came out as it did (`Reason`) and
//! one `Note` per line under it, each with the figures its sentence gives
//! (ratios with their intervals, counts, names). `report/verdict_words.rs`
//! writes them as sentences; the JSON export carries both.

use super::decide::Side;
use super::figures::Ratio;
use serde::Serialize;

/// Why the verdict came out as it did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum Reason {
    /// The verdict's `config` saved beyond noise and the minimum, and its
    /// cost stayed within the budget.
    Recommend {
        baseline: String,
        memory: Option<Ratio>,
        /// As the tables show it (a throughput inverted).
        performance: Option<Ratio>,
        /// The guard's ratio beside a CPU figure (`Verdict::guard`).
        #[serde(skip_serializing_if = "Option::is_none")]
        guard: Option<Ratio>,
        /// How many candidates qualified, the recommendation among them.
        qualified: usize,
        /// The other qualifiers whose memory interval overlaps its own.
        ties: Vec<Tie>,
    },
    /// At the time box: the verdict's `config` saved beyond noise and the
    /// minimum, and its performance is not resolved at this noise (its
    /// interval straddles the budget); nothing qualified.
    RecommendUnproven {
        baseline: String,
        memory: Ratio,
        /// As the tables show it; `None` when its runs gave none.
        performance: Option<Ratio>,
        /// The guard's ratio beside a CPU figure (`Verdict::guard`).
        #[serde(skip_serializing_if = "Option::is_none")]
        guard: Option<Ratio>,
        /// The rounds it ran.
        rounds: usize,
        /// About how many more rounds would resolve it, when estimable.
        more_rounds: Option<u32>,
        /// Whether `--runs auto` stopped it as unresolvable within its
        /// `--max-runs`.
        unresolvable: bool,
    },
    /// Every candidate the verdict judged is settled out.
    KeepDefault {
        baseline: String,
        /// Candidates judged by their intervals.
        judged: usize,
        /// Candidates a race dropped on their first readings.
        dropped: usize,
    },
    /// At the time box: no candidate qualified, and none still open
    /// (`Verdict::unsettled`, each named as not resolved) measured a saving
    /// beyond the minimum; the baseline is kept.
    KeepUnproven {
        baseline: String,
        baseline_rounds: usize,
    },
    /// Some candidate is open (`Verdict::unsettled`).
    Inconclusive { baseline_rounds: usize },
    /// No candidate besides the baseline.
    NothingToCompare,
    /// No verdict: every configuration ran `allocator`, some named after
    /// another.
    OneAllocator { allocator: String },
    /// No verdict: the baseline's runs were served by another allocator.
    BaselineNotRun {
        baseline: String,
        allocator: String,
        served_by: String,
    },
    /// No verdict: every one of the baseline's `runs` failed; `why` is the
    /// first one's message and last stderr lines.
    BaselineFailed {
        baseline: String,
        runs: usize,
        why: String,
    },
}

/// A qualifier within noise of the recommendation's memory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tie {
    pub config: String,
    pub memory: Ratio,
}

/// Which sides of a candidate are still open; in JSON as the words the
/// reports give (`memory`, `performance`, `memory and performance`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum OpenSide {
    #[serde(rename = "memory")]
    Memory,
    #[serde(rename = "performance")]
    Performance,
    #[serde(rename = "memory and performance")]
    Both,
}

/// One line under the verdict's reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum Note {
    /// A candidate's ratios to the baseline and where it stands.
    Candidate {
        config: String,
        /// `None` when its runs gave no comparable figures.
        figures: Option<Figures>,
        place: Place,
    },
    /// A candidate the OOM killer ended in some run.
    OomKilled { config: String, oom: Oom },
    /// A candidate none of whose `runs` ended `ok`; `why` is the first
    /// one's message and last stderr lines.
    EveryRunFailed {
        config: String,
        runs: usize,
        why: String,
    },
    /// The candidates a race dropped, each with when.
    DroppedByRace { dropped: Vec<Dropped> },
    /// The baseline itself was OOM-killed.
    BaselineOomKilled { baseline: String, oom: Oom },
    /// Every configuration's fastest wall time (a server's load duration) within 2%
    /// (`verdict::FLAT_WALLS`) of the others': a fixed-duration program (load); `measure` is the
    /// judged row's label, `seconds` the median run's.
    FixedDuration { measure: String, seconds: f64 },
    /// A configuration whose runs another allocator served.
    LeftOut {
        config: String,
        allocator: String,
        served_by: String,
    },
    /// A configuration whose tree another allocator served, with its share
    /// of the tree's memory and the programs it served.
    ServedElsewhere {
        config: String,
        requested: String,
        served_by: String,
        share: f64,
        programs: Vec<String>,
        via: Option<allocscope_core::model::Via>,
    },
    /// Several configurations one allocator served, some named after
    /// another: their comparison is of that allocator.
    SameServer {
        configs: Vec<String>,
        served_by: String,
    },
    /// A configuration whose program calls an allocator's own API, which
    /// its preloaded allocator did not replace.
    OwnApiBypass {
        config: String,
        program: String,
        caller: String,
        api_of: String,
        reach: String,
        malloc: String,
        symbols: Vec<String>,
    },
    /// Anonymous memory no allocator counted, a large part of the
    /// baseline's RSS (`analyze::outside`): its mean bytes and share.
    OutsideMalloc {
        config: String,
        bytes: f64,
        share: f64,
        runtime: Option<Runtime>,
    },
    /// The heap probe's figures of a configuration.
    HeapProbe {
        config: String,
        mean_live_heap_bytes: f64,
        peak_live_heap_bytes: Option<f64>,
        /// Mean RSS over the mean live heap.
        overhead_ratio: f64,
        arenas_max: Option<f64>,
        arenas_process: Option<String>,
    },
}

/// A runtime with its own memory manager, recognised among the tree's
/// programs, and the setting that routes its allocations through malloc
/// (`None`: none does, as for the JVM's heap).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Runtime {
    pub program: String,
    pub name: String,
    pub setting: Option<String>,
    /// The `--variant` line that tries the setting.
    pub variant: Option<String>,
}

/// A candidate's two ratios to the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figures {
    pub memory: Ratio,
    /// As the tables show it (a throughput inverted).
    pub performance: Ratio,
    /// Whether it performed at least as well as the baseline.
    pub better: bool,
    /// The guard's ratio beside a CPU figure (`Verdict::guard`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guard: Option<Ratio>,
}

/// Where a candidate stands.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "standing", rename_all = "snake_case")]
pub enum Place {
    Qualifies,
    /// Uses more memory, beyond noise, than `by`, which qualifies.
    Outranked {
        by: String,
    },
    /// Open, and `--runs auto` stopped running it after `rounds` rounds:
    /// its open `side` is within the machine's noise of its threshold, by
    /// more rounds than the cap left (about `more_rounds`).
    Unresolvable {
        side: OpenSide,
        rounds: usize,
        more_rounds: Option<u32>,
    },
    /// Settled out, or still `open`, by its sides against the thresholds.
    Judged {
        open: bool,
        memory: Side,
        performance: Side,
        more_rounds: Option<u32>,
        /// Its performance is over the budget on the guard (the time a
        /// reader waits), whatever the CPU figure said.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        guard_over: bool,
    },
}

/// OOM kills under `--memory-limit`: `killed` of `runs`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Oom {
    pub killed: usize,
    pub runs: usize,
    pub limit_bytes: Option<u64>,
}

/// A candidate a race dropped, and when (`after round 2`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dropped {
    pub config: String,
    pub when: String,
}
