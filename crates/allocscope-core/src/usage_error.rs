//! The user's mistakes: every error that means "the command line is wrong"
//! (exit code 2), each message naming the mistake and the fix. The one
//! user-error type: its own module, depending only on the error types it
//! wraps (`units`, `alloc`'s, `probe`'s, `service_error`, `shard_error`), none of which
//! depends on it, so that any module may report one without depending on
//! `options` or `cli`. Each variant's `#[error]` holds its message and its
//! fields the names and figures; a feature crate's mistakes are its own
//! typed enum, wrapped in `Feature`.

use crate::alloc::AllocError;
use crate::probe::HeapModeError;
use crate::service_error::ServiceError;
use crate::shard_error::ShardError;
use crate::units::UnitError;
use std::path::PathBuf;
use thiserror::Error;

/// The most `--cpus` takes: the size of the kernel's default CPU set.
pub const MAX_CPUS: u32 = 1024;

/// A mistake in the command line; the message names it and the fix.
#[derive(Debug, Error)]
pub enum UsageError {
    #[error(transparent)]
    Unit(#[from] UnitError),
    #[error("--interval {0} is out of range; use a value from 10ms to 1h")]
    IntervalRange(String),
    #[error("--memory-limit {0} is too small; use at least 1M (e.g. --memory-limit 512M)")]
    MemoryLimitRange(String),
    #[error("--cpus '{0}' is not a CPU count; give the CPUs of the host to measure as on, a whole number from 1 to {max} (e.g. --cpus 16)", max = crate::usage_error::MAX_CPUS)]
    Cpus(String),
    #[error("--timeout {0} is too short; use at least 10ms")]
    TimeoutRange(String),
    #[error("{flag} '{value}' is not a count; use a whole number {min} or more (e.g. {flag} 5)")]
    Count {
        flag: &'static str,
        value: String,
        min: u32,
    },
    #[error("command '{0}' not found; check the name, or give its path")]
    CommandNotFound(String),
    #[error("'{0}' is a directory, not a command; give the program to run")]
    CommandIsDirectory(String),
    #[error("'{0}' is not executable; chmod +x it or run it through its interpreter")]
    CommandNotExecutable(String),
    #[error(
        "no command given; put the program to run after `--`, e.g. allocscope compare -- ./myprog"
    )]
    NoCommand,
    #[error("--baseline '{given}' is not one of the configurations: {known}")]
    UnknownBaseline { given: String, known: String },
    #[error("configuration '{0}' is given twice; each -a and --variant label must be distinct")]
    DuplicateConfig(String),
    #[error(transparent)]
    Alloc(#[from] AllocError),
    #[error(transparent)]
    HeapMode(#[from] HeapModeError),
    #[error("--variant '{spec}' {problem}; give LABEL=COMMAND, e.g. --variant jemalloc-build='./app-je --threads 4'")]
    Variant {
        spec: String,
        problem: VariantProblem,
    },
    #[error("--mark '{pattern}' is not a valid regex: {reason}; escape special characters such as ( [ . + with a backslash")]
    MarkRegex { pattern: String, reason: String },
    #[error("--metric '{0}' has no '='; write NAME=REGEX, e.g. --metric 'ops=([0-9.]+) ops/sec'")]
    MetricNoEquals(String),
    #[error("--metric name '{0}' must be letters, digits, '_', '-' or '.', e.g. --metric 'ops=([0-9.]+) ops/sec'")]
    MetricName(String),
    #[error("--metric '{name}': '{pattern}' is not a valid regex: {reason}; escape special characters such as ( [ . + with a backslash")]
    MetricRegex {
        name: String,
        pattern: String,
        reason: String,
    },
    #[error("--metric '{name}': '{pattern}' has no capture group; put the number in parentheses, e.g. '([0-9.]+) ops/sec'")]
    MetricNoGroup { name: String, pattern: String },
    #[error("--metric '{0}' is given twice; give each metric a name of its own")]
    MetricTwice(String),
    #[error("--higher-is-better '{0}' names no --metric; define it first, e.g. --metric '{0}=([0-9.]+) ops/sec' --higher-is-better {0}")]
    HigherIsBetterUnknown(String),
    #[error("--runs '{0}' is neither a count nor auto; use a whole number 1 or more (e.g. --runs 5) or --runs auto")]
    RunsWord(String),
    #[error("--max-slowdown '{0}' is not a percentage from 0 to 1000; e.g. --max-slowdown 5 accepts configurations at most 5% slower than the baseline")]
    MaxSlowdown(String),
    #[error("--min-saving '{0}' is not a percentage from 0 to 99; e.g. --min-saving 3 counts only savings of 3% or more")]
    MinSaving(String),
    #[error("--limit-headroom '{0}' is not a percentage from 0 to 1000; e.g. --limit-headroom 20 sets each configuration's memory limit 20% above its peak")]
    LimitHeadroom(String),
    #[error("--memory-metric {0} measures a service (compare --server); this experiment ran none")]
    MemoryMetricNoService(String),
    #[error(
        "--memory-metric '{word}' is unknown; use {} or {last_tree} (RSS, or PSS for a tree of several processes), or one of {}",
        .trees.join(", "),
        .rows.join(", ")
    )]
    MemoryMetricUnknown {
        word: String,
        trees: Vec<&'static str>,
        last_tree: &'static str,
        rows: Vec<String>,
    },
    #[error(
        "--perf-metric '{word}' is neither {} nor a --metric; define it, e.g. --metric '{word}=([0-9.]+) ops/sec'",
        .built_in.join(", ")
    )]
    PerfMetricUndefined { word: String, built_in: Vec<String> },
    #[error(
        "--perf-metric '{word}' is neither {} nor a --metric ({})",
        .built_in.join(", "),
        .user.join(", ")
    )]
    PerfMetricUnknown {
        word: String,
        built_in: Vec<String>,
        user: Vec<String>,
    },
    #[error(
        "{first} and {second} would both write '{}'; give each export a file of its own",
        .path.display()
    )]
    ExportsCollide {
        first: &'static str,
        second: &'static str,
        path: PathBuf,
    },
    #[error("--recordings renders text, --export-json, --html and --plots; CSV and Markdown exports are for experiments")]
    RecordingsExport,
    #[error("no allocator configuration is available; install {packages}, or pass -a glibc")]
    NoConfigs { packages: String },
    #[error("--reclaim-at needs a marker label, a duration such as 5s, or off")]
    NoReclaimPoint,
    #[error(transparent)]
    Service(#[from] ServiceError),
    #[error(transparent)]
    Shard(#[from] ShardError),
    /// A feature crate's own mistake (a `FeatureError`); the core names no
    /// feature type.
    #[error(transparent)]
    Feature(Box<dyn std::error::Error + Send + Sync>),
}

/// A feature crate's typed user mistakes: `impl FeatureError for E {}` makes
/// an `E` a `UsageError` (exit 2) through `?` and `.into()`.
pub trait FeatureError: std::error::Error + Send + Sync + 'static {}

impl<E: FeatureError> From<E> for UsageError {
    fn from(error: E) -> UsageError {
        UsageError::Feature(Box::new(error))
    }
}

/// What is wrong with a `--variant LABEL=COMMAND`.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum VariantProblem {
    #[error("has no '=' between the label and the command")]
    NoEquals,
    #[error("needs a label without spaces before '='")]
    LabelWithSpaces,
    #[error("ends in a backslash")]
    TrailingBackslash,
    #[error("has an unclosed {0}")]
    Unclosed(char),
    #[error("has no command after '='")]
    NoCommand,
}
