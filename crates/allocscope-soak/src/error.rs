//! The user's mistakes with `soak`'s arguments, each message naming the
//! fix; a `UsageError` (exit 2) through `FeatureError`.

use allocscope_core::usage_error::{FeatureError, UsageError};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum SoakError {
    #[error("--pid '{0}' is not LABEL=PID; give the configuration the process runs under and its pid, e.g. --pid jemalloc=4243")]
    NotLabelPid(String),
    #[error("--pid {given}: {problem}")]
    Unreadable {
        given: String,
        problem: Box<UsageError>,
    },
    #[error("--pid {given}: process {pid} is already given as --pid {label}={pid}; give each instance once")]
    PidTwice {
        given: String,
        pid: i32,
        label: String,
    },
    #[error("--pid {label}={pid}: '{word}' is not an allocator allocscope knows; label the process with one of {known} (optionally with its settings, e.g. glibc:arena_max=2)")]
    UnknownAllocator {
        label: String,
        pid: i32,
        word: String,
        known: String,
    },
    #[error("--pid {label}={pid}: process {pid} maps {file}, not {word}; label it {mapped}={pid}")]
    MapsAnother {
        label: String,
        pid: i32,
        file: String,
        word: String,
        mapped: &'static str,
    },
    #[error("--pid {label}={pid}: process {pid} maps no allocator library but the C library's, not {word}; label it glibc={pid}")]
    MapsNone {
        label: String,
        pid: i32,
        word: String,
    },
    #[error("--server starts {instances} instances side by side, which cannot share a port: put {{port}} in the command where it takes its port (e.g. memcached -p {{port}}), and allocscope gives each instance a free one")]
    ServerWithoutPort { instances: usize },
    #[error("soak --executor k8s only writes the manifest (--dry-run): its pods' shards are on a volume this process cannot follow; apply it, then `allocscope merge` the shards, or use --executor slurm")]
    K8sWithoutDryRun,
    #[error("soak --metrics serves the instances this process samples, and with --executor each instance is sampled by a job of its own; drop --metrics, or soak without --executor")]
    MetricsOnJobs,
    #[error("--resume {id}: no soak {id} in '{db}'")]
    NoSuchSoak { id: i64, db: String },
    #[error("--resume {id}: {why}; start a new soak instead")]
    NotResumable { id: i64, why: String },
    #[error("report --soak renders text, --export-json, --export-csv, --export-markdown and --html; {0} is for experiments")]
    ReportExport(&'static str),
    #[error("the heap probe cannot be installed: {0}; give the soak a writable cache directory (XDG_CACHE_HOME)")]
    Probe(String),
}

impl FeatureError for SoakError {}
