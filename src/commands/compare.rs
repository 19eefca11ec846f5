//! `allocscope compare`: run the rounds (`rounds.rs`), each run stored as
//! soon as it ends, then analyse and report from the store.

use super::session::{Session, Step};
use crate::analyze::analyze_with;
use crate::options::CompareSettings;
use crate::store::Store;
use crate::units::format_seconds;
use anyhow::Context;
use std::path::{Path, PathBuf};
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
    let analysis = analyze_with(experiment, &settings.baseline, &settings.judge)?;
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
    let mut session = Session::start(settings, quiet, store, started_at, environment, plan.len())?;
    for planned in plan {
        if session.run(planned)? == Step::Interrupted {
            return session.finish(true);
        }
    }
    session.finish(false)
}

/// `--metrics`: bound before anything runs, so a port in use stops compare
/// at once; the run loop publishes each sample.
pub(crate) fn serve_metrics(
    address: std::net::SocketAddr,
) -> anyhow::Result<crate::metrics::Shared> {
    let listener = crate::metrics::bind(address)?;
    let shared = crate::metrics::Shared::default();
    crate::metrics::serve(listener, std::sync::Arc::clone(&shared))?;
    eprintln!("allocscope: metrics at http://{address}/metrics");
    Ok(shared)
}

/// `, p50 1.2 ms, p95 3.4 ms, 5000 req/s` for a service run with latency,
/// `, load 12.3 s` for a load command; any generator warning follows.
pub(crate) fn service_progress(service: &crate::model::ServiceRecord) -> String {
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
pub(crate) fn log_directory(db: &Path, experiment_id: i64) -> anyhow::Result<PathBuf> {
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
