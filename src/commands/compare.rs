//! `allocscope compare`: run the rounds (`rounds.rs`), each run stored as
//! soon as it ends, then analyse and report from the store.

use super::session::{Matrix, Session, Step};
use crate::analyze::analyze_with;
use crate::options::CompareSettings;
use crate::store::Store;
use std::time::SystemTime;

/// Runs the rounds and returns the process exit code: 0 when every run
/// ended `ok`, 1 when some did not, 128+signal when interrupted.
pub fn compare(settings: &CompareSettings) -> anyhow::Result<i32> {
    for warning in &settings.warnings {
        eprintln!("warning: {warning}");
    }
    let mut store = Store::open(&settings.db)?;
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let judge = super::judge::adaptive(
        &settings.baseline,
        &settings.judge,
        settings.rounds.schedule.max_rounds(),
    );
    let matrix = super::rounds::run_rounds(
        settings,
        settings.output.quiet,
        &mut store,
        started_at,
        judge,
    )?;
    let experiment_id = matrix.experiment_id;
    let experiment = store.load_experiment(Some(experiment_id))?;
    let all_ok = experiment
        .configs
        .iter()
        .flat_map(|c| &c.runs)
        .all(|r| r.record.status == crate::model::RunStatus::Ok);
    let analysis = analyze_with(experiment, &settings.baseline, &settings.judge)?;
    super::exports::print_table_and_export(&analysis, &settings.output.exports)?;
    if let Some(code) = matrix.interrupted {
        eprintln!(
            "allocscope: interrupted; the finished runs are stored in experiment {experiment_id}"
        );
        return Ok(code);
    }
    Ok(if all_ok { 0 } else { 1 })
}

/// Runs `plan` (one cluster round) into a new experiment of `store`, each
/// run stored as soon as it ends; `environment` is stored with the
/// experiment before the first run.
pub(crate) fn run_matrix(
    settings: &CompareSettings,
    quiet: bool,
    store: &mut Store,
    plan: &[crate::plan::PlannedRun],
    started_at: String,
    environment: &[(&str, String)],
) -> anyhow::Result<Matrix> {
    let interrupt = crate::run::Interrupt::install()?;
    let mut session = Session::start(
        settings,
        quiet,
        &interrupt,
        store,
        started_at,
        environment,
        plan.len(),
    )?;
    let mut interrupted = false;
    for planned in plan {
        if session.run(store, planned)? == Step::Interrupted {
            interrupted = true;
            break;
        }
    }
    let matrix = session.finish(interrupted);
    let status = if interrupted {
        "interrupted"
    } else {
        "complete"
    };
    store.finish_experiment(matrix.experiment_id, status)?;
    Ok(matrix)
}
