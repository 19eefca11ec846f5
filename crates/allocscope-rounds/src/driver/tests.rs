//! The round driver against a test double of the engine: no process runs.
//! The double says how each round ends (a shard written from the analysis
//! fixture, runs stored directly, or lost), in the order it chooses.

use super::*;
use crate::merge::rounds_of;
use crate::shard::{CPU_MODEL, PLAN_ID, ROUND};
use allocscope_core::fixture;
use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};

/// How the double ends a round.
type Outcome<'a> = Box<dyn FnMut(&mut Store, &Round) -> Ended + 'a>;

/// A scripted engine: `at_once` rounds at a time, each ended by `outcome`,
/// reported all together by a `wait` once `busy_waits` waits have passed,
/// last round first (the driver must put them in order); a cancelled round
/// ends `CANCELLED`.
struct Double<'a> {
    at_once: usize,
    outcome: Outcome<'a>,
    busy_waits: usize,
    started: Vec<Round>,
    ending: Vec<RoundEnd>,
    cancels: usize,
    said: RefCell<Vec<String>>,
}

impl<'a> Double<'a> {
    fn new(at_once: usize, outcome: Outcome<'a>) -> Double<'a> {
        Double {
            at_once,
            outcome,
            busy_waits: 0,
            started: Vec::new(),
            ending: Vec::new(),
            cancels: 0,
            said: RefCell::new(Vec::new()),
        }
    }
}

impl Engine for Double<'_> {
    fn rounds_at_once(&self) -> usize {
        self.at_once
    }

    fn start(&mut self, store: &mut Store, rounds: &[Round]) -> anyhow::Result<Started> {
        for round in rounds {
            let ended = (self.outcome)(store, round);
            self.ending.push(RoundEnd {
                round: round.index,
                ended,
            });
            self.started.push(round.clone());
        }
        Ok(Started::Following)
    }

    fn wait(&mut self, _: &mut Store) -> anyhow::Result<Vec<RoundEnd>> {
        if self.busy_waits > 0 {
            self.busy_waits -= 1;
            return Ok(Vec::new());
        }
        let mut ends = std::mem::take(&mut self.ending);
        ends.reverse();
        Ok(ends)
    }

    fn cancel(&mut self) -> anyhow::Result<()> {
        self.cancels += 1;
        for end in &mut self.ending {
            end.ended = Ended::Lost("CANCELLED".into());
        }
        Ok(())
    }

    fn say(&self, line: &str) {
        self.said.borrow_mut().push(line.to_string());
    }
}

fn names() -> Vec<String> {
    fixture::experiment()
        .configs
        .iter()
        .map(|c| c.config.name.clone())
        .collect()
}

fn plan(rounds: Range<u32>) -> RoundPlan<'static> {
    RoundPlan {
        rounds,
        configs: names(),
        open: None,
        max_time: None,
        judge: None,
        first_look: allocscope_analyze::decide::FIRST_LOOK,
    }
}

/// The fixture's runs of `round` as the shard a cell would write.
fn shard(dir: &Path, round: u32) -> PathBuf {
    let every: Vec<usize> = (0..names().len()).collect();
    shard_of(dir, round, &every, true)
}

/// The shard of a round that ran the configurations `ran`: its runs of
/// those only, and every configuration of the plan (as a cell writes it)
/// or, with `all` false, only `ran`'s.
fn shard_of(dir: &Path, round: u32, ran: &[usize], all: bool) -> PathBuf {
    let experiment = fixture::experiment();
    let path = dir.join(format!("round-{round}.db"));
    let mut store = Store::open(&path).expect("shard store");
    let kept: Vec<_> = experiment
        .configs
        .iter()
        .enumerate()
        .filter(|(i, _)| all || ran.contains(i))
        .collect();
    let configs: Vec<_> = kept.iter().map(|(_, c)| c.config.clone()).collect();
    let (id, ids) = store
        .begin_experiment(&experiment.info, &configs)
        .expect("experiment");
    for (key, value) in [
        (PLAN_ID, "plan-1"),
        (ROUND, &round.to_string()),
        (CPU_MODEL, "cpu"),
    ] {
        store.set_environment(id, key, value).expect("environment");
    }
    for ((i, config), config_id) in kept.iter().zip(ids) {
        let runs = config.runs.iter().filter(|r| r.record.index == round + 1);
        for run in runs.filter(|_| ran.contains(i)) {
            store.add_run(config_id, &run.record).expect("run");
        }
    }
    store.finish_experiment(id, "complete").expect("finished");
    path
}

/// The run indices of each configuration in the store's experiment `id`.
fn run_indices(store: &Store, id: i64) -> Vec<Vec<u32>> {
    let experiment = store.load_experiment(Some(id)).expect("experiment");
    experiment
        .configs
        .iter()
        .map(|c| c.runs.iter().map(|r| r.record.index).collect())
        .collect()
}

#[test]
fn a_lost_round_is_recorded_and_the_other_rounds_are_merged_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut engine = Double::new(
        3,
        Box::new(|_, round| match round.index {
            0 => Ended::Lost("FAILED".into()),
            n => Ended::Shard(shard(dir.path(), n)),
        }),
    );
    let mut store = Store::open(&dir.path().join("merged.db")).expect("store");
    let driven = drive(&mut engine, &mut store, plan(0..3), &|| false).expect("driven");
    assert_eq!(engine.started.len(), 3, "all rounds at once");
    assert_eq!(driven.merged, [1, 2], "merged in round order");
    assert_eq!(driven.lost, [(0, "FAILED".to_string())]);
    let id = driven.experiment_id.expect("an experiment from the shards");
    let states: Vec<(u32, String)> = rounds_of(&store, id)
        .expect("rounds")
        .into_iter()
        .map(|f| (f.round, f.state))
        .collect();
    assert_eq!(
        states,
        [
            (0, "FAILED".to_string()),
            (1, "merged".to_string()),
            (2, "merged".to_string())
        ]
    );
    assert_eq!(run_indices(&store, id), vec![vec![2, 3]; 3]);
}

/// Runs rounds "here" (their runs straight into the store) under `judge`
/// for at most 20 rounds: the configurations each round ran, the lines
/// said, the store and the experiment.
fn judged_here(dir: &Path, judge: Judge) -> (Vec<Vec<usize>>, Vec<String>, Store, i64) {
    let experiment = fixture::experiment();
    let ids = RefCell::new(None);
    let mut engine = Double::new(
        1,
        Box::new(|store: &mut Store, round: &Round| {
            let configs: Vec<_> = experiment
                .configs
                .iter()
                .map(|c| c.config.clone())
                .collect();
            let (id, config_ids) = ids
                .borrow_mut()
                .get_or_insert_with(|| {
                    store
                        .begin_experiment(&experiment.info, &configs)
                        .expect("experiment")
                })
                .clone();
            for &c in &round.configs {
                let run = &experiment.configs[c].runs[round.index as usize % 5];
                store.add_run(config_ids[c], &run.record).expect("run");
            }
            Ended::Stored { experiment_id: id }
        }),
    );
    let mut store = Store::open(&dir.join("here.db")).expect("store");
    let plan = RoundPlan {
        judge: Some(judge),
        ..plan(0..20)
    };
    let driven = drive(&mut engine, &mut store, plan, &|| false).expect("driven");
    assert!(driven.lost.is_empty() && driven.merged.is_empty());
    let configs = engine.started.iter().map(|r| r.configs.clone()).collect();
    let said = engine.said.borrow().clone();
    (configs, said, store, driven.experiment_id.expect("stored"))
}

#[test]
fn the_judge_drops_settled_candidates_and_stops_the_rounds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let looks = Cell::new(0);
    let judge: Judge = Box::new(|stored| {
        looks.set(looks.get() + 1);
        let rounds = stored.configs[0].runs.len();
        Ok(Decision {
            open: vec![(1, "memory straddles".into())],
            dropped: if rounds >= 3 { vec![2] } else { vec![] },
            stop: rounds >= 5,
            ..Decision::default()
        })
    });
    let (configs, said, ..) = judged_here(dir.path(), judge);
    let all = vec![0, 1, 2];
    assert_eq!(
        configs,
        [all.clone(), all.clone(), all, vec![0, 1], vec![0, 1]],
        "one round at a time, candidate 2 dropped after the first look, stopped at round 5"
    );
    assert_eq!(looks.get(), 3, "looks from round FIRST_LOOK (3) on");
    assert!(
        said[0].starts_with("allocscope: round 3: open: jemalloc"),
        "{said:?}"
    );
    assert!(said[0].ends_with("; dropped: mimalloc,eager"), "{said:?}");
}

#[test]
fn an_unresolvable_candidate_stops_running_is_said_once_and_is_recorded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let judge: Judge = Box::new(|stored| {
        let rounds = stored.configs[0].runs.len();
        let why = "no difference this experiment can resolve".to_string();
        Ok(Decision {
            open: vec![(1, "memory straddles".into())],
            unresolvable: if rounds >= 3 { vec![(2, why)] } else { vec![] },
            stop: rounds >= 5,
            ..Decision::default()
        })
    });
    let (configs, said, store, id) = judged_here(dir.path(), judge);
    let all = vec![0, 1, 2];
    assert_eq!(
        configs,
        [all.clone(), all.clone(), all, vec![0, 1], vec![0, 1]]
    );
    assert!(
        said[0].ends_with("; stopped: mimalloc,eager (no difference this experiment can resolve)"),
        "{said:?}"
    );
    assert!(said[1].ends_with("; dropped: mimalloc,eager"), "{said:?}");
    let env = store.load_environment(id).expect("environment");
    assert_eq!(
        allocscope_core::judging::unresolvable_of(&env),
        ["mimalloc,eager"],
        "{env:?}"
    );
}

#[test]
fn ctrl_c_cancels_the_running_rounds_and_starts_no_more() {
    let dir = tempfile::tempdir().expect("tempdir");
    let looks = Cell::new(0);
    let mut engine = Double::new(
        2,
        Box::new(|_, round| Ended::Shard(shard(dir.path(), round.index))),
    );
    engine.busy_waits = 1;
    let mut store = Store::open(&dir.path().join("merged.db")).expect("store");
    // Ctrl-C while the first two rounds run: they are cancelled.
    let interrupted = || {
        looks.set(looks.get() + 1);
        looks.get() > 1
    };
    let driven = drive(&mut engine, &mut store, plan(0..4), &interrupted).expect("driven");
    assert_eq!(engine.cancels, 1);
    assert_eq!(engine.started.len(), 2, "no round starts after Ctrl-C");
    assert!(driven.interrupted);
    assert_eq!(
        driven.lost,
        [(0, "CANCELLED".to_string()), (1, "CANCELLED".to_string())]
    );
    assert_eq!(driven.experiment_id, None, "no round left its runs");
}

#[test]
fn rounds_one_at_a_time_merge_shards_of_the_configurations_left_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A job per round, as Slurm runs an adaptive plan: each shard holds
    // every configuration, with runs of those the round ran.
    let mut engine = Double::new(
        1,
        Box::new(|_, round| Ended::Shard(shard_of(dir.path(), round.index, &round.configs, true))),
    );
    let judge: Judge = Box::new(|_| {
        Ok(Decision {
            open: vec![(1, "memory straddles".into())],
            dropped: vec![2],
            stop: false,
            ..Decision::default()
        })
    });
    let mut store = Store::open(&dir.path().join("merged.db")).expect("store");
    let plan = RoundPlan {
        judge: Some(judge),
        first_look: 1,
        ..plan(0..3)
    };
    let driven = drive(&mut engine, &mut store, plan, &|| false).expect("driven");
    let started: Vec<Vec<usize>> = engine.started.iter().map(|r| r.configs.clone()).collect();
    assert_eq!(started, [vec![0, 1, 2], vec![0, 1], vec![0, 1]]);
    assert_eq!(driven.merged, [0, 1, 2]);
    let id = driven.experiment_id.expect("merged");
    assert_eq!(
        run_indices(&store, id),
        [vec![1, 2, 3], vec![1, 2, 3], vec![1]],
        "the dropped candidate ran round 1 only"
    );
}

#[test]
fn a_shard_with_fewer_configurations_merges_its_runs_under_their_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut engine = Double::new(
        2,
        Box::new(|_, round| match round.index {
            0 => Ended::Shard(shard(dir.path(), 0)),
            n => Ended::Shard(shard_of(dir.path(), n, &[2], false)),
        }),
    );
    let mut store = Store::open(&dir.path().join("merged.db")).expect("store");
    let driven = drive(&mut engine, &mut store, plan(0..2), &|| false).expect("driven");
    assert_eq!(driven.merged, [0, 1]);
    let id = driven.experiment_id.expect("merged");
    assert_eq!(
        run_indices(&store, id),
        [vec![1], vec![1], vec![1, 2]],
        "round 1's only configuration is the plan's third"
    );
}

/// A candidate the driver dropped in an earlier round and the judge finds
/// open again on its old runs is said dropped, never open and dropped at
/// once.
#[test]
fn a_candidate_dropped_earlier_is_not_said_open() {
    let configs = names();
    let decision = Decision {
        open: vec![(1, "why one".into()), (2, "why two".into())],
        ..Decision::default()
    };
    let line = progress_line(&configs, 4, &decision, &[], &[0, 1]);
    assert!(
        line.contains(&format!("open: {} (why one)", configs[1])),
        "{line}"
    );
    assert!(!line.contains("why two"), "{line}");
    assert!(
        line.ends_with(&format!("; dropped: {}", configs[2..].join(", "))),
        "{line}"
    );
}
