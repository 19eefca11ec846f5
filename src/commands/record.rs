//! `allocscope record`: check the arguments (the pid, the configuration, the
//! metrics address) before anything is stored, bind the metrics port, then
//! hand over to the recording loop and print one closing line.

use crate::cli::RecordArgs;
use crate::options::{parse_interval, parse_timeout, resolve_command};
use crate::record::{attach, Settings, Summary, Target};
use crate::run::Interrupt;
use crate::store::Store;
use crate::units::{format_bytes, format_seconds};
use crate::usage_error::UsageError;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub fn record(args: &RecordArgs) -> anyhow::Result<i32> {
    let interval = parse_interval(&args.interval)?;
    let duration = args
        .duration
        .as_deref()
        .map(|d| parse_timeout(d).map_err(|_| duration_error(d)))
        .transpose()?;
    let (target, default_name) = match (&args.pid, args.command.first()) {
        (Some(pid), _) => {
            let (pid, start_ticks) = attach::check(pid)?;
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .map_or("process".into(), |c| c.trim_end().to_string());
            (Target::Attach { pid, start_ticks }, format!("{comm}-{pid}"))
        }
        (None, Some(program)) => {
            let program = resolve_command(program)?;
            let spec = args.alloc.as_deref().unwrap_or("glibc");
            let config = crate::alloc::Registry::discover()
                .resolve(spec)
                .map_err(|e| UsageError::Alloc(e.to_string()))?;
            let stem = program
                .file_name()
                .map_or("command".into(), |n| n.to_string_lossy().into_owned());
            let name = format!("{stem}-{}", super::compare::slug(&config.name));
            let logs_dir = logs_directory(&args.db);
            let target = Target::Launch {
                program,
                args: args.command[1..].to_vec(),
                config,
                logs_dir,
            };
            (target, name)
        }
        (None, None) => {
            return Err(UsageError::Record(
                "nothing to record; give --pid PID, or a command after `--` \
                 (e.g. allocscope record -a glibc -- ./server)"
                    .into(),
            )
            .into())
        }
    };
    let metrics = match &args.metrics {
        Some(text) => {
            let address = crate::metrics::parse_address(text, args.metrics_public)?;
            let listener = crate::metrics::bind(address)?;
            let shared = Arc::new(Mutex::new(Vec::new()));
            crate::metrics::serve(listener, Arc::clone(&shared))
                .context("starting the metrics server")?;
            if !args.quiet {
                eprintln!("allocscope: metrics at http://{address}/metrics");
            }
            Some(shared)
        }
        None => None,
    };
    let interrupt = Interrupt::install()?;
    let mut store = Store::open(&args.db)?;
    let settings = Settings {
        target,
        name: args.name.clone().unwrap_or(default_name),
        interval,
        duration,
        metrics,
    };
    let quiet = args.quiet;
    let db = args.db.display().to_string();
    let summary = crate::record::record(&mut store, &settings, &interrupt, |id, resumed, pid| {
        if !quiet {
            let verb = if resumed { "resuming" } else { "recording" };
            eprintln!(
                "allocscope: {verb} {id} '{}': pid {pid} and its descendants every {} into {db}; \
                 Ctrl-C stops",
                settings.name,
                format_seconds(interval.as_secs_f64())
            );
        }
    })?;
    if !quiet {
        eprintln!("{}", closing_line(&summary));
    }
    Ok(0)
}

fn duration_error(text: &str) -> UsageError {
    UsageError::Record(format!(
        "--duration '{text}' is not a duration of at least 10ms; use e.g. 30s, 2h or 7d"
    ))
}

/// `recording 3 exited (code 0) after 10m 2s: 602 samples, peak RSS 1.2 GiB, last 800 MiB`.
fn closing_line(summary: &Summary) -> String {
    let ending = &summary.ending;
    let how = match (ending.exit_code, ending.signal) {
        (Some(code), _) => format!("{} (code {code})", ending.status),
        (None, Some(signal)) => format!("{} (signal {signal})", ending.status),
        _ => ending.status.to_string(),
    };
    let last = summary
        .last
        .map_or("-".into(), |s| format_bytes(s.rss_bytes as f64));
    format!(
        "allocscope: recording {} {how} at {} elapsed: {} samples this session, peak RSS {}, \
         last RSS {last}, sampler CPU {}; `allocscope report --recordings {}` shows it",
        summary.id,
        format_seconds(summary.elapsed_s),
        summary.samples,
        format_bytes(summary.peak_rss_bytes as f64),
        format_seconds(summary.sampler_cpu_s),
        summary.id
    )
}

/// The command's stdout and stderr go beside the store, like `compare`'s.
fn logs_directory(db: &Path) -> PathBuf {
    let parent = match db.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    parent.join("allocscope-logs").join("recordings")
}
