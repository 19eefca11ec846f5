//! `allocscope compare`: plan the runs, execute each under its configuration,
//! store each as soon as it ends, then analyse and report from the store.

use super::progress::Progress;
use crate::alloc::elf::{inspect_program, preload_ignored_reason};
use crate::analyze::{analyze_with_budget, metrics::run_metrics};
use crate::model::{ExperimentInfo, RunStatus};
use crate::options::CompareSettings;
use crate::run::{self, Interrupt, Launch, Outcome};
use crate::store::Store;
use crate::units::{format_bytes, format_seconds};
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Runs the whole matrix and returns the process exit code: 0 when every run
/// ended `ok`, 1 when some did not, 128+signal when interrupted.
pub fn compare(settings: &CompareSettings) -> anyhow::Result<i32> {
    for warning in &settings.warnings {
        eprintln!("warning: {warning}");
    }
    let mut store = Store::open(&settings.db)?;
    let plan = crate::plan::interleaved(settings.configs.len(), settings.runs, settings.warmup);
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let matrix = run_matrix(
        settings,
        settings.output.quiet,
        &mut store,
        &plan,
        started_at,
        &[],
    )?;
    let experiment_id = matrix.experiment_id;
    let experiment = store.load_experiment(Some(experiment_id))?;
    let analysis = analyze_with_budget(
        experiment,
        &settings.baseline,
        settings.output.max_slowdown_pct,
    )?;
    super::exports::print_table_and_export(&analysis, &settings.output.exports)?;
    if let Some(code) = matrix.interrupted {
        eprintln!(
            "allocscope: interrupted; the finished runs are stored in experiment {experiment_id}"
        );
        return Ok(code);
    }
    Ok(if matrix.all_ok { 0 } else { 1 })
}

/// What running a plan left in the store.
pub(crate) struct Matrix {
    pub experiment_id: i64,
    /// Every measured run ended `ok`.
    pub all_ok: bool,
    /// The exit code to end with when Ctrl-C or SIGTERM stopped the plan.
    pub interrupted: Option<i32>,
}

/// Runs `plan` (the whole matrix, or one cluster round) into a new
/// experiment of `store`, each run stored as soon as it ends; `environment`
/// is stored with the experiment before the first run.
pub(crate) fn run_matrix(
    settings: &CompareSettings,
    quiet: bool,
    store: &mut Store,
    plan: &[crate::plan::PlannedRun],
    started_at: String,
    environment: &[(&str, String)],
) -> anyhow::Result<Matrix> {
    let metrics = settings.metrics.map(serve_metrics).transpose()?;
    let interrupt = Interrupt::install()?;
    run::become_subreaper()?;
    let program_info = inspect_program(&settings.program);
    let preload_ignored = program_info.as_ref().and_then(preload_ignored_reason);
    let own_allocator = program_info
        .as_ref()
        .is_some_and(|info| info.is_go || info.defines_malloc);
    let linked = program_info
        .map(|info| info.linked_allocators)
        .unwrap_or_default();
    if let Some(reason) = &preload_ignored {
        eprintln!("warning: {reason}; its runs will be reported as not_loaded");
    }
    for name in &linked {
        eprintln!(
            "note: {} links {name} itself: configurations without a preloaded allocator \
             measure {name}, not glibc malloc; a preloaded allocator takes over malloc",
            settings.program.display()
        );
    }

    let info = ExperimentInfo {
        name: settings.name.clone(),
        command: settings
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        started_at,
        host: crate::host::capture(),
        runs_per_config: settings.runs,
        warmup: settings.warmup,
        interval_ms: settings.interval.as_millis() as u64,
        baseline: settings.baseline.clone(),
        marks: settings
            .marks
            .iter()
            .skip(1)
            .map(|r| r.as_str().to_string())
            .collect(),
        service: settings.service.as_ref().map(|s| s.info.clone()),
    };
    let (experiment_id, config_ids) = store.begin_experiment(&info, &settings.configs)?;
    for (key, value) in environment {
        store.set_environment(experiment_id, key, value)?;
    }
    let log_dir = log_directory(store.path(), experiment_id)?;
    let experiment_label = settings
        .name
        .clone()
        .unwrap_or_else(|| format!("experiment-{experiment_id}"));
    let progress = Progress::new(quiet, plan.len());
    progress.say(&format!(
        "allocscope: experiment {experiment_id}: {} configurations x {} runs{} of {}",
        settings.configs.len(),
        settings.runs,
        if settings.warmup > 0 {
            format!(" (+{} warm-up)", settings.warmup)
        } else {
            String::new()
        },
        info.command.join(" ")
    ));

    let probes = settings
        .configs
        .iter()
        .map(|c| crate::probe::plan(c, settings.heap))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut all_ok = true;
    let mut stored = 0usize;
    let mut interrupted = false;
    for (step, planned) in plan.iter().enumerate() {
        let config = &settings.configs[planned.config];
        let kind = if planned.warmup { "warmup" } else { "run" };
        progress.starting(
            step,
            &format!("{} {kind} {}", config.name, planned.repetition),
        );
        let stem = format!(
            "{:02}-{}-{kind}{}",
            planned.config + 1,
            slug(&config.name),
            planned.repetition
        );
        let publish = metrics
            .as_ref()
            .map(|m| crate::metrics::publisher(m, &experiment_label, &config.name));
        let launch = Launch {
            program: &settings.program,
            args: &settings.command[1..],
            config,
            index: planned.repetition,
            stdout_path: log_dir.join(format!("{stem}.stdout")),
            stderr_path: log_dir.join(format!("{stem}.stderr")),
            interval: settings.interval,
            timeout: settings.timeout,
            preload_ignored: preload_ignored.clone(),
            own_allocator,
            linked_allocators: linked.clone(),
            marks: &settings.marks,
            memory_limit: settings.memory_limit,
            probe: probes[planned.config].as_ref(),
            service: settings.service.as_ref(),
            on_sample: publish.as_ref().map(|p| p as run::OnSample),
        };
        let record = match run::execute(&launch, &interrupt)? {
            Outcome::Interrupted => {
                interrupted = true;
                break;
            }
            Outcome::Finished(record) => record,
        };
        let metrics = run_metrics(&record);
        progress.say(&format!(
            "[{}/{}] {:<24} {kind} {}: {:<10} {:>9}  peak RSS {}{}{}",
            step + 1,
            plan.len(),
            config.name,
            planned.repetition,
            record.status.as_str(),
            format_seconds(record.wall_s),
            format_bytes(metrics.peak_rss_bytes as f64),
            record
                .service
                .as_ref()
                .map(service_progress)
                .unwrap_or_default(),
            record
                .message
                .as_ref()
                .map(|m| format!("  ({m})"))
                .unwrap_or_default()
        ));
        if planned.warmup {
            continue;
        }
        all_ok &= record.status == RunStatus::Ok;
        if let Err(error) = store.add_run(config_ids[planned.config], &record) {
            progress.finish();
            return Err(error.context(format!(
                "run {} of '{}' could not be stored in '{}' (disk full or over a file-size \
                 limit?); the {stored} runs stored before it are kept: allocscope report --db {}",
                planned.repetition,
                config.name,
                store.path().display(),
                store.path().display()
            )));
        }
        stored += 1;
    }
    progress.finish();
    store.finish_experiment(
        experiment_id,
        if interrupted {
            "interrupted"
        } else {
            "complete"
        },
    )?;
    Ok(Matrix {
        experiment_id,
        all_ok,
        interrupted: interrupted.then(|| interrupt.exit_code()),
    })
}

/// `--metrics`: bound before anything runs, so a port in use stops compare
/// at once; the run loop publishes each sample.
fn serve_metrics(address: std::net::SocketAddr) -> anyhow::Result<crate::metrics::Shared> {
    let listener = crate::metrics::bind(address)?;
    let shared = crate::metrics::Shared::default();
    crate::metrics::serve(listener, std::sync::Arc::clone(&shared))?;
    eprintln!("allocscope: metrics at http://{address}/metrics");
    Ok(shared)
}

/// `, p50 1.2 ms, p95 3.4 ms, 5000 req/s` for a service run with latency,
/// `, load 12.3 s` for a load command; any generator warning follows.
fn service_progress(service: &crate::model::ServiceRecord) -> String {
    let mut text = match (&service.latency, service.load_duration_s()) {
        (Some(l), _) => format!(
            ", p50 {:.2} ms, p95 {:.2} ms, {:.0} req/s{}",
            l.p50_ms,
            l.p95_ms,
            l.throughput_rps,
            if l.errors > 0 {
                format!(", {} errors", l.errors)
            } else {
                String::new()
            }
        ),
        (None, Some(load_s)) => format!(", load {}", format_seconds(load_s)),
        (None, None) => String::new(),
    };
    for warning in &service.warnings {
        text.push_str(&format!("; {warning}"));
    }
    text
}

/// Where the runs' stdout and stderr are kept: beside the store, one
/// directory per experiment.
fn log_directory(db: &Path, experiment_id: i64) -> anyhow::Result<PathBuf> {
    let parent = match db.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let parent = parent
        .canonicalize()
        .with_context(|| format!("resolving '{}'", parent.display()))?;
    let dir = parent
        .join("allocscope-logs")
        .join(experiment_id.to_string());
    std::fs::create_dir_all(&dir).with_context(|| format!("creating '{}'", dir.display()))?;
    Ok(dir)
}

/// A configuration name as a file-name part: `glibc:arena_max=2` -> `glibc-arena_max-2`.
pub(crate) fn slug(name: &str) -> String {
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .take(48)
        .collect();
    slug.trim_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn slugs_are_safe_file_names() {
        assert_eq!(slug("glibc:arena_max=2"), "glibc-arena_max-2");
        assert_eq!(slug("mine=/opt/lib/libfoo.so"), "mine--opt-lib-libfoo.so");
    }
}
