//! `allocscope soak`: the instances `options::soak` checked (running in
//! place with `--pid`, or a COMMAND's instances started side by side),
//! soaked by `soak::watch` (or with `--executor`, each a job of its own
//! followed by `soak_jobs`), shown as it goes by `soak::live`, then the
//! report and verdict of `soak::canary` printed and `--html`'s final page
//! written.

use crate::cli::SoakArgs;
use crate::options::soak::{resumed, SoakSettings};
use allocscope_cluster::executor::Executor;
use allocscope_core::run::Interrupt;
use allocscope_core::store::Store;
use allocscope_core::units::format_seconds;
use allocscope_core::usage_error::UsageError;
use allocscope_record::prometheus::{self, Current};
use allocscope_soak::canary::report;
use allocscope_soak::error::SoakError;
use allocscope_soak::live::{write_page, Live};
use allocscope_soak::verdict::verdict;
use allocscope_soak::watch::{by_label, watch, Instances, Publish, Settings, Soaked};
use allocscope_soak::watched::Watched;

/// The soak's settings and store: a new soak begun, or (`--resume ID`)
/// soak ID's stored arguments; with whether it is resumed, its id and the
/// Unix time it began.
fn begun(args: &SoakArgs) -> anyhow::Result<(SoakSettings, Store, bool, i64, f64)> {
    let (mut options, mut store, resumed) = match args.resume {
        Some(id) => {
            let store = Store::open(&args.db)?;
            let (original, began_unix) = resumed(id, args, &store)?;
            let options = SoakSettings::from_args(&original)?;
            (options, store, Some((id, began_unix)))
        }
        None => {
            let options = SoakSettings::from_args(args)?;
            let store = Store::open(&options.db)?;
            (options, store, None)
        }
    };
    let (soak_id, began_unix) = match resumed {
        Some(resumed) => resumed,
        None => {
            let arguments: Vec<String> = std::env::args().skip(1).collect();
            store.begin_soak(&arguments)?
        }
    };
    // The instances' directories are the soak's, across a resume.
    if let Some(recipe) = options.recipe.as_mut() {
        recipe.dir = recipe.dir.join(format!("soak-{soak_id}"));
    }
    Ok((options, store, resumed.is_some(), soak_id, began_unix))
}

pub fn soak(args: &SoakArgs) -> anyhow::Result<i32> {
    let interrupt = Interrupt::install()?;
    // Bound before the soak is stored: a port in use stops it here.
    let publish = publisher(args)?;
    let (options, mut store, resumed, soak_id, began_unix) = begun(args)?;
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
            "allocscope: {} {} every {} into {}{}; Ctrl-C stops and keeps everything",
            match resumed {
                true => format!("resuming soak {soak_id}:"),
                false => "soaking".into(),
            },
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
    let settings = Settings {
        soak_id,
        began_unix,
        resumed,
        interval: options.interval,
        duration: options.duration,
        until_settled: options.until_settled,
        live: (!options.quiet || options.html.is_some()).then(|| Live {
            every: options.report_every,
            progress: !options.quiet,
            page: options.html.clone(),
        }),
        publish,
        remote: None,
    };
    let soaked = match (submitter, &options.recipe) {
        (Some(engine), Some(recipe)) => {
            let until_settled = options.until_settled;
            let following = super::soak_jobs::Following {
                recipe,
                soak_id,
                until_settled,
            };
            super::soak_jobs::follow(engine, &mut store, &following, &interrupt)?
        }
        _ => watch(&mut store, &instances, &settings, &interrupt)?,
    };
    let code = conclude(&soaked, soak_id, options.quiet);
    if let Some(path) = &options.html {
        write_page(&store, soak_id, path, None)?;
    }
    Ok(code)
}

/// `--metrics`: the server started on its address (taken from this command
/// line, on `--resume` too), and what makes each instance's last sample the
/// current value of its series.
fn publisher(args: &SoakArgs) -> anyhow::Result<Option<Publish>> {
    let Some(text) = &args.metrics else {
        return Ok(None);
    };
    let address = prometheus::parse_address(text, args.metrics_public)?;
    if args.cluster.executor != Executor::Local {
        return Err(UsageError::from(SoakError::MetricsOnJobs).into());
    }
    let shared = prometheus::start(address, args.quiet)?;
    Ok(Some(Box::new(move |watched: &[Watched]| {
        let values = watched.iter().map(|w| Current {
            recording: w.name.clone(),
            config: w.label.clone(),
            replica: Some(w.replica().to_string()),
            sample: w.last,
            elapsed_s: w.last.map_or(0.0, |s| s.t_s),
            samples_total: w.sampling.sampler().ticks(),
            sampler_cpu_s: w.sampler_cpu_s(),
        });
        if let Ok(mut current) = shared.lock() {
            *current = values.collect();
        }
    })))
}

/// The report and verdict of the soaked instances, and how the soak ended;
/// the exit code, 1 when the store failed.
pub(super) fn conclude(soaked: &Soaked, soak_id: i64, quiet: bool) -> i32 {
    let judged =
        by_label(&soaked.instances).and_then(|configs| verdict(&configs, soaked.elapsed_s));
    if let Err(error) =
        allocscope_report::reporter::print(&report(&soaked.instances, judged.as_ref()))
    {
        eprintln!("error: {error:#}");
        return 1;
    }
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
    match &soaked.failure {
        Some(error) => {
            eprintln!(
                "allocscope: the soak failed: {error:#}; every instance was stopped, \
                 and what was committed before stays readable"
            );
            1
        }
        None => 0,
    }
}
