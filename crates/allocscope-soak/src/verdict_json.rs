//! The soak's verdict as data for `--export-json`, as `compare`'s is: the
//! outcome, and per configuration its settling, level, growth, why it
//! grows and how it stands against the baseline, each a word from a fixed
//! list with its figures. The reporters render the same `Verdict` into
//! words (`render.rs`); the JSON carries that text beside the data.

use crate::growth::Growth;
use crate::verdict::{Cause, ConfigVerdict, Outcome, Verdict, CPU_BUDGET};
use allocscope_analyze::figures::{Estimate, Ratio};
use serde_json::{json, Value};

/// A number, or null when it is not finite.
fn finite(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

fn ratio(r: &Ratio) -> Value {
    json!({"value": finite(r.value), "ci_low": finite(r.ci_low), "ci_high": finite(r.ci_high)})
}

fn rate(g: &Growth) -> Value {
    json!({
        "bytes_per_h": finite(g.per_hour),
        "ci_low": finite(g.ci_low),
        "ci_high": finite(g.ci_high),
    })
}

fn level(e: &Estimate) -> Value {
    json!({"bytes": finite(e.median), "ci_low": finite(e.ci_low), "ci_high": finite(e.ci_high)})
}

/// `leak`, `leak_and_allocator`, `allocator_holds`, `outside_heap`,
/// `unclear` or `unmeasured`.
pub fn cause_word(cause: Cause) -> &'static str {
    match cause {
        Cause::Leak => "leak",
        Cause::LeakAndAllocator => "leak_and_allocator",
        Cause::AllocatorHolds => "allocator_holds",
        Cause::OutsideHeap => "outside_heap",
        Cause::Unclear => "unclear",
        Cause::Unmeasured => "unmeasured",
    }
}

/// The verdict as an object.
pub fn verdict_json(verdict: &Verdict) -> Value {
    json!({
        "baseline": verdict.baseline,
        "outcome": outcome(&verdict.outcome),
        "configurations": verdict.configs.iter().map(config).collect::<Vec<_>>(),
    })
}

fn outcome(outcome: &Outcome) -> Value {
    match outcome {
        Outcome::Pick {
            label,
            plateau_ratio,
        } => json!({"kind": "pick", "label": label, "plateau_ratio": ratio(plateau_ratio)}),
        Outcome::KeepBaseline => json!({"kind": "keep_baseline"}),
        Outcome::LeakEverywhere => json!({"kind": "leak_everywhere"}),
        Outcome::OutsideHeapEverywhere => json!({"kind": "outside_heap_everywhere"}),
        Outcome::Inconclusive {
            separate_after_s,
            replicas,
        } => json!({
            "kind": "inconclusive",
            "growths_separate_after_s": separate_after_s,
            "plateaus_separate_with_replicas": replicas,
        }),
    }
}

fn config(c: &ConfigVerdict) -> Value {
    let s = &c.summary;
    json!({
        "label": c.label,
        "replicas": s.replicas,
        "settling": s.settling.word(),
        "level": level(&s.level),
        "growth": rate(&s.growth),
        "growth_seen_s": finite(s.seen_s),
        "period_s": s.period_s,
        "settled_by_s": c.settled_by_s,
        "settles_after_s": s.settles_after_s,
        "cause": c.cause.map(cause_word),
        "cpu": c.cpu.as_ref().map(|cpu| json!({
            "cores": finite(cpu.cores),
            "ratio": cpu.ratio.as_ref().map(ratio),
            "over_budget": cpu.over_budget,
        })),
        "load": c.load.iter().map(|l| json!({
            "name": l.name,
            "higher_is_better": l.higher_is_better,
            "value": finite(l.value),
            "ratio": l.ratio.as_ref().map(ratio),
            "over_budget": l.over_budget,
        })).collect::<Vec<_>>(),
        "reasons": reasons(c),
    })
}

/// How the configuration stands against the baseline, each a reason with
/// its figures: its plateau lower or higher, its growth slower or faster,
/// or neither yet with what would separate them; and its CPU time over the
/// budget, which rules it out. The baseline has none.
fn reasons(c: &ConfigVerdict) -> Vec<Value> {
    let Some(s) = &c.separation else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if s.levels_separate {
        let word = if s.plateau_ratio.value < 1.0 {
            "plateau_lower"
        } else {
            "plateau_higher"
        };
        out.push(json!({"reason": word, "plateau_ratio": ratio(&s.plateau_ratio)}));
    }
    if s.growths_separate {
        let word = if s.growth_difference.per_hour < 0.0 {
            "grows_slower"
        } else {
            "grows_faster"
        };
        out.push(json!({"reason": word, "growth_difference": rate(&s.growth_difference)}));
    }
    if out.is_empty() {
        out.push(json!({
            "reason": "not_separated",
            "plateau_ratio": ratio(&s.plateau_ratio),
            "growth_difference": rate(&s.growth_difference),
            "growths_separate_after_s": s.growths_separate_at_s,
            "plateaus_separate_with_replicas": s.levels_separate_with_replicas,
        }));
    }
    let budget_pct = 100.0 * (CPU_BUDGET - 1.0);
    if let Some(cpu) = c.cpu.as_ref().filter(|cpu| cpu.over_budget) {
        out.push(json!({
            "reason": "cpu_over_budget",
            "cpu_ratio": cpu.ratio.as_ref().map(ratio),
            "budget_pct": finite(budget_pct),
        }));
    }
    for load in c.load.iter().filter(|l| l.over_budget) {
        out.push(json!({
            "reason": "load_over_budget",
            "metric": load.name,
            "higher_is_better": load.higher_is_better,
            "load_ratio": load.ratio.as_ref().map(ratio),
            "budget_pct": finite(budget_pct),
        }));
    }
    out
}
