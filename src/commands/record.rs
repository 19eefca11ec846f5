//! `allocscope record`: the arguments checked by `options::record` before
//! anything is stored, bind the metrics port, then hand over to the
//! recording loop and print one closing line.

use crate::options::record::RecordSettings;
use allocscope_core::run::Interrupt;
use allocscope_core::store::Store;
use allocscope_core::units::{format_bytes, format_seconds};
use allocscope_record::Target as RecordTarget;
use allocscope_record::{Settings, Summary};

pub fn record(options: RecordSettings) -> anyhow::Result<i32> {
    let default_name = default_name(&options.target);
    let target = options.target;
    let metrics = (options.metrics)
        .map(|address| allocscope_record::prometheus::start(address, options.quiet))
        .transpose()?;
    let interrupt = Interrupt::install()?;
    let mut store = Store::open(&options.db)?;
    let interval = options.interval;
    let name = options.name.unwrap_or(default_name);
    let publisher = metrics.map(|shared| {
        allocscope_record::prometheus::Publisher::new(&shared, &name, target.config_name())
    });
    let settings = Settings {
        target,
        name,
        interval,
        duration: options.duration,
        publisher,
    };
    let quiet = options.quiet;
    let db = options.db.display().to_string();
    let summary =
        allocscope_record::record(&mut store, &settings, &interrupt, |id, resumed, pid| {
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

/// `COMM-PID` for a running process, `PROGRAM-CONFIG` for a command.
fn default_name(target: &RecordTarget) -> String {
    match target {
        RecordTarget::Attach { pid, .. } => {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .map_or("process".into(), |c| c.trim_end().to_string());
            format!("{comm}-{pid}")
        }
        RecordTarget::Launch {
            program, config, ..
        } => {
            let stem = program
                .file_name()
                .map_or("command".into(), |n| n.to_string_lossy().into_owned());
            format!("{stem}-{}", allocscope_rounds::logs::slug(&config.name))
        }
    }
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
