//! The flags that take one of a fixed set of words, as `clap::ValueEnum`s:
//! clap accepts exactly these words and `--help` lists them. `--heap`'s
//! wrong word keeps a message of its own (`HeapModeParser`).

use allocscope_core::usage_error::UsageError;
use clap::builder::{PossibleValue, TypedValueParser};
use clap::ValueEnum;
use std::ffi::OsStr;

/// `compare --cgroup`: each run in a memory cgroup of its own, or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CgroupMode {
    /// Where the machine allows one.
    Auto,
    /// /proc alone; --memory-limit is then an rlimit.
    Off,
}

/// `compare --heap[=MODE]`: the heap probe's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HeapMode {
    /// The allocator's counters where it has them, else interpose malloc;
    /// a workload that cannot load the probe is not_loaded.
    Auto,
    /// The allocator's own counters.
    Stats,
    /// Interpose malloc and count.
    Count,
    /// As without --heap: a workload that cannot load it is measured from
    /// /proc alone.
    Optional,
    /// No heap probe.
    Off,
}

/// `soak --until`: when a soak stops before Ctrl-C.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Until {
    /// At --duration.
    Duration,
    /// Once every configuration has settled (flat, or growing beyond
    /// noise), or at --duration if that comes first.
    Settled,
}

/// `report --section`: one part of the complete report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Section {
    /// The memory at each marker.
    Markers,
    /// Where the memory went.
    Breakdown,
    /// The memory limit each configuration needs.
    Limits,
    /// The heap probe's figures.
    Heap,
    /// The pick's deploy lines: shell, systemd, Dockerfile, Kubernetes.
    Deploy,
    /// The configurations with their runs, failed runs and warnings.
    Runs,
}

/// `compare --pace`: how `--replay` paces the log's lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Pace {
    /// As fast as --concurrency allows.
    Max,
    /// The log's own timing, divided by --speed.
    Original,
}

/// `demo SCENARIO`: the built-in scenarios.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DemoScenarioName {
    Churn,
    Events,
    Kv,
    Server,
}

impl DemoScenarioName {
    /// The scenario's word (`allocscope workload WORD`).
    pub fn word(self) -> &'static str {
        match self {
            DemoScenarioName::Churn => "churn",
            DemoScenarioName::Events => "events",
            DemoScenarioName::Kv => "kv",
            DemoScenarioName::Server => "server",
        }
    }
}

/// `--heap`'s value parser: a wrong mode is reported with the probe's own
/// message (e.g. `--heap=fast`'s) rather than by clap; `--help` still lists
/// the words. Surrounding blanks are ignored and an empty value is `auto`.
#[derive(Clone)]
pub struct HeapModeParser;

impl TypedValueParser for HeapModeParser {
    type Value = HeapMode;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<HeapMode, clap::Error> {
        let parse = |text: &str| -> Result<HeapMode, UsageError> {
            match text.trim() {
                "" => Ok(HeapMode::Auto),
                word => HeapMode::from_str(word, false).map_err(|_| {
                    UsageError::HeapMode(allocscope_core::probe::HeapModeError(word.to_string()))
                }),
            }
        };
        parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            HeapMode::value_variants()
                .iter()
                .filter_map(ValueEnum::to_possible_value),
        ))
    }
}
