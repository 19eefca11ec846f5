//! The judge `--runs auto` asks after each round, built on today's analysis
//! (bootstrap ratios of medians). A candidate is settled when its mean-RSS
//! ratio interval is clear of the `--min-saving` threshold on one side and
//! its wall-time ratio interval clear of the `--max-slowdown` budget on one
//! side; it is dropped when it is settled out (cannot save enough, or is
//! slower beyond the budget). Nothing settles before both sides have
//! `MIN_OK_RUNS` ok runs: the percentile bootstrap of two values gives
//! intervals far narrower than the noise (one comparison in three misses the
//! truth at n = 2), and stopping on them would pick the luckiest round. The
//! inside of `settle` is meant to be replaced by the paired-interval
//! decision; the driver only sees `Decision`.

use super::rounds::{Decision, Judge};
use crate::analyze::analyze_with_budget;
use crate::analyze::interval::has_interval;
use crate::analyze::types::{ConfigSummary, Ratio};
use crate::options::rounds::JudgeSettings;

/// The fewest ok runs, of the candidate and of the baseline, to judge on.
const MIN_OK_RUNS: usize = 3;

/// Where one candidate stands.
#[derive(Debug, Clone, PartialEq)]
enum Standing {
    /// Saves memory within the budget: keeps running until the others settle.
    SettledIn,
    /// Settled out, with the reason: runs no more rounds.
    Out(String),
    /// Not yet known, and why.
    Open(String),
}

/// A judge for `compare --runs auto` with today's analysis.
pub(crate) fn today(baseline: &str, judge: &JudgeSettings) -> Judge<'static> {
    let baseline = baseline.to_string();
    let judge = judge.clone();
    Box::new(move |experiment| {
        let analysis = analyze_with_budget(experiment, &baseline, judge.max_slowdown_pct)?;
        let mut decision = Decision::default();
        let base_ok = analysis.summaries[analysis.baseline].ok_runs;
        for (index, summary) in analysis.summaries.iter().enumerate() {
            if index == analysis.baseline {
                continue;
            }
            match settle(summary, base_ok, &judge) {
                Standing::SettledIn => {}
                Standing::Out(_) => decision.dropped.push(index),
                Standing::Open(why) => decision.open.push((index, why)),
            }
        }
        decision.stop = decision.open.is_empty();
        Ok(decision)
    })
}

fn settle(summary: &ConfigSummary, base_ok: usize, judge: &JudgeSettings) -> Standing {
    if summary.ok_runs == 0 && summary.total_runs >= 2 {
        return Standing::Out("every run failed".into());
    }
    if summary.ok_runs.min(base_ok) < MIN_OK_RUNS {
        return Standing::Open(format!("fewer than {MIN_OK_RUNS} ok runs to compare"));
    }
    let (Some(memory), Some(wall)) = (summary.ratio("mean_rss_bytes"), summary.ratio("wall_s"))
    else {
        return Standing::Open("too few ok runs for a ratio".into());
    };
    // A lone pair gives a point without interval (NaN bounds): nothing to
    // settle on yet.
    if !has_interval(&memory) || !has_interval(&wall) {
        return Standing::Open("too few rounds for an interval".into());
    }
    let saving = 1.0 - judge.min_saving_pct / 100.0;
    let budget = 1.0 + judge.max_slowdown_pct / 100.0;
    if memory.ci_low > saving {
        return Standing::Out(format!("cannot save {}%", judge.min_saving_pct));
    }
    if wall.ci_low > budget {
        return Standing::Out(format!("slower than {}%", judge.max_slowdown_pct));
    }
    let mut why = Vec::new();
    if memory.ci_high >= saving {
        why.push(format!("memory {} straddles {saving:.2}x", shown(memory)));
    }
    if wall.ci_high > budget {
        why.push(format!("wall time {} straddles {budget:.2}x", shown(wall)));
    }
    if why.is_empty() {
        Standing::SettledIn
    } else {
        Standing::Open(why.join(", "))
    }
}

fn shown(r: Ratio) -> String {
    format!("{:.2}x [{:.2}, {:.2}]", r.value, r.ci_low, r.ci_high)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::types::MetricSummary;

    fn summary(memory: (f64, f64), wall: (f64, f64)) -> ConfigSummary {
        let ratio = |(low, high): (f64, f64)| Ratio {
            value: (low + high) / 2.0,
            ci_low: low,
            ci_high: high,
        };
        let metric = |id: &str, r| {
            let summary = MetricSummary {
                estimate: None,
                ratio: Some(ratio(r)),
            };
            (id.to_string(), summary)
        };
        ConfigSummary {
            ok_runs: 3,
            total_runs: 3,
            metrics: vec![metric("mean_rss_bytes", memory), metric("wall_s", wall)],
        }
    }

    #[test]
    fn settles_on_either_side_of_the_thresholds() {
        let judge = JudgeSettings {
            max_slowdown_pct: 5.0,
            min_saving_pct: 3.0,
            memory_metric: None,
            perf_metric: None,
        };
        let at = |m, w| settle(&summary(m, w), 3, &judge);
        assert_eq!(at((0.80, 0.90), (0.98, 1.02)), Standing::SettledIn);
        assert!(
            matches!(at((0.98, 1.02), (0.9, 1.2)), Standing::Out(w) if w.contains("cannot save 3%"))
        );
        assert!(matches!(at((0.80, 0.90), (1.10, 1.20)), Standing::Out(w) if w.contains("slower")));
        assert!(
            matches!(at((0.95, 0.99), (0.98, 1.02)), Standing::Open(w) if w.contains("memory"))
        );
        assert!(
            matches!(at((0.80, 0.90), (1.00, 1.08)), Standing::Open(w) if w.contains("wall time"))
        );
        let early = settle(&summary((0.80, 0.90), (0.98, 1.02)), 2, &judge);
        assert!(matches!(early, Standing::Open(w) if w.contains("fewer than 3")));
    }
}
