//! `allocscope tune`: a race of each allocator's settings, on compare's own
//! machinery: the engine `--executor` chose runs the rounds (here, through
//! the session, each run stored at once; on Slurm, a job per round whose
//! shard is merged), Ctrl-C keeping what ran, the round driver drops the
//! candidates the race settles out (`tune::race`) and honours `--max-runs`
//! (rounds per phase) and `--max-time` (over both phases). Phase one races
//! each setting on its own; phase two races the finalists and the
//! combinations of the settings that helped (`tune::combine`), as a second
//! experiment. Each phase's record (`tune::record`) is stored with its
//! experiment, so `report` re-renders and re-judges a race.

use crate::options::tune::{resolve, TuneSettings};
use allocscope_analyze::analyze_with;
use allocscope_analyze::decide::FIRST_LOOK;
use allocscope_analyze::types::Analysis;
use allocscope_cluster::batch::JobRequest;
use allocscope_core::judging::JudgeSettings;
use allocscope_core::run::Interrupt;
use allocscope_core::store::Store;
use allocscope_rounds::driver::{drive, Decision, Driven, Judge, RoundPlan};
use allocscope_rounds::judge::why_open;
use allocscope_rounds::local::Local;
use allocscope_rounds::Schedule;
use allocscope_tune::candidates::Candidate;
use allocscope_tune::combine::{combinations, finalists, Raced};
use allocscope_tune::halving::halving_look;
use allocscope_tune::perf::AutoPerf;
use allocscope_tune::race::{look, race_alpha, verdict_alpha, Dropped};
use allocscope_tune::record::{TuneRecord, TUNE_KEY};
use allocscope_tune::render::{self, Phase};
use std::time::{Instant, SystemTime};

/// Phase one's survivors with the least memory that race the combinations:
/// the best one only, so that phase two costs three configurations a round.
const FINALISTS: usize = 1;

/// Phase two's most rounds: enough for one interval look, so that the
/// whole race stays near twice the runs of compare's five defaults (20
/// candidates and `--max-runs 6`: at most 37 runs in phase one, 9 here).
const PHASE_TWO_ROUNDS: u32 = FIRST_LOOK;

/// Open candidates the progress line names after a look (of 20 or more).
const SHOWN_OPEN: usize = 3;

/// A phase's analysis and its record.
pub(crate) type Judged = (Analysis, TuneRecord);

/// How one phase ended.
struct PhaseEnd {
    id: i64,
    record: TuneRecord,
    interrupted: bool,
}

/// Runs the race and returns the process exit code: 0 when it ended and
/// every run of both phases ended `ok`, 1 when some did not (as `compare`)
/// or no round left runs, 128+signal when interrupted.
pub fn tune(mut settings: TuneSettings) -> anyhow::Result<i32> {
    for warning in &settings.compare.warnings {
        eprintln!("warning: {warning}");
    }
    let interrupt = Interrupt::install()?;
    let mut store = Store::open(&settings.compare.db)?;
    let began = Instant::now();
    let mut auto = AutoPerf::new(settings.compare.auto_perf);
    let Some(one) = race(&settings, 1, &interrupt, &mut store, &mut auto)? else {
        eprintln!("error: no round left its runs");
        return Ok(interrupt_code(&interrupt).unwrap_or(1));
    };
    settings.compare.judge = auto.judging(&settings.compare.judge);
    let mut last = one;
    let mut first = None;
    if !last.interrupted && settings.combine {
        if let Some(next) = phase_two(&mut settings, &store, &last, began)? {
            settings.compare.configs =
                resolve(&next.0, &allocscope_core::alloc::Registry::discover())?;
            if let Some(mut two) = race(&settings, 2, &interrupt, &mut store, &mut auto)? {
                two.record.earlier = Some(last.id);
                two.record.combined = next.1;
                store.set_environment(two.id, TUNE_KEY, &serde_json::to_string(&two.record)?)?;
                first = Some(std::mem::replace(&mut last, two));
            }
        }
    }
    let judging = &settings.compare.judge;
    let earlier = first
        .as_ref()
        .map(|p| {
            judged(&store, p.id, &p.record, judging, &settings.compare.baseline)
                .map(|a| (a, p.record.clone()))
        })
        .transpose()?;
    let analysis = judged(
        &store,
        last.id,
        &last.record,
        judging,
        &settings.compare.baseline,
    )?;
    print_race(
        &analysis,
        &last.record,
        earlier.as_ref(),
        &settings.compare.output,
        &settings.compare.db,
    )?;
    if let Some(code) = interrupt_code(&interrupt) {
        eprintln!(
            "allocscope: interrupted; the finished runs are stored in experiment {}",
            last.id
        );
        return Ok(code);
    }
    let all_ok = std::iter::once(&analysis)
        .chain(earlier.as_ref().map(|(a, _)| a))
        .all(|a| a.experiment.all_runs_ok());
    Ok(if all_ok { 0 } else { 1 })
}

fn interrupt_code(interrupt: &Interrupt) -> Option<i32> {
    interrupt.requested().then(|| interrupt.exit_code())
}

/// Runs one phase of the race over `settings.compare.configs` (the baseline
/// first) and stores its record (and `--perf-metric auto`'s figure);
/// `None` when no round left runs.
fn race(
    settings: &TuneSettings,
    phase: u32,
    interrupt: &Interrupt,
    store: &mut Store,
    auto: &mut AutoPerf,
) -> anyhow::Result<Option<PhaseEnd>> {
    let compare = &settings.compare;
    let rounds = compare.rounds.schedule.max_rounds();
    let family = compare.configs.len().saturating_sub(1);
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let mut environment = compare.judge.to_environment();
    environment.push(("tune.phase", phase.to_string()));
    let session = compare.session();
    let local = Local::new(
        &session,
        compare.output.quiet,
        interrupt,
        started_at,
        environment.clone(),
        rounds,
    );
    let names: Vec<String> = compare.configs.iter().map(|c| c.name.clone()).collect();
    let mut engine = compare
        .engine
        .engine(Box::new(local), || phase_job(compare, rounds))?;
    let base = names
        .iter()
        .position(|n| *n == compare.baseline)
        .unwrap_or(0);
    let mut state = RaceState::default();
    let judge = race_judge(&names, base, &compare.judge, rounds, &mut state, auto);
    let plan = RoundPlan {
        rounds: 0..rounds,
        configs: names.clone(),
        open: None,
        max_time: compare.rounds.max_time,
        judge: Some(judge),
        first_look: 1,
    };
    let driven = drive(engine.as_mut(), store, plan, &|| interrupt.requested())?;
    drop(engine);
    let Some(id) = driven.experiment_id else {
        return Ok(None);
    };
    finish_phase(
        store,
        id,
        phase,
        &environment,
        &driven,
        compare.output.quiet,
    )?;
    let record = TuneRecord {
        phase,
        candidates: family,
        race_alpha: race_alpha(rounds, state.family(family)),
        verdict_alpha: verdict_alpha(state.family(family)),
        dropped: state.dropped,
        earlier: None,
        combined: Vec::new(),
    };
    store.set_environment(id, TUNE_KEY, &serde_json::to_string(&record)?)?;
    auto.store(store, id)?;
    Ok(Some(PhaseEnd {
        id,
        record,
        interrupted: driven.interrupted,
    }))
}

/// Finishes a phase's experiment: the race's entries (an experiment merged
/// from a cluster's shards has them only from here), and where its rounds
/// went when they ran on a cluster.
fn finish_phase(
    store: &mut Store,
    id: i64,
    phase: u32,
    environment: &[(&str, String)],
    driven: &Driven,
    quiet: bool,
) -> anyhow::Result<()> {
    for (key, value) in environment {
        store.set_environment(id, key, value)?;
    }
    if !driven.merged.is_empty() && !quiet {
        eprintln!(
            "allocscope: phase {phase}: merged rounds {:?} into experiment {id}",
            driven.merged
        );
    }
    for (round, state) in &driven.lost {
        eprintln!("allocscope: phase {phase}: round {round}: {state} (no shard)");
    }
    store.finish_experiment(id, driven.final_status())
}

/// A phase's plan for a cluster (`--executor slurm`): its configurations,
/// as the `compare` arguments a node runs, one job per round.
fn phase_job(compare: &crate::options::CompareSettings, rounds: u32) -> anyhow::Result<JobRequest> {
    let argv: Vec<_> = std::env::args_os().collect();
    Ok(JobRequest {
        rounds,
        configs: compare.configs.iter().map(|c| c.name.clone()).collect(),
        db: compare.db.clone(),
        node_arguments: crate::options::tune::node_arguments(&argv, &compare.configs)?,
        quiet: compare.output.quiet,
        adaptive: true,
        command: "compare",
    })
}

/// What a phase's judge keeps between looks.
#[derive(Default)]
struct RaceState {
    /// In the order they were dropped, halving's first.
    dropped: Vec<Dropped>,
    /// The candidates open at the first interval look (the family the
    /// Bonferroni level is shared among); `None` before it.
    survivors: Option<usize>,
}

impl RaceState {
    /// The survivors of the halving, or the open candidates if the race
    /// never reached an interval look.
    fn family(&self, raced: usize) -> usize {
        self.survivors
            .unwrap_or(raced.saturating_sub(self.dropped.len()))
    }
}

/// The race's judge for the round driver: before `FIRST_LOOK`, each look
/// halves the open candidates (`tune::halving`); from it on, the intervals
/// at the level shared among the halving's survivors drop the settled
/// ones. Each drop is recorded in `state` with the round and the reason
/// (once each); the progress line names the first `SHOWN_OPEN` open ones.
/// `--perf-metric auto` chooses its figure at the first look (`AutoPerf`).
fn race_judge<'a>(
    names: &'a [String],
    base: usize,
    judging: &'a JudgeSettings,
    rounds: u32,
    state: &'a mut RaceState,
    auto: &'a mut AutoPerf,
) -> Judge<'a> {
    let raced = names.len().saturating_sub(1);
    Box::new(move |mut experiment| {
        let done = experiment.configs[base]
            .runs
            .iter()
            .map(|r| r.record.index)
            .max()
            .unwrap_or(0);
        let open: Vec<usize> = (0..names.len())
            .filter(|&i| i != base && !state.dropped.iter().any(|d| d.config == names[i]))
            .collect();
        if done >= FIRST_LOOK && state.survivors.is_none() {
            state.survivors = Some(open.len());
        }
        let mut judging = JudgeSettings {
            decision_alpha: race_alpha(rounds, state.family(raced)),
            ..judging.clone()
        };
        auto.look(&mut experiment, &mut judging, done);
        let l = if done < FIRST_LOOK {
            halving_look(&experiment, base, &judging, done, &open)
        } else {
            look(&experiment, base, &judging, done, rounds, &open)
        };
        for (i, reason) in &l.dropped {
            if !state.dropped.iter().any(|d| d.config == names[*i]) {
                state.dropped.push(Dropped {
                    config: names[*i].clone(),
                    round: done,
                    reason: reason.clone(),
                });
            }
        }
        Ok(Decision {
            open: l
                .judged
                .iter()
                .filter(|j| open.contains(&j.index) && j.standing.is_open())
                .filter(|j| !l.dropped.iter().any(|(i, _)| *i == j.index))
                .take(SHOWN_OPEN)
                .map(|j| (j.index, why_open(j, &l.measures, &judging)))
                .collect(),
            dropped: l.dropped.iter().map(|(i, _)| *i).collect(),
            stop: l.stop,
            ..Decision::default()
        })
    })
}

/// Phase two's candidates (the baseline, phase one's finalists, the
/// combinations) and the combinations' specs; `None` when no allocator had
/// two settings that helped, or `--max-time` is spent.
fn phase_two(
    settings: &mut TuneSettings,
    store: &Store,
    one: &PhaseEnd,
    began: Instant,
) -> anyhow::Result<Option<(Vec<Candidate>, Vec<String>)>> {
    let compare = &settings.compare;
    let analysis = judged(
        store,
        one.id,
        &one.record,
        &compare.judge,
        &compare.baseline,
    )?;
    let memory = &analysis.verdict.memory.id;
    let raced: Vec<Raced> = settings
        .candidates
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != analysis.baseline)
        .map(|(i, c)| Raced {
            candidate: c.clone(),
            memory: render::ratio_of(&analysis, i, memory).map(|r| r.value),
            survived: one.record.dropped(&c.spec()).is_none(),
            kept_once: one.record.dropped(&c.spec()).is_none_or(|d| d.round > 1),
        })
        .collect();
    let finalists = finalists(&raced, FINALISTS);
    let combos = combinations(&raced, &finalists);
    if combos.is_empty() {
        return Ok(None);
    }
    if let Some(max) = settings.compare.rounds.max_time {
        match max.checked_sub(began.elapsed()) {
            Some(left) if !left.is_zero() => settings.compare.rounds.max_time = Some(left),
            _ => return Ok(None),
        }
    }
    let baseline = settings.candidates[analysis.baseline].clone();
    let schedule = &mut settings.compare.rounds.schedule;
    *schedule = Schedule::Auto {
        max_runs: schedule.max_rounds().min(PHASE_TWO_ROUNDS),
    };
    let specs = combos.iter().map(Candidate::spec).collect();
    let all = std::iter::once(baseline)
        .chain(finalists)
        .chain(combos)
        .collect();
    Ok(Some((all, specs)))
}

/// A phase's experiment analysed at the level its race recorded.
fn judged(
    store: &Store,
    id: i64,
    record: &TuneRecord,
    judging: &JudgeSettings,
    baseline: &str,
) -> anyhow::Result<Analysis> {
    // A candidate the halving dropped has one or two runs, outside the
    // family the race's level was shared among: never the recommendation.
    // Those its intervals dropped are settled out by their own figures (at
    // the race's stricter level, so at the verdict's too).
    let ruled_out = record
        .dropped
        .iter()
        .filter(|d| d.round < FIRST_LOOK)
        .map(|d| (d.config.clone(), format!("after round {}", d.round)))
        .collect();
    let judging = JudgeSettings {
        decision_alpha: record.verdict_alpha,
        ruled_out: allocscope_core::judging::RuledOut(ruled_out),
        ..judging.clone()
    };
    analyze_with(store.load_experiment(Some(id))?, baseline, &judging)
}

/// The table, verdict and exports of the last phase, with the race (also
/// in the JSON export as `tune`), then the race as text after the table.
pub(crate) fn print_race(
    analysis: &Analysis,
    record: &TuneRecord,
    earlier: Option<&Judged>,
    output: &crate::options::export::OutputSettings,
    db: &std::path::Path,
) -> anyhow::Result<()> {
    let exports = &output.exports;
    let last = Phase { analysis, record };
    let first = earlier.map(|(analysis, record)| Phase { analysis, record });
    let summary = render::summarize(&last, first.as_ref());
    let mut analysis = analysis.clone();
    analysis.tune = Some(serde_json::to_value(&summary)?);
    crate::exports::print_table_and_export(&analysis, output, db)?;
    if !exports.uses_stdout() {
        allocscope_report::reporter::print(&render::text(&summary))?;
    }
    Ok(())
}

/// `report` on a race's experiment: its phase one loaded too, both judged
/// at the level they raced at. `None` when the experiment is no race.
pub(crate) fn stored_race(
    store: &Store,
    id: i64,
    judging: &JudgeSettings,
    baseline: &str,
) -> anyhow::Result<Option<(Analysis, TuneRecord, Option<Judged>)>> {
    let Some(record) = TuneRecord::from_environment(&store.load_environment(id)?) else {
        return Ok(None);
    };
    let earlier = match record.earlier {
        Some(first) => {
            let env = store.load_environment(first)?;
            TuneRecord::from_environment(&env)
                .map(|r| judged(store, first, &r, judging, baseline).map(|a| (a, r)))
                .transpose()?
        }
        None => None,
    };
    let analysis = judged(store, id, &record, judging, baseline)?;
    Ok(Some((analysis, record, earlier)))
}
