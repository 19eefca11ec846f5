//! The records that flow between pipeline stages: a configuration to launch,
//! the samples and outcome of one run, and the metrics analysis derives from them.
//! Stages exchange these plain values and nothing else.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What a configuration runs: its program, found on PATH, and arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramLine {
    pub program: PathBuf,
    pub args: Vec<std::ffi::OsString>,
}

/// A configuration is a name plus a launch environment. Nothing downstream of
/// `alloc` branches on which allocator it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// What the user typed, e.g. `glibc:arena_max=2` or `mylib=/opt/libfoo.so`.
    pub name: String,
    /// Allocator family or user label: `glibc`, `jemalloc`, `mylib`, ...
    pub allocator: String,
    /// The library that must be mapped in the workload for the run to count
    /// (the preloaded `.so`, or glibc's `libc.so.6`).
    pub library: Option<PathBuf>,
    pub version: Option<String>,
    /// Variables added to the caller's environment, in order.
    pub env: Vec<(String, String)>,
    /// `--variant LABEL=COMMAND`: the command line this configuration runs
    /// instead of the experiment's (another build of the program, under
    /// glibc with nothing preloaded). None for every other configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
}

/// One point of the process tree's time series. Sizes in bytes; `t_s` is
/// seconds since the workload started. PSS/USS/swap are read at an adaptive
/// rate (see `sample`), so USS and swap are absent on some ticks and PSS is
/// estimated on those (`pss_estimated_processes`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Sample {
    pub t_s: f64,
    pub rss_bytes: u64,
    pub pss_bytes: Option<u64>,
    pub uss_bytes: Option<u64>,
    pub swap_bytes: Option<u64>,
    pub vsz_bytes: u64,
    pub processes: u32,
    pub threads: u32,
    /// Cumulative over the live processes of the tree.
    pub minor_faults: u64,
    pub major_faults: u64,
    /// CPU time of the tree's live processes and of the children they
    /// waited for, cumulative like the faults; `None` in a sample stored
    /// before schema 20.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
    /// Live heap summed over the processes whose heap probe reported it
    /// (`compare --heap`); absent without the probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_heap_bytes: Option<u64>,
    /// What the allocators say they hold resident / retain unmapped, where
    /// they say it (jemalloc, tcmalloc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocator_resident_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocator_retained_bytes: Option<u64>,
    /// Allocator arenas (glibc, jemalloc) of the process that has the most,
    /// never a sum: a shell and a helper each have their own main arena.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arenas: Option<u32>,
    /// That process's pid and name (comm).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arenas_pid: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arenas_process: Option<ProcessName>,
    /// Processes whose PSS this tick was estimated from their status
    /// counters rather than read from smaps_rollup: 0 when `pss_bytes` was
    /// read in full (or is absent).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pss_estimated_processes: u32,
    /// Where this tick's RSS went (live heap, allocator free, ...), where
    /// the data for it existed; the parts add up to `rss_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breakdown: Option<Breakdown>,
    /// Processes of this tick's breakdown whose allocator gave no figures
    /// (the probe not loaded, a static binary, an allocator without
    /// counters): all their anonymous memory is in `other_anon_bytes`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub heapless_processes: u32,
    /// Processes whose heap probe reading was stale this tick (it missed
    /// its planned poll by `STALE_AFTER_TICKS` sampler intervals: under
    /// contention glibc's `mallinfo2` waits for every arena's lock). Such
    /// a tick has no live heap and no breakdown rather than wrong ones.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub heap_stale_processes: u32,
    /// The run's memory cgroup at this tick, when the run had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<CgroupSample>,
}

/// A tree's RSS (PSS for several processes, `sample::shares`) split into parts, summed per
/// process: heap parts from the allocator's counters, the rest from the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Breakdown {
    /// What the program has allocated and not freed.
    pub live_heap_bytes: u64,
    /// Resident memory the allocator holds that the program has freed.
    pub allocator_free_bytes: u64,
    /// The allocator's own bookkeeping, where it reports it.
    pub allocator_metadata_bytes: u64,
    /// Anonymous memory in transparent huge pages beyond what the allocator accounts for.
    pub huge_pages_bytes: u64,
    /// Pages freed with MADV_FREE that the kernel has not reclaimed yet.
    pub lazy_free_bytes: u64,
    /// Anonymous memory no allocator setting can change (stacks, JIT code, the program's mmap).
    pub other_anon_bytes: u64,
    pub file_bytes: u64,
    pub shmem_bytes: u64,
    /// Anonymous memory of processes without allocator counters when they
    /// hold more than a fifth of the tree's RSS (else "other").
    #[serde(default)]
    pub unknown_bytes: u64,
    /// The run's cgroup's kernel memory (0 without one): the parts then add up to its charge.
    #[serde(default)]
    pub kernel_bytes: u64,
}

impl Breakdown {
    /// How many parts there are.
    pub const COUNT: usize = 10;

    /// The parts' names (their JSON keys and CSV column stems), in the order of `parts`.
    pub const KEYS: [&'static str; Breakdown::COUNT] = [
        "live_heap_bytes",
        "allocator_free_bytes",
        "allocator_metadata_bytes",
        "huge_pages_bytes",
        "lazy_free_bytes",
        "other_anon_bytes",
        "file_bytes",
        "shmem_bytes",
        "unknown_bytes",
        "kernel_bytes",
    ];

    /// The parts in the order of `KEYS`.
    pub fn parts(&self) -> [u64; Breakdown::COUNT] {
        [
            self.live_heap_bytes,
            self.allocator_free_bytes,
            self.allocator_metadata_bytes,
            self.huge_pages_bytes,
            self.lazy_free_bytes,
            self.other_anon_bytes,
            self.file_bytes,
            self.shmem_bytes,
            self.unknown_bytes,
            self.kernel_bytes,
        ]
    }

    /// A breakdown from its parts in the order of `KEYS`.
    pub fn from_parts(p: [u64; Breakdown::COUNT]) -> Breakdown {
        Breakdown {
            live_heap_bytes: p[0],
            allocator_free_bytes: p[1],
            allocator_metadata_bytes: p[2],
            huge_pages_bytes: p[3],
            lazy_free_bytes: p[4],
            other_anon_bytes: p[5],
            file_bytes: p[6],
            shmem_bytes: p[7],
            unknown_bytes: p[8],
            kernel_bytes: p[9],
        }
    }

    /// The sum of the parts: the RSS they split.
    pub fn total_bytes(&self) -> u64 {
        self.parts().into_iter().fold(0, u64::saturating_add)
    }
}

/// One tick of the run's memory cgroup: one read for the whole tree, every
/// page counted once. Sizes in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CgroupSample {
    /// `memory.current` (v1 `memory.usage_in_bytes`).
    pub charge_bytes: u64,
    /// The group's pages less its inactive file pages (Kubernetes' working
    /// set), from `memory.stat`'s counters: the charge also holds the pages
    /// CPUs keep in stock for the group.
    pub working_set_bytes: u64,
    pub anon_bytes: u64,
    pub file_bytes: u64,
    pub shmem_bytes: u64,
    /// Kernel memory charged to the group (slab, stacks, page tables,
    /// socket buffers, ...).
    pub kernel_bytes: u64,
    pub huge_pages_bytes: u64,
}

mod reclaim;
pub use reclaim::{Reclaim, ReclaimReach};
mod served;
pub use served::{OwnApiUse, ServedPart, ServedTree, Via};

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A process's name as the kernel keeps it (comm: at most 15 bytes), held
/// inline so a `Sample` stays `Copy`; serialized as a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProcessName {
    bytes: [u8; 15],
    len: u8,
}

impl ProcessName {
    /// The first 15 bytes of `name` (cut at a character boundary).
    pub fn new(name: &str) -> ProcessName {
        let mut len = name.len().min(15);
        while !name.is_char_boundary(len) {
            len -= 1;
        }
        let mut bytes = [0u8; 15];
        bytes[..len].copy_from_slice(&name.as_bytes()[..len]);
        ProcessName {
            bytes,
            len: len as u8,
        }
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("?")
    }
}

impl Serialize for ProcessName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProcessName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(ProcessName::new(&String::deserialize(deserializer)?))
    }
}

/// A progress line the workload printed on stdout, with the tree's memory
/// sampled when allocscope read it. `t_s` is seconds since the workload
/// started, at the moment the line arrived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Marker {
    pub label: String,
    /// Which pattern matched: 0 is the built-in `allocscope:mark LABEL`,
    /// `i` is the i-th `--mark` (`ExperimentInfo::marks[i - 1]`).
    pub pattern: u32,
    pub t_s: f64,
    pub rss_bytes: u64,
    pub pss_bytes: Option<u64>,
    pub vsz_bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Ok,
    Failed,
    Crashed,
    Timeout,
    NotLoaded,
    /// Killed by the kernel's OOM killer under `--memory-limit`.
    Oom,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Failed => "failed",
            RunStatus::Crashed => "crashed",
            RunStatus::Timeout => "timeout",
            RunStatus::NotLoaded => "not_loaded",
            RunStatus::Oom => "oom",
        }
    }

    /// The status `as_str` wrote, by serde's names of the variants.
    pub fn parse(text: &str) -> Option<RunStatus> {
        use serde::de::{value::Error, IntoDeserializer};
        RunStatus::deserialize(IntoDeserializer::<Error>::into_deserializer(text)).ok()
    }
}

/// Everything measured about one finished run, before any statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Repetition number within its configuration, from 1.
    pub index: u32,
    pub status: RunStatus,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub wall_s: f64,
    /// CPU time of the tree, from wait4's rusage of every reaped process.
    pub user_s: f64,
    pub sys_s: f64,
    /// Largest `ru_maxrss` among reaped processes (the kernel's VmHWM).
    pub max_hwm_bytes: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub samples: Vec<Sample>,
    /// Progress markers in the order they arrived.
    pub markers: Vec<Marker>,
    pub stdout_path: PathBuf,
    pub stderr_path: PathBuf,
    /// Why the status is what it is, when that is not obvious.
    pub message: Option<String>,
    /// Allocator libraries the program brought itself (linked, not preloaded).
    pub linked_allocators: Vec<String>,
    /// Which allocator served `malloc` (`alloc::served`): `glibc`,
    /// `jemalloc`, ..., `program` for the executable's own; `None` when it
    /// could not be told (a script, or a file stored before schema 10).
    #[serde(default)]
    pub served_by: Option<String>,
    /// CPU time allocscope's sampler spent on this run.
    pub sampler_cpu_s: f64,
    pub started_at: String,
    /// Which heap-probe mode gave the live heap: `stats`, `count`, `none`
    /// (loaded, no counters) or `not_loaded`; `None` without the probe.
    #[serde(default)]
    pub probe_mode: Option<String>,
    /// CPU time of the probe threads of every process of the tree.
    #[serde(default)]
    pub probe_cpu_s: Option<f64>,
    /// What happened to a service run (`compare --server`): readiness, the
    /// load and its latency, the settle period, the stop.
    #[serde(default)]
    pub service: Option<ServiceRecord>,
    /// The user's own metrics (`--metric NAME=REGEX`) this run printed.
    #[serde(default)]
    pub user_metrics: std::collections::BTreeMap<String, f64>,
    /// The reclaim test, when it ran.
    #[serde(default)]
    pub reclaim: Option<Reclaim>,
    /// The kernel's own peak of the run's cgroup (`memory.peak`, v1
    /// `memory.max_usage_in_bytes`), when the run had a cgroup.
    #[serde(default)]
    pub cgroup_peak_kernel_bytes: Option<u64>,
    /// The last lines of the program's stderr when the run did not end
    /// `ok` (`run::stderr_tail`: a few lines, bounded in bytes); `None` for
    /// an ok run, an empty stderr, or a run stored before schema 17.
    #[serde(default)]
    pub stderr_tail: Option<String>,
    /// Which allocator served the tree's memory, process by process
    /// (`None` for a run stored before schema 18).
    #[serde(default)]
    pub served_tree: Option<ServedTree>,
    /// CPU seconds the machine ran outside allocscope and the measured
    /// tree during the run (`sample::machine_cpu`); `None` without
    /// `/proc/stat` or in a file stored before schema 19.
    #[serde(default)]
    pub foreign_cpu_s: Option<f64>,
    /// Seconds some task waited for a CPU during the run (PSI's `some`
    /// total), the tree's own waits included; `None` without PSI.
    #[serde(default)]
    pub cpu_pressure_s: Option<f64>,
}

impl RunRecord {
    /// Why the run did not end `ok`, in one line: its message, then the
    /// program's last stderr lines unless the message already quotes them
    /// (a service's does); `None` when neither says anything.
    pub fn failure_words(&self) -> Option<String> {
        let tail = self.stderr_tail.as_deref();
        match (self.message.as_deref(), tail) {
            (Some(m), Some(t)) if !m.contains(t) => Some(format!("{m}; stderr: {t}")),
            (Some(m), _) => Some(m.to_string()),
            (None, Some(t)) => Some(format!("stderr: {t}")),
            (None, None) => None,
        }
    }
}

/// Latency and throughput of one run's load, from allocscope's own load
/// generator (absent for a `--load` command, whose output is kept instead).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    /// Requests sent, errors included.
    pub requests: u64,
    /// Non-2xx answers, resets, timeouts, connection and protocol failures.
    pub errors: u64,
    pub throughput_rps: f64,
}

/// The phases of a service run. Times are seconds since the server started.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ServiceRecord {
    /// When the server answered the readiness check; `None` if it never did.
    pub ready_s: Option<f64>,
    pub load_start_s: Option<f64>,
    pub load_end_s: Option<f64>,
    /// When the settle period ended and SIGTERM was sent.
    pub stop_s: Option<f64>,
    /// The tree's RSS when the load ended and when the settle period ended.
    pub rss_end_load_bytes: Option<u64>,
    pub rss_end_settle_bytes: Option<u64>,
    /// The same as PSS: what a multi-process server (nginx, a pre-fork
    /// pool) really holds, shared pages counted once.
    #[serde(default)]
    pub pss_end_load_bytes: Option<u64>,
    #[serde(default)]
    pub pss_end_settle_bytes: Option<u64>,
    pub latency: Option<Latency>,
    /// Errors by kind (`status`, `reset`, `timeout`, `connect`, `protocol`);
    /// kinds that did not occur are left out.
    #[serde(default)]
    pub errors_by_kind: std::collections::BTreeMap<String, u64>,
    /// CPU time of allocscope's load generator.
    pub generator_cpu_s: Option<f64>,
    /// How a `--load` command ended, e.g. `exit 0`.
    pub load_exit: Option<String>,
    pub load_stdout_path: Option<PathBuf>,
    pub load_stderr_path: Option<PathBuf>,
    /// Replay lines that could not be sent (`--replay`).
    pub rejected_lines: u64,
    /// Things the reader should know about this run's load: a generator
    /// that saturated its CPU, a rate that was not reached.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// How the server ended: `SIGTERM`, or `SIGKILL after N s` when it
    /// ignored SIGTERM for the grace period.
    pub stopped_by: Option<String>,
}

impl ServiceRecord {
    pub fn load_duration_s(&self) -> Option<f64> {
        Some(self.load_end_s? - self.load_start_s?)
    }
}

/// How a service experiment was driven, as the reports describe it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ServiceInfo {
    /// `tcp:127.0.0.1:8080`, `http://...` or `log:REGEX`.
    pub ready: String,
    /// The load in words, e.g. `http://127.0.0.1:8080/ x 20000 requests, 8 connections`.
    pub load: String,
    pub settle_s: f64,
    pub grace_s: f64,
}

/// Per-run figures derived from a `RunRecord` (see `analyze::metrics`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RunMetrics {
    pub peak_rss_bytes: u64,
    pub mean_rss_bytes: u64,
    pub final_rss_bytes: u64,
    pub peak_pss_bytes: Option<u64>,
    pub mean_pss_bytes: Option<u64>,
    pub peak_live_heap_bytes: Option<u64>,
    pub mean_live_heap_bytes: Option<u64>,
    /// Time-weighted RSS over time-weighted live heap, on the ticks that had both.
    pub mean_overhead_ratio: Option<f64>,
    pub arenas_max: Option<u32>,
    /// The breakdown, time-weighted over the ticks that had one and scaled
    /// to add up to the run's mean RSS, and at the tick of peak RSS among
    /// them.
    pub breakdown_mean: Option<Breakdown>,
    pub breakdown_peak: Option<Breakdown>,
    /// The most processes without allocator figures on a tick with a
    /// breakdown (`Sample::heapless_processes`); `None` without one.
    pub heapless_processes_max: Option<u32>,
    /// The share of the ticks with heap figures that the breakdown covers:
    /// ticks with a breakdown over those plus the ticks whose probe
    /// readings were stale (`Sample::heap_stale_processes`); 1.0 when none
    /// was, `None` without a breakdown.
    #[serde(default)]
    pub breakdown_coverage: Option<f64>,
    /// From the cgroup's ticks: the charge and the working set.
    pub cgroup_peak_bytes: Option<u64>,
    pub cgroup_mean_bytes: Option<u64>,
    pub working_set_peak_bytes: Option<u64>,
    pub working_set_mean_bytes: Option<u64>,
}

/// The host an experiment ran on, recorded once per experiment.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Host {
    pub kernel: String,
    pub glibc: String,
    pub cpus: u32,
    /// The bracketed choice of /sys/kernel/mm/transparent_hugepage/enabled.
    pub thp: String,
    /// The cgroup's memory.max, `None` when unlimited or unknown.
    pub cgroup_memory_limit_bytes: Option<u64>,
    pub hostname: String,
    /// Whether each run had a memory cgroup of its own: `v2` or `v1`,
    /// `off` (`--cgroup off`), or `none: WHY`; `None` when not recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_cgroup: Option<String>,
    /// `compare --memory-limit`: each run's limit in bytes (its cgroup's,
    /// else `RLIMIT_AS`); `None` without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_memory_limit_bytes: Option<u64>,
    /// `--cpus N`: the host the allocators were sized for; `None` without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_emulated: Option<CpuEmulation>,
}

/// `compare --cpus N`: each allocator's CPU-derived defaults set as on a
/// host of N CPUs, and whether the workload also ran on N CPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuEmulation {
    /// N.
    pub cpus: u32,
    /// The workload was pinned to N of this machine's CPUs. False when N is
    /// more than it has: the allocators' sizing is emulated, CPU contention
    /// is not.
    pub pinned: bool,
    /// What each configuration's allocator was given, in configuration order.
    pub configs: Vec<CpuSizing>,
}

/// What `--cpus` did to one configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuSizing {
    pub config: String,
    pub action: CpuSizingAction,
    /// The setting given or kept, as the configuration spells its keys
    /// (`arena_max=128`); `None` for `none` and `unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuSizingAction {
    /// The CPU-derived setting was given as on N CPUs.
    Set,
    /// The configuration sets it itself, and keeps its own.
    Kept,
    /// The allocator sizes nothing by the CPU count (tcmalloc, mimalloc).
    None,
    /// A user library: what it derives from the CPU count is not known.
    Unknown,
}

/// What identifies an experiment, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentInfo {
    pub name: Option<String>,
    pub command: Vec<String>,
    pub started_at: String,
    pub host: Host,
    pub runs_per_config: u32,
    pub warmup: u32,
    pub interval_ms: u64,
    pub baseline: String,
    /// The `--mark` patterns, as typed (the built-in one is not listed).
    pub marks: Vec<String>,
    /// Set for `compare --server`.
    #[serde(default)]
    pub service: Option<ServiceInfo>,
    /// The `--metric` figures the runs were asked for, in the order given;
    /// kept in the environment (`user_metrics`), so `report` knows them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_metrics: Vec<UserMetricInfo>,
}

/// One `--metric NAME=REGEX` of an experiment, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserMetricInfo {
    pub name: String,
    /// The regex as typed.
    #[serde(default)]
    pub pattern: String,
    /// `--higher-is-better NAME` (throughput); lower is better otherwise.
    #[serde(default)]
    pub higher_is_better: bool,
}

/// A run as kept in the store: what was observed. Its metrics are computed
/// by analysis from the samples (`analyze::metrics::of`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    pub id: i64,
    pub record: RunRecord,
    /// The metrics a file written before schema version 6 stored for this
    /// run; analysis uses them only when the run has no samples to compute
    /// them from. `None` for runs stored since.
    #[serde(default)]
    pub legacy_metrics: Option<RunMetrics>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredConfig {
    pub id: i64,
    pub config: Config,
    pub runs: Vec<StoredRun>,
}

/// `running` while allocscope works on it; `complete`, `interrupted` (Ctrl-C or
/// SIGTERM) once it stopped; a `running` experiment whose allocscope is gone is
/// shown as `incomplete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredExperiment {
    pub id: i64,
    pub info: ExperimentInfo,
    pub status: String,
    pub finished_at: Option<String>,
    pub configs: Vec<StoredConfig>,
}

impl StoredExperiment {
    /// Every run of every configuration ended `ok` (the exit code's test).
    pub fn all_runs_ok(&self) -> bool {
        self.configs
            .iter()
            .flat_map(|c| &c.runs)
            .all(|r| r.record.status == RunStatus::Ok)
    }
}

#[cfg(test)]
mod tests {
    use super::Breakdown;

    #[test]
    fn breakdown_keys_are_its_json_keys_in_the_order_of_its_parts() -> serde_json::Result<()> {
        let b = Breakdown::from_parts([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        let json = serde_json::to_value(b)?;
        for (key, value) in Breakdown::KEYS.iter().zip(b.parts()) {
            assert_eq!(json[key], value, "{key}");
        }
        assert_eq!(b.total_bytes(), 55);
        Ok(())
    }
}
