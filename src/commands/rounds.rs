//! The round-by-round driver of `compare`: warm-ups first, then round k runs
//! every configuration still open once (the baseline always), so the runs of
//! round k pair across configurations. With `--runs N` that is exactly N
//! rounds; with `--runs auto` a judge decides after each round (from round 2)
//! which candidates are still open, which are dropped, and whether to stop.
//! `--max-runs` and `--max-time` end it whichever comes first. Every run is
//! stored as soon as it ends, so Ctrl-C keeps the finished ones.

use super::session::{Matrix, Session, Step};
use crate::model::StoredExperiment;
use crate::options::rounds::Schedule;
use crate::options::CompareSettings;
use crate::plan::PlannedRun;
use crate::run::Interrupt;
use crate::store::Store;
use std::time::Instant;

/// What the judge says after a round.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decision {
    /// Candidates (configuration indices) still unsettled, and why.
    pub open: Vec<(usize, String)>,
    /// Candidates settled out: they run no more rounds.
    pub dropped: Vec<usize>,
    /// Nothing is left to settle.
    pub stop: bool,
}

/// Judges the stored experiment after a round.
pub type Judge<'a> = Box<dyn FnMut(StoredExperiment) -> anyhow::Result<Decision> + 'a>;

/// Runs the rounds of `settings` into a new experiment of `store`; `judge`
/// is asked after each round from round 2 when the schedule is `auto`.
pub(crate) fn run_rounds(
    settings: &CompareSettings,
    quiet: bool,
    store: &mut Store,
    started_at: String,
    mut judge: Judge<'_>,
) -> anyhow::Result<Matrix> {
    let configs = settings.configs.len();
    let schedule = settings.rounds.schedule;
    let max_rounds = schedule.max_rounds();
    let total = configs * (settings.warmup + max_rounds) as usize;
    let began = Instant::now();
    let environment = settings.judge.to_environment();
    let interrupt = Interrupt::install()?;
    let mut session = Session::start(
        settings,
        quiet,
        &interrupt,
        store,
        started_at,
        &environment,
        total,
    )?;
    let warmups = crate::plan::interleaved(configs, 0, settings.warmup);
    for planned in &warmups {
        if session.run(store, planned)? == Step::Interrupted {
            return finish(session, store, true);
        }
    }
    let mut dropped = vec![false; configs];
    for round in 1..=max_rounds {
        if round > 1
            && settings
                .rounds
                .max_time
                .is_some_and(|t| began.elapsed() >= t)
        {
            session.say(&format!(
                "allocscope: --max-time reached after round {}; no new round starts",
                round - 1
            ));
            break;
        }
        for config in (0..configs).filter(|&c| !dropped[c]) {
            let planned = PlannedRun {
                config,
                repetition: round,
                warmup: false,
            };
            if session.run(store, &planned)? == Step::Interrupted {
                return finish(session, store, true);
            }
        }
        if !matches!(schedule, Schedule::Auto { .. }) || round < crate::analyze::decide::FIRST_LOOK
        {
            continue;
        }
        let decision = judge(store.load_experiment(Some(session.experiment_id()))?)?;
        for &c in &decision.dropped {
            if let Some(flag) = dropped.get_mut(c) {
                *flag = true;
            }
        }
        session.say(&progress_line(settings, round, &decision, &dropped));
        if decision.stop {
            break;
        }
    }
    finish(session, store, false)
}

fn finish(session: Session, store: &mut Store, interrupted: bool) -> anyhow::Result<Matrix> {
    let matrix = session.finish(interrupted);
    let status = if interrupted {
        "interrupted"
    } else {
        "complete"
    };
    store.finish_experiment(matrix.experiment_id, status)?;
    Ok(matrix)
}

/// `round 3: open: jemalloc (memory 0.98x [0.95, 1.01] straddles 0.97x);
/// dropped: tcmalloc` or `round 4: every candidate settled`.
fn progress_line(
    settings: &CompareSettings,
    round: u32,
    decision: &Decision,
    dropped: &[bool],
) -> String {
    let name = |c: usize| settings.configs.get(c).map_or("?", |c| c.name.as_str());
    let mut line = format!("allocscope: round {round}: ");
    if decision.open.is_empty() {
        line.push_str("every candidate settled");
    } else {
        let open: Vec<String> = decision
            .open
            .iter()
            .map(|(c, why)| format!("{} ({why})", name(*c)))
            .collect();
        line.push_str(&format!("open: {}", open.join(", ")));
    }
    let gone: Vec<&str> = (0..dropped.len())
        .filter(|&c| dropped[c])
        .map(name)
        .collect();
    if !gone.is_empty() {
        line.push_str(&format!("; dropped: {}", gone.join(", ")));
    }
    line
}
