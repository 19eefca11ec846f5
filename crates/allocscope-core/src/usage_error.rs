//! The user's mistakes: every error that means "the command line is wrong"
//! (exit code 2), each message naming the mistake and the fix. The one
//! user-error type: its own module, depending on nothing but `units`, so
//! that any module may report one without depending on `options` or `cli`.

use crate::units::UnitError;
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
    #[error("{0}")]
    Alloc(String),
    /// A `--variant` that is not LABEL=COMMAND; the message shows the form.
    #[error("{0}")]
    Variant(String),
    /// A scenario knob out of range; the message names it and the range.
    #[error("{0}")]
    Knob(String),
    #[error("--mark '{pattern}' is not a valid regex: {reason}; escape special characters such as ( [ . + with a backslash")]
    MarkRegex { pattern: String, reason: String },
    /// `--heap=MODE` with an unknown mode; the message lists the modes.
    #[error("{0}")]
    HeapMode(String),
    /// A `--server` flag that is missing, contradictory or malformed.
    #[error("{0}")]
    Service(String),
    /// A mistake in `record`'s arguments (pid, --metrics); the message says which.
    #[error("{0}")]
    Record(String),
    /// A mistake in `soak`'s arguments (a `--pid LABEL=PID` malformed,
    /// missing, unreadable, or contradicting the allocator it maps).
    #[error("{0}")]
    Soak(String),
    /// Exports that cannot be written as asked (two to one file, a format
    /// the command does not render).
    #[error("{0}")]
    Export(String),
    /// A mistake in the round schedule, a `--metric` or a judging flag.
    #[error("{0}")]
    Rounds(String),
    /// A mistake with a cluster plan, a shard or an engine's flags.
    #[error("{0}")]
    Cluster(String),
    /// A mistake in `tune`'s own flags (`--try`, `-a`, `--runs`).
    #[error("{0}")]
    Tune(String),
    #[error("no allocator configuration is available; install {packages}, or pass -a glibc")]
    NoConfigs { packages: String },
}
