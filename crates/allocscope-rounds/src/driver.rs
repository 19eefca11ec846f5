//! The one driver of rounds, over any `Engine` (`engine.rs`): it starts
//! as many rounds as the engine takes at once (one here, all of them for a
//! job array), records each round as it ends (its runs already stored, its
//! shard merged, or how it ended without one) in round order, and decides
//! what runs next. With a judge (`--runs auto`), after each round from
//! `FIRST_LOOK` on it drops the candidates settled out and those it finds
//! unresolvable (recording those under `judging::UNRESOLVABLE_KEY_PREFIX`),
//! and stops when nothing is left to settle; `--max-time` starts no new round after it;
//! Ctrl-C cancels the rounds still running and starts none.

use super::engine::{Ended, Engine, Round, RoundEnd, Started};
use super::merge::{merge_shards, record_missing_round};
use super::shard::Shard;
use allocscope_core::judging::UNRESOLVABLE_KEY_PREFIX;
use allocscope_core::model::StoredExperiment;
use allocscope_core::store::Store;
use std::collections::BTreeSet;
use std::ops::Range;
use std::time::{Duration, Instant};

/// What the judge says after a round.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decision {
    /// Candidates (configuration indices) still unsettled, and why.
    pub open: Vec<(usize, String)>,
    /// Candidates settled out: they run no more rounds.
    pub dropped: Vec<usize>,
    /// Candidates no run count within the cap could settle, and why: they
    /// run no more rounds either.
    pub unresolvable: Vec<(usize, String)>,
    /// Nothing is left to settle.
    pub stop: bool,
}

/// Judges the stored experiment after a round.
pub type Judge<'a> = Box<dyn FnMut(StoredExperiment) -> anyhow::Result<Decision> + 'a>;

/// Which rounds to run and how to decide between them.
pub struct RoundPlan<'a> {
    /// Round indices (from 0; a cluster cell runs one).
    pub rounds: Range<u32>,
    /// The configurations' names, in order.
    pub configs: Vec<String>,
    /// The configurations the first round runs (a cell of an adaptive
    /// plan: those the rounds before left open); `None` for every one.
    pub open: Option<Vec<usize>>,
    /// `--max-time`: no round starts after it.
    pub max_time: Option<Duration>,
    /// `--runs auto`'s judge, asked from round `first_look` on.
    pub judge: Option<Judge<'a>>,
    /// The first round after which the judge is asked: `FIRST_LOOK` for
    /// compare's intervals, 1 for tune's successive halving.
    pub first_look: u32,
}

/// What the rounds left.
#[derive(Debug, Default, PartialEq)]
pub struct Driven {
    /// The experiment their runs are in; none when no round left any.
    pub experiment_id: Option<i64>,
    /// Rounds whose shards were merged, in order.
    pub merged: Vec<u32>,
    /// Rounds that left nothing, with how they ended.
    pub lost: Vec<(u32, String)>,
    /// Ctrl-C or SIGTERM stopped them.
    pub interrupted: bool,
    /// The engine handed the rounds over (`Some(ok)`): nothing to record.
    pub handed_over: Option<bool>,
}

impl Driven {
    /// The experiment's final status, as `Store::finish_experiment` takes it.
    pub fn final_status(&self) -> &'static str {
        if self.interrupted {
            "interrupted"
        } else {
            "complete"
        }
    }
}

/// Runs `plan` on `engine` into `store`; `interrupted` tells whether Ctrl-C
/// or SIGTERM came.
pub fn drive(
    engine: &mut dyn Engine,
    store: &mut Store,
    mut plan: RoundPlan,
    interrupted: &dyn Fn() -> bool,
) -> anyhow::Result<Driven> {
    let mut driven = Driven::default();
    let mut open: Vec<usize> = plan
        .open
        .take()
        .unwrap_or_else(|| (0..plan.configs.len()).collect());
    let mut next = plan.rounds.start;
    let mut running = BTreeSet::new();
    let mut starting = true;
    let mut ended_rounds = 0;
    let began = Instant::now();
    loop {
        if interrupted() && !driven.interrupted {
            driven.interrupted = true;
            starting = false;
            if !running.is_empty() {
                engine.cancel()?;
            }
        }
        if starting
            && next > plan.rounds.start
            && plan.max_time.is_some_and(|t| began.elapsed() >= t)
        {
            engine.say(&format!(
                "allocscope: --max-time reached after round {next}; no new round starts"
            ));
            starting = false;
        }
        let room = engine.rounds_at_once().saturating_sub(running.len());
        if starting && room > 0 && next < plan.rounds.end {
            let rounds: Vec<Round> = (next..plan.rounds.end)
                .take(room)
                .map(|index| Round {
                    index,
                    configs: open.clone(),
                })
                .collect();
            if let Started::HandedOver { ok } = engine.start(store, &rounds)? {
                driven.handed_over = Some(ok);
                return Ok(driven);
            }
            running.extend(rounds.iter().map(|r| r.index));
            next += rounds.len() as u32;
        }
        if running.is_empty() {
            break;
        }
        let mut ends = engine.wait(store)?;
        if ends.is_empty() {
            continue;
        }
        ends.sort_by_key(|end| end.round);
        ended_rounds += ends.len();
        for end in &ends {
            running.remove(&end.round);
        }
        record(store, ends, &mut driven)?;
        let (Some(judge), Some(id)) = (plan.judge.as_mut(), driven.experiment_id) else {
            continue;
        };
        if !starting || interrupted() || ended_rounds < plan.first_look as usize {
            continue;
        }
        let decision = judge(store.load_experiment(Some(id))?)?;
        starting = look(&decision, engine, store, id, &plan, &mut open, ended_rounds)?;
    }
    if let Some(id) = driven.experiment_id {
        for (round, state) in &driven.lost {
            record_missing_round(store, id, *round, state)?;
        }
    }
    Ok(driven)
}

/// The candidates the judge finds unresolvable that still ran, each
/// recorded with the round it stops after, so the verdict can say so.
fn stop_unresolvable<'d>(
    decision: &'d Decision,
    store: &mut Store,
    id: i64,
    configs: &[String],
    open: &[usize],
    ended_rounds: usize,
) -> anyhow::Result<Vec<&'d (usize, String)>> {
    let stopped: Vec<_> = decision
        .unresolvable
        .iter()
        .filter(|(c, _)| open.contains(c))
        .collect();
    for (c, _) in &stopped {
        let key = format!("{UNRESOLVABLE_KEY_PREFIX}{}", configs[*c]);
        store.set_environment(id, &key, &ended_rounds.to_string())?;
    }
    Ok(stopped)
}

/// Takes the candidates the judge settled out or found unresolvable out of
/// `open` (recording the latter) and says where the rounds stand; whether
/// rounds go on.
fn look(
    decision: &Decision,
    engine: &dyn Engine,
    store: &mut Store,
    id: i64,
    plan: &RoundPlan,
    open: &mut Vec<usize>,
    ended_rounds: usize,
) -> anyhow::Result<bool> {
    let configs = &plan.configs;
    let stopped = stop_unresolvable(decision, store, id, configs, open, ended_rounds)?;
    let unresolvable = |c: &usize| decision.unresolvable.iter().any(|(u, _)| u == c);
    open.retain(|c| !decision.dropped.contains(c) && !unresolvable(c));
    engine.round(&progress_line(
        configs,
        ended_rounds,
        decision,
        &stopped,
        open,
    ));
    Ok(!decision.stop)
}

/// Records rounds that ended (in round order): their shards merged in one
/// go, the lost ones kept for the end (they need the experiment).
fn record(store: &mut Store, ends: Vec<RoundEnd>, driven: &mut Driven) -> anyhow::Result<()> {
    let mut shards = Vec::new();
    for end in ends {
        match end.ended {
            Ended::Stored { experiment_id } => driven.experiment_id = Some(experiment_id),
            Ended::Shard(path) => shards.push(Shard::open(&path)?),
            Ended::Lost(state) => driven.lost.push((end.round, state)),
        }
    }
    if !shards.is_empty() {
        let merged = merge_shards(store, &shards)?;
        driven.experiment_id = Some(merged.experiment_id);
        driven.merged.extend(shards.iter().map(|s| s.round));
    }
    Ok(())
}

/// `allocscope: round 3: open: jemalloc (memory 0.98x [0.95, 1.01]
/// straddles 0.97x); stopped: mimalloc (no difference ...); dropped:
/// tcmalloc` or `... every candidate settled`.
fn progress_line(
    configs: &[String],
    round: usize,
    decision: &Decision,
    stopped: &[&(usize, String)],
    open: &[usize],
) -> String {
    let name = |c: usize| configs.get(c).map_or("?", |c| c.as_str());
    let with_why = |(c, why): &(usize, String)| format!("{} ({why})", name(*c));
    // A candidate dropped in an earlier round runs no more: the judge may
    // find it open again on its old runs (the one that outranked it became
    // open itself), but it is dropped, not open.
    let still_open: Vec<&(usize, String)> = (decision.open.iter())
        .filter(|(c, _)| open.contains(c))
        .collect();
    let mut line = format!("allocscope: round {round}: ");
    if still_open.is_empty() && decision.unresolvable.is_empty() {
        line.push_str("every candidate settled");
    } else if still_open.is_empty() {
        line.push_str("every candidate settled or unresolvable");
    } else {
        let open: Vec<String> = still_open.into_iter().map(with_why).collect();
        line.push_str(&format!("open: {}", open.join(", ")));
    }
    if !stopped.is_empty() {
        let stopped: Vec<String> = stopped.iter().map(|s| with_why(s)).collect();
        line.push_str(&format!("; stopped: {}", stopped.join(", ")));
    }
    let gone: Vec<&str> = (0..configs.len())
        .filter(|c| !open.contains(c) && !stopped.iter().any(|(s, _)| s == c))
        .map(name)
        .collect();
    if !gone.is_empty() {
        line.push_str(&format!("; dropped: {}", gone.join(", ")));
    }
    line
}

#[cfg(test)]
mod tests;
