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
use super::decide::{
    decide as decide_outcome, unproven_keep, unproven_pick, Decision, Side, Thresholds,
};
pub use super::deploy::{deploy, sh_quote, Deploy, KeptLimit, LimitLines};
use super::judge::{judge_all, shown, Judged};
use super::metric_table::MetricDef;
pub use super::verdict_reasons::{Dropped, Figures, Note, Oom, OpenSide, Place, Reason, Tie};
use allocscope_core::judging::JudgeSettings;
use allocscope_core::model::StoredExperiment;
use serde::{Serialize, Serializer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// `config` is recommended over the baseline.
    Recommend,
    /// `config` is recommended for its memory, settled; its performance was
    /// not resolved when the rounds ran out (`Reason::RecommendUnproven`).
    RecommendUnproven,
    /// Every candidate is settled out: keep the baseline (`config` names it).
    KeepDefault,
    /// The rounds ran out with nothing qualifying and no open candidate
    /// measuring a saving beyond the minimum: keep the baseline (`config`
    /// names it), the open ones named as not resolved
    /// (`Reason::KeepUnproven`).
    KeepUnproven,
    /// Some candidate is not settled yet; `config` is absent.
    Inconclusive,
}

/// A candidate whose decision is not settled; its other side, if one is
/// not open, is settled in its favour.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unsettled {
    pub config: String,
    pub side: OpenSide,
    /// Estimated further rounds that would settle it, when estimable.
    pub more_rounds: Option<u32>,
    /// Its two ratios, when its runs gave both.
    pub figures: Option<Figures>,
    /// The rounds it ran before `--runs auto` stopped it as unresolvable.
    pub unresolvable_after: Option<usize>,
}

/// The verdict as data; `report/verdict_words.rs` puts it in words. The
/// JSON export (`report/verdict_json.rs`) writes `outcome`, `config` and
/// the sentences, then this, then the deploy lines, the limit kept and the
/// cause, each with its sentences.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    #[serde(skip)]
    pub outcome: Outcome,
    /// The configuration to run with (the baseline when keeping the default).
    #[serde(skip)]
    pub config: Option<String>,
    /// Why; in JSON `reason_data` (`reason` is the sentence).
    #[serde(rename = "reason_data")]
    pub reason: Reason,
    /// One note per non-baseline configuration: what it saved and cost,
    /// and where it stands; then notes about the measures. In JSON
    /// `explanation_data` (`explanation` holds the sentences).
    #[serde(rename = "explanation_data")]
    pub explanation: Vec<Note>,
    /// The metric-table row memory was judged by; in JSON its id
    /// (`memory_metric`: e.g. `mean_rss_bytes`, `mean_pss_bytes`,
    /// `rss_end_load_bytes`).
    #[serde(rename = "memory_metric", serialize_with = "judged_key")]
    pub memory: MetricDef,
    /// The row the budget applies to; in JSON (`performance_metric`) its id
    /// (`wall_s`, `p95_ms`), or a `--metric`'s NAME.
    #[serde(rename = "performance_metric", serialize_with = "judged_key")]
    pub performance: MetricDef,
    /// Beside a CPU `performance` chosen by default, the time a reader
    /// waits (wall time, a service's p95 latency or load duration): a
    /// candidate whose whole interval of it lies over the budget is over
    /// it. In JSON (`performance_guard`) its id.
    #[serde(
        rename = "performance_guard",
        serialize_with = "guard_key",
        skip_serializing_if = "Option::is_none"
    )]
    pub guard: Option<MetricDef>,
    pub max_slowdown_pct: f64,
    pub min_saving_pct: f64,
    /// The candidates still open (inconclusive outcome, or alongside a
    /// recommendation that another candidate might still beat).
    pub unsettled: Vec<Unsettled>,
    /// Present only for `Recommend`; in JSON with the limit's lines and
    /// their comment (`report::verdict_json`).
    #[serde(skip)]
    pub deploy: Option<Deploy>,
    /// Without a recommendation, the memory limit of the configuration that
    /// stays (the default kept, or the baseline while the verdict is open).
    #[serde(skip)]
    pub kept_limit: Option<KeptLimit>,
    /// Where the memory went and what the recommendation (else the
    /// candidate that saved most) removed; absent without breakdowns.
    #[serde(skip)]
    pub cause: Option<Cause>,
}

/// The key JSON names a judged row by: its id, or a `--metric`'s NAME.
fn judged_key<S: Serializer>(row: &MetricDef, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(if row.is_user() { row.name() } else { &row.id })
}

/// The guard's key, as `judged_key`.
fn guard_key<S: Serializer>(row: &Option<MetricDef>, serializer: S) -> Result<S::Ok, S::Error> {
    match row {
        Some(row) => judged_key(row, serializer),
        None => serializer.serialize_none(),
    }
}

/// The other qualifiers whose memory interval overlaps the winner's.
fn ties(judged: &[Judged], winner: usize, name: &dyn Fn(usize) -> String) -> Vec<Tie> {
    let Some((low, high)) = judged[winner].standing.memory_bounds else {
        return Vec::new();
    };
    judged
        .iter()
        .enumerate()
        .filter(|&(i, j)| i != winner && j.standing.qualifies())
        .filter_map(|(_, j)| {
            let (l, h) = j.standing.memory_bounds?;
            let memory = j.memory.as_ref()?.ratio();
            (l <= high && h >= low).then(|| Tie {
                config: name(j.index),
                memory,
            })
        })
        .collect()
}

/// The rounds `j` ran before `--runs auto` stopped it as unresolvable (its
/// pairs with the baseline).
fn unresolvable_after(j: &Judged) -> Option<usize> {
    let pairs = j.memory.as_ref().or(j.perf.as_ref()).map_or(0, |r| r.n);
    j.standing.unresolvable.then_some(pairs)
}

/// Where a candidate stands.
fn place(j: &Judged, outranked_by: Option<String>) -> Place {
    let s = &j.standing;
    match (outranked_by, unresolvable_after(j)) {
        _ if s.qualifies() => Place::Qualifies,
        (Some(by), _) => Place::Outranked { by },
        (None, Some(rounds)) => Place::Unresolvable {
            side: side_of(j),
            rounds,
            more_rounds: s.more_rounds,
        },
        (None, None) => Place::Judged {
            open: !s.settled_out(),
            memory: s.memory,
            performance: s.performance,
            more_rounds: s.more_rounds,
            guard_over: s.guard_over,
        },
    }
}

fn side_of(j: &Judged) -> OpenSide {
    match (
        j.standing.memory == Side::Open,
        j.standing.performance == Side::Open,
    ) {
        (true, true) => OpenSide::Both,
        (true, false) => OpenSide::Memory,
        _ => OpenSide::Performance,
    }
}

pub use super::choice::FLAT_WALLS;

/// When `perf` is wall time or a server's load duration, and every
/// configuration's fastest run of it is within `FLAT_WALLS` of the others'
/// (at least 4 ok runs): a fixed-duration program or load, and the median
/// of all its runs. The fastest, not the median: a busy machine only ever
/// lengthens a run (wrk -d 3s took 3.02-3.13 s, db_bench's single runs
/// jittered by 2-3%), so the medians of 3 runs drift apart by more than
/// the program does.
pub fn fixed_duration(experiment: &StoredExperiment, perf: &MetricDef) -> Option<f64> {
    if perf.id != "wall_s" && perf.id != "load_s" {
        return None;
    }
    let all = super::choice::flat_fastest(experiment, perf)?;
    super::stats::median(&all)
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

    /// `killed` of `runs` OOM-killed, under the runs' memory limit.
    fn oom(&self, (killed, runs): (usize, usize)) -> Oom {
        let limit_bytes = self.experiment.info.host.run_memory_limit_bytes;
        Oom {
            killed,
            runs,
            limit_bytes,
        }
    }

    /// The note when the baseline itself was OOM-killed: nothing can be
    /// compared to runs that did not finish.
    fn baseline_oom(&self) -> Option<Note> {
        let base = self.experiment.configs.get(self.baseline)?;
        let killed = super::judge::oom_killed(base)?;
        Some(Note::BaselineOomKilled {
            baseline: self.base_name(),
            oom: self.oom(killed),
        })
    }

    /// One note per candidate, then the baseline's OOM kills if any.
    /// Those a race ruled out share one note (its own table says why).
    fn explanation(&self) -> Vec<Note> {
        let (ruled, kept): (Vec<&Judged>, Vec<&Judged>) = self
            .judged
            .iter()
            .partition(|j| j.standing.ruled_out.is_some());
        let ruled = (!ruled.is_empty()).then(|| Note::DroppedByRace {
            dropped: ruled
                .iter()
                .map(|j| Dropped {
                    config: self.name(j.index),
                    when: j.standing.ruled_out.clone().unwrap_or_default(),
                })
                .collect(),
        });
        let candidates = kept.into_iter().map(|j| self.explain(j));
        candidates.chain(ruled).chain(self.baseline_oom()).collect()
    }

    /// A candidate's two ratios, when its runs gave both.
    fn figures(&self, j: &Judged) -> Option<Figures> {
        j.memory
            .as_ref()
            .zip(j.perf.as_ref())
            .map(|(m, p)| Figures {
                memory: m.ratio(),
                // A throughput reads as the tables show it (1.10x: 10% more).
                performance: shown(&self.measures.perf, p),
                better: p.ratio().value <= 1.0,
                guard: self.guard_of(j),
            })
    }

    /// A candidate's guard ratio as the tables show it, when there is a
    /// guard.
    fn guard_of(&self, j: &Judged) -> Option<crate::figures::Ratio> {
        let row = self.measures.guard.as_ref()?;
        j.guard.as_ref().map(|g| shown(row, g))
    }

    /// A candidate's ratios and where it stands.
    fn explain(&self, j: &Judged) -> Note {
        let config = self.name(j.index);
        if let Some(killed) = j.standing.oom_killed {
            let oom = self.oom(killed);
            return Note::OomKilled { config, oom };
        }
        let c = &self.experiment.configs[j.index];
        if let Some((runs, why)) = super::judge::every_run_failed(c) {
            return Note::EveryRunFailed { config, runs, why };
        }
        let figures = self.figures(j);
        let leader = j
            .standing
            .outranked_by
            .map(|k| self.name(self.judged[k].index));
        Note::Candidate {
            config,
            figures,
            place: place(j, leader),
        }
    }

    /// The recommendation of candidate `k` (an index into `judged`): the
    /// reason and the deploy lines.
    fn recommend(&self, verdict: &mut Verdict, k: usize) {
        let j = &self.judged[k];
        let c = &self.experiment.configs[j.index];
        let qualified = self
            .judged
            .iter()
            .filter(|j| j.standing.qualifies())
            .count();
        let name = |i: usize| self.name(i);
        verdict.outcome = Outcome::Recommend;
        verdict.config = Some(c.config.name.clone());
        verdict.reason = Reason::Recommend {
            baseline: self.base_name(),
            memory: j.memory.as_ref().map(|m| m.ratio()),
            performance: j.perf.as_ref().map(|p| shown(&self.measures.perf, p)),
            guard: self.guard_of(j),
            qualified,
            ties: ties(&self.judged, k, &name),
        };
        let limit = self.limit_of(j.index);
        let command = c.config.command.as_ref();
        verdict.deploy = Some(deploy(
            &c.config,
            command.unwrap_or(&self.experiment.info.command),
            limit.as_ref(),
        ));
    }

    /// The recommendation of candidate `k` at the time box: its memory
    /// settled in its favour, its performance not resolved.
    fn recommend_unproven(&self, verdict: &mut Verdict, k: usize) {
        self.recommend(verdict, k);
        let j = &self.judged[k];
        let name = self.name(j.index);
        verdict.outcome = Outcome::RecommendUnproven;
        verdict.unsettled.retain(|u| u.config != name);
        let Some(memory) = j.memory.as_ref().map(|m| m.ratio()) else {
            return;
        };
        verdict.reason = Reason::RecommendUnproven {
            baseline: self.base_name(),
            memory,
            performance: j.perf.as_ref().map(|p| shown(&self.measures.perf, p)),
            guard: self.guard_of(j),
            rounds: j.memory.as_ref().map_or(0, |m| m.n),
            more_rounds: j.standing.more_rounds,
            unresolvable: j.standing.unresolvable,
        };
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
        self.limit_of(self.baseline).map(|memory_limit| KeptLimit {
            config: self.base_name(),
            memory_limit,
        })
    }

    fn keep_default(&self, verdict: &mut Verdict) {
        // A race's dropped candidates were ranked out on a reading or two,
        // not settled by an interval: the claim covers those it kept.
        let dropped = self
            .judged
            .iter()
            .filter(|j| j.standing.ruled_out.is_some())
            .count();
        verdict.outcome = Outcome::KeepDefault;
        verdict.reason = Reason::KeepDefault {
            baseline: self.base_name(),
            judged: self.judged.len() - dropped,
            dropped,
        };
        verdict.config = Some(self.base_name());
        verdict.kept_limit = self.kept_limit();
    }

    /// At the time box: keep the baseline, the candidates still open (none
    /// of which measured a saving beyond the minimum) named as not resolved.
    fn keep_unproven(&self, verdict: &mut Verdict) {
        verdict.outcome = Outcome::KeepUnproven;
        verdict.reason = Reason::KeepUnproven {
            baseline: self.base_name(),
            baseline_rounds: self.baseline_rounds(),
        };
        verdict.config = Some(self.base_name());
        verdict.kept_limit = self.kept_limit();
    }

    /// The verdict before deciding: inconclusive, with the explanation and
    /// the candidates still open.
    fn open_verdict(&self) -> Verdict {
        Verdict {
            outcome: Outcome::Inconclusive,
            config: None,
            reason: self.inconclusive_reason(),
            explanation: self.explanation(),
            memory: self.measures.memory.clone(),
            performance: self.measures.perf.clone(),
            guard: self.measures.guard.clone(),
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
                    figures: self.figures(j),
                    unresolvable_after: unresolvable_after(j),
                })
                .collect(),
            deploy: None,
            kept_limit: None,
            cause: None,
        }
    }

    /// Open: nothing to compare, or how many rounds the baseline had (its
    /// sentence names the unsettled candidates).
    fn inconclusive_reason(&self) -> Reason {
        if self.judged.is_empty() {
            return Reason::NothingToCompare;
        }
        Reason::Inconclusive {
            baseline_rounds: self.baseline_rounds(),
        }
    }

    /// How many rounds the baseline ended `ok`.
    fn baseline_rounds(&self) -> usize {
        (self.experiment.configs.get(self.baseline))
            .map_or(0, |c| super::metrics::ok_runs(c).count())
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
    // Wall time (a server's load duration) flat across the configurations:
    // a fixed-duration benchmark (load), whose duration measures nothing.
    let perf = &context.measures.perf;
    verdict
        .explanation
        .extend(
            fixed_duration(experiment, perf).map(|seconds| Note::FixedDuration {
                measure: perf.label.clone(),
                seconds,
            }),
        );
    let standings: Vec<_> = context.judged.iter().map(|j| j.standing.clone()).collect();
    let memory_ratio: Vec<f64> = context
        .judged
        .iter()
        .map(|j| j.memory.as_ref().map_or(f64::INFINITY, |m| m.ratio().value))
        .collect();
    // The cause explains the recommendation, else the largest saving
    // beyond noise: a difference within noise has no cause to name. A
    // single round has no interval, and its saving is explained as seen.
    let saved_beyond_noise = |j: &Judged| {
        j.memory.as_ref().is_some_and(|m| {
            let r = m.ratio();
            r.ci_high < 1.0 || (r.ci_high.is_nan() && r.value < 1.0)
        })
    };
    let saved_most = (0..memory_ratio.len())
        .filter(|&k| saved_beyond_noise(&context.judged[k]))
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
        // The rounds ran out (an interrupted experiment's did not):
        // recommend what memory settled, with performance named unproven.
        Decision::Inconclusive(_) if experiment.status != "interrupted" => {
            let memory_max = Thresholds::from_percent(
                judging.min_saving_pct,
                judging.max_slowdown_pct,
                judging.decision_alpha,
            )
            .memory_max;
            match unproven_pick(&standings, &memory_ratio) {
                Some(k) => {
                    context.recommend_unproven(&mut verdict, k);
                    Some(k)
                }
                None if unproven_keep(&standings, &memory_ratio, memory_max) => {
                    context.keep_unproven(&mut verdict);
                    saved_most
                }
                None => {
                    verdict.kept_limit = context.kept_limit();
                    saved_most
                }
            }
        }
        Decision::Inconclusive(_) => {
            verdict.kept_limit = context.kept_limit();
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
    // Nothing to compare with: the baseline never ran to its end.
    let base = experiment.configs.get(baseline);
    if let Some((runs, why)) = base.and_then(super::judge::every_run_failed) {
        let baseline = context.base_name();
        withhold(
            &mut verdict,
            Reason::BaselineFailed {
                baseline,
                runs,
                why,
            },
        );
    }
    verdict
}

/// No verdict at all, for `reason`: nothing to deploy, no limit to keep.
fn withhold(verdict: &mut Verdict, reason: Reason) {
    verdict.outcome = Outcome::Inconclusive;
    (verdict.config, verdict.deploy, verdict.kept_limit) = (None, None, None);
    verdict.reason = reason;
    verdict.unsettled.clear();
}
