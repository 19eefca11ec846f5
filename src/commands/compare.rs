//! `allocscope compare`: the rounds on the engine `--executor` chose (here
//! by default), driven by `rounds.rs`, each run or round stored as soon as
//! it ends; then where the rounds ran, the table, the verdict and the
//! exports, from the store.

use crate::options::CompareSettings;
use allocscope_analyze::analyze_with;
use allocscope_analyze::verdict::Outcome;
use allocscope_cluster::batch::JobRequest;
use allocscope_cluster::executor::node_arguments;
use allocscope_core::run::Interrupt;
use allocscope_core::store::Store;
use allocscope_rounds::driver::{drive, Driven, RoundPlan};
use allocscope_rounds::local::Local;
use allocscope_rounds::Schedule;
use std::time::SystemTime;

/// The exit code when every run ended `ok` and, under `--runs auto`, the
/// rounds ran out on a verdict not proven: a configuration recommended for
/// its memory with its performance not resolved
/// (`Outcome::RecommendUnproven`), or the default kept with candidates
/// still open that measured no saving (`Outcome::KeepUnproven`): a script
/// can tell it from a proven answer (0).
pub const EXIT_UNPROVEN: i32 = 3;

/// Runs the rounds and returns the process exit code: 0 when every run
/// ended `ok` (and every round left its runs), `EXIT_UNPROVEN` when then
/// the verdict is not proven, 1 when some run did not end `ok`,
/// 128+signal when interrupted.
pub fn compare(settings: &CompareSettings) -> anyhow::Result<i32> {
    for warning in &settings.warnings {
        eprintln!("warning: {warning}");
    }
    let quiet = settings.output.quiet;
    let interrupt = Interrupt::install()?;
    let rounds = settings.rounds.schedule.max_rounds();
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let session = settings.session();
    let local = Local::new(
        &session,
        quiet,
        &interrupt,
        started_at,
        settings.judge.to_environment(),
        rounds,
    );
    let adaptive = matches!(settings.rounds.schedule, Schedule::Auto { .. });
    let job = || job_request(settings, rounds, adaptive);
    let mut engine = settings.engine.engine(Box::new(local), job)?;
    if settings.engine.batch.dry_run {
        engine.dry_run()?;
        return Ok(0);
    }
    // Opened before anything is submitted, so an unwritable store stops us first.
    let mut store = Store::open(&settings.db)?;
    let judge = adaptive.then(|| {
        let max_time = settings.rounds.max_time;
        allocscope_rounds::judge::adaptive(&settings.baseline, &settings.judge, rounds, max_time)
    });
    let plan = RoundPlan {
        rounds: 0..rounds,
        configs: settings.configs.iter().map(|c| c.name.clone()).collect(),
        open: None,
        max_time: settings.rounds.max_time,
        judge,
        first_look: allocscope_analyze::decide::FIRST_LOOK,
    };
    let driven = drive(engine.as_mut(), &mut store, plan, &|| interrupt.requested())?;
    drop(engine);
    if let Some(ok) = driven.handed_over {
        return Ok(if ok { 0 } else { 1 });
    }
    let exit_interrupted = driven.interrupted.then(|| interrupt.exit_code());
    let Some(id) = driven.experiment_id else {
        for (round, state) in &driven.lost {
            eprintln!("allocscope: round {round}: {state} (no shard)");
        }
        eprintln!("error: no round left its runs");
        return Ok(exit_interrupted.unwrap_or(1));
    };
    store.finish_experiment(id, driven.final_status())?;
    let outcome = report(&mut store, id, settings, &driven, rounds)?;
    if let Some(code) = exit_interrupted {
        eprintln!("allocscope: interrupted; the finished runs are stored in experiment {id}");
        return Ok(code);
    }
    let all_ok = store.load_experiment(Some(id))?.all_runs_ok();
    Ok(match all_ok && driven.lost.is_empty() {
        false => 1,
        // Only a time box (`--runs auto` capped by --max-runs/--max-time)
        // leaves a pick unproven by the experiment's own rule; a fixed
        // `-r N` ran what was asked, and exits 0 as it always did.
        true if adaptive
            && matches!(outcome, Outcome::RecommendUnproven | Outcome::KeepUnproven) =>
        {
            EXIT_UNPROVEN
        }
        true => 0,
    })
}

/// The plan a cluster engine writes: this process's `compare` arguments.
fn job_request(
    settings: &CompareSettings,
    rounds: u32,
    adaptive: bool,
) -> anyhow::Result<JobRequest> {
    let argv: Vec<_> = std::env::args_os().collect();
    Ok(JobRequest {
        rounds,
        configs: settings.configs.iter().map(|c| c.name.clone()).collect(),
        db: settings.db.clone(),
        node_arguments: node_arguments(&argv, "compare", &[])?,
        quiet: settings.output.quiet,
        adaptive,
        command: "compare",
    })
}

/// Which rounds were merged and where they ran (for shards), then the
/// table, verdict and exports; the verdict's outcome.
fn report(
    store: &mut Store,
    id: i64,
    settings: &CompareSettings,
    driven: &Driven,
    rounds: u32,
) -> anyhow::Result<Outcome> {
    if !driven.merged.is_empty() || !driven.lost.is_empty() {
        if !settings.output.quiet {
            let merged = driven.merged.len();
            let of = match settings.rounds.schedule {
                Schedule::Auto { .. } if merged == 1 => format!("round (of at most {rounds})"),
                Schedule::Auto { .. } => format!("rounds (of at most {rounds})"),
                _ => format!("of {rounds} rounds"),
            };
            eprintln!("allocscope: merged {merged} {of} into experiment {id}");
        }
        super::merge::print_rounds(store, id)?;
    }
    let mut judge = match settings.auto_perf {
        true => allocscope_rounds::throughput::adopt(store, id, &settings.judge)?,
        false => settings.judge.clone(),
    };
    judge.unresolvable = allocscope_core::judging::unresolvable_of(&store.load_environment(id)?);
    let experiment = store.load_experiment(Some(id))?;
    let analysis = analyze_with(experiment, &settings.baseline, &judge)?;
    crate::exports::print_table_and_export(&analysis, &settings.output, &settings.db)?;
    Ok(analysis.verdict.outcome)
}
