//! Validated settings: everything the user typed, checked and converted
//! before anything runs. Errors here are user mistakes (exit 2) whose message
//! says how to fix them.

pub mod export;
mod ready;
pub mod record;
pub mod rounds;
pub mod service;

use crate::units::parse_duration;
use crate::usage_error::UsageError;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const MIN_INTERVAL: Duration = Duration::from_millis(10);
pub const MAX_INTERVAL: Duration = Duration::from_secs(3600);

pub fn parse_count(flag: &'static str, value: &str, min: u32) -> Result<u32, UsageError> {
    match value.trim().parse::<u32>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(UsageError::Count {
            flag,
            value: value.to_string(),
            min,
        }),
    }
}

pub fn parse_interval(text: &str) -> Result<Duration, UsageError> {
    let interval = parse_duration(text)?;
    if !(MIN_INTERVAL..=MAX_INTERVAL).contains(&interval) {
        return Err(UsageError::IntervalRange(text.to_string()));
    }
    Ok(interval)
}

/// At least 1 MiB: below that nothing starts.
pub fn parse_memory_limit(text: &str) -> Result<u64, UsageError> {
    let bytes = crate::units::parse_size(text)?;
    if bytes < 1 << 20 {
        return Err(UsageError::MemoryLimitRange(text.to_string()));
    }
    Ok(bytes)
}

pub fn parse_timeout(text: &str) -> Result<Duration, UsageError> {
    let timeout = parse_duration(text)?;
    if timeout < MIN_INTERVAL {
        return Err(UsageError::TimeoutRange(text.to_string()));
    }
    Ok(timeout)
}

/// Finds the program the way execvp would: a name with a slash is a path,
/// otherwise each PATH entry is tried. Checks it is a runnable file.
pub fn resolve_command(program: &OsString) -> Result<PathBuf, UsageError> {
    let shown = program.to_string_lossy().to_string();
    let candidate = Path::new(program);
    let found = if shown.contains('/') {
        candidate.exists().then(|| candidate.to_path_buf())
    } else {
        std::env::var_os("PATH")
            .map(|path| {
                std::env::split_paths(&path)
                    .map(|dir| dir.join(candidate))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
            .into_iter()
            .find(|p| p.is_file() && is_executable(p))
    };
    let path = found.ok_or_else(|| UsageError::CommandNotFound(shown.clone()))?;
    if path.is_dir() {
        return Err(UsageError::CommandIsDirectory(shown));
    }
    if !is_executable(&path) {
        return Err(UsageError::CommandNotExecutable(shown));
    }
    Ok(path)
}

/// The marker pattern that is always active: a line `allocscope:mark LABEL`.
pub const BUILTIN_MARK: &str = r"^allocscope:mark (.+)$";

/// Compiles the marker patterns: the built-in one first (pattern 0), then
/// each `--mark` in order (pattern i is the i-th `--mark`).
pub fn parse_marks(marks: &[String]) -> Result<Vec<regex::Regex>, UsageError> {
    std::iter::once(BUILTIN_MARK)
        .chain(marks.iter().map(String::as_str))
        .map(|pattern| {
            regex::Regex::new(pattern).map_err(|e| UsageError::MarkRegex {
                pattern: pattern.to_string(),
                reason: regex_reason(&e),
            })
        })
        .collect()
}

/// The regex crate's error as one line: its syntax errors span several
/// lines (the pattern, a caret, then `error: WHAT`); keep the WHAT.
fn regex_reason(error: &regex::Error) -> String {
    let text = error.to_string();
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim().trim_start_matches("error: ").to_string())
        .unwrap_or(text)
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_must_be_between_10ms_and_1h() {
        assert_eq!(parse_interval("10ms").ok(), Some(Duration::from_millis(10)));
        assert_eq!(parse_interval("1h").ok(), Some(Duration::from_secs(3600)));
        for bad in ["0", "9ms", "2h", "fast"] {
            assert!(parse_interval(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn counts_reject_negative_and_garbage() {
        assert_eq!(parse_count("--runs", "3", 1).ok(), Some(3));
        assert!(parse_count("--runs", "-1", 1).is_err());
        assert!(parse_count("--runs", "0", 1).is_err());
        assert_eq!(parse_count("--warmup", "0", 0).ok(), Some(0));
        let message = parse_count("--runs", "x", 1)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(message.contains("--runs 'x'"), "{message}");
    }

    #[test]
    fn marks_compile_after_the_built_in_one_and_errors_are_one_line() {
        let marks = parse_marks(&[r"MemoryCheck: event (\d+)".to_string()]);
        let marks = marks.unwrap_or_default();
        assert_eq!(marks.len(), 2);
        assert_eq!(marks[0].as_str(), BUILTIN_MARK);
        let err = parse_marks(&["(unclosed".to_string()])
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("--mark '(unclosed'"), "{err}");
        assert!(err.contains("unclosed group"), "{err}");
    }

    #[test]
    fn service_flag_defaults_are_the_durations_the_demo_uses() {
        use clap::Parser;
        let cli = crate::cli::Cli::parse_from(["allocscope", "compare", "--", "true"]);
        let crate::cli::Command::Compare(args) = cli.command else {
            panic!("not compare");
        };
        let flag = |text: &str| parse_duration(text).ok();
        let defaults = &args.service;
        assert_eq!(
            flag(&defaults.request_timeout),
            Some(service::DEFAULT_REQUEST_TIMEOUT)
        );
        assert_eq!(
            flag(&defaults.ready_timeout),
            Some(service::DEFAULT_READY_TIMEOUT)
        );
        assert_eq!(flag(&defaults.grace), Some(service::DEFAULT_GRACE));
    }

    #[test]
    fn resolves_commands_on_path_and_rejects_directories() {
        assert!(resolve_command(&OsString::from("sh")).is_ok());
        assert!(matches!(
            resolve_command(&OsString::from("no-such-program-xyz")),
            Err(UsageError::CommandNotFound(_))
        ));
        assert!(matches!(
            resolve_command(&OsString::from("/tmp")),
            Err(UsageError::CommandIsDirectory(_))
        ));
        assert!(matches!(
            resolve_command(&OsString::from("/etc/passwd")),
            Err(UsageError::CommandNotExecutable(_))
        ));
    }
}

/// Everything `compare` needs, checked.
#[derive(Debug)]
pub struct CompareSettings {
    pub configs: Vec<crate::model::Config>,
    /// Lines to show before running, e.g. skipped allocators.
    pub warnings: Vec<String>,
    /// The most measured rounds: N of `--runs N`, or `--max-runs` with auto.
    pub runs: u32,
    pub warmup: u32,
    pub interval: Duration,
    pub timeout: Option<Duration>,
    /// `--memory-limit` in bytes.
    pub memory_limit: Option<u64>,
    pub baseline: String,
    pub name: Option<String>,
    pub db: PathBuf,
    pub program: PathBuf,
    pub command: Vec<OsString>,
    /// Marker patterns: the built-in `allocscope:mark LABEL` first, then
    /// each `--mark`.
    pub marks: Vec<regex::Regex>,
    /// `--heap[=MODE]`: load the heap probe.
    pub heap: Option<crate::probe::HeapOptions>,
    /// `--server`: COMMAND is a service driven by a load.
    pub service: Option<service::ServiceSettings>,
    /// `--metrics`: where to serve the current values for Prometheus.
    pub metrics: Option<std::net::SocketAddr>,
    /// The exports, the verdict's budget and `--quiet`.
    pub output: export::OutputSettings,
    /// `--runs N|auto`, `--max-runs`, `--max-time`, `--metric`.
    pub rounds: rounds::RoundSettings,
    /// `--max-slowdown`, `--min-saving`, `--memory-metric`, `--perf-metric`.
    pub judge: rounds::JudgeSettings,
}

impl CompareSettings {
    pub fn from_args(
        args: &crate::cli::CompareArgs,
        registry: &crate::alloc::Registry,
    ) -> Result<CompareSettings, UsageError> {
        let round_settings = rounds::parse_rounds(&args.runs, &args.rounds)?;
        let runs = round_settings.schedule.max_rounds();
        let user_metrics: Vec<String> = round_settings
            .metrics
            .iter()
            .map(|m| m.name.clone())
            .collect();
        // A bad --max-slowdown or export is reported before anything runs.
        let output = export::OutputSettings::parse(&args.export)?;
        let judge = rounds::parse_judge(&args.judge, output.max_slowdown_pct, &user_metrics)?;
        let warmup = parse_count("--warmup", &args.warmup, 0)?;
        let interval = parse_interval(&args.interval)?;
        let timeout = args.timeout.as_deref().map(parse_timeout).transpose()?;
        let memory_limit = args
            .memory_limit
            .as_deref()
            .map(parse_memory_limit)
            .transpose()?;
        let marks = parse_marks(&args.mark)?;
        let service = service::parse(&args.service)?;
        let program_name = args.command.first().ok_or(UsageError::NoCommand)?;
        let program = resolve_command(program_name)?;
        let (configs, warnings) = if args.alloc.is_empty() {
            registry.default_configs()
        } else {
            let mut configs = Vec::new();
            for spec in &args.alloc {
                let config = registry
                    .resolve(spec)
                    .map_err(|e| UsageError::Alloc(e.to_string()))?;
                if configs
                    .iter()
                    .any(|c: &crate::model::Config| c.name == config.name)
                {
                    return Err(UsageError::DuplicateConfig(config.name));
                }
                configs.push(config);
            }
            (configs, Vec::new())
        };
        let first = configs.first().ok_or(UsageError::NoConfigs)?;
        let baseline = match &args.baseline {
            None => first.name.clone(),
            Some(given) if configs.iter().any(|c| &c.name == given) => given.clone(),
            Some(given) => {
                let known = configs
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(UsageError::UnknownBaseline {
                    given: given.clone(),
                    known,
                });
            }
        };
        Ok(CompareSettings {
            configs,
            warnings,
            runs,
            warmup,
            interval,
            timeout,
            memory_limit,
            baseline,
            name: args.name.clone(),
            db: args.db.clone(),
            program,
            command: args.command.clone(),
            marks,
            metrics: args
                .metrics
                .as_deref()
                .map(|a| crate::metrics::parse_address(a, args.metrics_public))
                .transpose()?,
            heap: args
                .heap
                .as_deref()
                .map(crate::probe::HeapOptions::parse)
                .transpose()?,
            service,
            output,
            rounds: round_settings,
            judge,
        })
    }
}
