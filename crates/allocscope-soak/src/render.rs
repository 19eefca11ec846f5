//! The soak's verdict in a few sentences: the pick and its plateau against
//! the baseline's, each growing configuration's growth with why it grows,
//! when the pick settled; or the leak no allocator fixes; or what it would
//! take to decide.

use crate::growth::{Growth, Settling, PERSISTS_FOR_S};
use crate::projection::{Horizon, Reach, COVERS, MAX_FACTOR};
use crate::verdict::{Cause, ConfigVerdict, Outcome, Verdict, CPU_BUDGET};
use allocscope_analyze::figures::Ratio;
use allocscope_core::units::{format_bytes, format_seconds, ColumnUnit, Unit};

/// `12.3 MiB [12.1 MiB, 12.5 MiB]`: a size and its interval.
pub fn bytes_text(value: f64, low: f64, high: f64) -> String {
    let [value, low, high] = [value, low, high].map(format_bytes);
    format!("{value} [{low}, {high}]")
}

/// `120 MiB/h [95.0, 150]`: the rate and its interval in one unit.
pub fn growth_text(growth: &Growth) -> String {
    let unit = ColumnUnit::for_values(
        Unit::Bytes,
        [
            growth.per_hour.abs(),
            growth.ci_low.abs(),
            growth.ci_high.abs(),
        ],
    );
    format!(
        "{} {}/h [{}, {}]",
        unit.number(growth.per_hour),
        unit.name(),
        unit.number(growth.ci_low),
        unit.number(growth.ci_high)
    )
}

/// A horizon in words: `at 24 h (2.4x the 10.0 h the growth was
/// estimated from): 1.20 GiB [1.10 GiB, 1.31 GiB], a projection ...`, or
/// why there is no figure.
pub fn horizon_text(h: &Horizon) -> String {
    let reach = format!(
        "at {} ({} the {} the growth was estimated from)",
        format_seconds(h.age_s),
        factor_text(h.factor),
        format_seconds(h.observed_s)
    );
    match h.reach {
        Reach::Projected(p) => format!(
            "{reach}: {}, a projection, not a measurement ({COVERS})",
            bytes_text(p.value, p.ci_low, p.ci_high)
        ),
        Reach::TooFar => format!(
            "{reach}: not projected, beyond the {MAX_FACTOR:.0}x a line is carried; a soak \
             closer to that long would tell"
        ),
        Reach::Slowing => format!(
            "{reach}: not projected, its growth slows (a concave approach to a level), which \
             a line does not follow"
        ),
        Reach::NotGrowing => {
            format!("{reach}: no growth beyond noise to project; judged by its level")
        }
    }
}

/// `2.4x`, `144x`.
pub fn factor_text(factor: f64) -> String {
    if factor < 10.0 {
        format!("{factor:.1}x")
    } else {
        format!("{factor:.0}x")
    }
}

/// `0.52x [0.49, 0.55]`, or without an interval with one replica a side.
pub fn ratio_text(ratio: &Ratio) -> String {
    if ratio.ci_low.is_finite() && ratio.ci_high.is_finite() {
        format!(
            "{:.2}x [{:.2}, {:.2}]",
            ratio.value, ratio.ci_low, ratio.ci_high
        )
    } else {
        format!(
            "{:.2}x (no interval: one instance a side has no spread to judge a level by)",
            ratio.value
        )
    }
}

/// What a configuration's memory does, after its label.
fn course(config: &ConfigVerdict) -> String {
    let label = &config.label;
    match (config.summary.settling, config.cause) {
        (Settling::Grows | Settling::Rising, cause) => {
            let why = match cause {
                Some(Cause::Leak) => " with its live heap: a leak in the program",
                Some(Cause::LeakAndAllocator) => {
                    " with its live heap and faster: a leak in the program, and the allocator \
                     holds more besides"
                }
                Some(Cause::AllocatorHolds) => {
                    " while its live heap is flat: the allocator holds it (fragmentation), not a leak"
                }
                Some(Cause::OutsideHeap) => {
                    " while its live heap and its allocator's free memory are flat: it grows \
                     outside the malloc heap (file cache, shared memory, memory the program maps \
                     itself), which no allocator setting changes"
                }
                Some(Cause::Unclear) => {
                    ", and its live heap does not tell yet whether the program or the allocator \
                     holds it"
                }
                Some(Cause::Unmeasured) | None => {
                    " (whether the program leaks or the allocator holds it is unknown without \
                     its live heap)"
                }
            };
            let seen = match config.summary.settling {
                Settling::Rising => format!(
                    " (seen for {}, under the {} after which growth counts as settled)",
                    format_seconds(config.summary.seen_s),
                    format_seconds(PERSISTS_FOR_S)
                ),
                _ => String::new(),
            };
            format!(
                "{label} still grows {}{seen}{why}",
                growth_text(&config.summary.growth)
            )
        }
        (Settling::Plateau, _) => match config.settled_by_s {
            Some(at) => format!(
                "{label} stopped growing after {} at most",
                format_seconds(at)
            ),
            None => format!("{label} is flat"),
        },
        (Settling::Open, _) => match config.summary.settles_after_s {
            Some(at) => format!(
                "{label} has not settled ({}), which would take about {} at the current noise",
                growth_text(&config.summary.growth),
                format_seconds(at)
            ),
            None => format!(
                "{label} has not settled ({})",
                growth_text(&config.summary.growth)
            ),
        },
    }
}

/// The verdict as a paragraph of one or a few sentences.
pub fn render(verdict: &Verdict) -> String {
    let baseline = &verdict.baseline;
    match &verdict.outcome {
        Outcome::Pick {
            label,
            plateau_ratio,
        } => {
            let mut parts = vec![format!(
                "Use {label}: plateau {} of {baseline}'s",
                ratio_text(plateau_ratio)
            )];
            parts.extend(growing(verdict, Some(label)));
            parts.extend(
                verdict
                    .configs
                    .iter()
                    .filter(|c| &c.label == label)
                    .map(course),
            );
            parts.extend(over_budget(verdict));
            format!("{}.", parts.join("; "))
        }
        Outcome::KeepBaseline => {
            let over = over_budget(verdict);
            let mut parts = vec![if verdict.configs.len() == 1 {
                format!(
                    "Only {baseline} was soaked: there is no other configuration to set against it"
                )
            } else if over.is_empty() {
                format!(
                    "Keep {baseline}: every other configuration grows faster or plateaus higher"
                )
            } else {
                let what = match verdict
                    .configs
                    .iter()
                    .any(|c| c.load.iter().any(|l| l.over_budget))
                {
                    true => "beyond the budget in CPU time or its load's figures",
                    false => "more CPU time than the budget",
                };
                format!(
                    "Keep {baseline}: every other configuration grows faster, plateaus higher or \
                     costs {what}"
                )
            }];
            parts.extend(over);
            parts.extend(growing(verdict, None));
            format!("{}.", parts.join("; "))
        }
        Outcome::LeakEverywhere => format!(
            "All configurations grow with their live heap: a leak in the program, which no \
             allocator fixes ({}).",
            growths(verdict)
        ),
        Outcome::OutsideHeapEverywhere => format!(
            "Keep {}: all configurations grow outside the malloc heap (file cache, shared \
             memory, memory the program maps itself) while their live heap and allocator's \
             free memory are flat, which no allocator setting changes ({}); no plateau is \
             lower than {}'s beyond noise.",
            verdict.baseline,
            growths(verdict),
            verdict.baseline
        ),
        Outcome::Inconclusive {
            separate_after_s,
            replicas,
        } => inconclusive(verdict, *separate_after_s, *replicas),
    }
}

/// Nothing separates yet: what would, at the current noise.
fn inconclusive(
    verdict: &Verdict,
    separate_after_s: Option<f64>,
    replicas: Option<usize>,
) -> String {
    let baseline = &verdict.baseline;
    let mut would = Vec::new();
    if let Some(at) = separate_after_s {
        would.push(format!(
            "the growth rates would separate after about {} of soak",
            format_seconds(at)
        ));
    }
    if let Some(r) = replicas {
        would.push(format!("the plateaus with {r} replicas a side"));
    }
    let mut parts = vec![format!(
        "Inconclusive: the plateaus and growth rates do not separate from {baseline}'s \
         yet"
    )];
    let single = verdict.configs.iter().any(|c| {
        c.separation
            .as_ref()
            .is_some_and(|s| !s.plateau_ratio.ci_low.is_finite())
    });
    if !would.is_empty() {
        parts.push(format!("at the current noise {}", would.join(", and ")));
    } else if !single {
        parts.push(
            "at the current noise and differences no soak length would separate them".to_string(),
        );
    }
    if single {
        parts.push(
            "one instance of a configuration has no spread to judge a plateau by: run \
             two or more of each"
                .to_string(),
        );
    }
    parts.extend(growing(verdict, None));
    format!("{}.", parts.join("; "))
}

/// Each configuration whose CPU time or a load figure lies beyond the
/// budget, which rules it out whatever its memory: `jemalloc not chosen:
/// CPU time 1.31x [1.22, 1.41] of glibc's, over the 5% budget`, `... the
/// load's rps 0.80x [0.76, 0.84] of glibc's, over the 5% budget` (a
/// throughput is over it below 1/1.05).
fn over_budget(verdict: &Verdict) -> Vec<String> {
    let budget_pct = 100.0 * (CPU_BUDGET - 1.0);
    let baseline = &verdict.baseline;
    (verdict.configs.iter())
        .filter(|c| c.over_budget())
        .map(|c| {
            let cpu = (c.cpu.as_ref().filter(|cpu| cpu.over_budget)).and_then(|cpu| {
                Some(format!(
                    "CPU time {} of {baseline}'s",
                    ratio_text(cpu.ratio.as_ref()?)
                ))
            });
            let load = (c.load.iter().filter(|l| l.over_budget)).filter_map(|l| {
                Some(format!(
                    "the load's {} {} of {baseline}'s",
                    l.name,
                    ratio_text(l.ratio.as_ref()?)
                ))
            });
            let costs: Vec<String> = cpu.into_iter().chain(load).collect();
            format!(
                "{} not chosen: {}, over the {budget_pct:.0}% budget",
                c.label,
                costs.join(", ")
            )
        })
        .collect()
}

/// The course of each configuration that grows beyond noise, but `skip`.
fn growing(verdict: &Verdict, skip: Option<&str>) -> Vec<String> {
    (verdict.configs.iter())
        .filter(|c| Some(c.label.as_str()) != skip && c.summary.settling.grows())
        .map(course)
        .collect()
}

/// Each configuration's growth rate: `glibc 60.0 MiB/h [55.0, 65.0]; ...`.
fn growths(verdict: &Verdict) -> String {
    (verdict.configs.iter())
        .map(|c| format!("{} {}", c.label, growth_text(&c.summary.growth)))
        .collect::<Vec<_>>()
        .join("; ")
}
