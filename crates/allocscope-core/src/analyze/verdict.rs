//! The verdict: which configuration to run with, with one of three honest
//! outcomes (docs/statistics.md). Each candidate is judged by its ratios to
//! the baseline, paired within rounds, on a memory measure (mean RSS, mean
//! PSS for a multi-process tree, a service's memory at the end of the load,
//! or `--memory-metric`) and a performance measure (wall time, a service's
//! p95 latency or load duration, or `--perf-metric`, possibly the program's
//! own figure): *recommend* the lowest-memory candidate whose saving is
//! beyond `--min-saving` and whose cost stays within `--max-slowdown`, both
//! beyond noise; *keep the default* when every candidate is settled out;
//! otherwise *inconclusive*, naming who is unsettled, on which side, and
//! about how many more rounds would settle it. It says how to deploy the
//! winner (shell, systemd, Dockerfile, Kubernetes).

use super::cause::{explain as explain_cause, Cause};
use super::choice::{measures, Measures};
use super::decide::{decide as decide_outcome, more_rounds_words, Decision, Side};
pub use super::deploy::{deploy, sh_quote, Deploy, KeptLimit};
use super::figures::Ratio;
use super::judge::{judge_all, shown, Judged};
use super::metric_table::MetricDef;
use crate::judging::JudgeSettings;
use crate::model::{RunStatus, StoredExperiment};
use serde::{Serialize, Serializer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// `config` is recommended over the baseline.
    Recommend,
    /// Every candidate is settled out: keep the baseline (`config` names it).
    KeepDefault,
    /// Some candidate is not settled yet; `config` is absent.
    Inconclusive,
}

/// A candidate whose decision is not settled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unsettled {
    pub config: String,
    /// `memory`, `performance` or `memory and performance`.
    pub side: String,
    /// Estimated further rounds that would settle it, when estimable.
    pub more_rounds: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub outcome: Outcome,
    /// The configuration to run with (the baseline when keeping the default).
    pub config: Option<String>,
    /// One paragraph: why.
    pub reason: String,
    /// One plain sentence per non-baseline configuration: what it saved and
    /// cost, and where it stands; then notes about the measures.
    pub explanation: Vec<String>,
    /// The metric-table row memory was judged by; in JSON its id
    /// (`memory_metric`: e.g. `mean_rss_bytes`, `mean_pss_bytes`,
    /// `rss_end_load_bytes`).
    #[serde(rename = "memory_metric", serialize_with = "judged_key")]
    pub memory: MetricDef,
    /// The row the budget applies to; in JSON (`performance_metric`) its id
    /// (`wall_s`, `p95_ms`), or a `--metric`'s NAME.
    #[serde(rename = "performance_metric", serialize_with = "judged_key")]
    pub performance: MetricDef,
    pub max_slowdown_pct: f64,
    pub min_saving_pct: f64,
    /// The candidates still open (inconclusive outcome, or alongside a
    /// recommendation that another candidate might still beat).
    pub unsettled: Vec<Unsettled>,
    /// Present only for `Recommend`.
    pub deploy: Option<Deploy>,
    /// Without a recommendation, the memory limit of the configuration that
    /// stays (the default kept, or the baseline while the verdict is open)
    /// and its container lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept_limit: Option<KeptLimit>,
    /// Where the memory went and what the recommendation (else the
    /// candidate that saved most) removed; absent without breakdowns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
}

/// The key JSON names a judged row by: its id, or a `--metric`'s NAME.
fn judged_key<S: Serializer>(row: &MetricDef, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(if row.is_user() { row.name() } else { &row.id })
}

fn ratio_words(r: &Ratio) -> String {
    if r.ci_low.is_finite() && r.ci_high.is_finite() {
        format!("{:.2}x [{:.2}, {:.2}]", r.value, r.ci_low, r.ci_high)
    } else {
        format!("{:.2}x (one round: no interval)", r.value)
    }
}

/// ` glibc:arena_max=2 (mean PSS 0.87x [0.82, 0.92]) is within noise of it:
/// either saves as much.` for the other qualifiers whose memory interval
/// overlaps the winner's; empty when the winner beats them beyond noise.
fn within_noise_of(
    judged: &[Judged],
    winner: usize,
    memory: &str,
    name: &dyn Fn(usize) -> String,
) -> String {
    let Some((low, high)) = judged[winner].standing.memory_bounds else {
        return String::new();
    };
    let ties: Vec<String> = judged
        .iter()
        .enumerate()
        .filter(|&(i, j)| i != winner && j.standing.qualifies())
        .filter_map(|(_, j)| {
            let (l, h) = j.standing.memory_bounds?;
            let r = j.memory.as_ref()?.ratio();
            (l <= high && h >= low)
                .then(|| format!("{} ({memory} {})", name(j.index), ratio_words(&r)))
        })
        .collect();
    match ties.len() {
        0 => String::new(),
        1 => format!(" {} is within noise of it: either saves as much.", ties[0]),
        _ => format!(
            " {} are within noise of it: any saves as much.",
            ties.join(", ")
        ),
    }
}

fn pct(ratio: f64) -> String {
    format!("{:.0}%", (ratio - 1.0).abs() * 100.0)
}

/// Where a candidate stands, in words.
fn standing_words(
    j: &Judged,
    judging: &JudgeSettings,
    memory: &str,
    perf: &str,
    outranked_by: Option<String>,
) -> String {
    let s = &j.standing;
    if s.qualifies() {
        return "qualifies".to_string();
    }
    if let Some(leader) = outranked_by {
        return format!(
            "not chosen: uses more {memory} than {leader}, which qualifies, beyond noise"
        );
    }
    let mut why = Vec::new();
    match s.memory {
        Side::Bad => why.push(format!(
            "does not save {}% of {memory} beyond noise",
            judging.min_saving_pct
        )),
        Side::Open => why.push(format!("{memory} unsettled")),
        Side::Good => {}
    }
    match s.performance {
        Side::Bad => why.push(format!(
            "over the {}% budget on {perf}",
            judging.max_slowdown_pct
        )),
        Side::Open => why.push(format!("{perf} unsettled against the budget")),
        Side::Good => {}
    }
    let verdict = if s.settled_out() {
        "not chosen"
    } else {
        "open"
    };
    let more = s
        .more_rounds
        .map(|n| format!(" ({} would settle it)", more_rounds_words(n)))
        .unwrap_or_default();
    format!("{verdict}: {}{more}", why.join(", "))
}

fn side_of(j: &Judged) -> String {
    match (
        j.standing.memory == Side::Open,
        j.standing.performance == Side::Open,
    ) {
        (true, true) => "memory and performance",
        (true, false) => "memory",
        _ => "performance",
    }
    .to_string()
}

/// A note when wall time is flat across the configurations:
/// a fixed-duration benchmark, whose wall time measures nothing.
fn fixed_duration_note(experiment: &StoredExperiment, perf: &MetricDef) -> Option<String> {
    (perf.id == "wall_s" && walls_flat(experiment)).then(|| {
        "Every configuration's median wall time is within 1% of the others': the program likely \
         runs for a fixed time, so wall time measures nothing here. Judge by its own throughput instead, e.g. \
         --metric 'ops=([0-9.]+) ops/sec' --higher-is-better ops --perf-metric ops."
            .to_string()
    })
}

/// Every configuration's median wall time within 1% of the others' (at
/// least 4 ok runs): a fixed-duration program, whose single runs may still
/// jitter by a few percent (db_bench's did by 2-3%) with start-up noise.
pub fn walls_flat(experiment: &StoredExperiment) -> bool {
    let mut runs = 0;
    let mut medians: Vec<f64> = Vec::new();
    for config in &experiment.configs {
        let walls: Vec<f64> = config
            .runs
            .iter()
            .filter(|r| r.record.status == RunStatus::Ok)
            .map(|r| r.record.wall_s)
            .collect();
        runs += walls.len();
        if let Some(median) = super::stats::median(&walls) {
            medians.push(median);
        }
    }
    let (lo, hi) = medians
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &w| {
            (lo.min(w), hi.max(w))
        });
    runs >= 4 && medians.len() >= 2 && lo > 0.0 && hi / lo <= 1.01
}

/// What every sentence of the verdict is written from: the experiment, its
/// baseline, the settings and the two rows it is judged by, and each
/// candidate's standing.
struct Context<'a> {
    experiment: &'a StoredExperiment,
    baseline: usize,
    judging: &'a JudgeSettings,
    /// The experiment's metric table.
    table: &'a [MetricDef],
    measures: Measures,
    judged: Vec<Judged>,
}

impl Context<'_> {
    fn name(&self, i: usize) -> String {
        self.experiment.configs[i].config.name.clone()
    }

    fn base_name(&self) -> String {
        self.experiment
            .configs
            .get(self.baseline)
            .map(|c| c.config.name.clone())
            .unwrap_or_default()
    }

    /// The two rows' words: `mean RSS`, `wall time`.
    fn words(&self) -> (&str, &str) {
        (&self.measures.memory.label, &self.measures.perf.label)
    }

    /// `OOM-killed under the 64.0 MiB limit in 3 of 3 runs`.
    fn oom_words(&self, (killed, runs): (usize, usize)) -> String {
        let limit = self
            .experiment
            .info
            .host
            .run_memory_limit_bytes
            .map_or(String::new(), |b| {
                format!(" under the {} limit", crate::units::format_bytes(b as f64))
            });
        format!("OOM-killed{limit} in {killed} of {runs} runs")
    }

    /// The note when the baseline itself was OOM-killed: nothing can be
    /// compared to runs that did not finish.
    fn baseline_oom(&self) -> Option<String> {
        let base = self.experiment.configs.get(self.baseline)?;
        let killed = super::judge::oom_killed(base)?;
        Some(format!(
            "The baseline {} was {}: raise --memory-limit, or choose a --baseline that fits \
             under it.",
            self.base_name(),
            self.oom_words(killed)
        ))
    }

    /// One sentence per candidate, then the baseline's OOM kills if any.
    /// Those a race ruled out share one sentence (its own table says why).
    fn explanation(&self) -> Vec<String> {
        let (ruled, kept): (Vec<&Judged>, Vec<&Judged>) = self
            .judged
            .iter()
            .partition(|j| j.standing.ruled_out.is_some());
        let ruled = (!ruled.is_empty()).then(|| {
            let names: Vec<String> = ruled
                .iter()
                .map(|j| {
                    let when = j.standing.ruled_out.as_deref().unwrap_or_default();
                    format!("{} ({when})", self.name(j.index))
                })
                .collect();
            format!("Not chosen, dropped by the race: {}.", names.join(", "))
        });
        let candidates = kept.into_iter().map(|j| self.explain(j));
        candidates.chain(ruled).chain(self.baseline_oom()).collect()
    }

    /// `jemalloc: mean RSS 0.60x [...] (saves 40%), wall time ...; qualifies.`
    fn explain(&self, j: &Judged) -> String {
        if let Some(killed) = j.standing.oom_killed {
            return format!(
                "{}: not chosen: {}.",
                self.name(j.index),
                self.oom_words(killed)
            );
        }
        let (mw, pw) = self.words();
        let figures = match (&j.memory, &j.perf) {
            (Some(m), Some(p)) => {
                let (m, cost) = (m.ratio(), p.ratio());
                // A throughput reads as the tables show it (1.10x: 10% more).
                let p = shown(&self.measures.perf, p);
                format!(
                    "{mw} {} ({} {}), {pw} {} ({} {})",
                    ratio_words(&m),
                    if m.value <= 1.0 { "saves" } else { "costs" },
                    pct(m.value),
                    ratio_words(&p),
                    if cost.value <= 1.0 {
                        "better by"
                    } else {
                        "worse by"
                    },
                    pct(p.value)
                )
            }
            _ => "no comparable figures".to_string(),
        };
        let leader = j
            .standing
            .outranked_by
            .map(|k| self.name(self.judged[k].index));
        format!(
            "{}: {figures}; {}.",
            self.name(j.index),
            standing_words(j, self.judging, mw, pw, leader)
        )
    }

    /// The recommendation of candidate `k` (an index into `judged`): the
    /// reason and the deploy lines.
    fn recommend(&self, verdict: &mut Verdict, k: usize) {
        let (mw, pw) = self.words();
        let j = &self.judged[k];
        let c = &self.experiment.configs[j.index];
        let m = j.memory.as_ref().map(|m| m.ratio());
        let p = j.perf.as_ref().map(|p| shown(&self.measures.perf, p));
        let qualified = self
            .judged
            .iter()
            .filter(|j| j.standing.qualifies())
            .count();
        let others = if qualified > 1 {
            let name = |i: usize| self.name(i);
            format!(
                " It has the lowest {mw} of the {qualified} configurations that qualify.{}",
                within_noise_of(&self.judged, k, mw, &name)
            )
        } else {
            String::new()
        };
        let unsettled = if verdict.unsettled.is_empty() {
            String::new()
        } else {
            let names: Vec<&str> = verdict
                .unsettled
                .iter()
                .map(|u| u.config.as_str())
                .collect();
            format!(
                " Still unsettled, and possibly better: {}.",
                names.join(", ")
            )
        };
        verdict.outcome = Outcome::Recommend;
        verdict.config = Some(c.config.name.clone());
        verdict.reason = format!(
            "Use {}: {mw} {} of {}'s, a saving beyond noise and beyond the {}% minimum; {pw} {} \
             stays within the {}% budget.{others}{unsettled}",
            c.config.name,
            m.map(|m| ratio_words(&m)).unwrap_or_default(),
            self.base_name(),
            self.judging.min_saving_pct,
            p.map(|p| ratio_words(&p)).unwrap_or_default(),
            self.judging.max_slowdown_pct,
        );
        let limit = self.limit_of(j.index);
        let command = c.config.command.as_ref();
        verdict.deploy = Some(deploy(
            &c.config,
            command.unwrap_or(&self.experiment.info.command),
            limit.as_ref(),
        ));
    }

    /// The memory limit configuration `index` needs, if known.
    fn limit_of(&self, index: usize) -> Option<super::limit::LimitNeed> {
        super::limit::summarize(
            self.experiment,
            self.baseline,
            self.table,
            self.judging.limit_headroom_pct,
        )
        .into_iter()
        .nth(index)
        .flatten()
    }

    /// The baseline's limit, for a verdict that keeps it or is still open.
    fn kept_limit(&self) -> Option<KeptLimit> {
        self.limit_of(self.baseline)
            .map(|l| KeptLimit::new(&self.base_name(), &l))
    }

    fn keep_default(&self, verdict: &mut Verdict) {
        let (mw, pw) = self.words();
        let base_name = self.base_name();
        verdict.outcome = Outcome::KeepDefault;
        // A race's dropped candidates were ranked out on a reading or two,
        // not settled by an interval: the claim covers those it kept.
        let ruled = self
            .judged
            .iter()
            .filter(|j| j.standing.ruled_out.is_some())
            .count();
        let (which, rest) = match ruled {
            0 => ("no configuration".to_string(), String::new()),
            n => (
                format!(
                    "of the {} candidates the race judged by their intervals, none",
                    self.judged.len() - n
                ),
                format!(" The other {n} were dropped on their first readings (the race below)."),
            ),
        };
        verdict.reason = format!(
            "Keep the default ({base_name}): {which} saves {}% or more of {mw} \
             while keeping {pw} within {}% of the baseline, beyond run-to-run noise.{rest}",
            self.judging.min_saving_pct, self.judging.max_slowdown_pct
        );
        verdict.config = Some(base_name);
        verdict.kept_limit = self.kept_limit();
    }

    /// The verdict before deciding: inconclusive, with the explanation and
    /// the candidates still open.
    fn open_verdict(&self) -> Verdict {
        Verdict {
            outcome: Outcome::Inconclusive,
            config: None,
            reason: String::new(),
            explanation: self.explanation(),
            memory: self.measures.memory.clone(),
            performance: self.measures.perf.clone(),
            max_slowdown_pct: self.judging.max_slowdown_pct,
            min_saving_pct: self.judging.min_saving_pct,
            unsettled: self
                .judged
                .iter()
                .filter(|j| j.standing.is_open())
                .map(|j| Unsettled {
                    config: self.name(j.index),
                    side: side_of(j),
                    more_rounds: j.standing.more_rounds,
                })
                .collect(),
            deploy: None,
            kept_limit: None,
            cause: None,
        }
    }

    /// Open: why, and the limit of the baseline that runs meanwhile.
    fn inconclusive(&self, verdict: &mut Verdict) {
        verdict.reason = self.inconclusive_reason(&verdict.unsettled);
        verdict.kept_limit = self.kept_limit();
    }

    /// Who is unsettled, on which side, and how many rounds the baseline had.
    fn inconclusive_reason(&self, unsettled: &[Unsettled]) -> String {
        if self.judged.is_empty() {
            return "Inconclusive: there is no configuration besides the baseline to compare; \
                    add -a CONFIG."
                .to_string();
        }
        let rounds = self.experiment.configs.get(self.baseline).map_or(0, |c| {
            c.runs
                .iter()
                .filter(|r| r.record.status == RunStatus::Ok)
                .count()
        });
        let parts: Vec<String> = unsettled
            .iter()
            .map(|u| {
                let more = u
                    .more_rounds
                    .map(|n| format!(" ({})", more_rounds_words(n)));
                format!("{} on {}{}", u.config, u.side, more.unwrap_or_default())
            })
            .collect();
        format!(
            "Inconclusive after {rounds} round{} of the baseline: not settled yet: {}. \
             More rounds would settle it (--runs auto --max-runs N), or re-judge with \
             other thresholds (allocscope report --min-saving/--max-slowdown).",
            if rounds == 1 { "" } else { "s" },
            parts.join("; ")
        )
    }
}

/// Decides, explains, and writes the deploy lines. `baseline` indexes
/// `experiment.configs`; `table` is the experiment's metric table, of which
/// `judging` and the experiment choose the two rows judged by
/// (`choice::measures`).
pub fn decide(
    experiment: &StoredExperiment,
    baseline: usize,
    judging: &JudgeSettings,
    table: &[MetricDef],
) -> Verdict {
    let measures = measures(experiment, baseline, table, judging);
    let judged = super::served::only_run(
        experiment,
        judge_all(experiment, baseline, &measures, judging),
    );
    let context = Context {
        experiment,
        baseline,
        judging,
        table,
        measures,
        judged,
    };
    let mut verdict = context.open_verdict();
    verdict
        .explanation
        .extend(fixed_duration_note(experiment, &context.measures.perf));
    let standings: Vec<_> = context.judged.iter().map(|j| j.standing.clone()).collect();
    let memory_ratio: Vec<f64> = context
        .judged
        .iter()
        .map(|j| j.memory.as_ref().map_or(f64::INFINITY, |m| m.ratio().value))
        .collect();
    // The cause explains the recommendation, else the largest saving
    // beyond noise: a difference within noise has no cause to name. A
    // single round has no interval, and its saving is explained as seen.
    let saved_beyond_noise: Vec<bool> = context
        .judged
        .iter()
        .map(|j| {
            j.memory.as_ref().is_some_and(|m| {
                let r = m.ratio();
                r.ci_high < 1.0 || (r.ci_high.is_nan() && r.value < 1.0)
            })
        })
        .collect();
    let saved_most = (0..memory_ratio.len())
        .filter(|&k| saved_beyond_noise[k])
        .min_by(|&a, &b| memory_ratio[a].total_cmp(&memory_ratio[b]));
    let focus = match decide_outcome(&standings, &memory_ratio) {
        Decision::Recommend(k) => {
            context.recommend(&mut verdict, k);
            Some(k)
        }
        Decision::KeepDefault => {
            context.keep_default(&mut verdict);
            saved_most
        }
        Decision::Inconclusive(_) => {
            context.inconclusive(&mut verdict);
            saved_most
        }
    };
    let focus = focus.map(|k| context.judged[k].index);
    verdict.cause = explain_cause(experiment, baseline, focus, &judging.ruled_out);
    verdict
        .explanation
        .extend(super::served::left_out(experiment));
    if let Some(reason) = super::served::withheld(experiment, baseline) {
        withhold(&mut verdict, reason);
    }
    verdict
}

/// No verdict at all, for `reason`: nothing to deploy, no limit to keep.
fn withhold(verdict: &mut Verdict, reason: String) {
    verdict.outcome = Outcome::Inconclusive;
    (verdict.config, verdict.deploy, verdict.kept_limit) = (None, None, None);
    verdict.reason = reason;
    verdict.unsettled.clear();
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
