//! `allocscope soak`: the instances `options::soak` checked (running in
//! place with `--pid`, or a COMMAND's instances started side by side),
//! soaked by `soak::watch` (or with `--executor`, each a job of its own
//! followed by `soak_jobs`), then the report and verdict of `soak::canary`
//! printed.

use crate::options::soak::SoakSettings;
use crate::run::Interrupt;
use crate::soak::canary::report;
use crate::soak::verdict::verdict;
use crate::soak::watch::{by_label, watch, Instances, Settings, Soaked};
use crate::store::Store;
use crate::units::format_seconds;

pub fn soak(options: SoakSettings) -> anyhow::Result<i32> {
    let submitter = match &options.recipe {
        Some(recipe) => {
            (options.engine).submitter(|| super::soak_jobs::job_request(&options, recipe))?
        }
        None => None,
    };
    if let Some(engine) = submitter.as_ref().filter(|_| options.engine.batch.dry_run) {
        engine.dry_run()?;
        return Ok(0);
    }
    let interrupt = Interrupt::install()?;
    let mut store = Store::open(&options.db)?;
    let instances = match &options.recipe {
        Some(recipe) => Instances::Launched(recipe),
        None => Instances::InPlace(&options.instances),
    };
    if !options.quiet {
        let given: Vec<String> = match &options.recipe {
            Some(recipe) => (recipe.flavours.iter())
                .map(|f| format!("{} x{}", f.config.name, recipe.replicas.end()))
                .collect(),
            None => (options.instances.iter())
                .map(|a| format!("{}={}", a.label, a.pid))
                .collect(),
        };
        eprintln!(
            "allocscope: soaking {} every {} into {}{}; Ctrl-C stops and keeps everything",
            given.join(", "),
            format_seconds(options.interval.as_secs_f64()),
            options.db.display(),
            if options.until_settled {
                ", until every configuration has settled"
            } else {
                ""
            }
        );
    }
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let soak_id = store.begin_soak(&arguments)?;
    let settings = Settings {
        soak_id,
        interval: options.interval,
        duration: options.duration,
        until_settled: options.until_settled,
    };
    let soaked = match (submitter, &options.recipe) {
        (Some(engine), Some(recipe)) => {
            super::soak_jobs::follow(engine, &mut store, recipe, soak_id, &interrupt)?
        }
        _ => watch(&mut store, &instances, &settings, &interrupt)?,
    };
    conclude(&soaked, soak_id, options.quiet);
    Ok(0)
}

/// The report and verdict of the soaked instances, and how the soak ended.
pub(super) fn conclude(soaked: &Soaked, soak_id: i64, quiet: bool) {
    let judged =
        by_label(&soaked.instances).and_then(|configs| verdict(&configs, soaked.elapsed_s));
    print!("{}", report(&soaked.instances, judged.as_ref()));
    if !quiet {
        let ids: Vec<String> = (soaked.instances.iter())
            .map(|w| w.appender.id.to_string())
            .collect();
        eprintln!(
            "allocscope: soak {} after {}, sampler CPU {}; stored as soak {soak_id}: \
             `allocscope report --recordings {}` shows the instances",
            soaked.status,
            format_seconds(soaked.elapsed_s),
            format_seconds(soaked.sampler_cpu_s),
            ids.join(" ")
        );
    }
}
