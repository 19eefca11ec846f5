//! The verdict in words, for every format: its reason as one paragraph,
//! one sentence per note (`analyze::verdict_reasons` holds them as data),
//! with the judged rows' labels and the thresholds from the verdict, and
//! the memory limit of the configuration deployed or kept.

use allocscope_analyze::decide::{more_rounds_words, Side};
use allocscope_analyze::figures::Ratio;
use allocscope_analyze::limit::LimitNeed;
use allocscope_analyze::verdict::{Deploy, KeptLimit, LimitLines};
use allocscope_analyze::verdict::{Note, Oom, OpenSide, Place, Reason, Tie, Unsettled, Verdict};
use allocscope_core::units::{format_bytes, ColumnUnit, Unit};

/// `0.60x [0.55, 0.65]`, or the value alone without an interval.
fn ratio_words(r: &Ratio) -> String {
    if r.ci_low.is_finite() && r.ci_high.is_finite() {
        format!("{:.2}x [{:.2}, {:.2}]", r.value, r.ci_low, r.ci_high)
    } else {
        format!("{:.2}x (one round: no interval)", r.value)
    }
}

/// How far a ratio is from 1.0: `0.61` is `39%`.
pub fn pct(ratio: f64) -> String {
    format!("{:.0}%", (ratio - 1.0).abs() * 100.0)
}

/// A saving with its interval: 0.61x [0.55, 0.68] saves `39% [32, 45]`.
fn saving_words(r: &Ratio) -> String {
    let saved = |ratio: f64| (1.0 - ratio) * 100.0;
    match r.ci_low.is_finite() && r.ci_high.is_finite() {
        true => format!(
            "{:.0}% [{:.0}, {:.0}]",
            saved(r.value),
            saved(r.ci_high),
            saved(r.ci_low)
        ),
        false => format!("{:.0}%", saved(r.value)),
    }
}

/// `after 9 rounds; settling it would take about 334 more rounds`.
fn unresolvable_words(rounds: usize, more_rounds: Option<u32>) -> String {
    let more = more_rounds.map_or(String::new(), |n| {
        format!("; settling it would take {}", more_rounds_words(n))
    });
    format!(
        "after {rounds} round{}{more}",
        if rounds == 1 { "" } else { "s" }
    )
}

/// The verdict's reason as one paragraph.
pub fn reason(v: &Verdict) -> String {
    let (mw, pw) = (&v.memory.label, &v.performance.label);
    let (saving, budget) = (v.min_saving_pct, v.max_slowdown_pct);
    match &v.reason {
        Reason::Recommend {
            baseline,
            memory,
            performance,
            guard,
            qualified,
            ties,
        } => {
            let (others, unsettled) = (others(v, *qualified, ties), unsettled(v));
            let words = |r: &Option<Ratio>| r.as_ref().map(ratio_words).unwrap_or_default();
            format!(
                "Use {}: {mw} {} of {baseline}'s, a saving beyond noise and beyond the {saving}% \
                 minimum; {pw} {} stays within the {budget}% budget{}.{others}{unsettled}",
                v.config.as_deref().unwrap_or_default(),
                words(memory),
                words(performance),
                guard_words(v, guard.as_ref()),
            )
        }
        Reason::RecommendUnproven {
            baseline,
            memory,
            performance,
            guard,
            rounds,
            more_rounds,
            unresolvable,
        } => {
            let perf = performance
                .as_ref()
                .map_or(format!("no {pw} figures"), |p| {
                    format!("{pw} {}", ratio_words(p))
                });
            format!(
                "Use {}: {mw} {} of {baseline}'s, a saving beyond noise and beyond the {saving}% \
                 minimum; {perf}, not resolved at this noise against the {budget}% budget {}{}.{}{}",
                v.config.as_deref().unwrap_or_default(),
                ratio_words(memory),
                unresolvable_words(*rounds, None),
                guard_words(v, guard.as_ref()),
                resolve_words(*more_rounds, *unresolvable),
                unsettled(v),
            )
        }
        Reason::KeepDefault {
            baseline,
            judged,
            dropped,
        } => {
            let (which, rest) = match dropped {
                0 => ("no configuration".to_string(), String::new()),
                n => (
                    format!("of the {judged} candidates the race judged by their intervals, none"),
                    format!(
                        " The other {n} were dropped on their first readings (the race below)."
                    ),
                ),
            };
            format!(
                "Keep the default ({baseline}): {which} saves {saving}% or more of {mw} while \
                 keeping {pw} within {budget}% of the baseline, beyond run-to-run noise.{rest}"
            )
        }
        Reason::KeepUnproven {
            baseline,
            baseline_rounds,
        } => format!(
            "Keep the default ({baseline}), not proven: in {baseline_rounds} round{} of the \
             baseline no candidate measured a saving of {saving}% or more of {mw}, and those \
             still open are not resolved at this noise. {}.",
            if *baseline_rounds == 1 { "" } else { "s" },
            open_candidates(v)
        ),
        Reason::Inconclusive { baseline_rounds } => inconclusive(v, *baseline_rounds),
        Reason::NothingToCompare => "Inconclusive: there is no configuration besides the \
                                     baseline to compare; add -a CONFIG."
            .to_string(),
        Reason::OneAllocator { allocator } => format!(
            "No verdict: every configuration ran {allocator}, so no allocator was compared with \
             another. Remove what overrides them (an LD_PRELOAD in their settings), or compare \
             builds with --variant."
        ),
        Reason::BaselineFailed {
            baseline,
            runs,
            why,
        } => format!(
            "No verdict: every run of the baseline {baseline} failed ({runs} of {runs}): {why}. \
             Fix what stops it under {baseline}, or choose another --baseline."
        ),
        Reason::BaselineNotRun {
            baseline,
            allocator,
            served_by,
        } => format!(
            "No verdict: the baseline {baseline} did not run {allocator} (its runs were served by \
             {served_by}); choose a baseline that ran its allocator (allocscope report \
             --baseline NAME)."
        ),
    }
}

/// ` About 16 more rounds would resolve it (--runs auto --max-runs N).`, or
/// for a candidate the futility rule stopped, that no run count within the
/// cap could.
fn resolve_words(more_rounds: Option<u32>, unresolvable: bool) -> String {
    match (more_rounds, unresolvable) {
        (Some(n), true) => format!(
            " No difference this experiment can resolve: settling it would take {}.",
            more_rounds_words(n)
        ),
        (None, true) => " No difference this experiment can resolve.".to_string(),
        (Some(n), false) => format!(
            " Settling it would take {} (--runs auto --max-runs N).",
            more_rounds_words(n)
        ),
        (None, false) => String::new(),
    }
}

/// ` It has the lowest mean RSS of the 2 configurations that qualify.`,
/// and those within noise of the recommendation.
fn others(v: &Verdict, qualified: usize, ties: &[Tie]) -> String {
    if qualified <= 1 {
        return String::new();
    }
    let mw = &v.memory.label;
    let ties: Vec<String> = ties
        .iter()
        .map(|t| format!("{} ({mw} {})", t.config, ratio_words(&t.memory)))
        .collect();
    let ties = match ties.len() {
        0 => String::new(),
        1 => format!(" {} is within noise of it: either saves as much.", ties[0]),
        _ => format!(
            " {} are within noise of it: any saves as much.",
            ties.join(", ")
        ),
    };
    format!(" It has the lowest {mw} of the {qualified} configurations that qualify.{ties}")
}

/// ` Still unsettled, and possibly better: jemalloc.` beside a recommendation.
fn unsettled(v: &Verdict) -> String {
    let names: Vec<&str> = v.unsettled.iter().map(|u| u.config.as_str()).collect();
    if names.is_empty() {
        return String::new();
    }
    format!(
        " Still unsettled, and possibly better: {}.",
        names.join(", ")
    )
}

/// How many rounds the baseline had, and of each unsettled candidate what
/// is settled, then what is not.
fn inconclusive(v: &Verdict, rounds: usize) -> String {
    format!(
        "Inconclusive after {rounds} round{} of the baseline. {}.",
        if rounds == 1 { "" } else { "s" },
        open_candidates(v)
    )
}

/// Of each unsettled candidate what is settled, then what is not, and what
/// would settle them.
fn open_candidates(v: &Verdict) -> String {
    let parts: Vec<String> = v.unsettled.iter().map(|u| unsettled_words(v, u)).collect();
    // Candidates the futility rule stopped are past what rounds can settle.
    let more = if v.unsettled.iter().all(|u| u.unresolvable_after.is_some()) {
        "Re-judge"
    } else {
        "More rounds would settle it (--runs auto --max-runs N), or re-judge"
    };
    format!(
        "{}. {more} with other thresholds (allocscope report --min-saving/--max-slowdown)",
        parts.join(". ")
    )
}

/// `glibc:arena_max=2 saves 39% [32, 45] of PSS at the end of the load; its
/// p95 latency, 1.11x [0.85, 1.43], is within this machine's noise: no
/// difference this experiment can resolve after 7 rounds; settling it would
/// take about 414 more rounds`. Without figures, the side and the rounds.
fn unsettled_words(v: &Verdict, u: &Unsettled) -> String {
    let (mw, pw) = (&v.memory.label, &v.performance.label);
    let more = u
        .more_rounds
        .map(|n| format!(" ({})", more_rounds_words(n)));
    let more = more.unwrap_or_default();
    let Some(f) = &u.figures else {
        let side = side_words_of(v, u.side);
        return format!("{} is not settled on {side}{more}", u.config);
    };
    let (memory, perf) = (ratio_words(&f.memory), ratio_words(&f.performance));
    let (settled, open) = match u.side {
        OpenSide::Memory => (
            format!(
                "{}'s {pw}, {perf}, stays within the {}% budget",
                u.config, v.max_slowdown_pct
            ),
            format!("its {mw}, {memory}, is"),
        ),
        OpenSide::Performance => (
            format!("{} saves {} of {mw}", u.config, saving_words(&f.memory)),
            format!("its {pw}, {perf}, is"),
        ),
        OpenSide::Both => (
            u.config.clone(),
            format!("its {mw}, {memory}, and {pw}, {perf}, are"),
        ),
    };
    let state = match u.unresolvable_after {
        Some(rounds) => format!(
            "within this machine's noise: no difference this experiment can resolve {}",
            unresolvable_words(rounds, u.more_rounds)
        ),
        None => format!("not settled yet{more}"),
    };
    let join = if u.side == OpenSide::Both { ": " } else { "; " };
    format!("{settled}{join}{open} {state}")
}

/// The open side by the judged rows' labels: `mean PSS`, `p95 latency`.
pub(crate) fn side_words_of(v: &Verdict, side: OpenSide) -> String {
    let (mw, pw) = (&v.memory.label, &v.performance.label);
    match side {
        OpenSide::Memory => mw.to_string(),
        OpenSide::Performance => pw.to_string(),
        OpenSide::Both => format!("{mw} and {pw}"),
    }
}

/// One sentence per note of the verdict.
pub fn explanation(v: &Verdict) -> Vec<String> {
    // The heap probe's mean and peak each in one unit across its notes.
    let heap = v.explanation.iter().filter_map(|n| match n {
        Note::HeapProbe {
            mean_live_heap_bytes: mean,
            peak_live_heap_bytes: peak,
            ..
        } => Some((*mean, *peak)),
        _ => None,
    });
    let mean = ColumnUnit::for_values(Unit::Bytes, heap.clone().map(|(mean, _)| mean));
    let peak = ColumnUnit::for_values(Unit::Bytes, heap.filter_map(|(_, peak)| peak));
    let units = [mean, peak];
    v.explanation.iter().map(|n| note(v, n, units)).collect()
}

/// `OOM-killed under the 64.0 MiB limit in 3 of 3 runs`.
fn oom_words(oom: &Oom) -> String {
    let limit = oom.limit_bytes.map_or(String::new(), |b| {
        format!(" under the {} limit", format_bytes(b as f64))
    });
    format!("OOM-killed{limit} in {} of {} runs", oom.killed, oom.runs)
}

/// A note's sentence; `units` are the heap probe's mean's and peak's.
fn note(v: &Verdict, n: &Note, [mean, peak]: [ColumnUnit; 2]) -> String {
    match n {
        Note::Candidate {
            config,
            figures,
            place,
        } => {
            let (mw, pw) = (&v.memory.label, &v.performance.label);
            let figures_of = *figures;
            let figures = figures.map_or("no comparable figures".to_string(), |f| {
                let m = f.memory.value;
                format!(
                    "{mw} {} ({} {}), {pw} {} ({} {})",
                    ratio_words(&f.memory),
                    if m <= 1.0 { "saves" } else { "costs" },
                    pct(m),
                    ratio_words(&f.performance),
                    if f.better { "better by" } else { "worse by" },
                    pct(f.performance.value)
                )
            });
            format!(
                "{config}: {figures}; {}.",
                place_words(v, place, figures_of.as_ref())
            )
        }
        Note::OomKilled { config, oom } => format!("{config}: not chosen: {}.", oom_words(oom)),
        Note::EveryRunFailed { config, runs, why } => {
            format!("{config}: not chosen: every run failed ({runs} of {runs}): {why}.")
        }
        Note::DroppedByRace { dropped } => {
            let names: Vec<String> = dropped
                .iter()
                .map(|d| format!("{} ({})", d.config, d.when))
                .collect();
            format!("Not chosen, dropped by the race: {}.", names.join(", "))
        }
        Note::BaselineOomKilled { baseline, oom } => format!(
            "The baseline {baseline} was {}: raise --memory-limit, or choose a --baseline that \
             fits under it.",
            oom_words(oom)
        ),
        Note::FixedDuration { measure, seconds } => format!(
            "Every configuration's fastest {measure} is within {:.0}% of the others' ({} a \
             run): the {} likely runs for a fixed time, so {measure} measures nothing here. Judge \
             by its own throughput instead, e.g. --metric 'ops=([0-9.]+) ops/sec' \
             --higher-is-better ops --perf-metric ops.",
            100.0 * allocscope_analyze::verdict::FLAT_WALLS,
            allocscope_core::units::format_seconds(*seconds),
            if measure == "load duration" {
                "load"
            } else {
                "program"
            }
        ),
        Note::LeftOut {
            config,
            allocator,
            served_by,
        } => format!(
            "{config}: left out of the verdict: its runs were served by {served_by}, not \
             {allocator}."
        ),
        Note::ServedElsewhere {
            config,
            requested,
            served_by,
            share,
            programs,
            via,
        } => format!(
            "{config}: left out of the verdict: {requested} requested; {}.",
            super::served_words::served_share(served_by, *share, programs, *via)
        ),
        Note::SameServer { configs, served_by } => {
            let names = match configs.split_last() {
                Some((last, rest)) if !rest.is_empty() => {
                    format!("{} and {last}", rest.join(", "))
                }
                _ => configs.join(""),
            };
            let both = if configs.len() == 2 { "both" } else { "all" };
            format!(
                "{names} were {both} served by {served_by}: the comparison is of the same \
                 allocator."
            )
        }
        Note::OwnApiBypass {
            config,
            program,
            caller,
            api_of,
            reach,
            malloc,
            symbols,
        } => {
            let calls = allocscope_analyze::own_api_words::own_api_calls(
                &allocscope_core::model::OwnApiUse {
                    program: program.clone(),
                    caller: caller.clone(),
                    api_of: api_of.clone(),
                    reach: reach.clone(),
                    malloc: malloc.clone(),
                    symbols: symbols.clone(),
                },
            );
            format!(
                "{config}: left out of the verdict: {calls}, which preloading {malloc} cannot \
                 replace: that part of the heap stayed in {reach}."
            )
        }
        Note::OutsideMalloc {
            config,
            bytes,
            share,
            runtime,
        } => {
            let lever =
                runtime
                    .as_ref()
                    .map_or(String::new(), |r| match (&r.setting, &r.variant) {
                        (Some(setting), Some(variant)) => format!(
                    " {} is {}, whose own memory manager takes its memory from mmap: {setting} \
                     routes its allocations through malloc, where the allocators can act; to \
                     try it: {variant}.",
                    r.program, r.name
                ),
                        _ => format!(
                            " {} is {}, whose heap is its own: its heap flags size it, out of an \
                     allocator's reach.",
                            r.program, r.name
                        ),
                    });
            format!(
                "{config}: {} of anonymous memory the program manages itself, outside malloc \
                 ({:.0}% of its mean RSS): no allocator setting moves it.{lever}",
                allocscope_core::units::format_bytes(*bytes),
                100.0 * share
            )
        }
        Note::HeapProbe {
            config,
            mean_live_heap_bytes,
            peak_live_heap_bytes,
            overhead_ratio,
            arenas_max,
            arenas_process,
        } => {
            let noun = |a: f64| if a == 1.0 { "arena" } else { "arenas" };
            let arenas = match (arenas_max, arenas_process) {
                (Some(a), Some(process)) => format!(", {a:.0} {} ({process})", noun(*a)),
                (Some(a), None) => format!(", {a:.0} {}", noun(*a)),
                _ => String::new(),
            };
            format!(
                "heap probe, {config}: mean live heap {} (peak {}); RSS was {overhead_ratio:.2}x \
                 the live heap{arenas}.",
                mean.show(*mean_live_heap_bytes),
                peak_live_heap_bytes.map_or("-".to_string(), |b| peak.show(b)),
            )
        }
    }
}

/// `; wall time 0.98x [0.80, 1.20], not over it beyond noise`: the guard
/// beside a CPU figure, when there is one, after the budget's sentence.
pub fn guard_words(v: &Verdict, guard: Option<&Ratio>) -> String {
    match (&v.guard, guard) {
        (Some(row), Some(g)) => format!(
            "; {} {}, not over it beyond noise",
            row.label,
            ratio_words(g)
        ),
        _ => String::new(),
    }
}

/// `wall time 1.83x [1.52, 2.20]`: the guard that put a candidate over
/// the budget, when it did.
pub fn guard_over_words(
    v: &Verdict,
    over: bool,
    figures: Option<&allocscope_analyze::verdict::Figures>,
) -> Option<String> {
    let row = v.guard.as_ref().filter(|_| over)?;
    let g = figures.and_then(|f| f.guard);
    Some(match g {
        Some(g) => format!("{} {}", row.label, ratio_words(&g)),
        None => row.label.clone(),
    })
}

/// Where a candidate stands, in words.
fn place_words(
    v: &Verdict,
    place: &Place,
    figures: Option<&allocscope_analyze::verdict::Figures>,
) -> String {
    let (mw, pw) = (&v.memory.label, &v.performance.label);
    let Place::Judged {
        open,
        memory,
        performance,
        more_rounds,
        guard_over,
    } = place
    else {
        return match place {
            Place::Outranked { by } => {
                format!("not chosen: uses more {mw} than {by}, which qualifies, beyond noise")
            }
            Place::Unresolvable {
                side,
                rounds,
                more_rounds,
            } => format!(
                "no difference this experiment can resolve on {} {}",
                side_words_of(v, *side),
                unresolvable_words(*rounds, *more_rounds)
            ),
            _ => "qualifies".to_string(),
        };
    };
    let mut why = Vec::new();
    match memory {
        Side::Bad => why.push(format!(
            "does not save {}% of {mw} beyond noise",
            v.min_saving_pct
        )),
        Side::Open => why.push(format!("{mw} unsettled")),
        Side::Good => {}
    }
    match (performance, guard_over_words(v, *guard_over, figures)) {
        (Side::Bad, Some(guard)) => why.push(format!(
            "over the {}% budget on {guard}, whatever its {pw}",
            v.max_slowdown_pct
        )),
        (Side::Bad, None) => why.push(format!("over the {}% budget on {pw}", v.max_slowdown_pct)),
        (Side::Open, _) => why.push(format!("{pw} unsettled against the budget")),
        (Side::Good, _) => {}
    }
    let verdict = if *open { "open" } else { "not chosen" };
    let more = more_rounds
        .map(|n| format!(" ({} would settle it)", more_rounds_words(n)))
        .unwrap_or_default();
    format!("{verdict}: {}{more}", why.join(", "))
}

/// `112 MiB (peak working set 93.0 MiB + 20%)`.
fn limit_words(limit: &LimitNeed) -> String {
    format!(
        "{} MiB ({} {} + {}%)",
        limit.mib(),
        limit.basis_label,
        format_bytes(limit.peak_bytes as f64),
        limit.headroom_pct
    )
}

/// `if you keep glibc: memory limit 70 MiB (peak working set 57.6 MiB + 20%)`.
pub(crate) fn kept_words(kept: &KeptLimit) -> String {
    let limit = limit_words(&kept.memory_limit);
    format!("if you keep {}: memory limit {limit}", kept.config)
}

/// The deploy snippets as they are pasted: each container target ends with
/// the memory limit's lines, under a comment saying what it is.
pub fn deploy_snippets(d: &Deploy) -> Deploy {
    let Some(limit) = &d.memory_limit else {
        return d.clone();
    };
    let lines = LimitLines::of(limit);
    let why = format!("# memory limit: {}\n", limit_words(limit));
    Deploy {
        systemd: format!("{}{why}{}", d.systemd, lines.systemd),
        dockerfile: format!("{}{why}{}", d.dockerfile, lines.docker),
        kubernetes: format!("{}{why}{}", d.kubernetes, lines.kubernetes),
        ..d.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocscope_analyze::verdict::deploy;

    fn config() -> allocscope_core::model::Config {
        allocscope_core::model::Config {
            name: "glibc".into(),
            allocator: "glibc".into(),
            library: None,
            version: None,
            env: Vec::new(),
            command: None,
        }
    }

    fn limit(mib: u64, peak_mib: u64) -> LimitNeed {
        LimitNeed {
            bytes: mib << 20,
            peak_bytes: peak_mib << 20,
            basis: "peak_working_set_bytes".into(),
            basis_label: "peak working set".into(),
            headroom_pct: 20.0,
            runs: 3,
        }
    }

    #[test]
    fn the_limit_the_configuration_needs_is_in_every_container_target() {
        let d = deploy_snippets(&deploy(&config(), &["app".into()], Some(&limit(123, 102))));
        assert_eq!(
            d.kubernetes,
            "env: []\n# memory limit: 123 MiB (peak working set 102 MiB + 20%)\nresources:\n  \
             requests:\n    memory: 123Mi\n  limits:\n    memory: 123Mi\n"
        );
        assert!(d.systemd.ends_with("\nMemoryMax=123M\n"), "{}", d.systemd);
        assert!(
            d.dockerfile.contains("docker run --memory=123m"),
            "{}",
            d.dockerfile
        );
        // The Kubernetes snippet is YAML whose resources say the same.
        let yaml: serde_json::Value = serde_yaml_like(&d.kubernetes);
        assert_eq!(yaml["resources"]["limits"]["memory"], "123Mi");
        // Without a limit, no comment and no lines.
        let plain = deploy(&config(), &["app".into()], None);
        assert_eq!(deploy_snippets(&plain), plain);
    }

    #[test]
    fn a_kept_configuration_gets_its_limit_lines_and_no_recommendation() {
        let kept = KeptLimit {
            config: "glibc".into(),
            memory_limit: limit(70, 58),
        };
        assert_eq!(
            kept_words(&kept),
            "if you keep glibc: memory limit 70 MiB (peak working set 58.0 MiB + 20%)"
        );
        let lines = LimitLines::of(&kept.memory_limit);
        assert_eq!(lines.systemd, "MemoryMax=70M\n");
        assert!(lines.docker.contains("docker run --memory=70m"));
        let yaml = serde_yaml_like(&lines.kubernetes);
        assert_eq!(yaml["resources"]["requests"]["memory"], "70Mi");
        // The same lines the recommendation's snippets end with.
        let d = deploy(&config(), &["app".into()], Some(&kept.memory_limit));
        let d = deploy_snippets(&d);
        assert!(d.kubernetes.ends_with(&lines.kubernetes));
        assert!(d.systemd.ends_with(&lines.systemd));
    }

    /// The snippet's two-level mappings read as JSON: enough YAML to check
    /// the keys sit where Kubernetes looks for them.
    fn serde_yaml_like(text: &str) -> serde_json::Value {
        let mut root = serde_json::Map::new();
        let mut path: Vec<String> = Vec::new();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let depth = (line.len() - line.trim_start().len()) / 2;
            let Some((key, value)) = line.trim().split_once(':') else {
                continue;
            };
            path.truncate(depth);
            let mut node = &mut root;
            for p in &path {
                node = node
                    .entry(p.clone())
                    .or_insert_with(|| serde_json::Value::Object(Default::default()))
                    .as_object_mut()
                    .expect("a mapping");
            }
            match value.trim() {
                "" => path.push(key.to_string()),
                v => {
                    node.insert(key.to_string(), v.into());
                }
            }
        }
        serde_json::Value::Object(root)
    }
}
