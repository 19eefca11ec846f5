//! `allocscope demo`: `compare` with the default configurations on a built-in
//! scenario, so a newcomer sees the point without a program of their own.

use crate::cli::DemoArgs;
use crate::options::export::{
    beside_the_csv, Destination, Export, ExportList, Format, OutputSettings,
};
use crate::options::parse::{parse_count, parse_marks};
use crate::options::{service, CompareSettings};
use crate::usage_error::UsageError;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

/// A scenario as the demo runs it.
struct DemoScenario {
    name: &'static str,
    models: &'static str,
    /// Knobs for `--quick` (the README's command: all of the demo within 3
    /// minutes on a 2-core machine) and for the full run.
    quick: &'static [&'static str],
    full: &'static [&'static str],
    /// A server: run with `compare --server` and the built-in generator,
    /// `(quick, full)` requests per run, on a free port of 127.0.0.1.
    requests: Option<(u32, u32)>,
}

const SCENARIOS: &[DemoScenario] = &[
    DemoScenario {
        name: "churn",
        models: "the RocksDB-based service (seed 004): 25 threads, objects freed by another \
                 thread than the one that allocated them, a working set replaced in random \
                 order, a hot set of threads that rotates. Under glibc's default this grows \
                 many arenas and holds RSS well above the live data.",
        // By operations, not seconds: a time-bounded run would compare
        // different amounts of work under fast and slow allocators.
        quick: &["--ops", "3000000", "--seconds", "0"],
        full: &["--seconds", "0"],
        requests: None,
    },
    DemoScenario {
        name: "events",
        models: "the physics reconstruction job (seed 001): events of widely varying memory \
                 need, a few objects surviving each; one marker per event; 4 worker processes \
                 so the tree's total PSS is compared.",
        quick: &["--procs", "4", "--events", "40"],
        full: &["--procs", "4"],
        requests: None,
    },
    DemoScenario {
        name: "kv",
        models: "the key-value server (seed 003): items with 16-256 B values inserted into a \
                 hash table; a marker at 0, 100, 1k, 10k, 100k and 1M items gives the \
                 items -> memory table.",
        quick: &["--items", "100000"],
        full: &[],
        requests: None,
    },
    DemoScenario {
        name: "server",
        models: "the threaded Ruby web app (seed 002): 16 worker threads serving HTTP/1.1 \
                 pages built from many small strings, cached and freed across threads; \
                 driven by allocscope's own load generator, judged like the Ruby report: \
                 RSS at the end of the load against median and p95 response time.",
        quick: &["--threads", "16", "--cache-entries", "4000"],
        full: &["--threads", "16", "--cache-entries", "4000"],
        requests: Some((20_000, 60_000)),
    },
];

/// A port on 127.0.0.1 that nothing listens on now (the OS picks it).
fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

pub fn demo(args: &DemoArgs) -> anyhow::Result<i32> {
    let names = || {
        SCENARIOS
            .iter()
            .map(|s| s.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let chosen: Vec<&DemoScenario> = match (&args.scenario, args.all) {
        (_, true) => SCENARIOS.iter().collect(),
        (None, false) => SCENARIOS.iter().take(1).collect(),
        (Some(name), false) => match SCENARIOS.iter().find(|s| s.name == name) {
            Some(found) => vec![found],
            None => {
                return Err(UsageError::UnknownScenario {
                    given: name.clone(),
                    known: names(),
                }
                .into())
            }
        },
    };
    let schedule = if args.runs.trim().eq_ignore_ascii_case("auto") {
        crate::options::rounds::Schedule::Auto {
            max_runs: if args.quick { 8 } else { 12 },
        }
    } else {
        crate::options::rounds::Schedule::Fixed(parse_count("--runs", &args.runs, 1)?)
    };
    let runs = schedule.max_rounds();
    let program = std::env::current_exe()?;
    let registry = crate::alloc::Registry::discover();
    std::fs::create_dir_all(&args.out)?;
    let mut worst = 0;
    for scenario in chosen {
        let knobs = if args.quick {
            scenario.quick
        } else {
            scenario.full
        };
        let mut command: Vec<OsString> = vec![
            program.clone().into(),
            "workload".into(),
            scenario.name.into(),
        ];
        command.extend(knobs.iter().map(OsString::from));
        let service = match scenario.requests {
            Some((quick, full)) => {
                let port = free_port()?.to_string();
                command.extend(["--port".into(), port.clone().into()]);
                Some(service::http_generator(
                    &format!("http://127.0.0.1:{port}/item/{{rand:4000}}"),
                    if args.quick { quick } else { full },
                    16,
                    Duration::from_secs(2),
                )?)
            }
            None => None,
        };
        let json = args.out.join(format!("{}.json", scenario.name));
        let csv = args.out.join(format!("{}.csv", scenario.name));
        let html = args.out.join(format!("{}.html", scenario.name));
        let file = |format, path: &Path| Export {
            format,
            destination: Destination::Path(path.to_path_buf()),
        };
        let (configs, warnings) = registry.default_configs();
        let baseline = configs.first().ok_or_else(|| UsageError::NoConfigs {
            packages: crate::alloc::known::packages_to_install(),
        })?.name.clone();
        let settings = CompareSettings {
            configs,
            warnings,
            runs,
            warmup: 0,
            interval: Duration::from_millis(50),
            timeout: Some(Duration::from_secs(600)),
            memory_limit: None,
            baseline,
            name: Some(format!(
                "demo: {}{}",
                scenario.name,
                if args.quick { " (quick)" } else { "" }
            )),
            db: args.db.clone(),
            program: program.clone(),
            rounds: crate::options::rounds::RoundSettings {
                schedule,
                max_time: None,
                metrics: Vec::new(),
            },
            judge: crate::options::rounds::JudgeSettings::default(),
            command,
            marks: parse_marks(&[])?,
            heap: None,
            service,
            metrics: None,
            output: OutputSettings {
                exports: ExportList::new(
                    [
                        file(Format::Json { samples: false }, &json),
                        file(Format::Html, &html),
                        file(Format::Csv, &csv),
                    ]
                    .into_iter()
                    .chain(beside_the_csv(&csv, false))
                    .collect(),
                )?,
                max_slowdown_pct: crate::analyze::verdict::DEFAULT_MAX_SLOWDOWN_PCT,
                quiet: false,
            },
        };
        eprintln!(
            "\nallocscope demo: scenario '{}' models {}\n",
            scenario.name, scenario.models
        );
        let code = super::compare::compare(&settings)?;
        println!("\nscenario '{}' models {}", scenario.name, scenario.models);
        println!(
            "store: {}   exports: {}, {}",
            shown(&args.db),
            shown(&json),
            shown(&csv)
        );
        println!("HTML report: {}", shown(&html));
        println!("re-render: allocscope report --db {}", shown(&args.db));
        if code >= 128 {
            return Ok(code);
        }
        worst = worst.max(code);
    }
    Ok(worst)
}

fn shown(path: &Path) -> String {
    path.canonicalize()
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}
