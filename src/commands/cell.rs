//! `allocscope cell`: one round of a cluster plan on this node, run by the
//! local engine through the round driver. The plan's `compare` arguments
//! are checked here as a local compare would check them, against this
//! node's allocators; the round runs the plan's configurations `--configs`
//! names (those an adaptive plan's rounds before left open; every one by
//! default), and the shard holds all of them, so the merge finds each by
//! name. The round's runs go to a shard written under a
//! temporary name and renamed only when the round ends uninterrupted, so a
//! shard that exists is a finished round.

use crate::cli::CellArgs;
use crate::options::cell::{plan_settings, round_configs};
use allocscope_cluster::error::ClusterError;
use allocscope_cluster::plan_file::ClusterPlan;
use allocscope_core::run::Interrupt;
use allocscope_core::store::Store;
use allocscope_core::usage_error::UsageError;
use allocscope_rounds::driver::{drive, RoundPlan};
use allocscope_rounds::facts;
use allocscope_rounds::local::Local;
use allocscope_rounds::shard::{remove_store_files, with_suffix, CPU_MODEL, PLAN_ID, ROUND};
use anyhow::Context;

/// What a shard's experiment records besides its runs: its plan and round,
/// the node's CPU, and the judge's settings, which travel with the shard so
/// that a merge, by the engine or by hand, gives its experiment the budget
/// it was planned with.
fn shard_environment(
    plan_id: &str,
    round: u32,
    judge: &allocscope_core::judging::JudgeSettings,
) -> Vec<(&'static str, String)> {
    let mut environment = vec![
        (PLAN_ID, plan_id.to_string()),
        (ROUND, round.to_string()),
        (CPU_MODEL, facts::cpu_model()),
    ];
    environment.extend(judge.to_environment());
    environment
}

/// Exit code 0 when the shard was written (the runs' own statuses are in
/// it: a round whose runs failed is still a round to merge), 128+signal
/// when interrupted, with no shard.
pub fn cell(args: &CellArgs) -> anyhow::Result<i32> {
    let plan = ClusterPlan::read(&args.plan)?;
    let round = args.round;
    if round >= plan.rounds {
        return Err(UsageError::from(ClusterError::RoundOutside {
            round,
            plan: plan.plan_id,
            rounds: plan.rounds,
        })
        .into());
    }
    if plan.command == "soak" {
        return super::soak_jobs::instance(&plan, args);
    }
    let settings = plan_settings(
        &args.plan,
        &plan.args,
        &allocscope_core::alloc::Registry::discover(),
    )?;
    for warning in &settings.warnings {
        eprintln!("warning: {warning}");
    }
    let names: Vec<String> = settings.configs.iter().map(|c| c.name.clone()).collect();
    let open = round_configs(
        args.configs.as_ref().map(|c| c.0.as_slice()),
        &plan.configs,
        &names,
    )?;
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating '{}'", dir.display()))?;
    }
    let partial = with_suffix(&args.out, ".partial");
    remove_store_files(&partial);
    let mut store = Store::open(&partial)?;
    let host = allocscope_core::host::capture();
    if !args.quiet {
        eprintln!(
            "allocscope: plan {}: round {round} of {} on {}, {} of {} configurations",
            plan.plan_id,
            plan.rounds,
            host.hostname,
            open.len(),
            names.len()
        );
    }
    let environment = shard_environment(&plan.plan_id, round, &settings.judge);
    // Warm-ups run on every node: each round warms its own machine.
    let interrupt = Interrupt::install()?;
    let session = settings.session();
    let mut local = Local::new(
        &session,
        args.quiet,
        &interrupt,
        plan.started_at.clone(),
        environment,
        1,
    );
    let rounds = RoundPlan {
        rounds: round..round + 1,
        configs: names,
        open: Some(open),
        max_time: None,
        judge: None,
        first_look: allocscope_analyze::decide::FIRST_LOOK,
    };
    let driven = drive(&mut local, &mut store, rounds, &|| interrupt.requested())?;
    drop(local);
    if let Some(id) = driven.experiment_id {
        store.finish_experiment(id, driven.final_status())?;
    }
    drop(store);
    if driven.interrupted {
        remove_store_files(&partial);
        eprintln!("allocscope: round {round} interrupted; no shard written");
        return Ok(interrupt.exit_code());
    }
    std::fs::rename(&partial, &args.out)
        .with_context(|| format!("writing shard '{}'", args.out.display()))?;
    if !args.quiet {
        eprintln!("allocscope: round {round}: shard {}", args.out.display());
    }
    Ok(0)
}
