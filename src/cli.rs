//! Command-line definitions (clap) and nothing else: checking and converting
//! what the user typed happens in `options`.

use allocscope_core::run::ReclaimAt;
use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;

mod choices;
mod rounds;
pub mod values;
pub use choices::{CgroupMode, DemoScenarioName, HeapMode, Pace, Section, Until};
pub use rounds::{JudgeArgs, RoundArgs};
use std::time::Duration;
pub use values::{Indices, Runs};

#[derive(Debug, Parser)]
#[command(
    name = "allocscope",
    version,
    about = "Measure which memory allocator and tuning a program should run with",
    long_about = "Runs a program under each allocator configuration (glibc malloc and its \
                  tunables, jemalloc, tcmalloc, mimalloc, any allocator library), samples the \
                  memory of its whole process tree, stores every run in SQLite and compares \
                  the configurations with confidence intervals."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run COMMAND under each configuration, sample it, store and compare.
    Compare(Box<CompareArgs>),
    /// Race each allocator's settings on COMMAND and recommend the best within
    /// the budget (docs/tuning.md).
    Tune(Box<TuneArgs>),
    /// List the allocators this machine has, and the packages of the missing ones.
    Allocators,
    /// Re-render a stored experiment (the latest by default) without re-running.
    Report(Box<ReportArgs>),
    /// Record a running process (--pid) or a command under one configuration
    /// for hours or days, into the store.
    Record(Box<RecordArgs>),
    /// Run configurations side by side for hours or days (COMMAND's instances,
    /// or running ones with --pid): their growth, plateaus and a verdict over time.
    Soak(Box<SoakArgs>),
    /// Compare the default configurations on a built-in scenario (default: churn).
    Demo(DemoArgs),
    /// Run a built-in scenario as an ordinary process (any allocator can be preloaded into it).
    Workload {
        #[command(subcommand)]
        scenario: allocscope_scenarios::Scenario,
    },
    /// Run one round of a cluster plan on this node into a shard (what each
    /// Slurm task or Kubernetes pod of `compare --executor` runs).
    Cell(CellArgs),
    /// Merge the shards of a cluster plan into the store as one experiment.
    Merge(MergeArgs),
}

/// `allocscope tune`: `compare`'s flags, where `-a NAME` restricts the
/// allocators whose settings are raced.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Values to try besides the built-in ones, repeatable:
    /// [ALLOCATOR:]KEY=V1,V2,... (e.g. --try arena_max=3,6).
    #[arg(long = "try", value_name = "KEY=V1,V2")]
    pub tries: Vec<String>,
    /// Race each setting on its own only: no phase of combinations.
    #[arg(long)]
    pub no_combine: bool,
    #[command(flatten)]
    pub compare: CompareArgs,
}

#[derive(Debug, Args)]
pub struct CellArgs {
    /// The plan file `compare --executor` wrote.
    #[arg(long, value_name = "PLAN.json")]
    pub plan: PathBuf,
    /// Which round, from 0.
    #[arg(long, value_name = "N", value_parser = |s: &str| values::parse_count("--round", s, 0))]
    pub round: u32,
    /// The shard to write (a small SQLite store); written only when the
    /// round ends uninterrupted.
    #[arg(long, value_name = "SHARD")]
    pub out: PathBuf,
    /// Run only these of the plan's configurations (indices from 0, in the
    /// plan's order, e.g. 0,3,5): a round of an adaptive plan, after the
    /// rounds before dropped the others. Default: every one.
    #[arg(long, value_name = "I,J,...", value_parser = values::parse_indices)]
    pub configs: Option<Indices>,
    /// No progress lines.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards (`allocscope cell` outputs) of one plan.
    #[arg(value_name = "SHARD", required = true)]
    pub shards: Vec<PathBuf>,
    /// The SQLite store to merge into.
    #[arg(long, default_value = "allocscope.db", value_name = "FILE")]
    pub db: PathBuf,
    /// Refuse shards of any plan other than this one.
    #[arg(long, value_name = "PLAN.json")]
    pub plan: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Write the results as JSON (schema allocscope/1); `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Write one CSV row per configuration with the summary; `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Also export every sample: a `timeline` per run in the JSON, and
    /// FILE.samples.csv (long format) beside the CSV.
    #[arg(long)]
    pub samples: bool,
    /// Write the comparison table and the verdict as Markdown (for an issue
    /// or pull request); `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Write one self-contained HTML report (table, verdict, plots, runs).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write each plot into DIR as SVG and PNG (created if missing).
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
    /// compare: no progress lines, only warnings and the final table.
    #[arg(short, long)]
    pub quiet: bool,
    /// Print the complete report (every table, the verdict per
    /// configuration, every deploy target) instead of the one-screen summary.
    #[arg(long)]
    pub full: bool,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Allocator configuration, repeatable: NAME[:key=value,...] (glibc, jemalloc,
    /// tcmalloc, mimalloc) or LABEL=/path/to/lib.so[:env.NAME=value,...].
    /// Default: glibc, glibc:arena_max=2, jemalloc, tcmalloc, mimalloc.
    #[arg(short = 'a', long = "alloc", value_name = "CONFIG")]
    pub alloc: Vec<String>,
    /// Another build of the program as a configuration, repeatable:
    /// LABEL=COMMAND (e.g. je='./app-jemalloc --port 1'). It runs under
    /// glibc with nothing preloaded, so the allocator the build brings runs;
    /// the configurations table says which one served malloc.
    #[arg(long = "variant", value_name = "LABEL=COMMAND")]
    pub variant: Vec<String>,
    /// Measured rounds (one run of each configuration per round): N, or
    /// auto (until every candidate is settled, at most --max-runs).
    #[arg(
        short = 'r',
        long,
        default_value = "auto",
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = values::parse_runs
    )]
    pub runs: Runs,
    /// Unmeasured runs per configuration before the measured ones.
    #[arg(
        long,
        default_value = "0",
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = |s: &str| values::parse_count("--warmup", s, 0)
    )]
    pub warmup: u32,
    /// Sampling interval, from 10ms to 1h.
    #[arg(long, default_value = "100ms", value_name = "DUR", value_parser = values::parse_interval)]
    pub interval: Duration,
    /// Time limit per run; the whole process tree is killed when it is reached.
    #[arg(long, value_name = "DUR", value_parser = values::parse_timeout)]
    pub timeout: Option<Duration>,
    /// Memory limit for the workload's whole tree (e.g. 512M, 2G): a cgroup
    /// of its own where the machine allows one (an OOM kill is status `oom`),
    /// else an address-space rlimit. Each run says which.
    #[arg(long, value_name = "SIZE", value_parser = values::parse_memory_limit)]
    pub memory_limit: Option<u64>,
    /// Each run in a memory cgroup of its own, for the tree's charge and
    /// working set: auto (where the machine allows one; a note says why not
    /// otherwise) or off (/proc alone; --memory-limit is then an rlimit).
    #[arg(long, value_enum, default_value_t = CgroupMode::Auto, value_name = "auto|off")]
    pub cgroup: CgroupMode,
    /// Measure as on a host of N CPUs: each allocator's CPU-derived
    /// defaults (glibc's arena limit, jemalloc's narenas) set as there,
    /// unless a configuration sets them itself; with N no more than this
    /// machine's CPUs the workload also runs on N of them.
    #[arg(long, value_name = "N", value_parser = values::parse_cpus)]
    pub cpus: Option<u32>,
    /// The configuration the others are compared with (default: the first).
    #[arg(long, value_name = "CONFIG")]
    pub baseline: Option<String>,
    /// A name for this experiment in the store.
    #[arg(long)]
    pub name: Option<String>,
    /// The SQLite store.
    #[arg(long, default_value = "allocscope.db", value_name = "FILE")]
    pub db: PathBuf,
    #[command(flatten)]
    pub export: ExportArgs,
    #[command(flatten)]
    pub rounds: RoundArgs,
    #[command(flatten)]
    pub judge: JudgeArgs,
    /// A regex for progress lines the workload prints on stdout; each match
    /// records a marker (label: the first capture group, else the match) with
    /// the tree's memory at that moment. Lines `allocscope:mark LABEL` are
    /// always markers. Repeatable.
    #[arg(long, value_name = "REGEX")]
    pub mark: Vec<String>,
    /// The heap probe, on by default: stats (the allocator's own counters)
    /// where the allocator has them, else count (interpose malloc); a
    /// workload that cannot load it is measured from /proc alone. `--heap`
    /// (or =stats, =count) asks for it: a workload that cannot load it is
    /// then not_loaded. `--heap=off` leaves it out.
    #[arg(
        long,
        value_name = "MODE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "auto",
        value_parser = choices::HeapModeParser
    )]
    pub heap: Option<HeapMode>,
    /// When the reclaim test asks the allocator to return what it holds
    /// (needs the heap probe): at a marker LABEL, a DURATION after the
    /// start, or off. Default: a batch program at its exit, a service after
    /// its load and settle period, just before its stop.
    #[arg(long, value_name = "LABEL|DURATION|off", value_parser = ReclaimAt::parse)]
    pub reclaim_at: Option<ReclaimAt>,
    #[command(flatten)]
    pub service: ServiceArgs,
    /// Serve the running configuration's current values for Prometheus at
    /// http://ADDR:PORT/metrics (loopback unless --metrics-public).
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics: Option<String>,
    /// Allow --metrics on an address other machines can reach.
    #[arg(long)]
    pub metrics_public: bool,
    /// `--executor` and every engine's flags, declared with the engines.
    #[command(flatten)]
    pub cluster: allocscope_cluster::executor::EngineArgs,
    /// The program to measure and its arguments.
    #[arg(last = true, value_name = "COMMAND", num_args = 1.., required = true)]
    pub command: Vec<OsString>,
}

/// `compare --server`: COMMAND is a service. Each run starts it, waits until
/// it is ready, drives one load, samples an idle settle period, then stops it
/// (SIGTERM, then SIGKILL after the grace period). Only the server's tree is
/// sampled, never the load's.
#[derive(Debug, Args)]
#[command(next_help_heading = "Services (--server)")]
pub struct ServiceArgs {
    /// COMMAND is a server: drive it with --load, --http or --replay.
    #[arg(long)]
    pub server: bool,
    /// A load command of your own (wrk, redis-benchmark, a script), run with
    /// `sh -c` once the server is ready; its output is kept, its duration measured.
    #[arg(long, value_name = "COMMAND")]
    pub load: Option<String>,
    /// allocscope's own HTTP/1.1 keep-alive load generator against URL;
    /// in its path `{seq}` is the request number, `{rand:MAX}` a seeded 1..=MAX.
    #[arg(long, value_name = "URL")]
    pub http: Option<String>,
    /// Requests per run for --http.
    #[arg(
        long,
        value_name = "N",
        default_value = "10000",
        value_parser = |s: &str| values::parse_count("--requests", s, 1)
    )]
    pub requests: u32,
    /// Connections (each on its own thread) for --http and --replay.
    #[arg(long, value_name = "C", default_value = "8", value_parser = values::parse_concurrency)]
    pub concurrency: u32,
    /// Open-loop rate for --http, in requests per second (latency counted
    /// from when each request was due); default: as fast as the connections go.
    #[arg(long, value_name = "R/s", value_parser = values::parse_rate)]
    pub rate: Option<f64>,
    /// Replay the GET and HEAD lines of an access log (Common or Combined
    /// Log Format) against --target.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// The server to replay against, e.g. http://127.0.0.1:8080.
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Replay pace: `max` (as fast as --concurrency allows) or `original`
    /// (the log's own timing, divided by --speed).
    #[arg(long, value_name = "PACE", value_enum, default_value_t = Pace::Max)]
    pub pace: Pace,
    /// Speed factor for --pace original (2 replays twice as fast).
    #[arg(long, value_name = "X", default_value = "1", value_parser = values::parse_speed)]
    pub speed: f64,
    /// Per-request time limit of the built-in generator.
    #[arg(
        long,
        value_name = "DUR",
        default_value = "10s",
        value_parser = |s: &str| values::parse_positive_duration("--request-timeout", s)
    )]
    pub request_timeout: Duration,
    /// Readiness check: tcp:HOST:PORT (accepts a connection) or an
    /// http:// URL (answers 2xx). Default: the --http or --target address.
    #[arg(long, value_name = "CHECK")]
    pub ready: Option<String>,
    /// The server is ready when a line of its stdout or stderr matches REGEX.
    #[arg(long, value_name = "REGEX")]
    pub ready_log: Option<String>,
    /// How long the server may take to become ready; the run fails after it.
    #[arg(
        long,
        value_name = "DUR",
        default_value = "30s",
        value_parser = |s: &str| values::parse_positive_duration("--ready-timeout", s)
    )]
    pub ready_timeout: Duration,
    /// Idle sampling after the load, to see whether memory comes back.
    #[arg(long, value_name = "DUR", default_value = "0s", value_parser = values::parse_any_duration)]
    pub settle: Duration,
    /// How long the server may take to exit after SIGTERM before SIGKILL.
    #[arg(
        long,
        value_name = "DUR",
        default_value = "10s",
        value_parser = |s: &str| values::parse_positive_duration("--grace", s)
    )]
    pub grace: Duration,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The experiment's id (see --list); the latest when omitted.
    pub experiment: Option<i64>,
    /// The SQLite store.
    #[arg(long, default_value = "allocscope.db", value_name = "FILE")]
    pub db: PathBuf,
    /// List the stored experiments.
    #[arg(long)]
    pub list: bool,
    /// Compare with this configuration instead of the experiment's baseline.
    #[arg(long, value_name = "CONFIG")]
    pub baseline: Option<String>,
    /// Recordings side by side, aligned by elapsed time, with their steady
    /// state (the first is the one the others are compared with); without
    /// IDs, list the stored recordings.
    #[arg(long, value_name = "ID", num_args = 0.., conflicts_with_all = ["experiment", "list", "baseline"])]
    pub recordings: Option<Vec<i64>>,
    /// A stored soak (its id ends what `soak` prints), judged again from
    /// the samples the store keeps.
    #[arg(long, value_name = "ID", conflicts_with_all = ["experiment", "list", "baseline", "recordings", "section"])]
    pub soak: Option<i64>,
    /// Print one part of the complete report.
    #[arg(long, value_enum, value_name = "NAME", conflicts_with = "full")]
    pub section: Option<choices::Section>,
    #[command(flatten)]
    pub export: ExportArgs,
    #[command(flatten)]
    pub judge: JudgeArgs,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Attach to this running process and record its whole tree (no
    /// restart; the rights of its user suffice).
    #[arg(long, value_name = "PID", conflicts_with_all = ["alloc", "command"], value_parser = values::parse_pid)]
    pub pid: Option<i32>,
    /// The configuration to start COMMAND under (default: glibc).
    #[arg(short = 'a', long = "alloc", value_name = "CONFIG")]
    pub alloc: Option<String>,
    /// A name for the recording (default: the command's name).
    #[arg(long)]
    pub name: Option<String>,
    /// Sampling interval, from 10ms to 1h.
    #[arg(long, default_value = "1s", value_name = "DUR", value_parser = values::parse_interval)]
    pub interval: Duration,
    /// Stop recording after this long (default: until the tree exits or Ctrl-C).
    /// A command started by `record` is ended then.
    #[arg(long, value_name = "DUR", value_parser = values::parse_record_duration)]
    pub duration: Option<Duration>,
    /// The SQLite store.
    #[arg(long, default_value = "allocscope.db", value_name = "FILE")]
    pub db: PathBuf,
    /// Serve the current values for Prometheus at http://ADDR:PORT/metrics
    /// (loopback unless --metrics-public).
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics: Option<String>,
    /// Allow --metrics on an address other machines can reach.
    #[arg(long)]
    pub metrics_public: bool,
    /// No progress lines.
    #[arg(short, long)]
    pub quiet: bool,
    /// The program to start and record, and its arguments.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct SoakArgs {
    /// A running instance and the configuration it runs under, repeatable:
    /// LABEL=PID, the label an allocator as -a takes it (glibc, jemalloc,
    /// tcmalloc, mimalloc, glibc:arena_max=2); checked against the
    /// allocator the process maps. A label given twice is one
    /// configuration's replicas.
    #[arg(long = "pid", value_name = "LABEL=PID", required_unless_present_any = ["command", "resume"], conflicts_with_all = ["alloc", "command", "executor"])]
    pub pids: Vec<String>,
    /// Continue soak ID (of a COMMAND) whose allocscope was killed, as it
    /// was started: new instances, its samples and elapsed time kept, the
    /// restart marked.
    #[arg(long, value_name = "ID", conflicts_with_all = ["pids", "alloc", "replicas", "restart", "server", "duration", "interval", "until", "command"])]
    pub resume: Option<i64>,
    /// With a COMMAND: a configuration to start it under, repeatable, as
    /// compare's -a (default: glibc, glibc:arena_max=2, jemalloc, tcmalloc, mimalloc).
    #[arg(short = 'a', long = "alloc", value_name = "CONFIG")]
    pub alloc: Vec<String>,
    /// Instances of each configuration started side by side.
    #[arg(long, default_value = "2", value_name = "R", value_parser = |s: &str| values::parse_count("--replicas", s, 1))]
    pub replicas: u32,
    /// Start an instance again when it exits, crashes or is OOM-killed.
    #[arg(long)]
    pub restart: bool,
    /// COMMAND is a server: each instance ready once --ready accepts a
    /// connection, then driven by --load.
    #[arg(long, requires = "command")]
    pub server: bool,
    /// A server's readiness address, HOST:PORT (default 127.0.0.1:{port}).
    #[arg(long, value_name = "HOST:PORT", requires = "server")]
    pub ready: Option<String>,
    /// How long a server instance may take to become ready.
    #[arg(long, value_name = "DUR", default_value = "30s", value_parser = |s: &str| values::parse_positive_duration("--ready-timeout", s))]
    pub ready_timeout: Duration,
    /// A load command per server instance, run with `sh -c` once it is
    /// ready, until it exits or the soak ends ({port}, {instance} filled).
    #[arg(long, value_name = "COMMAND", requires = "server")]
    pub load: Option<String>,
    /// A figure the load prints, NAME=REGEX (the first capture group of
    /// each matching line of its stdout or stderr, as it prints them),
    /// judged under the same budget as CPU time, e.g. --metric
    /// 'p95=95%.* ([0-9.]+) ms'. Repeatable.
    #[arg(long = "metric", value_name = "NAME=REGEX", requires = "load")]
    pub metric: Vec<String>,
    /// A --metric for which more is better (throughput). Repeatable.
    #[arg(long, value_name = "NAME")]
    pub higher_is_better: Vec<String>,
    /// Stop after this long (default: at Ctrl-C, or when every instance
    /// has exited).
    #[arg(long, value_name = "DUR", value_parser = values::parse_record_duration)]
    pub duration: Option<Duration>,
    /// Sampling interval, from 10ms to 1h.
    #[arg(long, default_value = "1s", value_name = "DUR", value_parser = values::parse_interval)]
    pub interval: Duration,
    /// Stop at --duration, or earlier once every configuration has settled
    /// (default: settled with a COMMAND, duration with --pid).
    #[arg(long, value_enum)]
    pub until: Option<Until>,
    /// The SQLite store: each instance a recording of its own.
    #[arg(long, default_value = "allocscope.db", value_name = "FILE")]
    pub db: PathBuf,
    /// Serve every instance's current values for Prometheus at
    /// http://ADDR:PORT/metrics, labelled by configuration and replica
    /// (loopback unless --metrics-public).
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics: Option<String>,
    /// Allow --metrics on an address other machines can reach.
    #[arg(long)]
    pub metrics_public: bool,
    /// No progress lines.
    #[arg(short, long)]
    pub quiet: bool,
    /// How often the progress block is shown (and --html rewritten) while
    /// the soak runs.
    #[arg(long, default_value = "1m", value_name = "DUR", value_parser = |s: &str| values::parse_positive_duration("--report-every", s))]
    pub report_every: Duration,
    /// The soak's HTML page (as `report --soak ID --html` writes it),
    /// rewritten every --report-every while it runs, reloading itself.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// `--executor` and every engine's flags: with slurm, each instance a
    /// job of its own.
    #[command(flatten)]
    pub cluster: allocscope_cluster::executor::EngineArgs,
    /// The program to start, each instance with `{port}` (a free loopback
    /// port) and `{instance}` (its own directory) filled in.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// The scenario: churn (default), events, kv or server.
    #[arg(value_enum)]
    pub scenario: Option<DemoScenarioName>,
    /// Short settings: the whole demo finishes in under 3 minutes on 2 cores.
    #[arg(long)]
    pub quick: bool,
    /// Run every scenario.
    #[arg(long, conflicts_with = "scenario")]
    pub all: bool,
    /// Print the complete report instead of the one-screen summary.
    #[arg(long)]
    pub full: bool,
    /// Measured rounds: `auto` (until every candidate's decision settles,
    /// at most 8 rounds with --quick, 12 without) or a fixed N.
    #[arg(
        short = 'r',
        long,
        default_value = "auto",
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = values::parse_runs
    )]
    pub runs: Runs,
    /// The SQLite store.
    #[arg(long, default_value = "allocscope.db", value_name = "FILE")]
    pub db: PathBuf,
    /// Where the JSON, CSV and HTML reports go (SCENARIO.json, .csv, .html).
    #[arg(long, default_value = "allocscope-demo", value_name = "DIR")]
    pub out: PathBuf,
    /// As `compare --cpus N`: the allocators sized as on a host of N CPUs.
    #[arg(long, value_name = "N", value_parser = values::parse_cpus)]
    pub cpus: Option<u32>,
}
