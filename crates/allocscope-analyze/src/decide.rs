//! The decision behind the verdict, as pure functions over each candidate's
//! two intervals (memory ratio, performance ratio to the baseline):
//! *recommend* the candidate that saves memory beyond `--min-saving` within
//! the `--max-slowdown` budget, *keep the default* when every candidate is
//! settled out, or *inconclusive*, naming who is unsettled, on which side,
//! and about how many more rounds would settle it. Too few runs is never
//! "keep the default". The adaptive schedule (`--runs auto`) asks the same
//! questions after each round.

use super::interval::{t_quantile, LogRatio};
use allocscope_core::judging::DEFAULT_DECISION_ALPHA;

/// Where one side of a candidate stands against its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The whole interval is on the good side (saves enough / within budget).
    Good,
    /// The whole interval is on the bad side.
    Bad,
    /// The interval straddles the threshold, or there is none yet.
    Open,
}

/// One candidate's standing.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    pub memory: Side,
    pub performance: Side,
    /// Estimated further rounds for the open side(s) to settle; `None` when
    /// nothing is open or no estimate exists (fewer than two pairs).
    pub more_rounds: Option<u32>,
    /// The memory ratio's 95% interval, when it has one.
    pub memory_bounds: Option<(f64, f64)>,
    /// Set by `outrank`: the candidate (index into the same list) that
    /// qualifies and uses less memory than this one beyond noise, so this
    /// one cannot be the recommendation whatever more rounds show.
    pub outranked_by: Option<usize>,
    /// Runs the kernel's OOM killer ended (under `--memory-limit`) and
    /// runs in all, set by the judge: a candidate killed in any run is
    /// settled out whatever its figures, and never recommended.
    pub oom_killed: Option<(usize, usize)>,
    /// When a race (`allocscope tune`) stopped running it before its end,
    /// set by the judge from `JudgeSettings::ruled_out`: settled out, never
    /// recommended, whatever its few runs show (the race's error level
    /// covers the candidates it kept, not those).
    pub ruled_out: Option<String>,
    /// `more_rounds` were each open side's centre `FUTILITY_OPTIMISM`
    /// standard errors further from its threshold than measured, at the 95%
    /// the verdict settles at when the rounds end: the futility rule's
    /// estimate (`unresolvable`).
    pub optimistic_more_rounds: Option<u32>,
    /// `more_rounds` at the 95% the verdict settles at, without optimism:
    /// what a candidate still open at the cap would need
    /// (`unresolvable`).
    pub end_more_rounds: Option<u32>,
    /// Open, and `--runs auto` stopped running it: no run count within its
    /// `--max-runs` could settle it (`unresolvable`). Set by the judge.
    pub unresolvable: bool,
    /// Every one of its runs failed (none ended `ok`), set by the judge:
    /// settled out, never recommended; more rounds of a program that
    /// cannot run under it would only fail again.
    pub every_run_failed: bool,
    /// Over the budget on the guard (`choice::Measures::guard`, the time a
    /// reader waits beside a CPU figure), its whole interval above it; set
    /// by `guard`, which makes `performance` bad.
    pub guard_over: bool,
}

impl Standing {
    /// Saves memory and stays within the budget, both beyond noise.
    pub fn qualifies(&self) -> bool {
        self.memory == Side::Good
            && self.performance == Side::Good
            && self.oom_killed.is_none()
            && self.ruled_out.is_none()
            && !self.every_run_failed
    }

    /// Settled against: uses too much memory or is too slow, beyond noise,
    /// outranked by a qualifying candidate, OOM-killed, or every run failed.
    pub fn settled_out(&self) -> bool {
        self.memory == Side::Bad
            || self.performance == Side::Bad
            || self.outranked_by.is_some()
            || self.oom_killed.is_some()
            || self.ruled_out.is_some()
            || self.every_run_failed
    }

    pub fn is_open(&self) -> bool {
        !self.qualifies() && !self.settled_out()
    }
}

/// Thresholds as ratios: memory must stay below `memory_max` (1 - min
/// saving), performance below `perf_max` (1 + max slowdown) for
/// lower-is-better metrics.
/// `alpha` is the two-sided error level of the intervals a side is settled
/// by: 0.05 for a fixed schedule, smaller for `--runs auto` (see
/// `sequential_alpha`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub memory_max: f64,
    pub perf_max: f64,
    pub alpha: f64,
}

impl Thresholds {
    pub(crate) fn from_percent(
        min_saving_pct: f64,
        max_slowdown_pct: f64,
        alpha: f64,
    ) -> Thresholds {
        Thresholds {
            memory_max: 1.0 - min_saving_pct / 100.0,
            perf_max: 1.0 + max_slowdown_pct / 100.0,
            alpha,
        }
    }
}

/// The first round after which `--runs auto` looks at the intervals: two
/// pairs (one degree of freedom) give a t interval so wide at a per-look
/// level that nothing could settle, so the look would only cost level.
pub const FIRST_LOOK: u32 = 3;

/// The per-look error level for `--runs auto`, which looks at the intervals
/// after every round from `FIRST_LOOK` up to `max_runs`: each look is one
/// more chance for noise to settle a side wrongly (a simulated candidate
/// saving 2% against a 3% threshold was recommended 7-12% of the time at
/// 95% per look). Pocock's constant nominal levels for an overall 5% over K
/// equally spaced looks (Pocock 1977; K = 1..20, interpolated, and
/// extrapolated beyond 20 looks).
pub fn sequential_alpha(max_runs: u32) -> f64 {
    let looks = (max_runs + 1).saturating_sub(FIRST_LOOK).max(1);
    const POCOCK: [(u32, f64); 12] = [
        (1, 0.05),
        (2, 0.0294),
        (3, 0.0221),
        (4, 0.0182),
        (5, 0.0158),
        (6, 0.0142),
        (7, 0.0130),
        (8, 0.0120),
        (9, 0.0112),
        (10, 0.0106),
        (15, 0.0086),
        (20, 0.0075),
    ];
    for pair in POCOCK.windows(2) {
        let ((k0, a0), (k1, a1)) = (pair[0], pair[1]);
        if looks <= k1 {
            let f = f64::from(looks.saturating_sub(k0)) / f64::from(k1 - k0);
            return a0 + f * (a1 - a0);
        }
    }
    0.0075 * (20.0 / f64::from(looks)).powf(0.4)
}

/// Where `ratio` stands against "at most `max`" (lower is good), by its
/// two-sided `1 - alpha` interval.
fn side(ratio: Option<&LogRatio>, max: f64, alpha: f64) -> Side {
    let Some(r) = ratio.map(|r| r.ratio_at(alpha)) else {
        return Side::Open;
    };
    if !(r.ci_low.is_finite() && r.ci_high.is_finite()) {
        return Side::Open;
    }
    if r.ci_high < max {
        Side::Good
    } else if r.ci_low > max {
        Side::Bad
    } else {
        Side::Open
    }
}

/// Rounds in total for the t interval of `r` to clear `max`, assuming its
/// spread holds and its centre, moved `optimism` standard errors further
/// from `max`, holds; capped at `cap`. `None` without a spread.
fn rounds_to_settle(r: &LogRatio, max: f64, cap: u32, alpha: f64, optimism: f64) -> Option<u32> {
    let spread = r.spread()?;
    let distance = (r.centre - max.ln()).abs() + optimism * r.std_err?;
    if spread == 0.0 {
        return Some(r.n as u32);
    }
    // The half-width falls as n grows: bisect for the first n that clears.
    let clears =
        |n: u32| t_quantile(alpha, n as usize - 1) * spread / f64::from(n).sqrt() < distance;
    if !clears(cap) {
        return Some(MANY_MORE_ROUNDS);
    }
    let (mut lo, mut hi) = (2, cap);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if clears(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

/// `about 1 more round`, `about 6 more rounds`; `MANY_MORE_ROUNDS` when no
/// run count within `ROUNDS_CAP` would settle it.
pub fn more_rounds_words(n: u32) -> String {
    if n == MANY_MORE_ROUNDS {
        return format!("over {ROUNDS_CAP} more rounds");
    }
    format!("about {n} more round{}", if n == 1 { "" } else { "s" })
}

/// The most rounds an estimate names.
pub(crate) const ROUNDS_CAP: u32 = 1000;

/// The estimate's value when even `ROUNDS_CAP` rounds would not settle a side.
pub const MANY_MORE_ROUNDS: u32 = u32::MAX;

/// Further rounds until the open sides settle the candidate
/// (`rounds_to_settle` each, `None` for a side without an estimate): the
/// first side whose centre lies on the bad side settles it out; otherwise
/// it qualifies once every open side has settled.
fn rounds_to_resolve(
    sides: [(Option<&LogRatio>, f64, Side); 2],
    t: Thresholds,
    optimism: f64,
) -> Option<u32> {
    let need = |r: &LogRatio, max: f64| {
        rounds_to_settle(r, max, ROUNDS_CAP, t.alpha, optimism).map(|total| match total {
            MANY_MORE_ROUNDS => MANY_MORE_ROUNDS,
            total => total.saturating_sub(r.n as u32),
        })
    };
    let open = sides
        .into_iter()
        .filter(|&(_, _, side)| side == Side::Open)
        .filter_map(|(r, max, _)| r.map(|r| (r, max)));
    let (bad, good): (Vec<_>, Vec<_>) = open.partition(|(r, max)| r.centre >= max.ln());
    match bad.is_empty() {
        true => good.into_iter().filter_map(|(r, max)| need(r, max)).max(),
        false => bad.into_iter().filter_map(|(r, max)| need(r, max)).min(),
    }
}

/// The first round after which `--runs auto` may stop a candidate as
/// unresolvable: the spread of fewer pairs is too rough a guess to give up
/// on (docs/statistics.md, "Futility").
pub(crate) const FUTILITY_FIRST_LOOK: u32 = 6;

/// How many standard errors further from its threshold than measured the
/// futility rule supposes a side to be: with 1, simulated candidates that
/// would have settled within the cap were stopped up to 5.7% of the time;
/// with 1.5 at most 0.3% (docs/statistics.md, "Futility").
const FUTILITY_OPTIMISM: f64 = 1.5;

/// The futility rule of `--runs auto`: after `rounds_done` of at most
/// `max_runs` rounds, an open candidate is unresolvable when, even were
/// each open side `FUTILITY_OPTIMISM` standard errors further from its
/// threshold than measured, settling it would take more rounds than the
/// cap leaves, counted at the 95% of the verdict at the end (the easiest
/// look it would get). The optimism keeps a candidate whose effect lies
/// beyond the threshold but was measured short of it early. At the cap no
/// rounds are left to save, and a candidate still open there is
/// unresolvable when settling it would take more rounds again than the
/// experiment ran (`end_more_rounds`, no optimism: nothing is stopped on
/// it): a candidate measured at its threshold (PSS 0.98x [0.96, 1.01]
/// against a 3% saving) is one the experiment cannot tell, not one a few
/// more rounds would settle.
pub fn unresolvable(s: &Standing, rounds_done: u32, max_runs: u32) -> bool {
    let left = max_runs.saturating_sub(rounds_done);
    if rounds_done < FUTILITY_FIRST_LOOK || !s.is_open() {
        return false;
    }
    match left {
        0 => s.end_more_rounds.is_some_and(|n| n > rounds_done),
        _ => s.optimistic_more_rounds.is_some_and(|n| n > left),
    }
}

/// A candidate's standing from its memory and performance log ratios.
/// Either ratio is `None` when the runs gave no figures for it: that side
/// stays open.
pub fn standing(memory: Option<&LogRatio>, perf: Option<&LogRatio>, t: Thresholds) -> Standing {
    let memory_side = side(memory, t.memory_max, t.alpha);
    let performance = side(perf, t.perf_max, t.alpha);
    let memory_bounds = memory
        .map(|r| r.ratio_at(t.alpha))
        .filter(|r| r.ci_low.is_finite() && r.ci_high.is_finite())
        .map(|r| (r.ci_low, r.ci_high));
    let mut s = Standing {
        memory: memory_side,
        performance,
        more_rounds: None,
        memory_bounds,
        outranked_by: None,
        oom_killed: None,
        ruled_out: None,
        optimistic_more_rounds: None,
        end_more_rounds: None,
        unresolvable: false,
        every_run_failed: false,
        guard_over: false,
    };
    if s.is_open() {
        let sides = [
            (memory, t.memory_max, memory_side),
            (perf, t.perf_max, performance),
        ];
        s.more_rounds = rounds_to_resolve(sides, t, 0.0);
        let at_the_end = Thresholds {
            alpha: DEFAULT_DECISION_ALPHA,
            ..t
        };
        s.optimistic_more_rounds = rounds_to_resolve(sides, at_the_end, FUTILITY_OPTIMISM);
        s.end_more_rounds = rounds_to_resolve(sides, at_the_end, 0.0);
    }
    s
}

/// The guard beside a CPU figure (`choice::Measures::guard`): a candidate
/// whose guard interval, at the judge's level, lies wholly above the
/// budget is over it, whatever its CPU: threads serialized on one arena's
/// lock can spend less CPU and take longer. An interval that straddles the
/// budget changes nothing, so the guard's noise (wall time's 20-40% per run
/// on a shared machine) never holds a candidate open; only a slowdown
/// beyond that noise settles it out.
pub fn guard(s: &mut Standing, guard: Option<&LogRatio>, t: Thresholds) {
    if side(guard, t.perf_max, t.alpha) == Side::Bad {
        s.performance = Side::Bad;
        s.guard_over = true;
        (s.more_rounds, s.optimistic_more_rounds, s.end_more_rounds) = (None, None, None);
    }
}

/// Marks each open candidate whose memory interval lies wholly above the
/// interval of a candidate that already qualifies: the recommendation is the
/// qualifier with the least memory, so more rounds of the open one cannot
/// change it (two 95% intervals that do not overlap differ beyond noise).
/// Without this, one candidate that could never win kept `--runs auto`
/// going to its limit after the answer was settled.
pub(crate) fn outrank(standings: &mut [Standing]) {
    let qualifiers: Vec<(usize, f64)> = standings
        .iter()
        .enumerate()
        .filter(|(_, s)| s.qualifies())
        .filter_map(|(i, s)| s.memory_bounds.map(|(_, high)| (i, high)))
        .collect();
    for s in standings.iter_mut().filter(|s| s.is_open()) {
        let Some((low, _)) = s.memory_bounds else {
            continue;
        };
        s.outranked_by = qualifiers
            .iter()
            .filter(|&&(_, high)| high < low)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|&(i, _)| i);
        if s.outranked_by.is_some() {
            (s.more_rounds, s.optimistic_more_rounds, s.end_more_rounds) = (None, None, None);
        }
    }
}

/// The experiment's outcome over its candidates (the baseline excluded).
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Index (into the candidates given) of the qualifying candidate with
    /// the lowest memory ratio.
    Recommend(usize),
    /// Every candidate is settled out.
    KeepDefault,
    /// No candidate qualifies yet and these are still open.
    Inconclusive(Vec<usize>),
}

/// Decides from each candidate's standing and memory ratio (lower is better).
pub fn decide(standings: &[Standing], memory_ratio: &[f64]) -> Decision {
    let best = standings
        .iter()
        .enumerate()
        .filter(|(_, s)| s.qualifies())
        .min_by(|a, b| memory_ratio[a.0].total_cmp(&memory_ratio[b.0]))
        .map(|(i, _)| i);
    if let Some(i) = best {
        return Decision::Recommend(i);
    }
    let open: Vec<usize> = (0..standings.len())
        .filter(|&i| standings[i].is_open())
        .collect();
    if standings.is_empty() {
        // Nothing was compared: "keep the default" would claim a finding.
        Decision::Inconclusive(Vec::new())
    } else if open.is_empty() {
        Decision::KeepDefault
    } else {
        Decision::Inconclusive(open)
    }
}

/// At the time box (the rounds run out, or `--max-time`), when nothing
/// qualifies: the candidate (index into `standings`) that saves memory
/// beyond the minimum and noise while its performance is still open, with
/// the lowest memory ratio. The verdict recommends it with its performance
/// named as not resolved, rather than "inconclusive" alone: memory settles
/// in a few rounds, a performance figure within a 5% budget at 5-15% noise
/// per run can take tens.
pub(crate) fn unproven_pick(standings: &[Standing], memory_ratio: &[f64]) -> Option<usize> {
    standings
        .iter()
        .enumerate()
        .filter(|(_, s)| s.memory == Side::Good && s.performance == Side::Open && s.is_open())
        .min_by(|a, b| memory_ratio[a.0].total_cmp(&memory_ratio[b.0]))
        .map(|(i, _)| i)
}

/// At the time box, when nothing qualifies and no candidate is an
/// `unproven_pick`: whether every candidate still open measured no saving
/// beyond the minimum (its memory ratio at or above `memory_max`, with an
/// interval: one round measures too little to keep anything on).
/// The verdict then keeps the default with those named as not resolved,
/// rather than "inconclusive" alone: nothing measured argues for a change,
/// and the burden of proof is the candidate's. One open candidate whose
/// figure shows a saving, however unsettled, keeps the verdict inconclusive.
pub(crate) fn unproven_keep(standings: &[Standing], memory_ratio: &[f64], memory_max: f64) -> bool {
    let mut open = standings
        .iter()
        .zip(memory_ratio)
        .filter(|(s, _)| s.is_open())
        .peekable();
    open.peek().is_some()
        && open.all(|(s, &m)| {
            s.memory != Side::Good && s.memory_bounds.is_some() && m.is_finite() && m >= memory_max
        })
}

/// What the adaptive schedule does after a round.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// Candidates that still run in the next round.
    pub keep: Vec<usize>,
    /// Stop now: every candidate settled, or the run limit reached.
    pub stop: bool,
}

/// After `rounds_done` rounds: settled-out and unresolvable candidates stop
/// running; the experiment stops when none is open but those, or at
/// `max_runs` rounds. A candidate that qualifies keeps running while another
/// is open, so the two can still be ranked against each other.
pub fn schedule(standings: &[Standing], rounds_done: u32, max_runs: u32) -> Schedule {
    let keep: Vec<usize> = (0..standings.len())
        .filter(|&i| !standings[i].settled_out() && !standings[i].unresolvable)
        .collect();
    let any_open = standings.iter().any(|s| s.is_open() && !s.unresolvable);
    Schedule {
        keep,
        stop: !any_open || rounds_done >= max_runs,
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod futility_tests;
