//! "Where the memory went" in words: one line per configuration (its RSS
//! as the sum of its parts, its arenas and its reclaim test, and what the
//! reclaim says of its free memory), and one line on what the recommended
//! configuration removed and its remedy (docs/usage.md, "Why: causes and
//! remedies").

use allocscope_analyze::cause::Cause;
use allocscope_analyze::cause_figures::{
    at_reclaim, heap_measured, Basis, CauseKind, Difference, Part, WhereWent, COVERED,
    KEPT_BY_DESIGN_BYTES, MOST, NOTABLE_FREE_SHARE, PARTS, SMALL_SHARE,
};
use allocscope_core::model::{Reclaim, ReclaimReach};
use allocscope_core::units::{ColumnUnit, Unit};

/// The cause's lines: each configuration's it names (the baseline's first),
/// then what the focus candidate removed, or why no cause is named.
pub fn lines(cause: &Cause) -> Vec<String> {
    let mut lines: Vec<String> = cause
        .shown
        .iter()
        .map(|&i| config_line(&cause.configs[i]))
        .collect();
    let Some((b, c)) = cause
        .pair
        .map(|(b, c)| (&cause.configs[b], &cause.configs[c]))
    else {
        return lines;
    };
    lines.extend(match &cause.difference {
        Some(d) if d.basis == Basis::Mean => Some(difference_line(d, b, c)),
        Some(d) => Some(reclaim_difference_line(d, b, c)),
        None => (b.coverage < COVERED || c.coverage < COVERED).then(|| uncovered_line(b, c)),
    });
    lines
}

/// `glibc: 434 MiB RSS = 197 live + 210 free in 16 arenas (reclaim at exit
/// returned 150 of 160) + 27 other; most free memory came back when asked: a
/// tuning (trim, decay times, fewer arenas) recovers it.`
pub(crate) fn config_line(w: &WhereWent) -> String {
    // A mean over a few ticks is not the run's: the reading just before
    // the reclaim test describes it better.
    if let (Some(at), Some(r)) = (w.at_reclaim_instead(), &w.reclaim) {
        let line = mean_line(&at);
        let figures = line
            .strip_prefix(&format!("{}: ", w.config))
            .unwrap_or(&line);
        return format!(
            "{} just before the reclaim test at {} (its heap probe's readings were stale on \
             {:.0}% of the run's ticks: under contention it waits on the allocator's locks): \
             {figures}",
            w.config,
            r.trigger,
            (1.0 - w.coverage) * 100.0
        );
    }
    mean_line(w)
}

/// The line of `w`'s mean breakdown.
fn mean_line(w: &WhereWent) -> String {
    let rss = w.mean.total_bytes() as f64;
    let unit = ColumnUnit::of(Unit::Bytes, rss);
    let measured = heap_measured(&w.mean);
    let mut terms = Vec::new();
    let mut rest = 0;
    for part in PARTS {
        let bytes = part.of(&w.mean);
        let named = matches!(part, Part::LiveHeap | Part::AllocatorFree) && measured;
        if !named && (bytes as f64) < rss * SMALL_SHARE {
            rest += bytes;
            continue;
        }
        let mut term = format!("{} {}", unit.number_like(bytes as f64, rss), part.word());
        if part == Part::AllocatorFree {
            term.push_str(&free_detail(w, unit, rss));
        }
        if part == Part::Unknown {
            term.push_str(&format!(" ({})", unknown_reason(w)));
        }
        terms.push(term);
    }
    if rest > 0 && !terms.is_empty() {
        terms.push(format!(
            "{} in small parts",
            unit.number_like(rest as f64, rss)
        ));
    }
    let sum = if terms.is_empty() {
        "nothing".to_string()
    } else {
        terms.join(" + ")
    };
    // Processes without counters whose memory is the unknown part are
    // named in its term already.
    let heapless = if w.mean.unknown_bytes > 0 {
        0
    } else {
        w.heapless_processes
    };
    let note = match (measured, heapless) {
        (false, _) => "; no allocator counters, so the heap is inside \"other\"".to_string(),
        (true, 0) => free_note(w, unit),
        (true, n) => format!(
            "{}; {n} process{} without allocator counters, whose heap is inside \"other\"",
            free_note(w, unit),
            if n == 1 { "" } else { "es" }
        ),
    };
    format!(
        "{}: {} RSS = {sum}{note}{}.",
        w.config,
        unit.show(rss),
        coverage_note(w)
    )
}

/// Why a part is unknown: `no allocator counters in 1 process`.
pub(crate) fn unknown_reason(w: &WhereWent) -> String {
    let n = w.heapless_processes.max(1);
    format!(
        "no allocator counters in {n} process{}",
        if n == 1 { "" } else { "es" }
    )
}

/// Below full coverage, how much of the run the breakdown describes, so
/// that nobody reads its means as the whole run's.
fn coverage_note(w: &WhereWent) -> String {
    if w.coverage >= COVERED {
        return String::new();
    }
    format!(
        "; breakdown from {:.0}% of the run's ticks: on the rest the heap probe's reading \
         was stale (under contention it waits on the allocator's locks)",
        w.coverage * 100.0
    )
}

/// ` in 16 arenas (reclaim at exit returned 150 of 160)` after the free part.
fn free_detail(w: &WhereWent, unit: ColumnUnit, rss: f64) -> String {
    let arenas = match w.arenas {
        Some(1) => " in 1 arena".to_string(),
        Some(n) => format!(" in {n} arenas"),
        None => String::new(),
    };
    let reclaim = match (&w.reclaim, w.returned_bytes()) {
        (Some(r), None) => format!(" ({})", reclaim_not_run(r)),
        (Some(r), Some(returned)) => {
            let of = w
                .free_before_reclaim_bytes
                .map(|f| format!(" of {} free then", unit.number_like(f as f64, rss)))
                .unwrap_or_default();
            // The allocator counted more free memory than its process held.
            let capped = w
                .free_before_reclaim_bytes
                .and(r.free_counted())
                .map(|c| {
                    format!(
                        ", capped at the RSS it held: the allocator counted {}",
                        unit.number_like(c as f64, rss)
                    )
                })
                .unwrap_or_default();
            format!(
                " (reclaim at {} returned {}{of}{capped})",
                r.trigger,
                unit.number_like(returned as f64, rss)
            )
        }
        _ => String::new(),
    };
    format!("{arenas}{reclaim}")
}

/// Why a run's reclaim test says nothing of its free memory: no call to
/// ask, or one that could not reach the program's threads.
pub(crate) fn reclaim_not_run(r: &Reclaim) -> String {
    match r.reach {
        ReclaimReach::CallingThread => format!(
            "reclaim at {}: mimalloc can only collect the calling thread's heap, so the reclaim \
             could not reach the program's threads",
            r.trigger
        ),
        _ => format!(
            "no reclaim at {}: the allocator has no call to return memory",
            r.trigger
        ),
    }
}

/// What the reclaim test says of a notable free part: a tuning recovers
/// it, or fragmentation pins it (only after a reclaim that reached the
/// whole process).
fn free_note(w: &WhereWent, unit: ColumnUnit) -> String {
    let free = w.mean.allocator_free_bytes as f64;
    if free < w.mean.total_bytes() as f64 * NOTABLE_FREE_SHARE {
        return String::new();
    }
    match (w.reclaimed_share(), w.stayed_bytes()) {
        (Some(share), _) if share >= MOST => format!(
            "; {:.0}% of the free memory came back when asked: a tuning (trim, decay times, \
             fewer arenas) recovers it",
            share * 100.0
        ),
        (Some(_), Some(stayed)) if w.pinned() => format!(
            "; {} of the free memory stayed after the reclaim: fragmentation pins it, and \
             another allocator is the remedy",
            unit.show(stayed as f64)
        ),
        (Some(_), Some(stayed)) if !w.stayed_notable() => format!(
            "; only {} of the free memory stayed after the reclaim (under {} MiB or {:.0}% of \
             the RSS): too little to blame on fragmentation",
            unit.show(stayed as f64),
            KEPT_BY_DESIGN_BYTES >> 20,
            NOTABLE_FREE_SHARE * 100.0
        ),
        (Some(_), Some(stayed)) => format!(
            "; {} of the free memory stayed after the reclaim, but the probe did not say \
             whether the reclaim reached every thread: nothing is concluded from it",
            unit.show(stayed as f64)
        ),
        _ => String::new(),
    }
}

/// Why no cause is named when a breakdown covers only part of its run:
/// the two means would describe different stretches of the runs (glibc's
/// probe is starved through a contended phase that arena_max=2's is not).
pub(crate) fn uncovered_line(base: &WhereWent, cand: &WhereWent) -> String {
    format!(
        "No cause named between {} and {}: their breakdowns cover {:.0}% and {:.0}% of the \
         runs' ticks, so their means describe different stretches of the runs.",
        base.config,
        cand.config,
        base.coverage * 100.0,
        cand.coverage * 100.0
    )
}

/// What the candidate removed, read just before the reclaim tests, when a
/// mean covers only part of its run: the one moment both probes read fresh.
pub(crate) fn reclaim_difference_line(
    d: &Difference,
    base: &WhereWent,
    cand: &WhereWent,
) -> String {
    let (Some(b), Some(c), Some(r)) = (at_reclaim(base), at_reclaim(cand), &base.reclaim) else {
        return uncovered_line(base, cand);
    };
    format!(
        "Their breakdowns cover {:.0}% and {:.0}% of the runs' ticks, so the cause is read \
         just before the reclaim test at {}, where both probes read fresh figures. {}",
        base.coverage * 100.0,
        cand.coverage * 100.0,
        r.trigger,
        difference_line(d, &b, &c)
    )
}

/// `glibc:arena_max=2 removed 204 MiB of glibc's RSS (434 -> 230), 98% of
/// it heap: 201 free (210 -> 9), in 2 arenas instead of 16. Cause: ...`
pub(crate) fn difference_line(d: &Difference, base: &WhereWent, cand: &WhereWent) -> String {
    let removed = d.removed_bytes as f64;
    let rss = base.mean.total_bytes() as f64;
    let unit = ColumnUnit::of(Unit::Bytes, rss);
    let number = |bytes: u64| unit.number_like(bytes as f64, rss);
    let changes: Vec<String> = d
        .parts
        .iter()
        .filter(|c| c.removed_bytes().unsigned_abs() as f64 >= removed * 0.1)
        .map(|c| {
            let verb = if c.removed_bytes() >= 0 {
                "less"
            } else {
                "more"
            };
            format!(
                "{} {} {verb} ({} -> {})",
                number(c.removed_bytes().unsigned_abs()),
                c.part.word(),
                number(c.baseline_bytes),
                number(c.candidate_bytes)
            )
        })
        .collect();
    let arenas = match (base.arenas, cand.arenas) {
        (Some(b), Some(c)) if b != c => {
            format!(
                ", {c} arena{} instead of {b}",
                if c == 1 { "" } else { "s" }
            )
        }
        _ => String::new(),
    };
    // Beyond 100% when the other side grew: all of it came from one side.
    let side = match d.heap_share {
        _ if d.unknown_share >= 0.995 => "all of it unknown".to_string(),
        _ if d.unknown_share >= 0.5 => format!("{:.0}% of it unknown", d.unknown_share * 100.0),
        s if s >= 0.995 => "all of it heap".to_string(),
        s if s <= 0.005 => "none of it heap".to_string(),
        s if s >= 0.5 => format!("{:.0}% of it heap", s * 100.0),
        s => format!("{:.0}% of it not heap", (1.0 - s) * 100.0),
    };
    format!(
        "What {} removed: {} of {}'s RSS ({} -> {}), {side}: {}{arenas}. {}",
        d.candidate,
        unit.show(removed),
        d.baseline,
        number(base.mean.total_bytes()),
        number(cand.mean.total_bytes()),
        changes.join(", "),
        cause_sentence(d, base, cand, unit)
    )
}

/// The cause and its remedy, in one or two sentences.
pub(crate) fn cause_sentence(
    d: &Difference,
    base: &WhereWent,
    cand: &WhereWent,
    unit: ColumnUnit,
) -> String {
    match d.cause {
        CauseKind::Arenas => "Cause: free memory stranded in many arenas; the remedy is fewer \
             arenas (glibc arena_max, jemalloc narenas)."
            .to_string(),
        CauseKind::ReclaimableFree => format!(
            "Cause: free memory {} held but returns when asked ({:.0}% came back in the \
             reclaim test): a tuning (trim, decay times, fewer arenas) recovers it too.",
            base.config,
            base.reclaimed_share().unwrap_or(0.0) * 100.0
        ),
        CauseKind::PinnedFree => format!(
            "Cause: free memory pinned by fragmentation ({} stayed after the reclaim test): \
             another allocator is the remedy.",
            unit.show(
                base.free_before_reclaim_bytes
                    .unwrap_or(0)
                    .saturating_sub(base.returned_bytes().unwrap_or(0)) as f64
            )
        ),
        CauseKind::AllocatorFree => "Cause: free memory the allocator held (no reclaim test \
             tells whether a tuning or another allocator recovers it)."
            .to_string(),
        CauseKind::LazyFree => "Cause: pages freed lazily (MADV_FREE) that still count in RSS \
             until the kernel needs them; shorter decay times return them sooner."
            .to_string(),
        CauseKind::Metadata => "Cause: the allocator's own metadata.".to_string(),
        CauseKind::LiveHeap if same_allocator(base, cand) => format!(
            "Cause: the program's own live heap differed, and both ran {}, whose size classes \
             are the same: the program's own variation between runs, which more rounds \
             average out, not this setting.",
            allocator_of(&base.config)
        ),
        CauseKind::LiveHeap => "Cause: the live heap itself: the allocators round requests to \
             different size classes."
            .to_string(),
        CauseKind::HugePages => "Cause: transparent huge pages beyond what the allocator \
             accounts for; thp=never (or the allocator's own huge-page settings) addresses them."
            .to_string(),
        CauseKind::NotHeap => format!(
            "Most of the difference is not heap ({}): no allocator setting addresses it.",
            d.main_part.label()
        ),
        CauseKind::Unaccounted => format!(
            "The breakdown does not account for this saving: {}.",
            unaccounted_reason(d, base, cand)
        ),
    }
}

/// The allocator a configuration's name names: what comes before its
/// settings (`glibc:arena_max=2` is glibc).
fn allocator_of(config: &str) -> &str {
    config.split(':').next().unwrap_or(config)
}

/// Whether two configurations run the same allocator and differ only in
/// its settings (another build, `--variant`, is never the same).
fn same_allocator(base: &WhereWent, cand: &WhereWent) -> bool {
    !base.variant && !cand.variant && allocator_of(&base.config) == allocator_of(&cand.config)
}

/// Why the breakdown cannot attribute a saving the verdict measured.
fn unaccounted_reason(d: &Difference, base: &WhereWent, cand: &WhereWent) -> String {
    let heapless = base.heapless_processes.max(cand.heapless_processes);
    let processes = |n: u32| format!("{n} process{}", if n == 1 { "" } else { "es" });
    if d.main_part == Part::Unknown {
        return format!(
            "{} without allocator counters held over a fifth of the RSS, so where their memory \
             went is unknown",
            processes(heapless.max(1))
        );
    }
    if heapless > 0 {
        return format!(
            "{} without allocator counters, whose heap is inside \"{}\", and only the \
             allocator differs between the two",
            processes(heapless),
            Part::OtherAnon.word()
        );
    }
    format!(
        "only the allocator differs between the two, yet most of the saving is in memory its \
         counters do not report ({})",
        d.main_part.label()
    )
}
