//! The figures behind "where the memory went": the parts of a breakdown in
//! reading order (`Part`), one configuration's median run at its mean and
//! peak with its arenas and reclaim test (`WhereWent`), and what a candidate
//! changed against the baseline, part by part, with the cause that explains
//! most of it (`Difference`, `CauseKind`). Plain values and the arithmetic
//! on them; `cause_words.rs` turns them into sentences.

use allocscope_core::model::{Breakdown, Reclaim};
use serde::Serialize;

/// One part of a breakdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    LiveHeap,
    AllocatorFree,
    AllocatorMetadata,
    HugePages,
    LazyFree,
    OtherAnon,
    File,
    Shmem,
    /// What the breakdown cannot attribute (`Breakdown::unknown_bytes`).
    Unknown,
    /// The memory cgroup's kernel memory (page tables, stacks, slab).
    Kernel,
}

/// Every part, in the order the reports list them: the heap first, then
/// what the breakdown cannot attribute, then what no allocator setting
/// changes.
pub const PARTS: [Part; Breakdown::COUNT] = [
    Part::LiveHeap,
    Part::AllocatorFree,
    Part::AllocatorMetadata,
    Part::LazyFree,
    Part::HugePages,
    Part::Unknown,
    Part::OtherAnon,
    Part::File,
    Part::Shmem,
    Part::Kernel,
];

impl Part {
    pub fn of(self, b: &Breakdown) -> u64 {
        match self {
            Part::LiveHeap => b.live_heap_bytes,
            Part::AllocatorFree => b.allocator_free_bytes,
            Part::AllocatorMetadata => b.allocator_metadata_bytes,
            Part::HugePages => b.huge_pages_bytes,
            Part::LazyFree => b.lazy_free_bytes,
            Part::OtherAnon => b.other_anon_bytes,
            Part::File => b.file_bytes,
            Part::Shmem => b.shmem_bytes,
            Part::Unknown => b.unknown_bytes,
            Part::Kernel => b.kernel_bytes,
        }
    }

    /// The part in a sentence after its size (`197 live`, `27 other`),
    /// and as a column head or legend entry.
    fn words(self) -> (&'static str, &'static str) {
        match self {
            Part::LiveHeap => ("live", "live heap"),
            Part::AllocatorFree => ("free", "allocator free"),
            Part::AllocatorMetadata => ("metadata", "allocator metadata"),
            Part::HugePages => ("huge pages", "huge pages"),
            Part::LazyFree => ("lazily freed", "lazily freed"),
            Part::OtherAnon => ("other", "other anonymous"),
            Part::File => ("file", "file-backed"),
            Part::Shmem => ("shared", "shared"),
            Part::Unknown => ("unknown", "unknown"),
            Part::Kernel => ("kernel", "kernel (cgroup)"),
        }
    }

    /// The part in a sentence after its size: `197 live`, `27 other`.
    pub fn word(self) -> &'static str {
        self.words().0
    }

    /// The part as a column head or legend entry.
    pub fn label(self) -> &'static str {
        self.words().1
    }

    /// What the allocator holds or the program asked it for: the memory an
    /// allocator (or its settings) can change. Lazily freed pages are the
    /// allocator's too: it freed them with MADV_FREE, and its decay times
    /// decide when.
    pub(crate) fn is_heap(self) -> bool {
        matches!(
            self,
            Part::LiveHeap | Part::AllocatorFree | Part::AllocatorMetadata | Part::LazyFree
        )
    }
}

/// True when the allocator's own counters gave the heap parts (the probe
/// loaded and read them); without them all anonymous memory is "other".
pub fn heap_measured(b: &Breakdown) -> bool {
    b.live_heap_bytes + b.allocator_free_bytes + b.allocator_metadata_bytes > 0
}

/// Where one configuration's memory went, in its median run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhereWent {
    pub config: String,
    /// The median run's index (`runs[].index` in JSON), by mean RSS among
    /// the ok runs that had a breakdown.
    pub run: u32,
    /// Its breakdown, time-weighted over the run, and at its peak RSS.
    pub mean: Breakdown,
    pub peak: Option<Breakdown>,
    /// The most arenas of one process in that run.
    pub arenas: Option<u32>,
    /// The most processes whose allocator gave no figures on one tick:
    /// their heap is inside `other_anon_bytes`, or `unknown_bytes` when
    /// they held over a fifth of the RSS.
    pub heapless_processes: u32,
    /// The configuration runs a command of its own (`--variant`): it
    /// differs from the others by more than the allocator.
    #[serde(skip)]
    pub variant: bool,
    /// The share of the run's ticks with heap figures that the breakdown
    /// covers (`RunMetrics::breakdown_coverage`): below 1 the probe's
    /// readings were stale on the others and the means cover only these.
    pub coverage: f64,
    pub reclaim: Option<Reclaim>,
    /// The allocators' free memory measured by the probe just before the
    /// reclaim test (`Reclaim::free_before_bytes`): what it could return.
    pub free_before_reclaim_bytes: Option<u64>,
}

impl WhereWent {
    /// Its reading just before the reclaim test, when its breakdown covers
    /// too little of the run for the mean to describe it.
    pub fn at_reclaim_instead(&self) -> Option<WhereWent> {
        (self.coverage < MEAN_SHOWN)
            .then(|| at_reclaim(self))
            .flatten()
    }

    /// What the reclaim test returned (RSS before minus after); `None`
    /// when no reclaim could run or it could not reach the program's
    /// threads (`Reclaim::measured`).
    pub fn returned_bytes(&self) -> Option<u64> {
        let r = self.reclaim.as_ref().filter(|r| r.measured())?;
        Some(r.rss_before_bytes.saturating_sub(r.rss_after_bytes))
    }

    /// Whether what stayed free after the reclaim test was pinned: a
    /// reclaim that reaches the whole process ran, returned less than
    /// `MOST` of the free memory, and what stayed is a notable share of
    /// the RSS (a fraction of a MiB left in a small program blames
    /// nothing on fragmentation).
    pub fn pinned(&self) -> bool {
        self.reclaim
            .as_ref()
            .is_some_and(|r| r.reached_everything())
            && self.reclaimed_share().is_some_and(|s| s < MOST)
            && self.stayed_notable()
    }

    /// The free memory the reclaim test left: free before minus returned.
    pub fn stayed_bytes(&self) -> Option<u64> {
        Some(
            self.free_before_reclaim_bytes?
                .saturating_sub(self.returned_bytes()?),
        )
    }

    /// What stayed is at least `NOTABLE_FREE_SHARE` of the RSS the
    /// reclaim test found, and at least `KEPT_BY_DESIGN_BYTES`.
    pub fn stayed_notable(&self) -> bool {
        match (self.stayed_bytes(), &self.reclaim) {
            (Some(stayed), Some(r)) => {
                stayed >= KEPT_BY_DESIGN_BYTES
                    && stayed as f64 >= r.rss_before_bytes as f64 * NOTABLE_FREE_SHARE
            }
            _ => false,
        }
    }

    /// The share of the free memory the reclaim test returned, at most 1
    /// (it can also return pages the counters did not call free).
    pub fn reclaimed_share(&self) -> Option<f64> {
        let free = self.free_before_reclaim_bytes?;
        let returned = self.returned_bytes()?;
        (free > 0).then(|| (returned as f64 / free as f64).min(1.0))
    }
}

/// Below this share of the RSS a part is too small to name, and a free
/// part too small to judge as reclaimable or pinned.
pub const SMALL_SHARE: f64 = 0.01;
pub const NOTABLE_FREE_SHARE: f64 = 0.05;
/// Free memory an allocator keeps after a reclaim by design rather than by
/// fragmentation: glibc's top pad and trim threshold (128 KiB each by
/// default) and a partial page per arena and size class; fixed_ops kept
/// 0.17 MiB of a 2.1 MiB RSS under glibc after `malloc_trim`.
pub const KEPT_BY_DESIGN_BYTES: u64 = 1 << 20;
/// A breakdown covering at least this share of its run's ticks is taken
/// for the run's (the odd stale tick is noise); below it the line says how
/// much it covers and no cause is named from it.
pub const COVERED: f64 = 0.95;
/// Below this coverage a configuration is described by its reading just
/// before the reclaim test, where there is one, rather than by a mean of a
/// few ticks (`WhereWent::at_reclaim_instead`).
pub(crate) const MEAN_SHOWN: f64 = 0.5;
/// "Most": the reclaim returned at least this share of the free memory.
pub const MOST: f64 = 0.5;

/// One part of the baseline and of the candidate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PartChange {
    pub part: Part,
    pub baseline_bytes: u64,
    pub candidate_bytes: u64,
}

impl PartChange {
    /// What the candidate removed of this part (negative: added).
    pub fn removed_bytes(&self) -> i64 {
        self.baseline_bytes as i64 - self.candidate_bytes as i64
    }
}

/// What explains most of a candidate's saving, each with its remedy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CauseKind {
    /// Free memory held in many arenas: fewer arenas (`arena_max`).
    Arenas,
    /// Free memory the allocator returns when asked: trim, decay times.
    ReclaimableFree,
    /// Free memory the reclaim test did not return: fragmentation pins it;
    /// another allocator.
    PinnedFree,
    /// Free memory, no reclaim test to tell which kind.
    AllocatorFree,
    LazyFree,
    Metadata,
    /// The live heap itself: requests rounded to other size classes.
    LiveHeap,
    /// Transparent huge pages: `thp=never`.
    HugePages,
    /// Other anonymous, file or shared memory: no allocator setting.
    /// Never between two configurations that differ only in the allocator
    /// or its settings: there the allocator made the difference.
    NotHeap,
    /// The breakdown does not account for the saving: most of it is in
    /// the unknown part (processes without allocator counters, ticks
    /// without a breakdown), or in memory it calls "not heap" although
    /// only the allocator differs.
    Unaccounted,
}

/// What the two breakdowns of a difference are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The median runs' time-weighted means, each covering its run.
    Mean,
    /// The probe's readings just before each run's reclaim test: used when
    /// a mean covers only part of its run (the probe starved under
    /// contention), since at that moment both were read fresh.
    Reclaim,
}

/// What a candidate changed against the baseline (mean breakdowns of the
/// median runs, or their readings at the reclaim test).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    pub baseline: String,
    pub candidate: String,
    pub basis: Basis,
    /// Baseline RSS minus candidate RSS.
    pub removed_bytes: i64,
    /// The share of what was removed that came from the heap parts.
    pub heap_share: f64,
    /// The share that came from the unknown part.
    #[serde(default)]
    pub unknown_share: f64,
    pub parts: Vec<PartChange>,
    pub cause: CauseKind,
    /// The part that explains most of it.
    pub main_part: Part,
}

/// The difference from `base` to `cand`; `None` when the candidate's
/// median run removed nothing.
pub fn difference(base: &WhereWent, cand: &WhereWent) -> Option<Difference> {
    let parts: Vec<PartChange> = PARTS
        .iter()
        .map(|&part| PartChange {
            part,
            baseline_bytes: part.of(&base.mean),
            candidate_bytes: part.of(&cand.mean),
        })
        .collect();
    let removed: i64 = parts.iter().map(PartChange::removed_bytes).sum();
    if removed <= 0 {
        return None;
    }
    let removed_where = |side: Side| -> i64 {
        parts
            .iter()
            .filter(|c| Side::of(c.part) == side)
            .map(PartChange::removed_bytes)
            .sum()
    };
    let (heap, not_heap, unknown) = (
        removed_where(Side::Heap),
        removed_where(Side::NotHeap),
        removed_where(Side::Unknown),
    );
    // The side that removed most decides; within it, the part that removed
    // most. The heap wins ties: it is what was measured.
    let side = if heap >= not_heap && heap >= unknown {
        Side::Heap
    } else if unknown >= not_heap {
        Side::Unknown
    } else {
        Side::NotHeap
    };
    let main = parts
        .iter()
        .filter(|c| Side::of(c.part) == side)
        .max_by_key(|c| c.removed_bytes())
        .map_or(Part::OtherAnon, |c| c.part);
    Some(Difference {
        baseline: base.config.clone(),
        candidate: cand.config.clone(),
        basis: Basis::Mean,
        removed_bytes: removed,
        heap_share: heap as f64 / removed as f64,
        unknown_share: unknown as f64 / removed as f64,
        cause: cause_of(main, base, cand),
        main_part: main,
        parts,
    })
}

/// Where a part stands for the cause: measured heap, measured memory that
/// is not heap, or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Heap,
    NotHeap,
    Unknown,
}

impl Side {
    fn of(part: Part) -> Side {
        match part {
            Part::Unknown => Side::Unknown,
            p if p.is_heap() => Side::Heap,
            _ => Side::NotHeap,
        }
    }
}

/// True when the two differ only in the allocator or its settings (no
/// `--variant` command on either side): then whatever they saved, the
/// allocator saved.
pub(crate) fn allocator_only(base: &WhereWent, cand: &WhereWent) -> bool {
    !base.variant && !cand.variant
}

/// `w` as the probe read it just before its reclaim test: live and free
/// from the allocator's counters, the rest of the RSS of the processes
/// that answered as "other"; `None` without those counters.
pub fn at_reclaim(w: &WhereWent) -> Option<WhereWent> {
    let r = w.reclaim.as_ref()?;
    let (live, free) = r.held_before();
    let (live, free) = (live?, free?);
    let mean = Breakdown {
        live_heap_bytes: live,
        allocator_free_bytes: free,
        other_anon_bytes: r.rss_before_bytes.saturating_sub(live + free),
        ..Breakdown::default()
    };
    Some(WhereWent {
        mean,
        peak: None,
        coverage: 1.0,
        ..w.clone()
    })
}

/// The difference between the two configurations' readings at their
/// reclaim tests, when both ran at the same point of the program (the same
/// trigger) and both had heap counters then.
pub fn difference_at_reclaim(base: &WhereWent, cand: &WhereWent) -> Option<Difference> {
    let same_point = base.reclaim.as_ref()?.trigger == cand.reclaim.as_ref()?.trigger;
    if !same_point {
        return None;
    }
    let mut d = difference(&at_reclaim(base)?, &at_reclaim(cand)?)?;
    d.basis = Basis::Reclaim;
    Some(d)
}

/// The cause named by the part that removed most.
fn cause_of(main: Part, base: &WhereWent, cand: &WhereWent) -> CauseKind {
    match main {
        Part::AllocatorFree => {
            let fewer_arenas = matches!((base.arenas, cand.arenas), (Some(b), Some(c)) if c < b);
            if fewer_arenas {
                CauseKind::Arenas
            } else {
                match base.reclaimed_share() {
                    Some(share) if share >= MOST => CauseKind::ReclaimableFree,
                    // Only a reclaim that reached the whole process tells
                    // pinned memory from memory it could not reach.
                    Some(_) if base.pinned() => CauseKind::PinnedFree,
                    _ => CauseKind::AllocatorFree,
                }
            }
        }
        Part::LazyFree => CauseKind::LazyFree,
        Part::AllocatorMetadata => CauseKind::Metadata,
        Part::LiveHeap => CauseKind::LiveHeap,
        Part::HugePages => CauseKind::HugePages,
        Part::Unknown => CauseKind::Unaccounted,
        Part::OtherAnon | Part::File | Part::Shmem | Part::Kernel if allocator_only(base, cand) => {
            CauseKind::Unaccounted
        }
        Part::OtherAnon | Part::File | Part::Shmem | Part::Kernel => CauseKind::NotHeap,
    }
}
